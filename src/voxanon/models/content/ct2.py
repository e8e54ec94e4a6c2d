"""Reader for CTranslate2 ``model.bin`` files (binary format version 6).

Layout: u32 version, the spec name (u16 length + bytes), u32 revision, u32
variable count, then per variable: name, u8 rank, u32 dims, u8 dtype, u32 byte
count and the raw little-endian array; then u32 alias count and alias pairs.
"""

from __future__ import annotations

import os
import struct

import numpy as np

from voxanon.models.content.base import ContentError

#: CTranslate2's DataType enum
_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}


def read_ct2(path: str | os.PathLike, prefix: str = "") -> dict[str, np.ndarray]:
    """Arrays of a CTranslate2 model whose names start with ``prefix`` (float16 kept as float16)."""
    path = os.fspath(path)
    try:
        data = memoryview(open(path, "rb").read())
    except OSError as exc:
        raise ContentError(f"cannot read CTranslate2 model {path}: {exc}") from exc
    pos = 0

    def take(fmt: str):
        nonlocal pos
        values = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return values[0] if len(values) == 1 else values

    def string() -> str:
        nonlocal pos
        n = take("H")
        text = bytes(data[pos:pos + n]).rstrip(b"\0").decode("utf-8")
        pos += n
        return text

    try:
        version = take("I")
        if version != 6:
            raise ContentError(f"{path}: CTranslate2 binary version {version}, this reader knows version 6")
        string()
        take("I")
        arrays = {}
        for _ in range(take("I")):
            name = string()
            rank = take("B")
            shape = tuple(take("I") for _ in range(rank))
            dtype_id, nbytes = take("B"), take("I")
            if dtype_id not in _DTYPES:
                raise ContentError(f"{path}: variable {name!r} has unknown dtype id {dtype_id}")
            if name.startswith(prefix):
                arrays[name] = np.frombuffer(data[pos:pos + nbytes], dtype=_DTYPES[dtype_id]).reshape(shape)
            pos += nbytes
    except struct.error as exc:
        raise ContentError(f"{path}: truncated or not a CTranslate2 model.bin ({exc})") from exc
    return arrays
