"""Transcript normalisations applied before scoring WER / CER."""

import re

_VPC_PUNCTUATION = re.compile(r"[,!?.]")
_SPACES = re.compile(r"\s+")


def normalize_vpc(text: str) -> str:
    """Normalise a transcript the way the VPC 2024 ASR evaluation does.

    Upper-cases the text, removes the punctuation marks ``, ! ? .`` and
    collapses runs of whitespace (apostrophes are kept, as in LibriSpeech).

    Examples
    --------
    >>> normalize_vpc("Hello, world!  It's me.")
    "HELLO WORLD IT'S ME"
    """
    return _SPACES.sub(" ", _VPC_PUNCTUATION.sub("", text.upper())).strip()


def normalize_none(text: str) -> str:
    """Only collapse whitespace (no case or punctuation change)."""
    return _SPACES.sub(" ", text).strip()


NORMALIZERS = {"vpc": normalize_vpc, "none": normalize_none}
"""Normalisations selectable by name in :func:`voxanon.metrics.wer`."""
