"""Log-likelihood-ratio cost Cllr and its minimum over monotonic calibrations."""

import numpy as np

from voxanon.metrics._scores import tie_groups
from voxanon.metrics.pav import pav_llrs


def _weighted_cllr(target_llrs, nontarget_llrs, target_weights=None, nontarget_weights=None) -> float:
    """Cllr in bits, each trial class averaged with optional trial weights."""
    target_cost = np.average(np.logaddexp(0.0, -target_llrs), weights=target_weights)
    nontarget_cost = np.average(np.logaddexp(0.0, nontarget_llrs), weights=nontarget_weights)
    return float((target_cost + nontarget_cost) / (2.0 * np.log(2.0)))


def cllr(target_llrs, nontarget_llrs) -> float:
    """Log-likelihood-ratio cost of LLR scores, in bits.

    Cllr = 1/(2 ln 2) * [mean_t log(1 + e^{-l_t}) + mean_n log(1 + e^{l_n})],
    with natural-log LLRs l. 0 is perfect, 1 is the cost of always answering
    LLR = 0; badly calibrated scores can cost more than 1.

    Parameters
    ----------
    target_llrs, nontarget_llrs : array_like
        Natural-log LLRs of target and non-target trials.

    References
    ----------
    Brümmer & du Preez, "Application-independent evaluation of speaker
    detection", Computer Speech & Language 20(2-3), 2006.
    """
    return _weighted_cllr(
        np.asarray(target_llrs, dtype=np.float64), np.asarray(nontarget_llrs, dtype=np.float64)
    )


def min_cllr(target_scores, nontarget_scores) -> float:
    """Cllr after optimal monotonic (PAV) calibration of the scores, in bits.

    It measures discrimination only; minCllr <= Cllr for any monotonic
    calibration of the same scores, and minCllr <= 1.

    Parameters
    ----------
    target_scores, nontarget_scores : array_like
        Raw scores (any scale) of target and non-target trials.

    References
    ----------
    Brümmer & du Preez (2006); tied scores are pooled before PAV
    (see :mod:`voxanon.metrics.pav`).
    """
    groups = tie_groups(target_scores, nontarget_scores)
    llrs = pav_llrs(groups)
    has_target = groups.n_target > 0
    has_nontarget = groups.n_nontarget > 0
    return _weighted_cllr(
        llrs[has_target],
        llrs[has_nontarget],
        groups.n_target[has_target],
        groups.n_nontarget[has_nontarget],
    )
