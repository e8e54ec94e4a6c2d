"""SHA-256 of a file, read in blocks (a leaf utility any layer may use)."""

from __future__ import annotations

import hashlib
import os


def file_digest(path: str | os.PathLike, n_hex: int = 12) -> str:
    """First ``n_hex`` hex digits of the SHA-256 of a file's bytes (64: all of them)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:n_hex]
