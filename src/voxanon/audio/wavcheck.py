"""Truncated WAV files: the header promises more audio than the file holds.

Readers (libsndfile included) quietly return the samples that are there, so a
copy cut short goes unnoticed. :func:`wav_truncation` compares the ``data``
chunk's declared size with the bytes present.
"""

from __future__ import annotations

import os
import struct

#: sizes that mean "unknown" (a stream written without seeking back)
_UNKNOWN_SIZES = (0, 0xFFFFFFFF)


def wav_truncation(source: str | os.PathLike) -> str | None:
    """A warning when ``source`` is a RIFF/WAVE file whose data chunk is cut short, else None.

    Pipes, other formats and unreadable files give None (reading them is checked elsewhere).
    """
    text = str(source).strip()
    if text.endswith("|"):
        return None
    try:
        size = os.path.getsize(text)
        with open(text, "rb") as fh:
            if fh.read(12)[:4] != b"RIFF":
                return None
            fh.seek(8)
            if fh.read(4) != b"WAVE":
                return None
            while True:
                header = fh.read(8)
                if len(header) < 8:
                    return None
                chunk, length = header[:4], struct.unpack("<I", header[4:])[0]
                if chunk == b"data":
                    present = size - fh.tell()
                    if length in _UNKNOWN_SIZES or present >= length:
                        return None
                    return (f"truncated WAV: header declares {length} bytes of audio, the file holds {present} "
                            f"({100 * (1 - present / length):.1f} % missing); only what is present was used")
                fh.seek(length + (length & 1), os.SEEK_CUR)
    except OSError:
        return None
