"""Text-to-speech voices behind one interface, and ``load_tts(spec)``."""

from __future__ import annotations

import functools

from voxanon.models.tts import cli_engines as cli_tts
from voxanon.models.tts.voices import CommandLineTts, PiperTts, TtsError, TtsVoice

__all__ = ["TtsError", "TtsVoice", "load_tts"]


@functools.lru_cache(maxsize=64)
def load_tts(spec: str = "piper", *, threads: int = 0) -> TtsVoice:
    """Load a voice once per process.

    ``piper``, ``kokoro:<voice>[@<language>]`` (a Kokoro-82M style pack such as ``af_heart``, or a
    mixture ``af_heart*0.5+af_bella*0.5``, reading English text, or text in ``<language>``: ``es``,
    ``fr``, ``it``, ``pt-br``, ``hi``, ``ja``, ``zh``), ``espeak-ng[:<voice>]``, ``flite:<voice>``,
    ``festival:<voice>``. ``threads`` sets the ONNX intra-op threads of piper and kokoro
    (0: all cores).
    """
    if spec == "piper":
        return PiperTts(threads=threads)
    engine, _, voice = spec.partition(":")
    if engine == "kokoro" and voice:
        from voxanon.models.tts.kokoro import KokoroTts

        voice, _, language = voice.partition("@")
        return KokoroTts(voice, threads=threads, language=language or "en")
    if engine == "espeak-ng":
        return CommandLineTts(engine, voice or "en-us")
    if engine in cli_tts.ENGINES and voice:
        return CommandLineTts(engine, voice)
    raise TtsError(f"unknown TTS voice {spec!r}; use piper, kokoro:<voice>[*w+<voice>*w...][@<language>], "
                   "espeak-ng[:<voice>], flite:<voice> or festival:<voice>")
