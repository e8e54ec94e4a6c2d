"""Training the ladder's attackers on a data directory, selected on dev trials.

The recipes live in :mod:`voxanon.training` (:mod:`~voxanon.training.asv`:
ECAPA-TDNN from scratch, :mod:`~voxanon.training.finetune`: fine-tuning a pretrained encoder);
this module gives them what evaluation owns: the scoring-time preprocessing
(:func:`~voxanon.evaluation.embeddings.vpc_normalize`) and the dev-trial EER
(:func:`~voxanon.evaluation.dev_selection.dev_eer`, the VPC's selection).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from voxanon.data.kaldi import DataDir
from voxanon.evaluation.dev_selection import as_data_dir, dev_eer
from voxanon.evaluation.embeddings import vpc_normalize
from voxanon.training.asv import AsvSettings, train_asv
from voxanon.training.finetune import FinetuneSettings, train_finetune
from voxanon.training.trainer import TrainResult


def train_attacker(data: DataDir, out: str | os.PathLike, settings: AsvSettings | None = None, *,
                   dev: tuple | None = None, device: str = "cpu", quiet: bool = False) -> TrainResult:
    """Train (or resume) the attacker ECAPA on ``data`` into ``out`` (:func:`~voxanon.training.asv.train_asv`;
    ``settings``: the small one).

    ``dev`` = (enrollment dir, [trial dirs]): the epoch's validation EER is then the mean per-gender EER on those
    dev trials, else on the held-out training utterances.
    """
    from voxanon.models.speaker.ecapa import EcapaEncoder

    validate = None
    if dev is not None:
        def validate(model, epoch: int) -> float:
            return dev_eer(EcapaEncoder(model, name=f"training-epoch-{epoch}", device=device), *dev)
    return train_asv(data, out, settings or AsvSettings(), preprocess=vpc_normalize, validate=validate,
                     device=device, quiet=quiet)


def train_ecapa(train_dir, dev_enroll, dev_trials: list, settings: AsvSettings, out_dir: str | os.PathLike, *,
                seed: int = 0, device: str = "cpu", quiet: bool = False) -> tuple[Path, list[dict]]:
    """Rung (c) of the attacker ladder: ECAPA-TDNN from scratch, selected on the dev trials.

    Returns ``OUT/best.pt`` (usable as ``ecapa:OUT/best.pt``) and the training log
    (per epoch: ``epoch``, ``loss``, ``val_eer`` on dev, ``lr``).
    """
    result = train_attacker(as_data_dir(train_dir), out_dir, replace(settings, seed=seed),
                            dev=(as_data_dir(dev_enroll), [as_data_dir(t) for t in dev_trials]),
                            device=device, quiet=quiet)
    return result.model, result.history


def train_finetuned(encoder: str, train_dir, dev_enroll, dev_trials: list, settings: FinetuneSettings,
                    out_dir: str | os.PathLike, *, seed: int = 0, device: str = "cpu",
                    quiet: bool = False) -> tuple[Path, list[dict]]:
    """Rung (b) of the attacker ladder: the pretrained ``encoder`` (``ge2e``, ``dvector``) fine-tuned on
    ``train_dir``, selected on the dev trials.

    Returns ``OUT/best.pt`` (usable as ``<encoder>:OUT/best.pt``) and the log
    (:func:`~voxanon.training.finetune.train_finetune`).
    """
    dev = (as_data_dir(dev_enroll), [as_data_dir(t) for t in dev_trials])
    result = train_finetune(as_data_dir(train_dir), out_dir, replace(settings, seed=seed), encoder=encoder,
                            validate=lambda model: dev_eer(model, *dev), preprocess=vpc_normalize, device=device,
                            quiet=quiet)
    return result.model, result.history
