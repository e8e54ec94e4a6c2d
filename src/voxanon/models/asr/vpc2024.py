"""The VPC 2024 kit's ASR, ``exp/asr`` (speechbrain ``EncoderASR``: wav2vec2 + DNN + CTC), without speechbrain.

The kit (``evaluation/utility/asr/evaluate_asr.py`` and
``speechbrain_asr/inference.py``, ``configs/eval_pre.yaml``) loads ``exp/asr``
(its latest ``CKPT<n>`` entry if there is one) with ``EncoderASR.from_hparams``;
the folder is speechbrain/asr-wav2vec2-librispeech (the kit's download script
pinned revision a9fdfb4 before moving it into its release zip). It reads each
data set's ``wav.scp`` in order, sorts it by length, longest first (a stable
sort), and transcribes batches of ``eval_batchsize`` = 8 zero-padded waveforms
with relative lengths ``length / longest`` (float32):

- ``modules.encoder`` of ``hyperparams.yaml``, a ``LengthsCapableSequential``
  (the wav2vec2 lobe, the ``enc`` DNN, ``ctc_lin``, ``log_softmax``), is built
  here from the file (:mod:`voxanon.models.speechbrain`); the lobe's input and output
  layer norms cover each item's padding, so a transcript depends on its batch;
- ``decoding_function``, ``ctc_greedy_decode(blank_id)``: in each item's first
  ``round(rel_len * frames)`` frames the best class, repeats merged, blanks
  dropped (:func:`ctc_greedy`);
- the ``tokenizer`` turns the ids into text: a sentencepiece model
  (``decode_ids``) or a ``CTCTextEncoder`` file (labels joined).

This backend does the same; given a data set's utterances in ``wav.scp``
order in one call, its batches are the kit's, so are its transcripts. The
text is the tokenizer's, unchanged: the kit's scoring strips it and splits it
on spaces against upper-case, unpunctuated LibriSpeech references, and
voxanon's ``vpc`` normalisation (:func:`voxanon.metrics.text.normalize_vpc`)
leaves such text as it is (it would only merge runs of spaces, which the kit
counts as empty words). Input at another rate is resampled to 16 kHz with
soxr (the kit's audio normalizer uses torchaudio's resampler).
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np

from voxanon.models.asr.base import AsrBackend, AsrError

#: speechbrain's greedy CTC decoder (0.5.x and 1.x spellings)
GREEDY = ("speechbrain.decoders.ctc_greedy_decode", "speechbrain.decoders.ctc.ctc_greedy_decode")
SENTENCEPIECE = "sentencepiece.SentencePieceProcessor"
CTC_TEXT_ENCODER = "speechbrain.dataio.encoder.CTCTextEncoder"


def ctc_greedy(log_probs: object, rel_lens: object, blank: int) -> list[list[int]]:
    """speechbrain's ``ctc_greedy_decode``: token ids of each ``(frames, classes)`` item of a batch.

    ``rel_lens`` are float32 lengths relative to the batch's longest; item ``i`` is decoded over its first
    ``round(rel_lens[i] * frames)`` frames (round half to even); a negative ``blank`` counts from the end.
    """
    import torch

    frames, classes = log_probs.shape[1], log_probs.shape[2]
    blank = blank + classes if blank < 0 else blank
    out = []
    for seq, rel in zip(log_probs, rel_lens):
        best = seq[: int(torch.round(rel * frames))].argmax(dim=-1).tolist()
        out.append([token for token, _ in itertools.groupby(best) if token != blank])
    return out


class _Tokenizer:
    """The ``tokenizer`` loadable: ids → text as EncoderASR does for its type."""

    def __init__(self, node: object, path: Path, where: Path):
        target = getattr(node, "target", None)
        if target == SENTENCEPIECE:
            try:
                import sentencepiece
            except ImportError as exc:
                raise AsrError("the VPC 2024 ASR's tokenizer needs sentencepiece: pip install 'voxanon[vpc]'") from exc
            self.sp = sentencepiece.SentencePieceProcessor()
            try:
                self.sp.Load(str(path))
            except (OSError, RuntimeError) as exc:
                raise AsrError(f"{path}: not a sentencepiece model ({exc})") from exc
            self.size = self.sp.get_piece_size()
        elif target == CTC_TEXT_ENCODER:
            from voxanon.models.speechbrain.labels import read_label_encoder

            self.sp, self.labels = None, read_label_encoder(path)
            self.size = len(self.labels)
        else:
            raise AsrError(f"{where}: tokenizer {target!r} is not supported ({SENTENCEPIECE} or {CTC_TEXT_ENCODER})")

    def decode(self, ids: list[int]) -> str:
        if any(i >= self.size for i in ids):
            raise AsrError(f"the model emitted token {max(ids)}, which its tokenizer ({self.size} tokens) lacks; "
                           "the tokenizer file does not belong to this model")
        if self.sp is not None:
            return self.sp.decode_ids(ids)
        return "".join(str(self.labels[i]) for i in ids)


class Vpc2024Asr(AsrBackend):
    """The kit's ``exp/asr`` EncoderASR: batches of ``batch_size`` (the kit's 8), longest first, greedy CTC."""

    def __init__(self, folder: str | os.PathLike, *, device: str = "cpu", threads: int = 0, batch_size: int = 8):
        import torch

        from voxanon.models.speechbrain.hparams import SbFolderError

        if threads:
            torch.set_num_threads(threads)
        self.device, self.batch_size = device, batch_size
        try:
            self._load(Path(folder))
        except SbFolderError as exc:
            raise AsrError(str(exc)) from exc

    def _load(self, folder: Path) -> None:
        from voxanon.models.speechbrain.hparams import (
            HPARAMS_FILE,
            checkpoint_folder,
            file_of,
            load_hparams,
            node_at,
        )
        from voxanon.models.speechbrain.model import load_modules, model_id
        from voxanon.models.speechbrain.wav2vec2 import Wav2Vec2Lobe

        folder = checkpoint_folder(folder)
        where = folder / HPARAMS_FILE
        hparams = load_hparams(where)
        encoder = node_at(hparams, "modules", "encoder", where=where)
        decoding = node_at(hparams, "decoding_function", where=where, kind="name")
        if decoding.target not in GREEDY:
            raise AsrError(f"{where}: decoding_function {decoding.target!r} is not speechbrain's greedy CTC decoder")
        (self.encoder,), files = load_modules(folder, hparams, where, [encoder])
        self.tokenizer = _Tokenizer(hparams.get("tokenizer"), file_of(files, hparams.get("tokenizer"), where,
                                                                       "tokenizer"), where)
        self.lobe = next((m for m in self.encoder.modules() if isinstance(m, Wav2Vec2Lobe)), None)
        if self.lobe is None:
            raise AsrError(f"{where}: modules.encoder has no wav2vec2 lobe; is this the kit's exp/asr?")
        self.blank = int(decoding.kwargs.get("blank_id", -1))
        self.encoder.to(self.device)
        self.name = f"vpc2024:{model_id(folder, where, files)}"

    def _transcribe(self, wavs: list[np.ndarray]) -> list[str]:
        order = sorted(range(len(wavs)), key=lambda i: len(wavs[i]), reverse=True)
        out = [""] * len(wavs)
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            for i, text in zip(idx, self.transcribe_batch([wavs[i] for i in idx])):
                out[i] = text
        return out

    def log_probs(self, wavs: list[np.ndarray]) -> tuple[object, object]:
        """The encoder's ``(batch, frames, classes)`` log-probabilities of one zero-padded batch, and its float32
        relative lengths."""
        import torch

        longest = max(len(w) for w in wavs)
        if longest < self.lobe.receptive_field:
            raise AsrError(f"a batch's longest input has {longest} samples; wav2vec2 needs "
                           f"{self.lobe.receptive_field} or more")
        batch = torch.zeros(len(wavs), longest)
        for row, w in zip(batch, wavs):
            row[: len(w)] = torch.from_numpy(w)
        rel_lens = torch.tensor([len(w) for w in wavs], dtype=torch.float32) / longest
        with torch.inference_mode():
            return self.encoder(batch.to(self.device)).float().cpu(), rel_lens

    def transcribe_batch(self, wavs: list[np.ndarray]) -> list[str]:
        """Transcripts of one batch as the kit's ``transcribe_batch`` makes them (16 kHz float32 waveforms)."""
        log_probs, rel_lens = self.log_probs(wavs)
        return [self.tokenizer.decode(ids) for ids in ctc_greedy(log_probs, rel_lens, self.blank)]
