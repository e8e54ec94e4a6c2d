"""Equal error rate as computed by the VoicePrivacy Challenge 2024 evaluation.

The VPC 2024 scripts call speechbrain's ``EER``: candidate thresholds are the
sorted distinct scores and the midpoints between neighbours; a trial is
accepted when its score is strictly above the threshold, so
FRR(t) = P(target <= t) and FAR(t) = P(non-target > t); the first threshold
minimising |FAR - FRR| is kept and the EER is reported as (FAR + FRR) / 2.

A midpoint between two neighbouring distinct scores has the same FAR and FRR
as the lower score, which precedes it in the sweep, so the sweep over distinct
scores alone returns the same EER and threshold. Here |FAR - FRR| is compared
exactly in integer arithmetic (speechbrain uses float32, which can only differ
on near ties).

Ties. When several thresholds give exactly the same |FAR - FRR| (possible when
a threshold crosses tied target and non-target scores at once, and their
(FAR + FRR) / 2 can then differ), the *lowest* of them is kept: the first
minimum of the ascending sweep, as ``torch.argmin`` in speechbrain returns.
The comparison is exact, so the choice does not depend on platform, score
order or float rounding.
"""

from dataclasses import dataclass

import numpy as np

from voxanon.metrics._scores import tie_groups


@dataclass(frozen=True)
class EERResult:
    """Equal error rate and the threshold where it is reached.

    Attributes
    ----------
    eer : float
        (FAR + FRR) / 2 at the selected threshold, in percent.
    threshold : float
        Selected threshold; trials with a score above it are accepted.
    """

    eer: float
    threshold: float


def eer_from_counts(values: np.ndarray, n_target: np.ndarray, n_nontarget: np.ndarray) -> EERResult:
    """EER from per-score target and non-target counts (see module docstring).

    Parameters
    ----------
    values : ndarray
        Distinct scores, strictly increasing.
    n_target, n_nontarget : ndarray of int
        Trial counts (or integer bootstrap weights) per distinct score.
    """
    total_target = int(n_target.sum())
    total_nontarget = int(n_nontarget.sum())
    if total_target == 0 or total_nontarget == 0:
        raise ValueError("the EER needs at least one target and one non-target trial")
    misses = np.cumsum(n_target, dtype=np.int64)
    false_alarms = total_nontarget - np.cumsum(n_nontarget, dtype=np.int64)
    # |FAR - FRR| scaled by total_target * total_nontarget: exact integers.
    gap = np.abs(false_alarms * total_target - misses * total_nontarget)
    best = int(np.argmin(gap))  # first (lowest-threshold) minimum on exact ties, see module docstring
    frr = misses[best] / total_target
    far = false_alarms[best] / total_nontarget
    return EERResult(eer=float(50.0 * (far + frr)), threshold=float(values[best]))


def compute_eer(target_scores, nontarget_scores) -> EERResult:
    """Equal error rate of a verification system, VPC 2024 / speechbrain style.

    Parameters
    ----------
    target_scores, nontarget_scores : array_like
        Scores of same-speaker and different-speaker trials; higher means more
        likely the same speaker.

    Returns
    -------
    EERResult
        EER in percent and its threshold.

    References
    ----------
    speechbrain ``speechbrain.utils.metric_stats.EER``, used by the
    VoicePrivacy Challenge 2024 evaluation scripts.
    """
    groups = tie_groups(target_scores, nontarget_scores)
    return eer_from_counts(groups.values, groups.n_target, groups.n_nontarget)
