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
import html
import os
from dataclasses import dataclass
from pathlib import Path

from voxanon.data import layout
from voxanon.data.kaldi import DataError, read_data_dir
from voxanon.evaluation.evaluator import (
    Column,
    Env,
    Evaluator,
    Prerequisite,
    RunSettings,
    SystemData,
    option,
    stage_key,
)
from voxanon.evaluation.fingerprint import data_fingerprint
from voxanon.evaluation.results import Interval, LearnabilityResult, SerResult
from voxanon.evaluation.ser import (
    SMOKE_TEST_MESSAGE,
    emotion_set_is_synthetic,
    evaluate_ser,
    prepared_reference,
    reference_prerequisites,
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
class SerLearnabilityOptions:
    """Epochs of the per-fold SER recipe, for the models trained on anonymized speech and for the reference
    models trained on original speech (those of the SER evaluation where the epochs are the same)."""

    epochs: int = option(15, profile="ser_epochs")


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
    Options = SerLearnabilityOptions

    @classmethod
    def plan(cls, run: RunSettings, options: SerLearnabilityOptions) -> list[Evaluator]:
        return [cls(SerLearnabilitySettings(epochs=options.epochs, seed=run.seed))]

    def prerequisites(self, original) -> list[Prerequisite]:
        """The reference models trained on the original emotion set with this recipe (none without one)."""
        return reference_prerequisites(original, self.settings.epochs, self.settings.seed)

    def _reference(self, data: SystemData) -> Path | None:
        return prepared_reference(data, self.settings.epochs, self.settings.seed)

    @property
    def slot(self) -> tuple[str, ...]:
        return (SER,)

    def applies(self, data: SystemData) -> bool:
        return data.anonymized and layout.EMO in data.sets and self._reference(data) is not None

    def inputs(self, data: SystemData) -> dict[str, Path]:
        return {"train": data.sets[layout.EMO], "test": data.original[layout.EMO]}

    def models(self, data: SystemData) -> dict[str, str]:
        return {"reference": f"folds:{self._reference(data)}"}

    @classmethod
    def columns(cls, results) -> list[Column]:
        """``uar_learn``: the UAR on original speech of the SER trained on the system's output (the original row:
        trained on original speech, the reference)."""
        return [Column("uar_learn", _learned(SER), omit_missing=True)]

    @classmethod
    def section(cls, results, page) -> tuple[str, str] | None:
        learn = learnability_results(results, SER)
        return ("Learnability", _ser_table(learn, next(iter(learn.values())), page)) if learn else None

    def run(self, data: SystemData, env: Env) -> LearnabilityResult:
        s = self.settings
        inputs = self.inputs(data)
        models = env.cache_dir / "learnability" / SER / stage_key(
            {"train": data_fingerprint(inputs["train"]), "epochs": s.epochs, "channels": s.channels, "seed": s.seed})
        return ser_learnability(inputs["train"], inputs["test"], self._reference(data), models, epochs=s.epochs,
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
    recipe : voxanon.training.ctc.CtcSettings
    cache_dir : path
        Front-end features (``features/``) and hypotheses (``asr/``), shared between runs.
    synthetic : bool
        The data is the offline corpus: flags the result as a smoke test with :data:`ASR_SMOKE_MESSAGE`.
    """
    from voxanon.evaluation.asr import evaluate_asr, merge_dirs
    from voxanon.evaluation.ctc_training import train_ctc
    from voxanon.metrics import wer
    from voxanon.models.asr.ctc import CtcAsr

    cache_dir = Path(cache_dir)
    test_name = ", ".join(str(p) for p in tests.values())
    test = merge_dirs([Path(p) for p in tests.values()], test_name)
    per_test = {name: read_data_dir(p).utts for name, p in tests.items()}
    training, scored = {}, {}
    for role, train, out in (("anonymized", anonymized_train, models_dir),
                             ("reference", original_train, reference_dir)):
        trained = train_ctc(train, out, recipe, cache_dir=cache_dir / "features", device=device, quiet=quiet)
        training[role] = trained.summary
        ev = evaluate_asr(test, CtcAsr(trained.model, device=device), cache_dir / "asr",
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
    def plan(cls, run: RunSettings, options) -> list[Evaluator]:
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

    @classmethod
    def columns(cls, results) -> list[Column]:
        """``wer_learn``: the WER on original test trials of the CTC ASR trained on the system's training set (the
        original row: trained on original speech, the reference)."""
        return [Column("wer_learn", _learned(ASR), omit_missing=True)]

    @classmethod
    def section(cls, results, page) -> tuple[str, str] | None:
        learn = learnability_results(results, ASR)
        return ("Learnability", _asr_table(learn, next(iter(learn.values())), page)) if learn else None

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


# -- summary columns and report sections --------------------------------------------------------------
def learnability_results(results, task: str) -> dict[str, LearnabilityResult]:
    """The ``task`` learnability result of every system of a benchmark run that has one, by system."""
    return {n: r for n, s in results.systems.items() if (r := s.get("learnability", task)) is not None}


def _learned(task: str):
    """A system's ``task`` learnability number: trained on its output, or for the original row the reference
    (which every anonymized system's result carries)."""
    def value(record, results) -> float | None:
        res = record.get("learnability", task)
        if res is not None:
            return res.anonymized
        if record.method is not None:
            return None
        return next((r.reference for r in learnability_results(results, task).values()), None)
    return value


def _ser_table(learn: dict[str, LearnabilityResult], ref: LearnabilityResult, page) -> str:
    """Train-on-anonymized against train-on-original UAR of each system (``learn``) and the reference row."""
    fmt = page.fmt
    folds = list(ref.per_fold)
    header = ["system", "SER trained on", "UAR % (mean ± std over folds)", "Δ UAR vs original-trained",
              *[f"fold {f}" for f in folds]]
    body = [["original (reference)", "original speech", f"{fmt(ref.reference)} ± {fmt(ref.reference_std)}", "–",
             *[fmt(ref.per_fold[f]["reference"]) for f in folds]]]
    body += [[html.escape(n), "its anonymized speech", f"{fmt(r.anonymized)} ± {fmt(r.anonymized_std)}",
              fmt(r.anonymized - r.reference), *[fmt(r.per_fold.get(f, {}).get("anonymized")) for f in folds]]
             for n, r in learn.items()]
    note = (f"<p>Learnability: the compact SER ({ref.epochs} epochs per fold) trained on each system's anonymized "
            f"emotion folds and tested on the original held-out folds ({ref.n_test} utterances), beside the same "
            "recipe trained on original speech.</p>")
    return note + page.table(header, body) + _smoke(ref)


def _asr_table(learn: dict[str, LearnabilityResult], ref: LearnabilityResult, page) -> str:
    """WER on original test trials of the CTC ASR trained on each system's training set (``learn``), and the
    reference row (``ref``'s)."""
    fmt = page.fmt
    tests = list(ref.per_fold)

    def ci(r, which: str) -> str:
        interval = getattr(r, f"{which}_ci")
        return page.fmt_ci(getattr(r, which), (interval.low, interval.high) if interval else None)

    header = ["system", "ASR trained on", "WER % [95% CI]", "Δ WER vs original-trained", "CER %",
              *[f"WER {t}" for t in tests]]
    body = [["original (reference)", "original training speech", ci(ref, "reference"), "–", fmt(ref.reference_cer),
             *[fmt(ref.per_fold[t]["reference"]) for t in tests]]]
    body += [[html.escape(n), "its anonymized training speech", ci(r, "anonymized"), fmt(r.anonymized - r.reference),
              fmt(r.anonymized_cer), *[fmt(r.per_fold.get(t, {}).get("anonymized")) for t in tests]]
             for n, r in learn.items()]
    recipe = (ref.training or {}).get("reference", {}).get("recipe", {})
    note = (f"<p>ASR learnability: a character CTC recogniser ({html.escape(str(recipe.get('frontend', '?')))} "
            f"features, {ref.epochs} epochs) trained on each system's anonymized training set and tested on the "
            f"original trial utterances ({ref.n_test}), beside the same recipe trained on original speech.</p>")
    return note + page.table(header, body) + _smoke(ref)


def _smoke(ref: LearnabilityResult) -> str:
    """The result's smoke-test note as a small paragraph (empty without one)."""
    return f"<p class='small'>{html.escape(ref.message)}</p>" if ref.message else ""
