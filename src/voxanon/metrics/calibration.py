"""Score-to-LLR calibration maps (PAV and logistic regression).

Both functions train on labelled target / non-target scores (e.g. raw cosine
scores of a development trial list) and return a frozen, callable calibration
object that maps any array of scores to natural-log LLRs.
"""

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from voxanon.metrics._scores import as_scores, tie_groups
from voxanon.metrics.pav import pav_llrs


@dataclass(frozen=True)
class PAVCalibration:
    """Non-decreasing step function from scores to LLRs found by PAV.

    Attributes
    ----------
    scores : ndarray
        Distinct training scores, increasing.
    llrs : ndarray
        LLR of each training score.

    A score s maps to the LLR of the largest training score <= s (scores
    below the training range map to the first LLR).
    """

    scores: np.ndarray
    llrs: np.ndarray

    def __call__(self, scores) -> np.ndarray:
        index = np.searchsorted(self.scores, np.asarray(scores, dtype=np.float64), side="right") - 1
        return self.llrs[np.clip(index, 0, self.llrs.size - 1)]


@dataclass(frozen=True)
class LinearCalibration:
    """Affine map ``llr = scale * score + offset``."""

    scale: float
    offset: float

    def __call__(self, scores) -> np.ndarray:
        return self.scale * np.asarray(scores, dtype=np.float64) + self.offset


def pav_calibrate(target_scores, nontarget_scores, laplace: bool = True) -> PAVCalibration:
    """Train a PAV (isotonic) score-to-LLR calibration.

    Parameters
    ----------
    target_scores, nontarget_scores : array_like
        Training scores of target and non-target trials.
    laplace : bool
        Add BOSARIS' Laplace pseudo-trials so that all LLRs are finite
        (default). With False, applying the map to the training scores gives
        exactly the LLRs whose Cllr is :func:`~voxanon.metrics.min_cllr`.

    Returns
    -------
    PAVCalibration
        Callable mapping scores to natural-log LLRs.

    References
    ----------
    Brümmer & du Preez (2006); Zadrozny & Elkan, "Transforming classifier
    scores into accurate multiclass probability estimates", KDD 2002.
    """
    groups = tie_groups(target_scores, nontarget_scores)
    return PAVCalibration(groups.values, pav_llrs(groups, laplace=laplace))


def _prior_weighted_logistic_loss(params, target, nontarget):
    """Cllr (in nats) of ``scale * s + offset`` and its gradient."""
    scale, offset = params
    target_llr = scale * target + offset
    nontarget_llr = scale * nontarget + offset
    loss = 0.5 * (np.logaddexp(0.0, -target_llr).mean() + np.logaddexp(0.0, nontarget_llr).mean())
    # d/dl log(1 + e^{-l}) = -sigmoid(-l); d/dl log(1 + e^{l}) = sigmoid(l)
    target_slope = -0.5 * np.exp(-np.logaddexp(0.0, target_llr)) / target.size
    nontarget_slope = 0.5 * np.exp(-np.logaddexp(0.0, -nontarget_llr)) / nontarget.size
    gradient = np.array(
        [target_slope @ target + nontarget_slope @ nontarget, target_slope.sum() + nontarget_slope.sum()]
    )
    return loss, gradient


def logistic_calibrate(target_scores, nontarget_scores) -> LinearCalibration:
    """Train an affine score-to-LLR calibration by prior-weighted logistic regression.

    Minimises Cllr of ``scale * s + offset`` (targets and non-targets weighted
    equally, i.e. effective prior 0.5), so the outputs are LLRs rather than
    posterior log-odds. Scores are standardised internally for conditioning.
    If the training scores are perfectly separated the optimum is at infinity
    and the returned scale is merely large.

    Parameters
    ----------
    target_scores, nontarget_scores : array_like
        Training scores of target and non-target trials.

    Returns
    -------
    LinearCalibration
        Callable mapping scores to natural-log LLRs.

    References
    ----------
    Brümmer et al., "Fusion of heterogeneous speaker recognition systems in
    the STBU submission for the NIST SRE 2006", IEEE TASLP 15(7), 2007.
    """
    target = as_scores(target_scores, "target_scores")
    nontarget = as_scores(nontarget_scores, "nontarget_scores")
    both = np.concatenate([target, nontarget])
    centre, spread = both.mean(), both.std()
    spread = spread if spread > 0 else 1.0
    fit = minimize(
        _prior_weighted_logistic_loss,
        x0=np.zeros(2),
        args=((target - centre) / spread, (nontarget - centre) / spread),
        jac=True,
        method="L-BFGS-B",
    )
    scale, offset = fit.x
    return LinearCalibration(scale=float(scale / spread), offset=float(offset - scale * centre / spread))
