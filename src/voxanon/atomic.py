"""Atomic file writes: a temporary file in the target's folder, flushed to disk, then renamed.

A process killed at any moment leaves either the previous file or the complete
new one, never a partial file under the final name; at worst a temporary
``.<name>.<random>.tmp`` remains, which readers ignore and the runner cleans.
:func:`write_texts` writes a set of files as one step: every file goes to a
temporary first, and only when all are on disk are they renamed, so an error
while writing (a full disk) leaves the previous set as it was. :func:`atomic_folder`
puts a whole folder of files in place the same way.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

_UMASK = os.umask(0)
os.umask(_UMASK)


def _temporary(path: Path) -> tuple[int, str]:
    """A new temporary sibling of ``path`` with normal permissions (its folder created): (fd, name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp creates 0600
    return fd, tmp


@contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "wb", encoding: str | None = None) -> Iterator[IO]:
    """Open a temporary sibling of ``path`` for writing; on success it replaces ``path``.

    The parent folder is created. On an exception the temporary file is removed
    and ``path`` is untouched.
    """
    path = Path(path)
    fd, tmp = _temporary(path)
    try:
        with os.fdopen(fd, mode, encoding=encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write UTF-8 text atomically."""
    with atomic_open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def write_texts(files: Mapping[Path, str | None]) -> None:
    """Write several UTF-8 files as one step; ``None`` deletes that file (after the others are in place).

    All contents are written to temporaries and flushed first; on any error the
    temporaries are removed and no file is replaced. Then each is renamed into place.
    """
    staged: list[tuple[str, Path]] = []
    try:
        for path, text in files.items():
            if text is None:
                continue
            fd, tmp = _temporary(path)
            staged.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
    except BaseException:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise
    for tmp, path in staged:
        os.replace(tmp, path)
    for path, text in files.items():
        if text is None:
            path.unlink(missing_ok=True)


@contextmanager
def atomic_folder(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary sibling folder of ``path`` to fill; on success its files are flushed and it is renamed to
    ``path`` in one step. If another process put ``path`` in place first, theirs is kept. On an exception, or
    after losing that race, the temporary folder is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        for f in tmp.iterdir():
            with open(f, "rb") as fh:
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o777 & ~_UMASK)  # mkdtemp creates 0700
        try:
            os.rename(tmp, path)
        except OSError:
            if not path.is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
