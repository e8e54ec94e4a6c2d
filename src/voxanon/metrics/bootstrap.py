"""Seeded percentile-bootstrap confidence intervals for EER, WER (and a ratio of two WERs) and UAR.

Each replicate draws n units with replacement out of n and is represented by
the number of times each unit was drawn, so a replicate's statistic is a
weighted sum over units (matrix products for WER and UAR, weighted tie-group
counts for the EER) and the data are sorted only once.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from voxanon.metrics._scores import as_scores
from voxanon.metrics.eer import compute_eer, eer_from_counts
from voxanon.metrics.uar import label_indices, uar
from voxanon.metrics.wer import WERResult

_MAX_CELLS = 1 << 22  # resampling-count matrix cells per chunk (32 MiB)


@dataclass(frozen=True)
class ConfidenceInterval:
    """Point estimate with a percentile bootstrap interval (same unit)."""

    estimate: float
    low: float
    high: float
    alpha: float
    n_boot: int


def _resample_counts(n_units: int, n_boot: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Yield (chunk, n_units) matrices: how often each unit is drawn per replicate."""
    rows_per_chunk = max(1, _MAX_CELLS // n_units)
    for start in range(0, n_boot, rows_per_chunk):
        rows = min(rows_per_chunk, n_boot - start)
        draws = rng.integers(0, n_units, size=(rows, n_units))
        flat = draws + n_units * np.arange(rows)[:, None]
        yield np.bincount(flat.ravel(), minlength=rows * n_units).reshape(rows, n_units)


def _interval(estimate: float, replicates: np.ndarray, alpha: float, n_boot: int) -> ConfidenceInterval:
    replicates = replicates[np.isfinite(replicates)]
    low, high = np.percentile(replicates, [50 * alpha, 100 - 50 * alpha])
    return ConfidenceInterval(float(estimate), float(low), float(high), alpha, n_boot)


def eer_ci(
    target_scores,
    nontarget_scores,
    target_speakers,
    nontarget_speakers,
    n_boot: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
) -> ConfidenceInterval:
    """Bootstrap interval of the EER (percent) resampling enrolled speakers.

    Trials of one enrolled speaker are correlated, so whole speakers are drawn
    with replacement and a speaker drawn k times contributes all its trials k
    times. Replicates without target or without non-target trials are skipped.

    Parameters
    ----------
    target_scores, nontarget_scores : array_like
        Trial scores.
    target_speakers, nontarget_speakers : array_like
        Enrolled-speaker id of each target / non-target trial.
    n_boot, seed, alpha : int, int, float
        Replicates, random seed and 1 - confidence level.
    """
    target = as_scores(target_scores, "target_scores")
    nontarget = as_scores(nontarget_scores, "nontarget_scores")
    target_speakers, nontarget_speakers = np.asarray(target_speakers), np.asarray(nontarget_speakers)
    if target_speakers.shape != target.shape or nontarget_speakers.shape != nontarget.shape:
        raise ValueError("one speaker id is needed per trial")
    values, group = np.unique(np.concatenate([target, nontarget]), return_inverse=True)
    speakers, speaker = np.unique(np.concatenate([target_speakers, nontarget_speakers]), return_inverse=True)
    is_target = np.arange(group.size) < target.size
    replicates = []
    for counts in _resample_counts(speakers.size, n_boot, np.random.default_rng(seed)):
        for weights in counts:
            trial_weights = weights[speaker]
            n_target = np.bincount(group[is_target], trial_weights[is_target], values.size)
            n_nontarget = np.bincount(group[~is_target], trial_weights[~is_target], values.size)
            if n_target.any() and n_nontarget.any():
                result = eer_from_counts(values, n_target.astype(np.int64), n_nontarget.astype(np.int64))
                replicates.append(result.eer)
    return _interval(compute_eer(target, nontarget).eer, np.array(replicates), alpha, n_boot)


def wer_ci(result: WERResult, n_boot: int = 1000, seed: int = 0, alpha: float = 0.05) -> ConfidenceInterval:
    """Bootstrap interval of the corpus WER (percent) resampling utterances.

    Parameters
    ----------
    result : WERResult
        Output of :func:`voxanon.metrics.wer`, whose per-utterance counts are
        resampled.
    n_boot, seed, alpha : int, int, float
        Replicates, random seed and 1 - confidence level.
    """
    errors = np.array([u.errors for u in result.utterances], dtype=np.float64)
    words = np.array([u.n_reference_words for u in result.utterances], dtype=np.float64)
    chunks = []
    for counts in _resample_counts(errors.size, n_boot, np.random.default_rng(seed)):
        with np.errstate(divide="ignore", invalid="ignore"):
            chunks.append(100.0 * (counts @ errors) / (counts @ words))
    return _interval(result.wer, np.concatenate(chunks), alpha, n_boot)


def wer_ratio_ci(result: WERResult | Sequence[WERResult], reference: WERResult, n_boot: int = 1000, seed: int = 0,
                 alpha: float = 0.05) -> ConfidenceInterval:
    """Paired bootstrap interval of ``result``'s WER over ``reference``'s on the same utterances.

    Both results must score the same utterances in the same order (e.g. an
    anonymized system's and the original's). Each replicate draws utterances
    once for both, so what the two share (hard utterances) cancels, and the
    interval says whether a bar such as "at most 1.5x the original's WER" is
    met beyond the noise of the utterance sample. Replicates in which the
    reference made no error are skipped. ``result`` may be several runs of one
    system (e.g. seeds) on those utterances: each utterance's errors are then
    their mean over the runs, so the ratio is the system's expected one, not
    one run's draw.
    """
    runs = [result] if isinstance(result, WERResult) else list(result)
    ids = [u.utt_id for u in reference.utterances]
    if not runs or any([u.utt_id for u in run.utterances] != ids for run in runs):
        raise ValueError("the WER results must score the same utterances in the same order")
    errors = np.mean([[u.errors for u in run.utterances] for run in runs], axis=0, dtype=np.float64)
    ref_errors = np.array([u.errors for u in reference.utterances], dtype=np.float64)
    chunks = []
    for counts in _resample_counts(errors.size, n_boot, np.random.default_rng(seed)):
        with np.errstate(divide="ignore", invalid="ignore"):
            chunks.append((counts @ errors) / (counts @ ref_errors))
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = errors.sum() / ref_errors.sum()
    return _interval(estimate, np.concatenate(chunks), alpha, n_boot)


def _uar_replicates(y_true, y_pred, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """UAR (percent) of ``n_boot`` resamplings of the utterances."""
    labels, true_index, pred_index = label_indices(y_true, y_pred)
    one_hot = np.eye(len(labels))[true_index]
    predicted = np.eye(len(labels))[pred_index]
    hits = one_hot * (true_index == pred_index)[:, None]
    chunks = []
    for counts in _resample_counts(true_index.size, n_boot, rng):
        support = counts @ one_hot
        occurs = (support + counts @ predicted) > 0
        recall = np.where(occurs, (counts @ hits) / np.maximum(support, 1), 0.0)
        chunks.append(100.0 * recall.sum(axis=1) / occurs.sum(axis=1))
    return np.concatenate(chunks)


def uar_ci(y_true, y_pred, n_boot: int = 1000, seed: int = 0, alpha: float = 0.05,
           folds=None) -> ConfidenceInterval:
    """Bootstrap interval of the UAR (percent) resampling utterances.

    Within a replicate the recall is averaged over the labels that occur in
    its true or predicted labels (as :func:`voxanon.metrics.uar`). With
    ``folds`` (the fold of each utterance) the statistic is the VPC's: the
    mean over folds of each fold's UAR, utterances resampled within their fold.

    Parameters
    ----------
    y_true, y_pred : sequence of hashable
        True and predicted labels.
    n_boot, seed, alpha : int, int, float
        Replicates, random seed and 1 - confidence level.
    folds : sequence of hashable, optional
        Fold of each utterance.
    """
    rng = np.random.default_rng(seed)
    if folds is None:
        return _interval(uar(y_true, y_pred).uar, _uar_replicates(y_true, y_pred, n_boot, rng), alpha, n_boot)
    members: dict = {}
    for i, fold in enumerate(folds):
        members.setdefault(fold, []).append(i)
    estimates, replicates = [], []
    for idx in members.values():
        true, pred = [y_true[i] for i in idx], [y_pred[i] for i in idx]
        estimates.append(uar(true, pred).uar)
        replicates.append(_uar_replicates(true, pred, n_boot, rng))
    return _interval(float(np.mean(estimates)), np.mean(replicates, axis=0), alpha, n_boot)
