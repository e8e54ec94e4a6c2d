"""Learnability: utility measured by *training* on anonymized speech and testing on original speech.

Direct UAR on anonymized speech can hide damage that shows only when a model
is trained on it. :func:`ser_learnability` trains the compact SER per fold
(:func:`voxanon.evaluation.ser.train_folds`, the recipe of the benchmark's
reference models) on a system's *anonymized* emotion set and scores each
*original* held-out fold with the model that never heard its speakers
(:func:`voxanon.evaluation.ser.evaluate_ser`); the reference row is the
original-trained models scored on the same original folds.

Anonymized copies keep the speaker ids, utterance ids, labels and
``spk2fold``, so the fold routing of the scoring checks holds across the two
directories. ASR learnability (a CTC model trained on anonymized speech) is
not implemented yet.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from voxanon.data import names
from voxanon.evaluation.evaluator import Env, Evaluator, RunSettings, SystemData, stage_key
from voxanon.evaluation.fingerprint import data_fingerprint
from voxanon.evaluation.results import LearnabilityResult, SerResult
from voxanon.evaluation.ser import SMOKE_TEST_MESSAGE, evaluate_ser, train_folds

#: the learnability result's task for the SER
SER = "ser"


def learnability_result(task: str, metric: str, train: str, test: str, trained: SerResult,
                        reference: SerResult, epochs: int, synthetic: bool) -> LearnabilityResult:
    """Per-fold and mean UAR of the anonymized-trained models beside the original-trained ones.

    ``synthetic`` (or a smoke-test ``trained`` result) flags the numbers as a smoke test.
    """
    per_fold = {fold: {"anonymized": trained.folds[fold].uar,
                       "reference": reference.folds[fold].uar if fold in reference.folds else None}
                for fold in trained.folds}
    smoke = synthetic or trained.smoke_test_only
    return LearnabilityResult(task=task, metric=metric, train=train, test=test, anonymized=trained.uar_mean,
                              anonymized_std=trained.uar_std, reference=reference.uar_mean,
                              reference_std=reference.uar_std, per_fold=per_fold, epochs=epochs,
                              n_test=trained.n_utterances, smoke_test_only=smoke,
                              message=SMOKE_TEST_MESSAGE if smoke else None)


def ser_learnability(anonymized_dir: str | os.PathLike, original_dir: str | os.PathLike,
                     reference_models: str | os.PathLike, models_dir: str | os.PathLike, *, epochs: int = 15,
                     channels: int = 128, seed: int = 0, batch_size: int = 16, synthetic: bool = False,
                     quiet: bool = False) -> LearnabilityResult:
    """Train the per-fold SER on ``anonymized_dir`` and score the original held-out folds.

    Parameters
    ----------
    anonymized_dir : path
        The system's anonymized emotion set (``utt2emo``, ``spk2fold`` copied from the original).
    original_dir : path
        The original emotion set: every fold is scored on it.
    reference_models : path
        Per-fold models trained on ``original_dir`` with the same recipe (the reference row).
    models_dir : path
        Receives the anonymized-trained models (a finished fold is reused, an interrupted one resumes).
    epochs, channels, seed
        The training recipe (:func:`~voxanon.evaluation.ser.train_folds`); give those of the reference.
    synthetic : bool
        The data is the offline corpus (anonymized copies carry no marker): flag the UARs as a smoke test.

    Returns
    -------
    LearnabilityResult
        Mean (± std over folds) and per-fold UAR on original speech, trained on anonymized vs original.
    """
    train_folds(anonymized_dir, models_dir, epochs=epochs, channels=channels, seed=seed, quiet=quiet)
    trained = evaluate_ser(original_dir, models_dir, batch_size=batch_size, quiet=quiet)
    reference = evaluate_ser(original_dir, reference_models, batch_size=batch_size, quiet=quiet)
    return learnability_result(SER, "uar", str(anonymized_dir), str(original_dir), trained, reference, epochs,
                               synthetic)


@dataclass(frozen=True)
class SerLearnabilitySettings:
    """The per-fold SER recipe (that of the benchmark's reference models) and the scoring batch size."""

    epochs: int
    seed: int
    channels: int = 128
    batch_size: int = 16


class SerLearnabilityEvaluator(Evaluator):
    """SER learnability of an anonymized system: trained on its emotion folds, tested on original folds.

    Runs only for anonymized systems: for original speech it is the SER
    evaluation itself (the reference row every result carries).
    """

    kind = "learnability"
    Settings = SerLearnabilitySettings

    @classmethod
    def plan(cls, run: RunSettings) -> list[Evaluator]:
        return [cls(SerLearnabilitySettings(epochs=run.ser_epochs, seed=run.seed))]

    @property
    def slot(self) -> tuple[str, ...]:
        return (SER,)

    def applies(self, data: SystemData) -> bool:
        return data.anonymized and data.ser_models is not None and names.EMO in data.sets

    def inputs(self, data: SystemData) -> dict[str, Path]:
        return {"train": data.sets[names.EMO], "test": data.original[names.EMO]}

    def models(self, data: SystemData) -> dict[str, str]:
        return {"reference": f"folds:{data.ser_models}"}

    def run(self, data: SystemData, env: Env) -> LearnabilityResult:
        s = self.settings
        inputs = self.inputs(data)
        models = env.cache_dir / "learnability" / SER / stage_key(
            {"train": data_fingerprint(inputs["train"]), "epochs": s.epochs, "channels": s.channels, "seed": s.seed})
        return ser_learnability(inputs["train"], inputs["test"], data.ser_models, models, epochs=s.epochs,
                                channels=s.channels, seed=s.seed, batch_size=s.batch_size,
                                synthetic=data.synthetic, quiet=env.quiet)
