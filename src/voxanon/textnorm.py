"""Text forms shared by transcripts (``data``) and their scoring (``metrics``): numbers written as they are said
(English), and any language's basic word form. Pure functions below every layer."""

from __future__ import annotations

import re
import unicodedata

from num2words import num2words


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


_SPACES = re.compile(r"\s+")
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
