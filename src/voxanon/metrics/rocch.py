"""ROC convex hull (ROCCH) and its equal error rate, as in BOSARIS and pyllr."""

import numpy as np

from voxanon.metrics._scores import tie_groups
from voxanon.metrics.pav import pav_blocks


def rocch(target_scores, nontarget_scores) -> tuple[np.ndarray, np.ndarray]:
    """Vertices of the ROC convex hull in (P_fa, P_miss) coordinates.

    The hull vertices are the PAV block boundaries: between two vertices the
    optimal (PAV) LLR is constant (Brümmer & du Preez, 2006; Fawcett, 2006).

    Parameters
    ----------
    target_scores, nontarget_scores : array_like
        Scores of same-speaker and different-speaker trials.

    Returns
    -------
    pfa, pmiss : ndarray
        Vertices from (P_fa, P_miss) = (1, 0) (accept all) to (0, 1)
        (reject all); P_fa non-increasing, P_miss non-decreasing.
    """
    groups = tie_groups(target_scores, nontarget_scores)
    blocks = pav_blocks(groups.n_target, groups.n_nontarget)
    pmiss = np.cumsum(blocks.n_target) / groups.n_target.sum()
    pfa = 1.0 - np.cumsum(blocks.n_nontarget) / groups.n_nontarget.sum()
    return np.concatenate([[1.0], pfa]), np.concatenate([[0.0], pmiss])


def rocch_eer(target_scores, nontarget_scores) -> float:
    """Equal error rate of the ROC convex hull, in percent.

    The value where the hull crosses the line P_fa = P_miss, found by linear
    interpolation on the hull segment that crosses it (equal to the BOSARIS
    ``rocch2eer`` maximum over segments, because the hull is convex).

    Parameters
    ----------
    target_scores, nontarget_scores : array_like
        Scores of same-speaker and different-speaker trials.

    References
    ----------
    Brümmer & de Villiers, "The BOSARIS toolkit", 2011 (``rocch2eer``).
    """
    pfa, pmiss = rocch(target_scores, nontarget_scores)
    gap = pfa - pmiss  # decreasing from +1 to -1 along the hull
    j = int(np.argmax(gap <= 0))
    if gap[j] == 0:
        return float(100.0 * pmiss[j])
    weight = gap[j - 1] / (gap[j - 1] - gap[j])
    return float(100.0 * (pmiss[j - 1] + weight * (pmiss[j] - pmiss[j - 1])))
