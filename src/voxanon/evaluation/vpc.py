"""The VPC kits' evaluation protocol on a kit ``data/`` folder: the rows of their ``results_summary``.

What the 2024 and 2026 kits compute (``run_evaluation.py`` and ``evaluation/``),
done here with voxanon's scoring:

* ASV: for every (enrollment, trial list) pair of the edition
  (:data:`voxanon.data.vpc_kit.TRIAL_LISTS`) and every scenario ``oo``, ``oa``,
  ``aa`` (original/anonymized enrollment and trial audio; the trial list is
  always the original set's ``trials``), the EER in percent of the whole list,
  rounded to 3 decimals. 2024 scores the female and male lists apart and ranks
  by their mean; 2026 scores only the mixed list.
* ASR: the WER in percent (3 decimals) of each split's trial lists merged, on
  original and anonymized audio.
* SER: per speaker of ``spk2fold``, that fold's model scores the speaker's
  utterances; UAR (macro recall over the classes seen in reference or
  hypothesis) and each emotion's accuracy, in percent rounded to 3 decimals,
  then averaged over speakers (IEMOCAP dev and test have one speaker per fold,
  so this is the mean over the 5 folds).

Row ``index`` is the row's position in the kit's own DataFrame, so the summary
lines are the kit's. Each ASV row also carries voxanon's metrics of the list
(:class:`~voxanon.evaluation.results.VerificationMetrics`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from voxanon.audio.io import load_audio
from voxanon.data.iemocap import emotion_class
from voxanon.data.kaldi import DataDir, DataError, read_data_dir
from voxanon.data.vpc_kit import KitLayout, TrialPair, iemocap_set
from voxanon.evaluation.asr import (
    AsrEvaluation,
    HypothesisCache,
    evaluate_asr,
    merge_dirs,
)
from voxanon.evaluation.privacy import score_trials, verification_metrics
from voxanon.evaluation.results import VerificationMetrics
from voxanon.metrics import compute_eer, uar
from voxanon.models.asr import AsrBackend
from voxanon.models.ser import EmotionRecognizer
from voxanon.models.speaker import SpeakerEncoder

#: the kits' attack scenarios in their order: (enrollment anonymized, trials anonymized)
SCENARIOS = {"oo": (False, False), "oa": (False, True), "aa": (True, True)}
#: the kits' names of the two sides
SIDE = {False: "original", True: "anon"}


@dataclass(frozen=True)
class AsvRow:
    """One EER of the kit's ASV table, with voxanon's metrics of the same trials."""

    index: int
    dataset: str
    split: str
    gender: str
    enrollment: str
    trial: str
    eer: float
    encoder: str
    metrics: VerificationMetrics | None = None


@dataclass(frozen=True)
class AsrRow:
    """One WER of the kit's ASR table."""

    index: int
    dataset: str
    split: str
    asr: str
    wer: float
    backend: str
    n_scored: int


@dataclass(frozen=True)
class SerRow:
    """One row of the kit's SER table: UAR and per-emotion accuracy averaged over speakers (folds)."""

    index: int
    dataset: str
    split: str
    ser: str
    uar: float
    acc: dict[str, float]
    speakers: dict[str, dict] = field(default_factory=dict)


def kit_trial_dir(layout: KitLayout, pair: TrialPair, anonymized: bool) -> DataDir:
    """The trial set (or its anonymized copy) with the original set's trial list, as the kits score it."""
    original = read_data_dir(layout.path(pair.trials))
    if not anonymized:
        return original
    return dataclasses.replace(read_data_dir(layout.path(pair.trials, True)), trials=original.trials)


def asv_rows(layout: KitLayout, encoder: SpeakerEncoder, *, scenarios: tuple[str, ...] = tuple(SCENARIOS),
             cache_dir: str | os.PathLike | None = None, n_boot: int = 1000, quiet: bool = False) -> list[AsvRow]:
    """The kit's ASV rows of ``scenarios`` for every trial pair of ``layout``, scored with ``encoder``."""
    rows = []
    for p, pair in enumerate(layout.pairs):
        for name in scenarios:
            enroll_anon, trial_anon = SCENARIOS[name]
            enroll = read_data_dir(layout.path(pair.enrolls, enroll_anon))
            trials = score_trials(enroll, [kit_trial_dir(layout, pair, trial_anon)], encoder, cache_dir=cache_dir,
                                  quiet=quiet)
            tar, non = trials.score[trials.target], trials.score[~trials.target]
            eer = round(float(compute_eer(tar, non).eer), 3)
            metrics = verification_metrics(trials.score, trials.target, trials.enroll_spk, n_boot=n_boot)
            rows.append(AsvRow(p * len(SCENARIOS) + list(SCENARIOS).index(name), "libri", pair.split, pair.gender,
                               SIDE[enroll_anon], SIDE[trial_anon], eer, encoder.name, metrics))
    return rows


def ranking_eer(rows: list[AsvRow], enrollment: str = "anon", trial: str = "anon") -> dict[str, float]:
    """Per split, the EER the edition ranks by: the mean over the rows' trial lists (2024: f and m; 2026: mixed)."""
    by_split: dict[str, list[float]] = {}
    for r in rows:
        if (r.enrollment, r.trial) == (enrollment, trial):
            by_split.setdefault(r.split, []).append(r.eer)
    return {split: float(np.mean(eers)) for split, eers in by_split.items()}


def asr_rows(layout: KitLayout, asr: AsrBackend, cache_dir: str | os.PathLike, *, normalization: str = "vpc",
             batch_size: int = 8, quiet: bool = False) -> tuple[list[AsrRow], list[AsrEvaluation]]:
    """WER of each split's merged trial lists, original then anonymized (when the layout has a suffix)."""
    rows, evaluations = [], []
    n_sets = len(layout.splits) + len(layout.iemocap)  # the kit's ASR list also holds the IEMOCAP sets
    for anonymized in (False, True) if layout.suffix else (False,):
        for i, split in enumerate(layout.splits):
            dirs = [layout.path(t, anonymized) for t in layout.trial_lists(split)]
            merged = merge_dirs(dirs, f"libri_{split}_asr{layout.suffix if anonymized else ''}")
            ev = evaluate_asr(merged, asr, cache_dir, normalization=normalization, batch_size=batch_size,
                              n_boot=1, quiet=quiet)
            if ev.result is None:
                raise DataError(f"{', '.join(map(str, dirs))}: no utterance could be scored by {asr.name} "
                                f"({len(ev.failed)} failed, {len(ev.missing_transcript)} without text)")
            evaluations.append(ev)
            rows.append(AsrRow(i + (n_sets if anonymized else 0), "libri", split, SIDE[anonymized],
                               round(ev.result.wer, 3), asr.name, len(ev.result.utterances)))
    return rows, evaluations


def _speaker_scores(data: DataDir, spk: str, model: EmotionRecognizer, batch_size: int,
                    cache: HypothesisCache | None = None) -> tuple[float, dict[str, float], int]:
    """UAR and per-emotion accuracy (%, 3 decimals) of one speaker, emotions in the kit's column order; with a
    ``cache``, predicted classes are kept per audio content and model, and only the audio it lacks is scored."""
    utts = [u for u, s in data.utt2spk.items() if s == spk and emotion_class(data.utt2emo.get(u, "")) is not None]
    if not utts:
        raise DataError(f"{data.path}/utt2emo: speaker {spk!r} has no utterance of a scored emotion")
    wavs = {u: load_audio(data.wav_scp[u]) for u in utts}
    utts.sort(key=lambda u: -len(wavs[u][0]))  # the kit scores longest first; its columns follow that order
    refs = [emotion_class(data.utt2emo[u]) for u in utts]
    keys = {u: HypothesisCache.key(*wavs[u]) for u in utts} if cache is not None else {}
    hyp_of = {u: label for u in keys if (label := cache.get(keys[u])) is not None}
    for sr in {s for _, s in wavs.values()}:
        same = [u for u in utts if wavs[u][1] == sr and u not in hyp_of]
        if not same:
            continue
        hyps = model.predict([wavs[u][0] for u in same], sr, batch_size=batch_size)
        hyp_of.update(zip(same, hyps))
        if cache is not None:
            for u, label in zip(same, hyps):
                cache.put(keys[u], label)
    hyp = [hyp_of[u] for u in utts]
    acc = {}
    for emo in dict.fromkeys(refs):
        sel = [i for i, r in enumerate(refs) if r == emo]
        acc[emo] = round(100.0 * sum(hyp[i] == emo for i in sel) / len(sel), 3)
    return round(uar(refs, hyp).uar, 3), acc, len(utts)


def ser_rows(layout: KitLayout, folds: Mapping[str, EmotionRecognizer], *, batch_size: int = 1,
             cache_dir: str | os.PathLike | None = None) -> list[SerRow]:
    """The kit's SER rows: each IEMOCAP split, original and anonymized, averaged over its speakers' folds; with
    ``cache_dir``, each fold's predictions are cached per audio content (a second system scores only its own)."""
    groups = []
    last_order: list[str] = []
    for anonymized in (False, True) if layout.suffix else (False,):
        for split in layout.iemocap:
            data = read_data_dir(layout.path(iemocap_set(split), anonymized))
            if not data.spk2fold or not data.utt2emo:
                raise DataError(f"{data.path}: SER needs spk2fold and utt2emo (the kit's IEMOCAP sets have both)")
            speakers = {}
            for spk, fold in data.spk2fold.items():
                if fold not in folds:
                    raise DataError(f"{data.path}/spk2fold: speaker {spk!r} is in fold {fold!r}, which has no model "
                                    f"(models for folds {sorted(folds)})")
                cache = HypothesisCache(cache_dir, folds[fold].name) if cache_dir is not None else None
                score, acc, n = _speaker_scores(data, spk, folds[fold], batch_size, cache)
                speakers[spk] = {"fold": fold, "uar": score, "acc": acc, "n": n, "model": folds[fold].name}
                last_order = list(acc)
            groups.append((split, SIDE[anonymized], speakers))
    rows = []
    for index, (split, side, speakers) in enumerate(sorted(groups, key=lambda g: (g[0], g[1]))):
        acc = {}
        for emo in last_order:  # pandas' mean skips the speakers without that emotion
            values = [s["acc"][emo] for s in speakers.values() if emo in s["acc"]]
            acc[emo] = float(np.mean(values)) if values else float("nan")
        rows.append(SerRow(index, "IEMOCAP", split, side, float(np.mean([s["uar"] for s in speakers.values()])),
                           acc, speakers))
    return rows
