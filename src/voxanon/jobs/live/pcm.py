"""Raw mono PCM frames as the live paths carry them: little-endian float32 (``f32``) or int16 (``s16``)."""

from __future__ import annotations

import numpy as np

from voxanon.audio.io import to_pcm16
from voxanon.errors import DataError

#: sample format name -> numpy dtype on the wire
FORMATS = {"f32": np.dtype("<f4"), "s16": np.dtype("<i2")}


def decode(data: bytes, fmt: str) -> np.ndarray:
    """Samples of a frame as float32 in [-1, 1]; DataError for a torn frame or a non-finite sample."""
    dtype = FORMATS[fmt]
    if len(data) % dtype.itemsize:
        raise DataError(f"a {fmt} frame must hold whole {dtype.itemsize}-byte samples, got {len(data)} bytes")
    samples = np.frombuffer(data, dtype=dtype)
    if fmt == "s16":
        return samples.astype(np.float32) / np.float32(32768.0)
    if not np.isfinite(samples).all():
        raise DataError("an f32 frame holds NaN or infinite samples")
    return samples.astype(np.float32)


def encode(samples: np.ndarray, fmt: str) -> bytes:
    """A frame of ``samples`` (float, nominally in [-1, 1]; s16 clips to it)."""
    if fmt == "s16":
        return to_pcm16(samples).astype("<i2").tobytes()
    return np.asarray(samples, dtype="<f4").tobytes()
