"""Transcript normalisations applied before scoring WER / CER."""

import re
import unicodedata

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


_BRACKETED = re.compile(r"[<\[][^>\]]*[>\]]|\([^)]*\)")


def _fold_latin_accents(text: str) -> str:
    """Accents removed from Latin letters only (``é`` -> ``e``); the marks of other scripts (Devanagari vowel
    signs, Japanese voicing marks) are part of their letters and stay."""
    out: list[str] = []
    for ch in unicodedata.normalize("NFKD", text):
        if unicodedata.category(ch) == "Mn" and out and "LATIN" in unicodedata.name(out[-1], ""):
            continue
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def normalize_basic(text: str) -> str:
    """Any language's words: compatibility forms unified (NFKC), lower case, bracketed notes removed, every
    punctuation mark and symbol turned into a space (apostrophes too: ``l'agent`` scores as ``l agent`` on both
    sides), accents of Latin letters folded, whitespace collapsed.

    Whisper's own basic normaliser does the same for its multilingual scores. Accents are folded because
    transcripts write them inconsistently (Asterisk's Spanish prompts have none); numbers are not spelt out, so a
    recogniser that writes digits for spoken numbers is charged for it.

    Examples
    --------
    >>> normalize_basic("Composez votre numéro d'agent, suivi du dièse [bip].")
    'composez votre numero d agent suivi du diese'
    """
    text = _BRACKETED.sub(" ", unicodedata.normalize("NFKC", text).casefold())
    text = "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in text)
    return _SPACES.sub(" ", _fold_latin_accents(text)).strip()


NORMALIZERS = {"vpc": normalize_vpc, "spoken": normalize_spoken, "basic": normalize_basic, "none": normalize_none}
"""Normalisations selectable by name in :func:`voxanon.metrics.wer`."""

#: languages written without spaces between words, scored by character error rate (as the VPC 2026 scores
#: Chinese and Japanese)
CHARACTER_LANGUAGES = frozenset({"zh", "ja", "yue", "th", "lo", "my", "km", "bo"})


def error_unit(language: str) -> str:
    """``char`` for a language written without spaces between words (:data:`CHARACTER_LANGUAGES`), else
    ``word``: the unit :func:`voxanon.metrics.wer` counts errors in."""
    return "char" if language.split("-")[0].lower() in CHARACTER_LANGUAGES else "word"


def default_normalization(language: str) -> str:
    """The normalisation a language's transcripts are scored with: ``spoken`` for English (numbers spelt as
    said, the VPC's form), ``basic`` for every other language."""
    return "spoken" if language.split("-")[0].lower() == "en" else "basic"
