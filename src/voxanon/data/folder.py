"""Plain folders of audio files as corpora.

Every file whose extension soundfile knows (wav, flac, ogg, mp3, ...) is an
utterance, found recursively; hidden files and folders (names starting with
``.``) are skipped. The utterance id is the path relative to the folder,
without its extension, with ``/`` separators (``sub/a.flac`` -> ``sub/a``).
Anonymized output mirrors the tree as ``<out>/<id>.wav``.
"""

from __future__ import annotations

import os
from pathlib import Path

import soundfile as sf

from voxanon.data.kaldi import DataError

#: extensions (lower case, no dot) treated as audio
AUDIO_EXTENSIONS = frozenset({fmt.lower() for fmt in sf.available_formats()} - {"raw"} | {"aif", "oga", "opus"})


def scan_audio_folder(root: str | os.PathLike) -> dict[str, Path]:
    """Utterance id -> audio file for every audio file under ``root``, sorted by id.

    Raises
    ------
    DataError
        ``root`` is not a folder, holds no audio, or two files differ only by extension.
    """
    root = Path(root)
    if not root.is_dir():
        raise DataError(f"{root}: not a folder")
    found: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for filename in filenames:
            stem, dot, ext = filename.rpartition(".")
            if filename.startswith(".") or not dot or ext.lower() not in AUDIO_EXTENSIONS:
                continue
            path = Path(dirpath, filename)
            utt = path.relative_to(root).with_name(stem).as_posix()
            if utt in found:
                first, second = sorted((found[utt], path))
                raise DataError(f"{first} and {second} differ only by extension (both would be {utt}.wav); "
                                "rename or remove one")
            found[utt] = path
    if not found:
        raise DataError(f"{root}: no audio files found (extensions: {', '.join(sorted(AUDIO_EXTENSIONS))})")
    return dict(sorted(found.items()))


def mirrored_path(out_root: str | os.PathLike, utt: str) -> Path:
    """Where the anonymized version of folder utterance ``utt`` goes."""
    return Path(out_root) / f"{utt}.wav"
