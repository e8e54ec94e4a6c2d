"""Emotion-preservation evaluation with the VPC's IEMOCAP 5-fold protocol.

A data directory for SER has ``wav.scp``, ``utt2spk``, ``utt2emo`` and
``spk2fold``. Fold ``k``'s model is trained on every speaker whose fold is
not ``k`` (:func:`train_folds`, on original speech; on anonymized speech for
learnability, :mod:`voxanon.evaluation.learnability`) and scores only
the speakers of fold ``k`` (:func:`evaluate_ser`), so no utterance is scored
by a model that heard its speaker; each checkpoint records its training
speakers and the evaluation refuses a model that contains a scored speaker.
Models live in ``<models_dir>/fold_<k>/ser.pt``.

UAR is computed per fold and averaged over folds (the VPC number);
per-class recall and the confusion matrix pool all folds.

The classes are those of the data: the VPC's four on IEMOCAP, anger,
happiness, sadness and fear on EmoFilm (:data:`voxanon.data.iemocap.CLASSES`).
Other labels are excluded and counted; audio that cannot be read is listed
and skipped while the rest continues.

Synthetic data. A data directory holding a file ``SYNTHETIC``, or a
``corpus.json`` with ``"synthetic": true`` (in the directory or its parent,
the corpus root), is the offline synthetic corpus: its results carry
``smoke_test_only: true`` and :data:`SMOKE_TEST_MESSAGE`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from voxanon.audio.io import AudioError, load_audio, resample
from voxanon.data import layout
from voxanon.data.iemocap import CLASSES, classes_of, emotion_class
from voxanon.data.kaldi import DataDir, DataError, read_data_dir
from voxanon.errors import ConfigError
from voxanon.evaluation.evaluator import (
    UTILITY,
    Column,
    Env,
    Evaluator,
    Prerequisite,
    Rank,
    RunSettings,
    SystemData,
    option,
)
from voxanon.evaluation.fingerprint import data_fingerprint
from voxanon.evaluation.results import SerResult, from_dict
from voxanon.metrics import mean_over_folds, uar, uar_ci
from voxanon.models.ser import EmotionRecognizer, SERError, load_ser
from voxanon.models.ser.compact import CompactSER
from voxanon.models.ser.features import LogMel
from voxanon.progress import Progress
from voxanon.training.ser import MODEL_FILE, CompactSerSettings, train_ser

SMOKE_TEST_MESSAGE = ("Offline data has no real emotional speech; the offline corpus's acted prosodic "
                      "styles are a smoke test only: these UARs say nothing about emotion preservation.")
#: utterances whose audio is held in memory at once while scoring
CHUNK = 256


def is_synthetic(data_dir: str | os.PathLike) -> bool:
    """Whether ``data_dir`` (or its parent corpus root) is marked as the offline synthetic corpus.

    A ``REAL`` marker in ``data_dir`` (real speech inside the synthetic corpus) says it is not.
    """
    if (Path(data_dir) / "REAL").exists():
        return False
    for folder in (Path(data_dir), Path(data_dir).parent):
        if (folder / "SYNTHETIC").exists():
            return True
        meta = folder / "corpus.json"
        if meta.is_file():
            try:
                if json.loads(meta.read_text(encoding="utf-8")).get("synthetic") is True:
                    return True
            except (json.JSONDecodeError, AttributeError):
                pass
    return False


def emotion_set_is_synthetic(data: SystemData) -> bool:
    """Whether a system's emotion set comes from synthetic speech: its original's marker decides (the offline
    corpus's emo set is acted prosodic styles, or EmoFilm's real clips)."""
    original = data.original.get(layout.EMO)
    return is_synthetic(original) if original is not None else data.synthetic


def fold_model_path(models_dir: str | os.PathLike, fold: str) -> Path:
    """Checkpoint of fold ``fold``'s model."""
    return Path(models_dir) / f"fold_{fold}" / MODEL_FILE


def _labelled(data: DataDir) -> tuple[dict[str, str], dict[str, int]]:
    """Utterance → SER class (:data:`~voxanon.data.iemocap.CLASSES`), and counts of excluded labels."""
    where = data.path or "<data>"
    for name, table in (("utt2spk", data.utt2spk), ("utt2emo", data.utt2emo), ("spk2fold", data.spk2fold)):
        if not table:
            raise DataError(f"{where}: {name} is missing or empty; SER data needs utt2spk, utt2emo and spk2fold "
                            "(prepare IEMOCAP with `voxanon data iemocap`)")
    for spk in sorted(set(data.utt2spk.values())):
        if spk not in data.spk2fold:
            raise DataError(f"{where}/spk2fold: speaker {spk!r} has no fold")
    labels, excluded = {}, {}
    for utt in data.utts:
        raw = data.utt2emo.get(utt)
        emo = emotion_class(raw) if raw is not None else None
        if emo is None:
            key = raw if raw is not None else "<no label>"
            excluded[key] = excluded.get(key, 0) + 1
        else:
            labels[utt] = emo
    return labels, excluded


def _load_16k(data: DataDir, utt: str) -> np.ndarray:
    wav, sr = load_audio(data.wav_scp[utt])
    return resample(wav, sr, CompactSER.sample_rate)


def extract_features(data: DataDir, utts: list[str], *, quiet: bool = False
                     ) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """Log-mel features (float16, ``(n_mels, T)``) of ``utts``, and the unreadable ones with reasons."""
    logmel = LogMel(CompactSER.sample_rate)
    feats, failed = {}, {}
    progress = Progress(len(utts), "SER features", quiet=quiet)
    for utt in utts:
        try:
            wav = _load_16k(data, utt)
        except AudioError as exc:
            failed[utt] = str(exc)
            progress.update(failed=True)
            continue
        f, n = logmel([wav])
        feats[utt] = f[0, :, :int(n[0])].to(torch.float16)
        progress.update(audio_seconds=len(wav) / CompactSER.sample_rate)
    progress.close()
    return feats, failed


def _select_folds(data: DataDir, folds: list[str] | None) -> list[str]:
    present = sorted(set(data.spk2fold.values()))
    chosen = present if folds is None else [str(f) for f in folds]
    for fold in chosen:
        if fold not in present:
            raise DataError(f"{data.path}/spk2fold: fold {fold!r} has no speakers (folds present: {present})")
    return chosen


def train_folds(data_dir: str | os.PathLike, out_dir: str | os.PathLike, *, folds: list[str] | None = None,
                epochs: int = 15, batch_size: int = 32, channels: int = 128, seed: int = 0,
                quiet: bool = False) -> dict:
    """Train one :class:`~voxanon.models.ser.compact.CompactSER` per fold on the speech of ``data_dir``.

    Original data for the reference models; a system's anonymized copy for
    learnability (:mod:`voxanon.evaluation.learnability`).

    Features are computed once for all folds. A fold whose checkpoint exists
    is skipped; an interrupted fold resumes from its last finished epoch.

    Parameters
    ----------
    data_dir : path
        Data with every fold's speakers (e.g. ``IEMOCAP_all`` or its anonymized copy).
    out_dir : path
        Receives ``fold_<k>/ser.pt`` and ``train_report.json``.
    folds : list of str, optional
        Folds to train (default: every fold in ``spk2fold``).

    Returns
    -------
    dict
        The training report (also written to ``train_report.json``).
    """
    data = read_data_dir(data_dir)
    labels, excluded = _labelled(data)
    chosen = _select_folds(data, folds)
    classes = classes_of(labels.values())
    feats, failed = extract_features(data, list(labels), quiet=quiet)
    report = {"data_dir": str(data_dir), "labels": list(classes), "excluded_labels": excluded,
              "failed_audio": failed, "folds": {}}
    for fold in chosen:
        train_spk = sorted({s for s, f in data.spk2fold.items() if f != fold})
        train_utts = [u for u in feats if data.utt2spk[u] in train_spk]
        if not train_utts:
            raise DataError(f"{data.path}: fold {fold} has no training utterances "
                            "(every usable speaker is in that fold)")
        ckpt = fold_model_path(out_dir, fold)
        counts = {e: sum(labels[u] == e for u in train_utts) for e in classes}
        report["folds"][fold] = {"checkpoint": str(ckpt), "train_speakers": train_spk, "train_counts": counts}
        if ckpt.is_file():
            if not quiet:
                print(f"fold {fold}: {ckpt} exists, skipped")
            continue
        settings = CompactSerSettings(epochs=epochs, batch_size=batch_size, channels=channels, seed=seed)
        train_ser([(feats[u], classes.index(labels[u])) for u in train_utts], ckpt.parent, settings,
                  labels=classes, desc=f"fold {fold}",
                  meta={"fold": fold, "train_speakers": train_spk, "data_dir": str(data_dir), "train_counts": counts},
                  quiet=quiet)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    (Path(out_dir) / "train_report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def _score(model: EmotionRecognizer, data: DataDir, utts: list[str], *, batch_size: int,
           progress: Progress) -> tuple[dict[str, str], dict[str, str]]:
    """Predicted class per readable utterance, and the unreadable ones with reasons."""
    hyps, failed = {}, {}
    for start in range(0, len(utts), CHUNK):
        wavs, ok = [], []
        for utt in utts[start:start + CHUNK]:
            try:
                wavs.append(_load_16k(data, utt))
                ok.append(utt)
            except AudioError as exc:
                failed[utt] = str(exc)
                progress.update(failed=True)
        if ok:
            hyps.update(zip(ok, model.predict(wavs, CompactSER.sample_rate, batch_size=batch_size)))
            progress.update(len(ok), audio_seconds=sum(len(w) for w in wavs) / CompactSER.sample_rate)
    return hyps, failed


def _fold_model(models_dir: str | os.PathLike, fold: str, speakers: list[str]) -> EmotionRecognizer:
    """Fold ``fold``'s model, refusing one whose training set contains any of ``speakers``."""
    path = fold_model_path(models_dir, fold)
    if not path.is_file():
        raise SERError(f"no model for fold {fold}: {path} is missing (train it with `voxanon train ser`)")
    model = CompactSER.load(path)
    seen = sorted(set(speakers) & set(model.meta.get("train_speakers", [])))
    if seen or "train_speakers" not in model.meta:
        raise SERError(f"{path}: model of fold {fold} was trained on scored speaker(s) {seen or '<unknown>'}; "
                       "check spk2fold against the training data")
    return model


def evaluate_ser(data_dir: str | os.PathLike, models_dir: str | os.PathLike | None = None, *,
                 model_spec: str | None = None, batch_size: int = 16, quiet: bool = False) -> SerResult:
    """Score every utterance with the model of the fold that did not train on its speaker.

    Parameters
    ----------
    data_dir : path
        Data to score (original or anonymized), with ``utt2emo`` and ``spk2fold``.
    models_dir : path, optional
        Folder of per-fold models from :func:`train_folds`.
    model_spec : str, optional
        Instead of per-fold models, one model for all folds (``load_ser`` spec,
        e.g. a pretrained ``transformers:<dir>``); fold routing then cannot be
        checked and ``fold_routing`` is False.

    Returns
    -------
    SerResult
        ``uar_mean``, ``uar_std``, ``uar_ci`` (95 % bootstrap interval of the mean over folds), ``folds`` (per fold UAR,
        counts, speakers, model), pooled ``per_class_recall`` and ``confusion``
        (rows true, columns predicted, order ``labels``), ``utterances``
        (utt, spk, fold, ref, hyp), ``excluded_labels``, ``failed_audio``,
        ``smoke_test_only`` and ``message``, and the settings used.
    """
    if (models_dir is None) == (model_spec is None):
        raise ConfigError("give exactly one of models_dir (per-fold models) and model_spec (one model)")
    data = read_data_dir(data_dir)
    labels, excluded = _labelled(data)
    folds = sorted({data.spk2fold[data.utt2spk[u]] for u in labels})
    if not folds:
        raise DataError(f"{data_dir}: no utterance with one of the classes {CLASSES}")
    classes = classes_of(labels.values())
    shared = load_ser(model_spec) if model_spec else None
    progress = Progress(len(labels), "SER scoring", quiet=quiet)
    t0 = time.monotonic()
    per_fold, rows, failed = {}, [], {}
    for fold in folds:
        speakers = sorted({s for s, f in data.spk2fold.items() if f == fold})
        utts = [u for u in labels if data.spk2fold[data.utt2spk[u]] == fold]
        model = shared or _fold_model(models_dir, fold, speakers)
        unknown = [c for c in classes if c not in model.labels]
        if unknown:
            raise SERError(f"{model.name} cannot predict {unknown}, which {data_dir} has (it knows "
                           f"{list(model.labels)}): score data of the classes it was trained on")
        hyps, bad = _score(model, data, utts, batch_size=batch_size, progress=progress)
        failed.update(bad)
        scored = [u for u in utts if u in hyps]
        entry = {"model": model.name, "speakers": speakers, "n": len(scored), "uar": None, "per_class_recall": {}}
        if scored:
            refs, preds = [labels[u] for u in scored], [hyps[u] for u in scored]
            res = uar(refs, preds, labels=classes_of([*refs, *preds]))
            entry.update(uar=res.uar, per_class_recall=res.per_class_recall)
        per_fold[fold] = entry
        rows += [{"utt": u, "spk": data.utt2spk[u], "fold": fold, "ref": labels[u], "hyp": hyps[u]} for u in scored]
    progress.close()
    if not rows:
        raise DataError(f"{data_dir}: no utterance could be scored ({len(failed)} unreadable)")
    refs, preds = [r["ref"] for r in rows], [r["hyp"] for r in rows]
    pooled = uar(refs, preds, labels=classes_of([*refs, *preds]))
    interval = uar_ci([r["ref"] for r in rows], [r["hyp"] for r in rows], folds=[r["fold"] for r in rows])
    summary = mean_over_folds([e["uar"] for e in per_fold.values() if e["uar"] is not None])
    synthetic = is_synthetic(data_dir)
    return from_dict(SerResult, {
        "data_dir": str(data_dir),
        "models": str(models_dir) if models_dir is not None else model_spec,
        "fold_routing": shared is None,
        "labels": list(pooled.labels),
        "uar_mean": summary.mean,
        "uar_std": summary.std,
        "folds": per_fold,
        "per_class_recall": pooled.per_class_recall,
        "confusion": pooled.confusion.tolist(),
        "n_utterances": len(rows),
        "excluded_labels": excluded,
        "failed_audio": failed,
        "batch_size": batch_size,
        "seconds": time.monotonic() - t0,
        "smoke_test_only": synthetic,
        "message": SMOKE_TEST_MESSAGE if synthetic else None,
        "utterances": rows,
        "uar_ci": [interval.low, interval.high],
    })


#: the folder (under the run's output) of the per-fold SER models trained on original speech
REFERENCE_MODELS = "ser_models"


def reference_models(emo_dir: Path, epochs: int, seed: int) -> Prerequisite:
    """The per-fold SER models trained on the original emotion set ``emo_dir`` (``epochs``, ``seed``): the models
    the SER evaluation scores each system's output with, and the reference SER learnability compares with."""
    return Prerequisite(REFERENCE_MODELS, {"emo": data_fingerprint(emo_dir), "epochs": epochs, "seed": seed},
                        lambda folder, env: train_folds(emo_dir, folder, epochs=epochs, seed=seed, quiet=env.quiet),
                        "SER training")


def reference_prerequisites(original, epochs: int, seed: int) -> list[Prerequisite]:
    """The reference models of a run's ``original`` sets (none without an emotion set)."""
    emo = original.get(layout.EMO)
    return [reference_models(emo, epochs, seed)] if emo is not None else []


def prepared_reference(data: SystemData, epochs: int, seed: int) -> Path | None:
    """The folder of the reference models for ``data``'s original emotion set, where the run trained them."""
    return next((data.prepared.get(p.id) for p in reference_prerequisites(data.original, epochs, seed)), None)


@dataclass(frozen=True)
class SerOptions:
    """Epochs of the per-fold SER recipe trained on original speech (the reference models)."""

    epochs: int = option(15, profile="ser_epochs")


@dataclass(frozen=True)
class SerSettings:
    """The reference models' recipe (``epochs``, ``seed``; trained once per run on original emotion data) and the
    scoring batch size."""

    epochs: int
    seed: int
    batch_size: int = 16


class SerEvaluator(Evaluator):
    """Emotion preservation: UAR of per-fold SER models (trained on original speech) on a system's output."""

    kind = "ser"
    Settings = SerSettings
    Options = SerOptions

    @classmethod
    def plan(cls, run: RunSettings, options: SerOptions) -> list[Evaluator]:
        return [cls(SerSettings(options.epochs, run.seed))]

    def prerequisites(self, original) -> list[Prerequisite]:
        """The reference models, trained on the original emotion set (none without one)."""
        return reference_prerequisites(original, self.settings.epochs, self.settings.seed)

    def _models_dir(self, data: SystemData) -> Path | None:
        return prepared_reference(data, self.settings.epochs, self.settings.seed)

    def applies(self, data: SystemData) -> bool:
        return layout.EMO in data.sets and self._models_dir(data) is not None

    def inputs(self, data: SystemData) -> dict[str, Path]:
        return {"emo": data.sets[layout.EMO]}

    def models(self, data: SystemData) -> dict[str, str]:
        return {"ser": f"folds:{self._models_dir(data)}"}

    @classmethod
    def columns(cls, results) -> list[Column]:
        """``uar``: the mean UAR over the folds; it ranks systems (higher is better) where every system has it."""
        return [Column("uar", lambda record, results: (r := record.get(cls.kind)) and r.uar_mean,
                       header="UAR %", cli="UAR %", rank=Rank(UTILITY, label="UAR", what="emotion"))]

    @classmethod
    def section(cls, results, page) -> tuple[str, str] | None:
        """The UAR of every system with its interval and per-class recall (joined to the ASR's "Utility")."""
        sers = {name: r for name, record in results.systems.items() if (r := record.get(cls.kind)) is not None}
        if not sers:
            return None
        body = [[page.fmt(name), _uar_cell(r, page), ", ".join(f"{k} {v:.0f}" for k, v in r.per_class_recall.items())
                 or "–"] for name, r in sers.items()]
        note = f"<p class='small'>{emotion_note(results)}</p>" if results.data.synthetic else ""
        return "Utility", page.table(["system", "UAR % (mean ± std over folds) [95 % CI]", "per-class recall %"],
                                     body) + note

    @classmethod
    def figures(cls, results, summary, draw, folder: Path) -> list[tuple[Path, str]]:
        """Per-emotion recall of each system's output."""
        recall = {n: r.per_class_recall for n, s in results.systems.items() if (r := s.get(cls.kind))
                  and r.per_class_recall}
        if not recall:
            return []
        classes = ser_classes(results)
        return [(draw.grouped_bars(folder / "emotion_recall", list(classes),
                                   {n: [v.get(e, float("nan")) for e in classes] for n, v in recall.items()},
                                   ylabel="recall %", title="Emotion recall per class"),
                 "Per-emotion recall of the SER (trained on original data) on each system's output.")]

    def run(self, data: SystemData, env: Env) -> SerResult:
        res = evaluate_ser(data.sets[layout.EMO], self._models_dir(data), batch_size=self.settings.batch_size,
                           quiet=env.quiet).summary()
        if emotion_set_is_synthetic(data) and not res.smoke_test_only:  # anonymized copies carry no marker
            res = dataclasses.replace(res, smoke_test_only=True, message=SMOKE_TEST_MESSAGE)
        return res


#: class code -> the word the report uses
CLASS_NAMES = {"neu": "neutral", "sad": "sadness", "ang": "anger", "hap": "happiness", "fea": "fear"}


def _uar_cell(ser: SerResult, page) -> str:
    """``mean ± std [low, high]`` of a SER result."""
    interval = f" [{page.fmt(ser.uar_ci[0])}, {page.fmt(ser.uar_ci[1])}]" if ser.uar_ci else ""
    return f"{page.fmt(ser.uar_mean)} ± {page.fmt(ser.uar_std)}{interval}"


def ser_classes(results) -> tuple[str, ...]:
    """The emotion classes of a benchmark run's SER results, in :data:`~voxanon.data.iemocap.CLASSES` order."""
    return classes_of(c for s in results.systems.values() if (r := s.get(SerEvaluator.kind)) for c in r.labels)


def emofilm_note(classes: tuple[str, ...]) -> str:
    """What the report says about an EmoFilm emotion set of ``classes``."""
    chance = f", chance {100 / len(classes):.0f} %" if classes else ""
    return ("The emotion set is real emotional speech: EmoFilm's Spanish clips (film dubs; "
            f"{', '.join(CLASS_NAMES.get(c, c) for c in classes)}: no neutral{chance}), in 5 folds of voices "
            "inferred from speaker embeddings.")


def emotion_note(results) -> str:
    """What the report says about the emotion set of a run on the offline corpus: EmoFilm's real clips, or the
    TTS's acted styles (a smoke test)."""
    if (results.data.description or {}).get("emotion_set"):
        return emofilm_note(ser_classes(results))
    return "The emotion set of the synthetic corpus is acted by TTS prosody settings: UAR is a smoke test only."
