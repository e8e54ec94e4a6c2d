"""Text-to-speech voices behind one interface, and ``load_tts(spec)``."""

from __future__ import annotations

import functools

from voxanon.audio import tts as cli_tts
from voxanon.models.tts.voices import CommandLineTts, PiperTts, TtsError, TtsVoice

__all__ = ["TtsError", "TtsVoice", "load_tts"]


@functools.lru_cache(maxsize=4)
def load_tts(spec: str = "piper", *, threads: int = 0) -> TtsVoice:
    """Load a voice once per process: ``piper``, ``espeak-ng[:<voice>]``, ``flite:<voice>``, ``festival:<voice>``."""
    if spec == "piper":
        return PiperTts(threads=threads)
    engine, _, voice = spec.partition(":")
    if engine == "espeak-ng":
        return CommandLineTts(engine, voice or "en-us")
    if engine in cli_tts.ENGINES and voice:
        return CommandLineTts(engine, voice)
    raise TtsError(f"unknown TTS voice {spec!r}; use piper, espeak-ng[:<voice>], flite:<voice> or festival:<voice>")
