"""Command-line text-to-speech engines of Debian: espeak-ng, flite, festival.

:func:`synthesize` runs one engine on one text and returns ``(waveform,
sample_rate)`` at the engine's native rate. Prosody settings are relative
factors with the same meaning for every engine:

- ``rate``: speaking-rate factor (2.0 = twice as fast), done by the engine;
- ``pitch``: F0 multiplier; espeak-ng does it natively (its ``-p`` setting
  moves F0 by about 14 % per 15 steps, measured on its English voices), the
  other engines by a WORLD analysis/resynthesis after synthesis
  (:func:`voxanon.models.tts.prosody.shift_pitch`) (their own
  pitch controls differ in scale and many voices ignore them);
- ``pitch_range``: multiplier of the log-F0 excursions around the utterance
  mean (intonation range), by WORLD for every engine;
- ``volume``: linear gain.

Voices: espeak-ng takes ``<language>[+<variant>]`` (``en-us+f3``; MBROLA
voices such as ``mb-us1`` need the ``mbrola`` binary and the voice package),
flite a name from ``flite -lv`` or a ``.flitevox`` path, festival a voice
directory name such as ``cmu_us_slt_arctic_hts``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

from voxanon.audio.io import AudioError, check_waveform

ENGINES = ("espeak-ng", "flite", "festival")

#: Debian packages that provide each engine (named in error messages)
ENGINE_PACKAGES = {"espeak-ng": "espeak-ng", "flite": "flite", "festival": "festival", "mbrola": "mbrola"}

_FESTIVAL_VOICE_ROOT = Path("/usr/share/festival/voices")
_MBROLA_ROOT = Path("/usr/share/mbrola")
_TIMEOUT_S = 120
#: espeak-ng ``-p`` steps per octave of F0 (measured: -p 35 -> 65 multiplies F0 by ~1.3)
_ESPEAK_STEPS_PER_OCTAVE = 79.0


class TTSError(AudioError):
    """A TTS engine or voice that is missing or failed; the message names the Debian package."""


def engine_available(engine: str) -> bool:
    """Whether the engine's program is on ``PATH``."""
    return shutil.which(_program(engine)) is not None


def _program(engine: str) -> str:
    if engine not in ENGINES:
        raise TTSError(f"unknown TTS engine {engine!r}; choose one of {', '.join(ENGINES)}")
    return "text2wave" if engine == "festival" else engine


def require_engine(engine: str) -> None:
    """Raise TTSError naming the Debian package when the engine is not installed."""
    if not engine_available(engine):
        raise TTSError(f"TTS engine {engine!r} not found: install the Debian package "
                       f"'{ENGINE_PACKAGES[engine]}' (apt-get install {ENGINE_PACKAGES[engine]})")


@functools.cache
def engine_version(engine: str) -> str:
    """The engine's version line, or ``'missing'``."""
    if not engine_available(engine):
        return "missing"
    cmd = {"espeak-ng": ["espeak-ng", "--version"], "flite": ["flite", "--version"],
           "festival": ["festival", "--version"]}[engine]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT_S).stdout
    lines = [ln.split("Data at:")[0].strip() for ln in out.splitlines() if ln.strip()]
    return next((ln for ln in lines if "version" in ln.lower()), lines[0] if lines else "unknown")


@functools.cache
def flite_voices() -> tuple[str, ...]:
    """Voices compiled into flite (``flite -lv``); empty when flite is missing."""
    if not engine_available("flite"):
        return ()
    out = subprocess.run(["flite", "-lv"], capture_output=True, text=True, timeout=_TIMEOUT_S).stdout
    return tuple(out.split(":", 1)[1].split()) if ":" in out else ()


@functools.cache
def festival_voices() -> tuple[str, ...]:
    """Installed festival voices (directories under /usr/share/festival/voices/<lang>/)."""
    if not engine_available("festival") or not _FESTIVAL_VOICE_ROOT.is_dir():
        return ()
    return tuple(sorted(p.name for p in _FESTIVAL_VOICE_ROOT.glob("*/*") if p.is_dir()))


@functools.cache
def espeak_variants() -> tuple[str, ...]:
    """espeak-ng voice variant file names (the part after ``+``)."""
    if not engine_available("espeak-ng"):
        return ()
    out = subprocess.run(["espeak-ng", "--voices=variant"], capture_output=True, text=True,
                         timeout=_TIMEOUT_S).stdout
    names = []
    for line in out.splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 5 and fields[4].startswith("!v/"):
            names.append(fields[4][3:])
    return tuple(names)


def mbrola_voice_available(voice: str) -> bool:
    """Whether espeak-ng can speak MBROLA voice ``mb-<name>`` (needs ``mbrola`` and the voice data)."""
    name = voice.removeprefix("mb-").split("-")[0]
    return shutil.which("mbrola") is not None and (_MBROLA_ROOT / name).exists()


def _check_voice(engine: str, voice: str) -> None:
    if engine == "flite":
        if not voice.endswith(".flitevox") and voice not in flite_voices():
            raise TTSError(f"flite has no voice {voice!r} (available: {', '.join(flite_voices())})")
    elif engine == "festival":
        if voice not in festival_voices():
            raise TTSError(f"festival voice {voice!r} is not installed (installed: "
                           f"{', '.join(festival_voices()) or 'none'}); install its festvox-* Debian package")
    elif voice.startswith("mb-") and not mbrola_voice_available(voice):
        raise TTSError(f"espeak-ng MBROLA voice {voice!r} needs the Debian packages 'mbrola' and "
                       f"'mbrola-{voice[3:].split('-')[0]}'")


def _espeak_pitch(factor: float) -> int:
    """espeak-ng ``-p`` value (default 50) for an F0 multiplier."""
    return int(np.clip(round(50 + _ESPEAK_STEPS_PER_OCTAVE * np.log2(factor)), 0, 99))


def _command(engine: str, voice: str, text_file: str, wav_file: str, rate: float, pitch: float) -> list[str]:
    if engine == "espeak-ng":
        return ["espeak-ng", "-v", voice, "-s", str(int(round(175 * rate))), "-p", str(_espeak_pitch(pitch)),
                "-f", text_file, "-w", wav_file]
    if engine == "flite":
        return ["flite", "-voice", voice, "--setf", f"duration_stretch={1.0 / rate:.6f}",
                "-f", text_file, "-o", wav_file]
    # festival: diphone/clunit voices read Duration_Stretch, HTS voices the engine's "-r" speed
    speed = (f'(set! hts_engine_params (append hts_engine_params (list (list "-r" {rate:.6f}))))'
             if voice.endswith("_hts") else f"(Parameter.set 'Duration_Stretch {1.0 / rate:.6f})")
    return ["text2wave", "-eval", f"(voice_{voice})", "-eval", speed, text_file, "-o", wav_file]


def synthesize(engine: str, voice: str, text: str, *, rate: float = 1.0, pitch: float = 1.0,
               pitch_range: float = 1.0, volume: float = 1.0) -> tuple[np.ndarray, int]:
    """Speak ``text`` with one engine and voice.

    Parameters
    ----------
    engine : {"espeak-ng", "flite", "festival"}
    voice : str
        Engine voice name (see the module docstring).
    text : str
        Plain text; punctuation guides the engine's phrasing.
    rate, pitch, pitch_range, volume : float
        Relative prosody factors (1.0 = the voice's default).

    Returns
    -------
    (waveform, sample_rate)
        Mono float32 at the engine's native rate.

    Raises
    ------
    TTSError
        Engine or voice missing (naming the Debian package), or synthesis failed.
    """
    require_engine(engine)
    _check_voice(engine, voice)
    if not text.strip():
        raise TTSError(f"{engine}/{voice}: empty text")
    for name, value in (("rate", rate), ("pitch", pitch), ("pitch_range", pitch_range), ("volume", volume)):
        if not value > 0:
            raise TTSError(f"{name} must be > 0, got {value}")
    with tempfile.TemporaryDirectory(prefix="voxanon-tts-") as tmp:
        text_file, wav_file = os.path.join(tmp, "in.txt"), os.path.join(tmp, "out.wav")
        Path(text_file).write_text(text.strip() + "\n", encoding="utf-8")
        cmd = _command(engine, voice, text_file, wav_file, rate, pitch)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT_S)
        if proc.returncode != 0 or not os.path.exists(wav_file):
            raise TTSError(f"{engine}/{voice} failed on {text[:60]!r}: {proc.stderr.strip()[-300:]}")
        try:
            data, sr = sf.read(wav_file, dtype="float32", always_2d=True)
        except Exception as exc:  # soundfile raises several types for corrupt files
            raise TTSError(f"{engine}/{voice} wrote unreadable audio: {exc}") from exc
    wav = data.mean(axis=1)
    if wav.size == 0 or not np.any(wav):
        raise TTSError(f"{engine}/{voice} produced no audio for {text[:60]!r}")
    world_pitch = 1.0 if engine == "espeak-ng" else pitch
    if world_pitch != 1.0 or pitch_range != 1.0:
        from voxanon.models.tts.prosody import shift_pitch  # pyworld only when needed

        wav = shift_pitch(wav, sr, world_pitch, pitch_range)
    wav = (wav * volume).astype(np.float32)
    check_waveform(wav, f"{engine}/{voice}")
    return wav, int(sr)
