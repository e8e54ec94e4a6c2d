"""Shipped English sentences and VPC-style transcript normalisation."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources

from voxanon.textnorm import spell_numbers


@dataclass(frozen=True)
class Sentence:
    """A sentence as spoken (``text``) and as transcribed (``transcript``, VPC style)."""

    text: str
    transcript: str

    @property
    def words(self) -> int:
        """Number of words in the transcript."""
        return len(self.transcript.split())


def normalize_transcript(text: str) -> str:
    """VPC (LibriSpeech) style: upper case, words only, apostrophes kept, numbers spelt out."""
    text = re.sub(r"[^A-Za-z']+", " ", spell_numbers(text))
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


#: languages whose corpus sentences were written for voxanon (``resources/sentences_<language>.txt``): written
#: without spaces, so each line separates its words with spaces (what a corpus size's word range counts)
WRITTEN_LANGUAGES = ("zh", "ja")


def load_written_sentences(language: str) -> tuple[list[Sentence], dict]:
    """The sentences written for voxanon in ``language`` (:data:`WRITTEN_LANGUAGES`), in file order, each spoken
    without the spaces that separate its words and transcribed with them (a character error rate does not count
    spaces), and a JSON-ready description of the source."""
    if language not in WRITTEN_LANGUAGES:
        raise ValueError(f"sentences were written for {', '.join(WRITTEN_LANGUAGES)}, not {language!r}")
    name = f"sentences_{language}.txt"
    sentences = [Sentence("".join(ln.split()), " ".join(ln.split())) for ln in _resource_lines(name)
                 if not ln.startswith("#")]
    return sentences, {"source": f"resources/{name}: sentences written for voxanon, words separated by spaces",
                       "licence": "CC0-1.0", "copyright": "none reserved", "sentences": len(sentences)}


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
