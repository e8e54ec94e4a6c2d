"""The VPC 2024 kit's SER, ``exp/ser`` (one speechbrain wav2vec2 classifier per IEMOCAP fold), without speechbrain.

The kit (``evaluation/utility/ser/evaluate_ser.py``, ``configs/eval_pre.yaml``):
for each speaker in a data set's ``spk2fold`` it loads ``exp/ser/fold_<fold>``
(its latest ``CKPT<n>`` entry) with ``foreign_class(...,
classname="CustomEncoderWav2vec2Classifier", pymodule_file="custom_interface.py")``
and scores that speaker's utterances one at a time, so no fold model scores a
speaker it was trained on. The interface is speechbrain's
emotion-recognition-wav2vec2-IEMOCAP one (the classifier of speechbrain's
IEMOCAP recipe, ``train_with_wav2vec2.yaml``): ``classify_batch(wav)`` runs the
wav2vec2 lobe on the waveform (``modules.wav2vec2``, no lengths), averages its
frames (``modules.avg_pool``, ``StatisticsPooling(return_std=False)``), applies
``modules.output_mlp`` (a Linear) and ``softmax``; the predicted class is the
``label_encoder``'s label of the most probable output (IEMOCAP codes ``neu``,
``ang``, ``hap``, ``sad``).

Here the same computation gives :data:`~voxanon.data.iemocap.EMOTIONS` columns
(the encoder's labels mapped with :func:`~voxanon.data.iemocap.vpc_emotion`).
The kit's ``custom_interface.py`` is not run. Two differences: speechbrain's
``StatisticsPooling`` adds random noise of 1e-5 to 9e-5 to each mean, left out
here (the output is deterministic); and several utterances are scored in one
forward pass only when they have the same length (the lobe normalises over the
padding, so padded batches would differ from the kit's one-at-a-time scores).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np

from voxanon.audio.io import resample
from voxanon.data.iemocap import EMOTIONS, vpc_emotion
from voxanon.models.ser.base import EmotionRecognizer, SERError

#: what ``avg_pool`` must be (the mean over frames)
POOLING = "speechbrain.nnet.pooling.StatisticsPooling"
LABEL_ENCODER = "speechbrain.dataio.encoder.CategoricalEncoder"
SAMPLE_RATE = 16000


def _fold_dirs(folder: Path) -> dict[str, Path]:
    return {p.name[len("fold_"):]: p for p in sorted(folder.glob("fold_*")) if p.is_dir()}


class Vpc2024Ser(EmotionRecognizer):
    """One fold's classifier of the kit's ``exp/ser`` (``fold_<k>`` or its ``CKPT<n>`` folder)."""

    def __init__(self, folder: str | os.PathLike, *, device: str = "cpu"):
        from voxanon.models.speechbrain.hparams import SbFolderError

        try:
            self._load(Path(folder), device)
        except SbFolderError as exc:
            raise SERError(str(exc)) from exc

    def _load(self, folder: Path, device: str) -> None:
        from voxanon.models.speechbrain.hparams import (
            HPARAMS_FILE,
            checkpoint_folder,
            file_of,
            load_hparams,
            node_at,
        )
        from voxanon.models.speechbrain.labels import read_label_encoder
        from voxanon.models.speechbrain.layers import LINEAR
        from voxanon.models.speechbrain.model import load_modules, model_id

        folder = checkpoint_folder(folder)
        where = folder / HPARAMS_FILE
        hparams = load_hparams(where)
        lobe, mlp = (node_at(hparams, "modules", k, where=where) for k in ("wav2vec2", "output_mlp"))
        pool = node_at(hparams, "modules", "avg_pool", where=where)
        if pool.target != POOLING or pool.kwargs.get("return_std", True) or not pool.kwargs.get("return_mean", True):
            raise SERError(f"{where}: avg_pool must be {POOLING} with return_std: False (the mean over frames)")
        if mlp.target != LINEAR:
            raise SERError(f"{where}: output_mlp {mlp.target!r} is not a {LINEAR}")
        (self.lobe, self.mlp), files = load_modules(folder, hparams, where, [lobe, mlp])
        encoder = node_at(hparams, "label_encoder", where=where)
        if encoder.target != LABEL_ENCODER:
            raise SERError(f"{where}: label_encoder {encoder.target!r} is not a {LABEL_ENCODER}")
        path = file_of(files, encoder, where, "label_encoder")
        ind2lab = read_label_encoder(path)
        n_out = self.mlp.w.out_features
        mapped = {i: vpc_emotion(str(lab)) for i, lab in ind2lab.items()}
        if n_out != len(ind2lab) or sorted(filter(None, mapped.values())) != sorted(EMOTIONS):
            raise SERError(f"{path}: labels {[ind2lab[i] for i in sorted(ind2lab)]} are not the kit's four "
                           f"classes {EMOTIONS} for a classifier of {n_out} outputs")
        #: model output index of each EMOTIONS column
        self.columns = [next(i for i, e in mapped.items() if e == emo) for emo in EMOTIONS]
        self.lobe.to(device)
        self.mlp.to(device)
        self.device = device
        self.name = f"vpc2024:{model_id(folder, where, files)}"

    def logits(self, wav: object) -> object:
        """``output_mlp`` of the frame mean of the lobe's output, for a ``(batch, samples)`` tensor."""
        return self.mlp(self.lobe(wav).mean(dim=1))

    def predict_proba(self, wavs: list[np.ndarray], sr: int, *, batch_size: int = 16) -> np.ndarray:
        import torch

        wavs = [resample(np.asarray(w, dtype=np.float32), sr, SAMPLE_RATE) for w in wavs]
        out = np.zeros((len(wavs), len(EMOTIONS)), dtype=np.float32)
        groups: dict[int, list[int]] = {}
        for i, w in enumerate(wavs):
            if len(w) < self.lobe.receptive_field:
                raise SERError(f"input {i} has {len(w)} samples at 16 kHz; wav2vec2 needs "
                               f"{self.lobe.receptive_field} or more")
            groups.setdefault(len(w), []).append(i)
        for same in groups.values():
            for start in range(0, len(same), batch_size):
                idx = same[start:start + batch_size]
                batch = torch.from_numpy(np.stack([wavs[i] for i in idx])).to(self.device)
                with torch.inference_mode():
                    proba = torch.softmax(self.logits(batch), dim=-1).float().cpu().numpy()
                out[idx] = proba[:, self.columns]
        return out


class Vpc2024Folds(Mapping):
    """The kit's ``exp/ser``: fold ``k`` (as ``spk2fold`` writes it) → the classifier in ``fold_<k>``.

    The fold folders are listed (and checked to hold a hyperparams file) at once; each model is loaded the
    first time its fold is asked for and kept.
    """

    def __init__(self, folder: str | os.PathLike, *, device: str = "cpu"):
        from voxanon.models.speechbrain.hparams import HPARAMS_FILE, checkpoint_folder

        self.folder, self.device = Path(folder), device
        self.dirs = _fold_dirs(self.folder)
        missing = [d for d in self.dirs.values() if not (checkpoint_folder(d) / HPARAMS_FILE).is_file()]
        if not self.dirs or missing:
            raise SERError(f"{self.folder}: expected the kit's exp/ser with fold_<k> folders holding "
                           f"{HPARAMS_FILE} (in a CKPT<n> folder or directly); "
                           f"{'none found' if not self.dirs else f'{missing[0]} has none'}")
        self._models: dict[str, Vpc2024Ser] = {}

    def __getitem__(self, fold: str) -> Vpc2024Ser:
        if fold not in self.dirs:
            raise KeyError(fold)
        if fold not in self._models:
            self._models[fold] = Vpc2024Ser(self.dirs[fold], device=self.device)
        return self._models[fold]

    def __iter__(self) -> Iterator[str]:
        return iter(self.dirs)

    def __len__(self) -> int:
        return len(self.dirs)


def load_vpc2024_ser_folds(folder: str | os.PathLike, *, device: str = "cpu") -> Vpc2024Folds:
    """The kit's ``exp/ser`` as a mapping fold → :class:`Vpc2024Ser` (see :class:`Vpc2024Folds`)."""
    return Vpc2024Folds(folder, device=device)
