"""Phones in time: forced alignment of a transcript with pocketsphinx, and frame-level phone labels.

pocketsphinx 5's US-English model aligns the words of a known transcript to
the audio (100 frames a second), then its phones (a second pass with
``set_alignment``). Each phone takes at least 3 frames, and the second pass
fails on some fast speech; such an utterance is aligned again at the frame
rates of :data:`RETRY_FRAME_RATES`, in turn (of 1,000 Kokoro training
utterances, 75 failed and 58 of them were rescued; where both rates align,
89 % of the frames get the same phone at 150 or 200 frames a second as at
100: ``experiments/bench_alignment_retries.py``). Each utterance starts from
the decoder's initial feature state, so its alignment does not depend on what
was aligned before it. Its
phone set is CMUdict's 39 phones (ARPAbet, no stress) and ``SIL``; filler
models and anything else are counted as ``SIL``. Every
word must be in the model's dictionary: an utterance with an unknown word
raises :class:`AsrError` (the caller leaves it out).

These labels are what ``voxanon train bottleneck --targets phones`` trains the
B5/B6 content codes on: each frame's phone, as the VPC's ASR acoustic model is
trained on frame-level targets of a forced alignment.
"""

from __future__ import annotations

import numpy as np

from voxanon.audio.io import resample, to_pcm16
from voxanon.metrics.text import normalize_spoken
from voxanon.models.asr.base import AsrError
from voxanon.models.asr.sphinx import decode_utterance, new_decoder

#: the alignment's classes: CMUdict's 39 phones, then silence
PHONES = ("AA", "AE", "AH", "AO", "AW", "AY", "B", "CH", "D", "DH", "EH", "ER", "EY", "F", "G", "HH", "IH", "IY", "JH",
          "K", "L", "M", "N", "NG", "OW", "OY", "P", "R", "S", "SH", "T", "TH", "UH", "UW", "V", "W", "Y", "Z", "ZH",
          "SIL")
SIL = PHONES.index("SIL")
_INDEX = {p: i for i, p in enumerate(PHONES)}

#: one segment: phone index, start and end in seconds
Segment = tuple[int, float, float]
#: frames a second of the retries when the phones find no path at the model's 100 (3 frames: 20 and 15 ms)
RETRY_FRAME_RATES = (150, 200)


class PhoneAligner:
    """pocketsphinx's forced aligner (one utterance at a time; 16 kHz, other rates resampled)."""

    def __init__(self) -> None:
        self.decoder = new_decoder()
        self._retries: dict[int, object] = {}

    def words(self, text: str) -> list[str]:
        """The transcript as the dictionary spells it (AsrError naming the words it lacks, or for no word)."""
        words = normalize_spoken(text).lower().split()
        missing = [w for w in words if self.decoder.lookup_word(w) is None]
        if missing or not words:
            raise AsrError(f"cannot align {text!r}: " + (f"not in the pronunciation dictionary: {missing}"
                                                         if missing else "no word"))
        return words

    def align(self, wav: np.ndarray, sr: int, text: str) -> list[Segment]:
        """The phones of ``text`` in ``wav``, in order, as ``(phone index, start s, end s)``."""
        words = " ".join(self.words(text))
        pcm = to_pcm16(resample(np.asarray(wav, np.float32), sr, 16000)).tobytes()
        for rate in (None, *RETRY_FRAME_RATES):
            try:
                phones = align_pcm(self._decoder(rate), pcm, words)
                break
            except RuntimeError as exc:
                error = exc
        else:
            raise AsrError(f"cannot align {text!r}: {error}") from error
        if not phones:
            raise AsrError(f"cannot align {text!r}: the aligner found no path through the audio")
        return phones

    def _decoder(self, rate: int | None):
        """The decoder at the model's frame rate (None) or at ``rate`` frames a second (made on first use)."""
        if rate is None:
            return self.decoder
        if rate not in self._retries:
            self._retries[rate] = new_decoder(frate=rate)
        return self._retries[rate]


def align_pcm(decoder, pcm: bytes, words: str) -> list[Segment]:
    """Words, then phones, of 16 kHz PCM with ``decoder`` (RuntimeError when no path fits)."""
    decoder.reinit_feat()  # pocketsphinx carries its cepstral mean over from the last utterance: start afresh
    decoder.set_align_text(words)
    decode_utterance(decoder, pcm)
    decoder.set_alignment()
    decode_utterance(decoder, pcm)
    fr = int(decoder.config["frate"])
    return [(_INDEX.get(p.name, SIL), p.start / fr, (p.start + p.duration) / fr)
            for p in decoder.get_alignment().phones()]


def frame_labels(segments: list[Segment], n_frames: int, frame_rate: float) -> np.ndarray:
    """The phone index at the centre of each of ``n_frames`` frames at ``frame_rate`` (``SIL`` outside every
    segment), int64 ``(n_frames,)``."""
    labels = np.full(n_frames, SIL, dtype=np.int64)
    if not segments:
        return labels
    centres = (np.arange(n_frames) + 0.5) / frame_rate
    starts = np.array([s for _, s, _ in segments])
    ends = np.array([e for _, _, e in segments])
    idx = np.searchsorted(starts, centres, side="right") - 1
    inside = (idx >= 0) & (centres < ends[np.clip(idx, 0, None)])
    labels[inside] = np.array([p for p, _, _ in segments])[idx[inside]]
    return labels
