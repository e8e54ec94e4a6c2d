"""CMU pocketsphinx 5 with its bundled US-English model: light and offline, less accurate."""

from __future__ import annotations

import re

import numpy as np

from voxanon.audio.io import to_pcm16
from voxanon.models.asr.base import AsrBackend, AsrError, WordTiming

#: pronunciation-variant suffix, e.g. ``was(2)``
_VARIANT = re.compile(r"\(\d+\)$")


def _is_word(token: str) -> bool:
    """False for sentence markers, silence and filler tokens (``<s>``, ``<sil>``, ``[NOISE]``)."""
    return not (token.startswith("<") or token.startswith("[") or token.startswith("+"))


def new_decoder(**config):
    """A quiet pocketsphinx decoder with its bundled US-English model and ``config`` (AsrError when pocketsphinx
    is missing)."""
    try:
        from pocketsphinx import Decoder
    except ImportError as exc:
        raise AsrError("pocketsphinx is needed: pip install pocketsphinx") from exc
    return Decoder(loglevel="FATAL", **config)


def decode_utterance(decoder, pcm: bytes) -> None:
    """Run ``decoder`` over one whole utterance of 16 kHz 16-bit PCM."""
    decoder.start_utt()
    decoder.process_raw(pcm, full_utt=True)
    decoder.end_utt()


class SphinxBackend(AsrBackend):
    """pocketsphinx decoder (one utterance at a time; the library has no batch mode)."""

    name = "pocketsphinx-5-en-us"

    def __init__(self) -> None:
        self.decoder = new_decoder()
        self.frame_rate = int(self.decoder.config["frate"])

    def _decode(self, wav: np.ndarray) -> list[tuple[str, int, int]]:
        d = self.decoder
        decode_utterance(d, to_pcm16(wav).tobytes())
        return [(_VARIANT.sub("", s.word), s.start_frame, s.end_frame) for s in d.seg() if _is_word(s.word)]

    def _transcribe(self, wavs: list[np.ndarray]) -> list[str]:
        return [" ".join(word for word, _, _ in self._decode(w)) for w in wavs]

    def _timings(self, wavs: list[np.ndarray]) -> list[list[WordTiming]]:
        fr = self.frame_rate
        return [[WordTiming(word, start / fr, (end + 1) / fr) for word, start, end in self._decode(w)] for w in wavs]
