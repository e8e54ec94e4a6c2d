"""Unweighted average recall (UAR) for emotion recognition, and fold averaging."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class UARResult:
    """UAR, per-class recalls and the confusion matrix.

    Attributes
    ----------
    uar : float
        Mean of the per-class recalls, in percent, over the labels that occur
        in ``y_true`` or ``y_pred`` (a label only ever predicted has recall 0).
    per_class_recall : dict
        Recall (percent) of each label that occurs in ``y_true`` or ``y_pred``.
    confusion : ndarray of int
        ``confusion[i, j]`` counts samples of true ``labels[i]`` predicted as
        ``labels[j]``.
    labels : tuple
        Row / column labels of ``confusion``.
    """

    uar: float
    per_class_recall: dict
    confusion: np.ndarray
    labels: tuple


def label_indices(y_true, y_pred, labels=None) -> tuple[tuple, np.ndarray, np.ndarray]:
    """Labels and the integer class indices of ``y_true`` and ``y_pred``.

    ``labels`` defaults to the sorted union of both label sets; a label outside
    an explicit ``labels`` raises ValueError.
    """
    y_true, y_pred = list(y_true), list(y_pred)
    if len(y_true) != len(y_pred) or not y_true:
        raise ValueError("y_true and y_pred must be non-empty and of equal length")
    labels = tuple(sorted(set(y_true) | set(y_pred)) if labels is None else labels)
    index = {label: i for i, label in enumerate(labels)}
    unknown = (set(y_true) | set(y_pred)) - set(index)
    if unknown:
        raise ValueError(f"labels {sorted(map(str, unknown))} are not in `labels`")
    return labels, np.array([index[y] for y in y_true]), np.array([index[y] for y in y_pred])


def uar(y_true: Sequence, y_pred: Sequence, labels: Sequence | None = None) -> UARResult:
    """Unweighted average recall (macro-averaged recall) of a classifier.

    UAR = (1/K) * sum_k TP_k / N_k over the K labels that occur in ``y_true``
    or ``y_pred``, a label never true counting with recall 0. This is
    scikit-learn's ``recall_score(average="macro")`` without ``labels``, which
    the VPC 2024 emotion evaluation calls; a classifier that predicts a class
    absent from the test set is penalised for it. Chance level = 100/K %.

    Parameters
    ----------
    y_true, y_pred : sequence of hashable
        True and predicted labels.
    labels : sequence, optional
        Label order of the confusion matrix (default: sorted union). Labels
        listed here that occur in neither sequence do not enter the average.
    """
    labels, true_index, pred_index = label_indices(y_true, y_pred, labels)
    k = len(labels)
    confusion = np.bincount(true_index * k + pred_index, minlength=k * k).reshape(k, k)
    support = confusion.sum(axis=1)
    present = np.flatnonzero(support + confusion.sum(axis=0))
    recall = 100.0 * np.diag(confusion)[present] / np.maximum(support[present], 1)
    return UARResult(
        uar=float(recall.mean()),
        per_class_recall={labels[i]: float(r) for i, r in zip(present, recall)},
        confusion=confusion,
        labels=labels,
    )


@dataclass(frozen=True)
class FoldSummary:
    """Mean and (population) standard deviation of a metric over folds."""

    mean: float
    std: float
    values: tuple[float, ...]


def mean_over_folds(values: Iterable) -> FoldSummary:
    """Average a metric over cross-validation folds (IEMOCAP: 5 folds).

    Parameters
    ----------
    values : iterable of float or of results with a ``.uar`` attribute
    """
    numbers = tuple(float(getattr(v, "uar", v)) for v in values)
    if not numbers:
        raise ValueError("no fold values given")
    return FoldSummary(mean=float(np.mean(numbers)), std=float(np.std(numbers)), values=numbers)
