"""ASR→TTS cascade (VPC 2024 T8-1 family): recognise the words, speak them with one synthetic voice.

Only the recognised text crosses from input to output, so everything about
the speaker is gone: timbre, pitch, accent, speaking style; so are emotion and
intonation (the UAR of an emotion recogniser drops towards chance) and every
recognition error becomes a content error. All utterances come out in the
same voice, which makes the output unlinkable by construction.

Long inputs are recognised and spoken in segments cut at pauses
(:data:`SEGMENTS`), so that memory does not grow with the duration; an input
up to 28 s is one segment.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from voxanon.anonymizers.base import Anonymizer, Chunking, param
from voxanon.audio.io import fit_length, resample
from voxanon.models.asr import DEFAULT_ASR, AsrBackend, load_asr
from voxanon.models.tts import TtsError, TtsVoice, load_tts
from voxanon.ranges import Range

#: speaking-rate factors the duration matching may ask of the voice
_RATE_RANGE = (0.5, 2.0)
#: where :meth:`Cascade.process` cuts long inputs: at the quietest 0.2 s within 2 s of every 20-s mark (a
#: pause between words, where there is one); segments do not overlap and are not cross-faded
SEGMENTS = Chunking(seconds=20.0, overlap=4.0, fade=0.2)


class Cascade(Anonymizer):
    """ASR→TTS cascade: transcribe offline, re-speak with one synthetic voice (speaker and emotion lost).

    The ASR (``whisper-tiny`` by default) and the voice (Piper's bundled en_US
    voice; espeak-ng when piper is not installed) load once per process, on
    the first utterance. Output is at the input's rate. With ``match_duration``
    the voice speaks at the rate that fills the input's duration (the text is
    spoken once at the normal rate, then again at the rate that makes it fit,
    with one correction pass; rates kept within 0.5-2x), and the remainder is
    cut or zero-padded at the end; without it the output lasts as long as the
    voice takes to say the text.
    The output is scaled to the input's peak level. An utterance with no
    recognised words becomes silence of the input's length.
    The result does not depend on ``rng``: one text gives one waveform.
    :meth:`process` runs long inputs segment by segment (see :data:`SEGMENTS`):
    each segment is recognised and spoken on its own, fills its own duration
    and takes its own peak level; the outputs are joined end to end.
    """

    name = "cascade"
    needs_model = True

    @dataclasses.dataclass(frozen=True)
    class Config:
        asr: str = param(DEFAULT_ASR, "ASR backend: whisper-tiny, pocketsphinx or wav2vec2:<dir>")
        tts: str = param("piper", "voice: piper, espeak-ng[:<voice>], flite:<voice> or festival:<voice>")
        match_duration: bool = param(True, "speak at the rate that fills the input's duration, then pad/cut")
        threads: int = param(
            1, "CPU threads of the ASR and the voice per worker process (0: library default)", range=Range(0, 256)
        )

    def __init__(self, config=None, **params) -> None:
        super().__init__(config, **params)
        self._asr: AsrBackend | None = None
        self._tts: TtsVoice | None = None

    def models(self) -> tuple[AsrBackend, TtsVoice]:
        """The ASR and the voice, loaded on first use (cached per process)."""
        if self._asr is None:
            self._asr = load_asr(self.config.asr, threads=self.config.threads)
        if self._tts is None:
            try:
                self._tts = load_tts(self.config.tts, threads=self.config.threads)
            except TtsError as exc:
                if self.config.tts != "piper":
                    raise
                warnings.warn(f"{exc}; the cascade falls back to espeak-ng", stacklevel=2)
                self._tts = load_tts("espeak-ng")
        return self._asr, self._tts

    def process(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        """:meth:`anonymize` of each segment between pauses, joined (one segment: :meth:`anonymize` itself)."""
        cuts = SEGMENTS.bounds(wav, sr)
        if len(cuts) == 2:
            return self.anonymize(wav, sr, rng)
        segments = list(zip(cuts, cuts[1:]))
        if not self.config.match_duration:  # output lengths unknown in advance
            return np.concatenate([self.anonymize(wav[a:b], sr, rng)[0] for a, b in segments]), sr
        out = np.empty(len(wav), dtype=np.float32)
        for a, b in segments:
            out[a:b] = self.anonymize(wav[a:b], sr, rng)[0]
        return out, sr

    def anonymize(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        asr, tts = self.models()
        text = asr.transcribe([wav], sr)[0].strip()
        if not any(c.isalnum() for c in text):
            return np.zeros(len(wav), dtype=np.float32), sr
        speech, tts_sr = tts.synthesize(text)
        if self.config.match_duration:
            target, rate = len(wav) * tts_sr / sr, 1.0
            for _ in range(2):
                new_rate = float(np.clip(rate * len(speech) / target, *_RATE_RANGE))
                if abs(new_rate / rate - 1.0) < 0.01:
                    break
                rate = new_rate
                speech, tts_sr = tts.synthesize(text, rate=rate)
        speech = resample(speech, tts_sr, sr)
        if self.config.match_duration:
            speech = fit_length(speech, len(wav))
        peak = float(np.max(np.abs(speech)))
        if peak > 0:  # the input's peak level (the voices normalise to full scale)
            speech = speech * (float(np.max(np.abs(wav))) / peak)
        return np.clip(speech, -1.0, 1.0).astype(np.float32), sr
