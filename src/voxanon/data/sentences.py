"""Shipped English sentences and VPC-style transcript normalisation."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources

from num2words import num2words


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
    """Spell out ``n >= 0`` in English words, as read aloud (``21`` -> ``twenty one``, ``120`` -> ``one hundred and
    twenty``)."""
    if n < 0:
        raise ValueError(f"negative number: {n}")
    return _words(num2words(n))


def _words(spelt: str) -> str:
    """num2words' output as plain words (its hyphens and commas dropped)."""
    return " ".join(spelt.replace("-", " ").replace(",", " ").split())


_CURRENCIES = {"$": ("dollar", "dollars"), "\u00a3": ("pound", "pounds"), "\u20ac": ("euro", "euros")}
_NUMBER = re.compile(r"(?P<cur>[$\u00a3\u20ac])?\s?(?P<num>\d{1,3}(?:,\d{3})+|\d+)(?:(?P<sep>[.:])(?P<frac>\d+))?"
                     r"(?:(?P<ord>st|nd|rd|th)\b|(?P<plural>s)\b|\s?(?P<pct>%))?")


def _clock(whole: int, frac: str) -> str:
    """``8:15`` -> ``eight fifteen``, ``7.05`` -> ``seven oh five``, ``9:00`` -> ``nine``."""
    minutes = int(frac)
    return number_words(whole) + ("" if minutes == 0 else f" oh {number_words(minutes)}" if minutes < 10
                                  else f" {number_words(minutes)}")


def _spell(m: re.Match) -> str:
    whole, frac = int(m["num"].replace(",", "")), m["frac"]
    paired = frac is not None and len(frac) == 2 and (m["cur"] or m["sep"] == ":" or (
        1 <= whole <= 24 and int(frac) < 60 and not m["pct"]))
    if m["ord"] and frac is None:
        words = _words(num2words(whole, to="ordinal"))
    elif paired and not m["cur"]:
        words = _clock(whole, frac)
    elif frac is not None and not paired:
        words = f"{number_words(whole)} point {' '.join(number_words(int(d)) for d in frac)}"
    elif len(m["num"]) == 4 and 1100 <= whole <= 1999:    # years and "fifteen hundred", as they are said
        words = _words(num2words(whole, to="year"))
    else:
        words = number_words(whole)
    if m["plural"]:                                         # 1990s -> nineteen nineties
        words = words[:-1] + "ies" if words.endswith("y") else words + "s"
    if m["cur"]:
        one, many = _CURRENCIES[m["cur"]]
        words += f" {one if whole == 1 and (frac is None or paired) else many}" + (
            f" {number_words(int(frac))}" if paired else "")
    if m["pct"]:
        words += " percent"
    return f" {words} "


def spell_numbers(text: str) -> str:
    """Every number in ``text`` written as it is said: ``10,000`` -> ``ten thousand``, ``3rd`` -> ``third``,
    ``2.5`` -> ``two point five``, ``8:15`` and ``8.15`` -> ``eight fifteen``, ``\u00a32.50`` -> ``two pounds
    fifty``, ``5%`` -> ``five percent``, ``1990s`` -> ``nineteen nineties``, and four-digit numbers from 1100 to
    1999 as years (``1990`` -> ``nineteen ninety``).

    Recognisers such as Whisper write digits where a transcript spells the words, so transcripts are compared
    with their numbers spelt out. Where a number can be said in several ways, this is one common way.
    """
    return _NUMBER.sub(_spell, text)


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
