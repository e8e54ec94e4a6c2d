"""What several handlers share: input errors as DataError, the device ``auto``, results as JSON."""

from __future__ import annotations

import json
from pathlib import Path

from voxanon.errors import DataError, VoxanonError

#: errors from below that are bad input data (exit 3) when a handler calls a job
INPUT_ERRORS = (ValueError, OSError)


def as_error(exc: Exception) -> VoxanonError:
    """A VoxanonError as it is; a ValueError or OSError from below as a DataError (exit 3)."""
    return exc if isinstance(exc, VoxanonError) else DataError(str(exc))


def device(name: str) -> str:
    """``name``, or for ``auto`` cuda when torch sees a GPU and cpu otherwise."""
    if name != "auto":
        return name
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def write_json(path: str, data) -> None:
    """Write ``data`` as indented JSON to ``path``, making its folder."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1), encoding="utf-8")
