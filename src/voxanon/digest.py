"""SHA-256 of a file, read in blocks, or of a folder's files (a leaf utility any layer may use)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def content_digest(path: str | os.PathLike, n_hex: int = 16) -> str:
    """First ``n_hex`` hex digits of the SHA-256 of a file's bytes, or of every file under a folder (relative
    names and bytes) and, for a Kaldi data directory, of every audio file its ``wav.scp`` names (a pipe entry by
    its command); ``"missing"`` when there is nothing at ``path`` (whoever loads it says so)."""
    root = Path(path)
    if root.is_file():
        return file_digest(root, n_hex)
    if not root.is_dir():
        return "missing"
    h = hashlib.sha256()
    for f in sorted(q for q in root.rglob("*") if q.is_file()):
        h.update(str(f.relative_to(root)).encode() + b"\0" + file_digest(f, 64).encode())
    scp = root / "wav.scp"
    for line in scp.read_text(encoding="utf-8").splitlines() if scp.is_file() else ():
        entry = line.strip().partition(" ")[2].strip()
        if entry and not entry.endswith("|"):
            h.update(content_digest(entry, 64).encode())
    return h.hexdigest()[:n_hex]


def file_digest(path: str | os.PathLike, n_hex: int = 12) -> str:
    """First ``n_hex`` hex digits of the SHA-256 of a file's bytes (64: all of them)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:n_hex]
