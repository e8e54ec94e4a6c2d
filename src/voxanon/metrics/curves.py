"""Plot-ready DET curve points and score histograms."""

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from voxanon.metrics._scores import as_scores, tie_groups


def det_curve(target_scores, nontarget_scores) -> tuple[np.ndarray, np.ndarray]:
    """Detection error trade-off curve on probit (normal deviate) axes.

    One point per distinct score t, with trials accepted when score > t (as in
    :func:`voxanon.metrics.compute_eer`): P_fa(t) = P(non-target > t) and
    P_miss(t) = P(target <= t), mapped through the inverse normal CDF. Points
    where either rate is 0 or 1 (infinite deviates) are dropped.

    Parameters
    ----------
    target_scores, nontarget_scores : array_like
        Scores of same-speaker and different-speaker trials.

    Returns
    -------
    pfa_probit, pmiss_probit : ndarray
        Probit of P_fa (decreasing) and of P_miss (increasing).

    References
    ----------
    Martin et al., "The DET curve in assessment of detection task
    performance", Eurospeech 1997.
    """
    groups = tie_groups(target_scores, nontarget_scores)
    pmiss = np.cumsum(groups.n_target) / groups.n_target.sum()
    pfa = 1.0 - np.cumsum(groups.n_nontarget) / groups.n_nontarget.sum()
    with np.errstate(divide="ignore"):
        pfa_probit, pmiss_probit = ndtri(pfa), ndtri(pmiss)
    finite = np.isfinite(pfa_probit) & np.isfinite(pmiss_probit)
    return pfa_probit[finite], pmiss_probit[finite]


@dataclass(frozen=True)
class ScoreHistograms:
    """Target and non-target histograms on shared bins.

    Attributes
    ----------
    edges : ndarray
        Bin edges (``bins + 1`` values).
    centres : ndarray
        Bin centres.
    target, nontarget : ndarray
        Densities (or counts when ``density=False``) per bin.
    """

    edges: np.ndarray
    centres: np.ndarray
    target: np.ndarray
    nontarget: np.ndarray


def score_histograms(target_scores, nontarget_scores, bins: int = 100, density: bool = True) -> ScoreHistograms:
    """Histograms of target and non-target scores over their common range.

    Parameters
    ----------
    target_scores, nontarget_scores : array_like
        Scores of same-speaker and different-speaker trials.
    bins : int
        Number of equal-width bins.
    density : bool
        Normalise each histogram to unit area (default) or return counts.
    """
    target = as_scores(target_scores, "target_scores")
    nontarget = as_scores(nontarget_scores, "nontarget_scores")
    edges = np.histogram_bin_edges(np.concatenate([target, nontarget]), bins=bins)
    return ScoreHistograms(
        edges=edges,
        centres=(edges[1:] + edges[:-1]) / 2,
        target=np.histogram(target, bins=edges, density=density)[0],
        nontarget=np.histogram(nontarget, bins=edges, density=density)[0],
    )
