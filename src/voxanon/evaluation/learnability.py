"""Learnability: utility measured by *training* on anonymized speech and testing on original speech.

Direct WER/UAR on anonymized speech can hide damage that shows only when a
model is trained on it (the evaluators' kind is ``learnability``):

SER (slot ``ser``)
    :func:`ser_learnability` trains the compact SER per fold
    (:func:`voxanon.evaluation.ser.train_folds`, the recipe of the benchmark's
    reference models) on a system's *anonymized* emotion set and scores each
    *original* held-out fold with the model that never heard its speakers
    (:func:`voxanon.evaluation.ser.evaluate_ser`); the reference row is the
    original-trained models scored on the same original folds. Anonymized
    copies keep the speaker ids, utterance ids, labels and ``spk2fold``, so the
    fold routing of the scoring checks holds across the two directories.
ASR (slot ``asr``; ``asr-scratch`` for the from-scratch recipe)
    :func:`asr_learnability` trains a character CTC recogniser
    (:mod:`voxanon.models.asr.ctc`; default recipe: a head on frozen Whisper
    tiny.en features, an encoder that never saw anonymized speech) on the
    system's anonymized *training* set and the same recipe on the original
    training set (the reference row), and scores both on the *original* trial
    utterances of the test split (WER and CER with
    :func:`voxanon.evaluation.asr.evaluate_asr`; hypotheses cached per model).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from voxanon.data import layout
from voxanon.data.kaldi import DataError, read_data_dir
from voxanon.evaluation.evaluator import (
    Env,
    Evaluator,
    RunSettings,
    SystemData,
    stage_key,
)
from voxanon.evaluation.fingerprint import data_fingerprint
from voxanon.evaluation.results import Interval, LearnabilityResult, SerResult
from voxanon.evaluation.ser import (
    SMOKE_TEST_MESSAGE,
    emotion_set_is_synthetic,
    evaluate_ser,
    train_folds,
)

#: the learnability results' tasks
SER, ASR = "ser", "asr"
#: the CTC recipe of the benchmark's ASR learnability (slot ``asr``; another recipe's slot is ``asr-<name>``)
DEFAULT_ASR_RECIPE = "whisper"
ASR_SMOKE_MESSAGE = ("Offline corpus: TTS voices and about a hundred training utterances, so a trained ASR "
                     "learns little beyond its training sentences; these WERs compare systems with each other "
                     "and with the reference row only, and are not LibriSpeech-scale numbers.")


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
        return data.anonymized and data.ser_models is not None and layout.EMO in data.sets

    def inputs(self, data: SystemData) -> dict[str, Path]:
        return {"train": data.sets[layout.EMO], "test": data.original[layout.EMO]}

    def models(self, data: SystemData) -> dict[str, str]:
        return {"reference": f"folds:{data.ser_models}"}

    def run(self, data: SystemData, env: Env) -> LearnabilityResult:
        s = self.settings
        inputs = self.inputs(data)
        models = env.cache_dir / "learnability" / SER / stage_key(
            {"train": data_fingerprint(inputs["train"]), "epochs": s.epochs, "channels": s.channels, "seed": s.seed})
        return ser_learnability(inputs["train"], inputs["test"], data.ser_models, models, epochs=s.epochs,
                                channels=s.channels, seed=s.seed, batch_size=s.batch_size,
                                synthetic=emotion_set_is_synthetic(data), quiet=env.quiet)


def asr_learnability(anonymized_train: str | os.PathLike, original_train: str | os.PathLike,
                     tests: dict[str, str | os.PathLike], models_dir: str | os.PathLike,
                     reference_dir: str | os.PathLike, recipe, *, cache_dir: str | os.PathLike,
                     device: str = "cpu", normalization: str = "vpc", n_boot: int = 1000, seed: int = 0,
                     synthetic: bool = False, quiet: bool = False) -> LearnabilityResult:
    """Train ``recipe`` on ``anonymized_train`` and on ``original_train``; WER of both on the original ``tests``.

    Parameters
    ----------
    anonymized_train, original_train : path
        The system's anonymized training set and the original one (``wav.scp`` + ``text``).
    tests : dict of name -> path
        Original test data directories (e.g. the split's female and male trial sets): scored
        together, and each alone in ``per_fold``.
    models_dir, reference_dir : path
        Receive the anonymized-trained and the original-trained model (a finished one is reused).
    recipe : voxanon.models.asr.ctc.CtcRecipe
    cache_dir : path
        Front-end features (``features/``) and hypotheses (``asr/``), shared between runs.
    synthetic : bool
        The data is the offline corpus: flags the result as a smoke test with :data:`ASR_SMOKE_MESSAGE`.
    """
    from voxanon.evaluation.asr import evaluate_asr, merge_dirs
    from voxanon.evaluation.ctc_training import MODEL_FILE, train_ctc
    from voxanon.metrics import wer
    from voxanon.models.asr.ctc import CtcAsr

    cache_dir = Path(cache_dir)
    test_name = ", ".join(str(p) for p in tests.values())
    test = merge_dirs([Path(p) for p in tests.values()], test_name)
    per_test = {name: read_data_dir(p).utts for name, p in tests.items()}
    training, scored = {}, {}
    for role, train, out in (("anonymized", anonymized_train, models_dir),
                             ("reference", original_train, reference_dir)):
        training[role] = train_ctc(train, out, recipe, cache_dir=cache_dir / "features", device=device, quiet=quiet)
        ev = evaluate_asr(test, CtcAsr(Path(out) / MODEL_FILE, device=device), cache_dir / "asr",
                          normalization=normalization, n_boot=n_boot, seed=seed, quiet=quiet)
        if ev.result is None:
            raise DataError(f"{test_name}: no test utterance could be scored "
                            f"({len(ev.failed)} failed, {len(ev.missing_transcript)} without text)")
        scored[role] = ev
    per_fold = {}
    for name, utts in per_test.items():
        per_fold[name] = {}
        for role, ev in scored.items():
            ok = [u for u in utts if u in ev.hypotheses and u in test.text]
            per_fold[name][role] = (wer({u: test.text[u] for u in ok}, {u: ev.hypotheses[u] for u in ok},
                                        normalization).wer if ok else None)
    anon, ref = scored["anonymized"], scored["reference"]
    return LearnabilityResult(
        task=ASR, metric="wer", train=str(anonymized_train), test=test_name, anonymized=anon.result.wer,
        anonymized_std=None, reference=ref.result.wer, reference_std=None, per_fold=per_fold,
        epochs=recipe.epochs, n_test=len(anon.result.utterances), smoke_test_only=synthetic,
        message=ASR_SMOKE_MESSAGE if synthetic else None,
        anonymized_ci=Interval(**dataclasses.asdict(anon.wer_interval)),
        reference_ci=Interval(**dataclasses.asdict(ref.wer_interval)),
        anonymized_cer=anon.result.cer, reference_cer=ref.result.cer,
        training={role: {k: v for k, v in t.items() if k != "left_out_utterances"} | {
            "left_out": len(t.get("left_out_utterances", {}))} for role, t in training.items()})


@dataclass(frozen=True)
class AsrLearnabilitySettings:
    """The CTC recipe (a name of :data:`~voxanon.models.asr.ctc.RECIPES`, its epochs and seed), the test split
    whose original trial sets are scored, and the WER scoring settings."""

    recipe: str
    split: str
    epochs: int
    seed: int
    n_boot: int
    normalization: str = "vpc"


class AsrLearnabilityEvaluator(Evaluator):
    """ASR learnability of an anonymized system: a CTC model trained on its training set, tested on original
    trial utterances, beside the same recipe trained on the original training set (the reference row)."""

    kind = "learnability"
    Settings = AsrLearnabilitySettings

    @classmethod
    def plan(cls, run: RunSettings) -> list[Evaluator]:
        from voxanon.training.ctc import RECIPES

        return [cls(AsrLearnabilitySettings(DEFAULT_ASR_RECIPE, run.splits[-1], RECIPES[DEFAULT_ASR_RECIPE].epochs,
                                            run.seed, run.n_boot, run.wer_normalization))]

    @property
    def slot(self) -> tuple[str, ...]:
        recipe = self.settings.recipe
        return (ASR if recipe == DEFAULT_ASR_RECIPE else f"{ASR}-{recipe}",)

    def _tests(self, data: SystemData) -> dict[str, Path]:
        return {g: data.original.get(layout.trials(self.settings.split, g)) for g in layout.GENDERS}

    def applies(self, data: SystemData) -> bool:
        return (data.anonymized and layout.TRAIN in data.sets and layout.TRAIN in data.original
                and all(p is not None for p in self._tests(data).values()))

    def inputs(self, data: SystemData) -> dict[str, Path]:
        return {"train": data.sets[layout.TRAIN], "reference_train": data.original[layout.TRAIN],
                **{f"test_{g}": p for g, p in self._tests(data).items()}}

    def models(self, data: SystemData) -> dict[str, str]:
        from voxanon.training.ctc import RECIPES

        return {"frontend": RECIPES[self.settings.recipe].frontend}

    def run(self, data: SystemData, env: Env) -> LearnabilityResult:
        from voxanon.training.ctc import recipe

        s = self.settings
        ctc = recipe(s.recipe, epochs=s.epochs, seed=s.seed)
        root = env.cache_dir / "learnability" / ASR

        def models(train: Path) -> Path:
            return root / stage_key({"train": data_fingerprint(train), "recipe": dataclasses.asdict(ctc)})

        inputs = self.inputs(data)
        return asr_learnability(inputs["train"], inputs["reference_train"], self._tests(data), models(inputs["train"]),
                                models(inputs["reference_train"]), ctc, cache_dir=env.cache_dir, device=env.device,
                                normalization=s.normalization, n_boot=s.n_boot, seed=s.seed,
                                synthetic=data.synthetic, quiet=env.quiet)
