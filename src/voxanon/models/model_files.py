"""One-line messages for model files that cannot be used (imports no torch: any loader may use it).

Every loader of a file a user can name (checkpoints, ONNX models, kit folders, target sets) reports a
file it cannot use as one line: the file once, what it is, what was wrong, what was expected and what to
do. :func:`voxanon.models.checkpoint.load_checkpoint` builds its messages here; the other formats call
:func:`model_file_error` with a reason of their own (:func:`short_reason` shortens a library's exception).
"""

from __future__ import annotations

import os
import pickletools
import re
from collections.abc import Mapping

#: the leading bytes of a zip archive (PyTorch's format since 1.6, ``.npz``) and of a pickle (protocol >= 2)
ZIP_MAGIC, PICKLE_MAGIC = b"PK\x03\x04", b"\x80"
#: added where a file was refused for holding more than weights
WEIGHTS_ONLY = "voxanon loads weights only"
#: globals of PyTorch's own pickles (not named when a pickle is refused)
_SAFE_GLOBALS = ("torch.", "collections.OrderedDict", "_codecs.encode")


def model_file_error(error: type[Exception], what: str, path: str | os.PathLike, problem: str, *,
                     expected: str | None = None, todo: str | None = None) -> Exception:
    """``error("<what> <path> <problem>; expected <expected>; <todo>")`` on one line (the path once)."""
    parts = [f"{what} {os.fspath(path)} {problem}", f"expected {expected}" if expected else "", todo or ""]
    return error(re.sub(r"\s*\n\s*", " ", "; ".join(p for p in parts if p)))


def short_reason(exc: BaseException) -> str:
    """The first sentence of an exception's first line, without advice of the library that raised it."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    first = re.split(r"(?<=[a-z0-9)'\"])\. ", first, maxsplit=1)[0].rstrip(".")
    if not first or "weights_only" in first or len(first) > 300:
        return type(exc).__name__
    return first


def unreadable_reason(path: str | os.PathLike, exc: BaseException) -> str:
    """Why ``torch.load(path, weights_only=True)`` failed, in a few words of voxanon's own."""
    if isinstance(exc, IsADirectoryError):
        return "a folder, not a file"
    if isinstance(exc, PermissionError):
        return "permission denied"
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except OSError as err:
        return err.strerror or type(err).__name__
    text = str(exc)
    refused = re.search(r"Unsupported global: GLOBAL (\S+)", text)
    if not head:
        return "empty file"
    if refused:
        return f"unsupported global {refused.group(1)!r} refused: {WEIGHTS_ONLY}"
    if head.startswith(ZIP_MAGIC):
        if "central directory" in text or isinstance(exc, EOFError):
            return "truncated zip archive"
        return f"damaged zip archive: {short_reason(exc)}"
    if head.startswith(PICKLE_MAGIC):
        return pickle_reason(path)
    return "not a zip or pickle file"


def pickle_reason(path: str | os.PathLike) -> str:
    """What a pickle that PyTorch's weights-only reader refused is: damaged, calling a global it does not allow, or
    a plain pickle.

    The opcodes are only parsed (:func:`pickletools.genops`), never run.
    """
    strings, protocol = [], 2
    try:
        with open(path, "rb") as fh:
            for op, arg, _ in pickletools.genops(fh):
                if op.name == "PROTO":
                    protocol = arg
                elif op.name in ("GLOBAL", "STACK_GLOBAL"):
                    name = arg.replace(" ", ".") if op.name == "GLOBAL" else ".".join(strings[-2:])
                    if not name.startswith(_SAFE_GLOBALS):
                        return f"unsupported global {name!r} refused: {WEIGHTS_ONLY}"
                elif isinstance(arg, str):
                    strings.append(arg)
    except ValueError as exc:   # genops: an unknown opcode, or the data ends before STOP
        return "truncated pickle" if "exhausted" in str(exc) or "not enough data" in str(exc) else "damaged pickle"
    return f"a plain pickle (protocol {protocol}), not a PyTorch checkpoint"


def looks_like(obj: object) -> str:
    """A few words on what a loaded checkpoint holds, for messages about a file of the wrong kind."""
    if isinstance(obj, Mapping):
        if isinstance(obj.get("format"), str):
            return f"a {obj['format']!r} checkpoint"
        keys = list(obj)
        if not keys:
            return "an empty dict"
        shown = ", ".join(repr(k) for k in keys[:3]) + (", ..." if len(keys) > 3 else "")
        tensors = all(type(v).__name__ in ("Tensor", "Parameter") for v in obj.values())
        return f"{'a state dict' if tensors else 'a dict'} of {len(keys)} key{'s' * (len(keys) > 1)} ({shown})"
    return f"a {type(obj).__name__}"


def require_keys(obj: object, keys: tuple[str, ...], what: str, path: str | os.PathLike, error: type[Exception], *,
                 expected: str, todo: str | None = None) -> Mapping:
    """``obj`` when it is a dict holding every one of ``keys``; else ``error`` saying what it is instead."""
    missing = [k for k in keys if not isinstance(obj, Mapping) or k not in obj]
    if not missing:
        return obj
    problem = f"is {looks_like(obj)}" + (f" without key {missing[0]!r}" if isinstance(obj, Mapping) else "")
    raise model_file_error(error, what, path, problem, expected=expected, todo=todo)


def onnx_reason(path: str | os.PathLike, exc: BaseException) -> str:
    """Why ONNX Runtime could not load or run ``path``, without its code numbers or the path again."""
    if os.path.isfile(path) and os.path.getsize(path) == 0:
        return "empty file"
    text = str(exc)
    if "Status Message:" in text:           # a kernel that refused its inputs: what it says, not which node
        detail = text.rsplit("Status Message:", 1)[1]
    else:
        detail = text.rsplit("failed:", 1)[1] if "failed:" in text else short_reason(exc)
    return " ".join(detail.replace(os.fspath(path), "the file").split()).rstrip(".") or type(exc).__name__
