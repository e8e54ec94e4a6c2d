"""Validation of score arrays and grouping of tied scores.

Every threshold-based metric (EER, ROCCH, PAV calibration, DET curve) only
depends on how many target and non-target scores share each distinct score
value, in score order. :func:`tie_groups` computes that once, with two sorts
and an O(n) merge, so that the metrics never loop over trials in Python.
"""

from dataclasses import dataclass

import numpy as np


def as_scores(values, name: str) -> np.ndarray:
    """Return ``values`` as a non-empty, finite, 1-D float64 array.

    Raises
    ------
    ValueError
        If the array is empty, not 1-D, or holds NaN or infinite values.
    """
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return array


@dataclass(frozen=True)
class TieGroups:
    """Target and non-target counts per distinct score, in ascending order.

    Attributes
    ----------
    values : ndarray
        Distinct scores, strictly increasing.
    n_target, n_nontarget : ndarray of int64
        Number of target / non-target trials whose score equals ``values[i]``.
    """

    values: np.ndarray
    n_target: np.ndarray
    n_nontarget: np.ndarray


def tie_groups(target_scores, nontarget_scores) -> TieGroups:
    """Group target and non-target scores by distinct score value.

    Parameters
    ----------
    target_scores, nontarget_scores : array_like
        Scores of same-speaker and different-speaker trials.

    Returns
    -------
    TieGroups
        Distinct scores with their target and non-target counts.
    """
    target = np.sort(as_scores(target_scores, "target_scores"))
    nontarget = np.sort(as_scores(nontarget_scores, "nontarget_scores"))
    merged = np.concatenate([target, nontarget])
    # A stable sort of two sorted runs is a linear-time merge.
    order = np.argsort(merged, kind="stable")
    ordered = merged[order]
    is_target = order < target.size
    last_of_group = np.append(np.flatnonzero(ordered[1:] != ordered[:-1]), ordered.size - 1)
    targets_up_to = np.cumsum(is_target, dtype=np.int64)[last_of_group]
    n_target = np.diff(targets_up_to, prepend=0)
    n_total = np.diff(last_of_group, prepend=-1)
    return TieGroups(ordered[last_of_group], n_target, n_total - n_target)
