"""Content fingerprints of what an evaluation reads: data directories and model files.

A benchmark stage's cache key is made of these, so changed data or a
retrained model recomputes the stage and nothing else does. Fast: a data
directory is the hash of its Kaldi metadata files plus the size and
modification time of every audio file ``wav.scp`` names (pipe entries count
by their command text); a model file is hashed by content.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from voxanon.data.kaldi import FILES

#: marker files that change what a directory means (synthetic / real data)
_MARKERS = ("SYNTHETIC", "REAL", "enrolls")


def _audio_stamp(entry: str) -> str:
    if entry.rstrip().endswith("|"):
        return entry
    try:
        st = os.stat(entry)
    except OSError:
        return f"{entry} missing"
    return f"{st.st_size} {st.st_mtime_ns}"


def data_fingerprint(path: str | os.PathLike) -> str:
    """Digest of a data directory's metadata and audio files (sizes and modification times)."""
    root = Path(path)
    h = hashlib.sha256()
    for name in (*FILES, *_MARKERS):
        f = root / name
        if f.is_file():
            h.update(name.encode() + b"\0" + f.read_bytes() + b"\0")
    scp = root / "wav.scp"
    if scp.is_file():
        for line in scp.read_text(encoding="utf-8").splitlines():
            utt, _, entry = line.strip().partition(" ")
            if utt:
                h.update(f"{utt} {_audio_stamp(entry.strip())}\n".encode())
    return h.hexdigest()


def path_fingerprint(path: str | os.PathLike) -> str:
    """Digest of a file's content, or of every file under a folder (names and contents)."""
    p = Path(path)
    h = hashlib.sha256()
    files = [p] if p.is_file() else sorted(q for q in p.rglob("*") if q.is_file())
    for f in files:
        h.update(str(f.relative_to(p) if f != p else f.name).encode() + b"\0")
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def model_fingerprint(spec: str) -> str:
    """A model spec with any file or folder it names replaced by its content digest."""
    _, _, arg = spec.partition(":")
    if arg and Path(arg).exists():
        return f"{spec.partition(':')[0]}:{path_fingerprint(arg)}"
    return spec


def digest(parts: Any) -> str:
    """Stable digest of JSON-able key material."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
