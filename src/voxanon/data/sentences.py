"""Shipped English sentences and VPC-style transcript normalisation."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources

_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
         "fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


@dataclass(frozen=True)
class Sentence:
    """A sentence as spoken (``text``) and as transcribed (``transcript``, VPC style)."""

    text: str
    transcript: str

    @property
    def words(self) -> int:
        """Number of words in the transcript."""
        return len(self.transcript.split())


def number_words(n: int) -> str:
    """Spell out ``0 <= n < 1000`` in English words (``21`` -> ``twenty one``)."""
    if not 0 <= n < 1000:
        raise ValueError(f"number out of range 0..999: {n}")
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + (f" {_ONES[ones]}" if ones else "")
    hundreds, rest = divmod(n, 100)
    return f"{_ONES[hundreds]} hundred" + (f" and {number_words(rest)}" if rest else "")


def normalize_transcript(text: str) -> str:
    """VPC (LibriSpeech) style: upper case, words only, apostrophes kept, digits spelled out."""
    text = re.sub(r"\d+", lambda m: f" {number_words(int(m.group()))} ", text)
    text = re.sub(r"[^A-Za-z']+", " ", text)
    words = [w.strip("'") for w in text.upper().split()]
    return " ".join(w for w in words if w)


TOPICS_FILE = "topic_sentences_en.txt"


def _resource_lines(name: str) -> list[str]:
    raw = resources.files("voxanon.resources").joinpath(name).read_text(encoding="utf-8")
    return [ln.strip() for ln in raw.splitlines() if ln.strip()]


def topic_sentences_digest() -> str:
    """The first 16 hex digits of the sha256 of the shipped topic sentences file."""
    return hashlib.sha256(resources.files("voxanon.resources").joinpath(TOPICS_FILE).read_bytes()).hexdigest()[:16]


def load_sentences() -> list[Sentence]:
    """The shipped sentence list (``resources/sentences_en.txt``), in file order."""
    return [Sentence(ln, normalize_transcript(ln)) for ln in _resource_lines("sentences_en.txt")
            if not ln.startswith("#")]


def load_topic_sentences() -> dict[str, list[Sentence]]:
    """The shipped topic sentences (``resources/topic_sentences_en.txt``): topic -> sentences, in file order."""
    topics: dict[str, list[Sentence]] = {}
    current = None
    for ln in _resource_lines(TOPICS_FILE):
        if ln.startswith("## "):
            current = topics.setdefault(ln[3:].strip(), [])
        elif not ln.startswith("#") and current is not None:
            current.append(Sentence(ln, normalize_transcript(ln)))
    return topics
