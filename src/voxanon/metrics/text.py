"""Transcript normalisations applied before scoring WER / CER."""

import functools
import re
import unicodedata

from voxanon.textnorm import normalize_basic, spell_numbers

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
    spelt out (:func:`voxanon.textnorm.spell_numbers`) and titles written in full.

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




@functools.lru_cache(maxsize=1)
def _traditional_to_simplified():
    from opencc import OpenCC

    return OpenCC("t2s")


def normalize_chinese(text: str) -> str:
    """:func:`normalize_basic` with traditional Chinese characters written as simplified ones (OpenCC's ``t2s``
    table): Whisper writes Mandarin speech in either script, a simplified transcript in one.

    Examples
    --------
    >>> normalize_chinese("我們的會議推遲到下午。") == normalize_chinese("我们的会议推迟到下午")
    True
    """
    return normalize_basic(_traditional_to_simplified().convert(text))


# Hindustani consonants in a shared Latin spelling, from Devanagari (Hindi) and from the Perso-Arabic script of Urdu.
# Both scripts write the same spoken words, so their consonants agree once aspiration, retroflexion, sibilant and
# nasal places are folded; vowels are dropped (Urdu leaves short vowels unwritten), and so are the glides y/v,
# which Urdu writes with its long-vowel letters.
_DEVANAGARI_CONSONANTS = dict(zip("कखगघङचछजझञटठडढणतथदधनपफबभमरलशषसहऋंँ", "kkggnccjjnttddnttddnppbbmrlssshrnn"))
#: consonants written with the nukta below (Persian and Arabic sounds, flaps)
_NUKTA, _WITH_NUKTA = "\u093c", dict(zip("कखगजडढफ", "kxgzrrf"))
_DOUBLED = re.compile(r"(.)\1+")
_URDU_CONSONANTS = dict(zip("بپتٹثجچحخدڈذرڑزژسشصضطظغفقکگلمنںهہۃة", "bpttsjchxddzrrzzsssztzgfkkglmnnhhhh"))


def normalize_hindustani(text: str) -> str:
    """Consonants of Hindi or Urdu text in one Latin spelling, words kept apart: what a Hindi sentence and its
    transcript in either script share (Whisper often writes Hindi speech in Urdu's script).

    Examples
    --------
    >>> normalize_hindustani("आज मौसम बहुत अच्छा है।") == normalize_hindustani("آج موسم بہت اچھا ہے")
    True
    >>> normalize_hindustani("आज मौसम बहुत अच्छा है।")
    'j msm bht c h'
    """
    words = []
    for word in unicodedata.normalize("NFD", text).split():
        letters = "".join(_WITH_NUKTA.get(ch, "") if following == _NUKTA
                          else _DEVANAGARI_CONSONANTS.get(ch) or _URDU_CONSONANTS.get(ch, "")
                          for ch, following in zip(word, word[1:] + " "))
        words.append(_DOUBLED.sub(r"\1", letters))  # Urdu does not write doubled consonants
    return " ".join(w for w in words if w)


NORMALIZERS = {"vpc": normalize_vpc, "spoken": normalize_spoken, "basic": normalize_basic, "none": normalize_none,
               "hindustani": normalize_hindustani, "chinese": normalize_chinese}
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
    said, the VPC's form), ``chinese`` for Chinese (traditional characters as simplified), ``basic`` for every
    other language."""
    base = language.split("-")[0].lower()
    return {"en": "spoken", "zh": "chinese"}.get(base, "basic")
