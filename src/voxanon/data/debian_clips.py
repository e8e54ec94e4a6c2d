"""Real recorded speech from Debian packages, as a small labelled data directory (English) and held-out
sentence prompts (English, Spanish, French, Italian).

Only clips whose words are known exactly are used: the ALSA channel
announcements, Asterisk's digit and letter prompts, saytime's clock words,
KLettres' letter names and pocketsphinx's LibriVox and card clips with their
transcriptions. Each package is one speaker (``<package-speaker>``). Gender is
*estimated* from the speaker's median F0 over all its clips (female above
160 Hz), since the packages do not state it. Licences and holders are in
``resources/debian_clips.json`` and are copied into ``corpus.json``.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from voxanon.audio.io import load_audio, resample, write_wav
from voxanon.data.kaldi import DataDir
from voxanon.data.sentences import Sentence, normalize_transcript
from voxanon.textnorm import normalize_basic, number_words

SAMPLE_RATE = 16000
#: median F0 (Hz) above which a speaker is labelled female
F0_FEMALE_HZ = 160.0
_SAYTIME_WORDS = {"the_time_is": "THE TIME IS", "oclock": "O'CLOCK", "oh": "OH", "and": "AND",
                  "exactly": "EXACTLY", "hour": "HOUR", "hours": "HOURS", "minute": "MINUTE",
                  "minutes": "MINUTES", "second": "SECOND", "seconds": "SECONDS"}


@dataclass(frozen=True)
class Clip:
    """One recorded clip with its exact transcript."""

    utt: str
    speaker: str
    package: str
    path: Path
    text: str
    language: str = "en"


def attributions() -> dict:
    """Package -> speaker, licence, copyright holder and content (from the shipped resource)."""
    raw = resources.files("voxanon.resources").joinpath("debian_clips.json").read_text(encoding="utf-8")
    return json.loads(raw)["packages"]


def _clip(speaker: str, package: str, path: Path, text: str, language: str = "en") -> Clip:
    stem = re.sub(r"[^A-Za-z0-9]+", "-", path.stem).strip("-").lower()
    text = normalize_transcript(text) if language == "en" else " ".join(text.split())
    return Clip(f"{speaker}-{stem}", speaker, package, path, text, language)


def _transcriptions(path: Path) -> dict[str, str]:
    """Sphinx ``<s> words </s> (id)`` lines -> {id: words}."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\s*(?:<s>)?(.*?)(?:</s>)?\s*\(([^)]+)\)\s*$", line)
        if m:
            out[m.group(2)] = m.group(1)
    return out


#: the speakers of the 16 kHz clips (pocketsphinx-testdata's; the others are 8 kHz or narrower)
WIDEBAND = ("librivox-ss01", "pocketsphinx-cards")


def find_clips(root: str | Path = "/") -> list[Clip]:
    """Every usable clip installed under ``root`` (``/`` normally), sorted by utterance id."""
    share = Path(root) / "usr/share"
    clips: list[Clip] = []
    for p in sorted((share / "sounds/alsa").glob("*.wav")):
        if p.stem != "Noise":
            clips.append(_clip("alsa", "alsa-utils", p, p.stem.replace("_", " ")))
    for sub in ("digits", "letters"):
        for p in sorted((share / "asterisk/sounds/en" / sub).glob("*.wav")):
            if p.stem.isdigit():
                clips.append(_clip("asterisk-allison", "asterisk-core-sounds-en-wav", p, number_words(int(p.stem))))
            elif sub == "letters" and re.fullmatch(r"[a-z]", p.stem):
                clips.append(_clip("asterisk-allison", "asterisk-core-sounds-en-wav", p, p.stem))
    for p in sorted((share / "saytime").glob("*.au")):
        text = number_words(int(p.stem)) if p.stem.isdigit() else _SAYTIME_WORDS.get(p.stem)
        if text:
            clips.append(_clip("saytime-dawson", "saytime", p, text))
    for lang, speaker in (("en", "klettres-en"), ("en_GB", "klettres-en-gb")):
        for p in sorted((share / "klettres" / lang / "alpha").glob("*.ogg")):
            if re.fullmatch(r"[A-Za-z]", p.stem):
                clips.append(_clip(speaker, "klettres-data", p, p.stem))
    sphinx = share / "pocketsphinx/test/data"
    for sub, trans, speaker in zip(("librivox", "cards"), ("transcription", "cards.transcription"), WIDEBAND):
        if (sphinx / sub / trans).is_file():
            texts = _transcriptions(sphinx / sub / trans)
            clips += [_clip(speaker, "pocketsphinx-testdata", sphinx / sub / f"{i}.wav", t)
                      for i, t in texts.items() if (sphinx / sub / f"{i}.wav").is_file()]
    return sorted(clips, key=lambda c: c.utt)


#: Asterisk's sentence prompts: language -> (speaker, the recording's language variety)
PROMPT_SPEAKERS = {"en": ("asterisk-allison", "en-US"), "es": ("asterisk-allison-es", "es-MX"),
                   "fr": ("asterisk-june", "fr-CA"), "it": ("asterisk-carlo", "it-IT")}


def prompt_clips(root: str | Path = "/", min_words: int = 5, language: str = "en") -> list[Clip]:
    """Asterisk's sentence prompts in ``language`` (8 kHz telephone speech of one speaker per language, see
    :data:`PROMPT_SPEAKERS`) with the transcripts of the package's ``core-sounds-<language>.txt``: prompts of at
    least ``min_words`` words, without digits or sound notes.

    English transcripts are normalised as the VPC's (:func:`normalize_transcript`); the others are kept as
    written (the Spanish ones are written without accents) and normalised when scored
    (:func:`voxanon.textnorm.normalize_basic`). Not part of :func:`find_clips` (the corpus's real subset):
    a held-out set of real read sentences.
    """
    if language not in PROMPT_SPEAKERS:
        raise ValueError(f"Asterisk's prompts are in {sorted(PROMPT_SPEAKERS)}, not {language!r}")
    share = Path(root) / "usr/share"
    listing = share / f"doc/asterisk-core-sounds-{language}/core-sounds-{language}.txt.gz"
    if not listing.is_file():
        return []
    speaker = PROMPT_SPEAKERS[language][0]
    clips = []
    with gzip.open(listing, "rt", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = re.match(r"([\w\-]+):\s*(.+)$", line.strip())
            path = share / "asterisk/sounds" / language / f"{m.group(1)}.wav" if m else None
            if path and path.is_file() and not re.search(r"[\[\]0-9]", m.group(2)):
                clip = _clip(speaker, f"asterisk-core-sounds-{language}-wav", path, m.group(2), language)
                if len(clip.text.split()) >= min_words:
                    clips.append(clip)
    return sorted(clips, key=lambda c: c.utt)


def prompt_sentences(language: str, root: str | Path = "/") -> tuple[list[Sentence], dict]:
    """Asterisk's prompt texts in ``language`` as sentences to synthesize, and a JSON-ready description (source,
    licence, holder, how many prompts and duplicates).

    Every prompt of :func:`prompt_clips` whatever its length (a corpus size chooses its lengths), each text
    once: a text several prompts share (``Gracias.``) is kept at its first prompt in id order and the others are
    counted as duplicates. Texts are kept as written (text and transcript alike); they are normalised when
    scored (:func:`voxanon.textnorm.normalize_basic`).

    Raises
    ------
    DataError
        The language's prompts are not installed (the Debian package ``asterisk-core-sounds-<language>-wav``).
    """
    from voxanon.errors import DataError

    clips = prompt_clips(root, min_words=1, language=language)
    if not clips:
        raise DataError(f"{Path(root) / 'usr/share/doc'}/asterisk-core-sounds-{language}: no {language!r} "
                        f"prompts found: install the Debian package asterisk-core-sounds-{language}-wav")
    seen: dict[str, Sentence] = {}
    for clip in clips:
        seen.setdefault(normalize_basic(clip.text), Sentence(clip.text, clip.text))
    package = f"asterisk-core-sounds-{language}-wav"
    info = {"source": f"{package}: the prompt texts of core-sounds-{language}.txt (Debian)",
            **{k: attributions()[package][k] for k in ("licence", "copyright")},
            "prompts": len(clips), "duplicates_dropped": len(clips) - len(seen),
            "left_out": "prompts written with digits or with [sound notes] (the listing gives no words for them)"}
    return list(seen.values()), info


def _median_f0(wavs: list[np.ndarray]) -> float:
    import pyworld

    f0 = np.concatenate([pyworld.dio(w.astype(np.float64), SAMPLE_RATE)[0] for w in wavs])
    voiced = f0[f0 > 0]
    return float(np.median(voiced)) if voiced.size else 0.0


def build_real_subset(root: str | Path, clips: list[Clip] | None = None) -> tuple[DataDir, dict]:
    """Convert the clips to 16 kHz WAV under ``root/wav/real/`` and describe them.

    Returns the data directory (wav.scp with absolute paths) and a JSON-ready
    description: per package licence and holder, per speaker clip count,
    median F0 and estimated gender. Existing converted files are reused.
    """
    root = Path(root).resolve()
    clips = find_clips() if clips is None else clips
    data = DataDir()
    wavs: dict[str, list[np.ndarray]] = {}
    for clip in clips:
        out = root / "wav/real" / clip.speaker / f"{clip.utt}.wav"
        if out.exists():
            wav, _ = load_audio(out)
        else:
            wav, sr = load_audio(clip.path)
            wav = resample(wav, sr, SAMPLE_RATE)
            write_wav(out, wav, SAMPLE_RATE)
        wavs.setdefault(clip.speaker, []).append(wav)
        data.wav_scp[clip.utt] = str(out)
        data.utt2spk[clip.utt] = clip.speaker
        data.text[clip.utt] = clip.text
        data.utt2dur[clip.utt] = f"{len(wav) / SAMPLE_RATE:.3f}"
    speakers = {}
    for spk in sorted(wavs):
        f0 = _median_f0(wavs[spk])
        data.spk2gender[spk] = "f" if f0 > F0_FEMALE_HZ else "m"
        package = next(c.package for c in clips if c.speaker == spk)
        speakers[spk] = {"package": package, "clips": len(wavs[spk]), "median_f0_hz": round(f0, 1),
                         "gender": data.spk2gender[spk]}
    used = sorted({c.package for c in clips})
    info = {"synthetic": False, "utterances": len(clips),
            "hours": round(sum(float(d) for d in data.utt2dur.values()) / 3600, 4),
            "gender_labels": f"estimated from each speaker's median F0 (female above {F0_FEMALE_HZ:g} Hz)",
            "speakers": speakers, "packages": {p: attributions()[p] for p in used}}
    return data, info
