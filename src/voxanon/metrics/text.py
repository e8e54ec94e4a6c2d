"""Transcript normalisations applied before scoring WER / CER."""

import re

_VPC_PUNCTUATION = re.compile(r"[,!?.]")
_SPACES = re.compile(r"\s+")


def normalize_vpc(text: str) -> str:
    """Put a transcript into the form of the VPC's LibriSpeech references.

    The VPC 2024 ASR evaluation itself normalises nothing: it scores its
    recogniser's output against LibriSpeech references that are already
    upper-case and unpunctuated (apostrophes kept). This function brings other
    text (punctuating recognisers, sentence-case prompts) into that form:
    upper-case, the marks ``, ! ? .`` removed, runs of whitespace collapsed.
    On text already in that form it changes nothing, so the VPC's own numbers
    are unchanged by it.

    Examples
    --------
    >>> normalize_vpc("Hello, world!  It's me.")
    "HELLO WORLD IT'S ME"
    """
    return _SPACES.sub(" ", _VPC_PUNCTUATION.sub("", text.upper())).strip()


_NON_WORD = re.compile(r"[^\w\s']|_")


def normalize_words(text: str) -> str:
    """VPC normalisation, plus every other punctuation mark turned into a space.

    For recognisers that punctuate (Whisper writes hyphens, colons, quotes):
    the VPC's character CTC model emits only letters, apostrophes and spaces,
    so "ill-disposed" and "ill disposed" must score the same. Curly
    apostrophes count as apostrophes.

    Examples
    --------
    >>> normalize_words("An ill-disposed man; \u201cyes\u201d \u2014 it\u2019s so.")
    "AN ILL DISPOSED MAN YES IT'S SO"
    """
    return normalize_vpc(_NON_WORD.sub(" ", text.replace("\u2019", "'").upper()))


def normalize_none(text: str) -> str:
    """Only collapse whitespace (no case or punctuation change)."""
    return _SPACES.sub(" ", text).strip()


NORMALIZERS = {"vpc": normalize_vpc, "words": normalize_words, "none": normalize_none}
"""Normalisations selectable by name in :func:`voxanon.metrics.wer`."""
