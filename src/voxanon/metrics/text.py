"""Transcript normalisations applied before scoring WER / CER."""

import re

from voxanon.data.sentences import spell_numbers

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

#: titles as LibriSpeech's references spell them (Whisper writes the abbreviation)
_TITLES = {"MR": "MISTER", "MRS": "MISSUS", "DR": "DOCTOR", "ST": "SAINT", "PROF": "PROFESSOR", "JR": "JUNIOR",
           "SR": "SENIOR"}


def normalize_spoken(text: str) -> str:
    """The words as they are said: VPC normalisation, every other punctuation mark turned into a space, numbers
    spelt out (:func:`voxanon.data.sentences.spell_numbers`) and titles written in full.

    For recognisers that write what the VPC's character CTC model cannot (Whisper writes hyphens, colons,
    quotes, "10" for "ten", "Mr." for "mister"): that model emits only letters, apostrophes and spaces, so
    "ill-disposed" and "ill disposed", "10" and "ten" must score the same. Curly apostrophes count as
    apostrophes. On text already in the VPC's form it changes nothing.

    Examples
    --------
    >>> normalize_spoken("An ill-disposed man; \u201cyes\u201d \u2014 it\u2019s 10, Mr. Lee.")
    "AN ILL DISPOSED MAN YES IT'S TEN MISTER LEE"
    """
    words = normalize_vpc(_NON_WORD.sub(" ", spell_numbers(text.replace("\u2019", "'")).upper())).split()
    return " ".join(_TITLES.get(w, w) for w in words)


def normalize_none(text: str) -> str:
    """Only collapse whitespace (no case or punctuation change)."""
    return _SPACES.sub(" ", text).strip()


NORMALIZERS = {"vpc": normalize_vpc, "spoken": normalize_spoken, "none": normalize_none}
"""Normalisations selectable by name in :func:`voxanon.metrics.wer`."""
