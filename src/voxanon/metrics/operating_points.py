"""True-positive rate of a verification attacker at a fixed low false-positive rate."""

import numpy as np

from voxanon.errors import ConfigError
from voxanon.metrics._scores import as_scores


def tpr_at_fpr(target_scores, nontarget_scores, fpr_percent: float) -> float:
    """TPR (percent) at a false-positive rate of ``fpr_percent`` on the empirical ROC.

    A trial is accepted when its score is strictly above the threshold, as in
    :func:`voxanon.metrics.compute_eer`. The threshold is set on the
    non-target scores alone: with x = fpr * n_nontarget, let v be the
    (floor(x) + 1)-th highest non-target score. Accepting scores > v gives at
    most x false positives, accepting scores >= v more than x; between these
    two operating points the ROC is interpolated linearly, i.e. trials scoring
    exactly v are accepted with the probability that makes the expected FPR
    exactly ``fpr_percent`` (a randomised threshold; it also splits ties of
    targets and non-targets at v evenly). O(n) via a partial sort.

    Parameters
    ----------
    target_scores, nontarget_scores : array_like
        Scores of same-speaker and different-speaker trials.
    fpr_percent : float
        False-positive rate in percent, in (0, 100): 1.0 for 1 %, 0.1 for 0.1 %.

    Returns
    -------
    float
        TPR in percent. NaN when fewer than 100 / ``fpr_percent`` non-target
        scores are given (fewer than 100 for 1 %, 1000 for 0.1 %): then not
        even one false positive is allowed, the empirical ROC has no point at
        or below that FPR other than 0, and any value would be an
        extrapolation.
    """
    if not 0 < fpr_percent < 100:
        raise ConfigError(f"tpr_at_fpr: fpr_percent is {fpr_percent}; it must lie in (0, 100), e.g. 1.0 for 1 %")
    target = as_scores(target_scores, "target_scores")
    nontarget = as_scores(nontarget_scores, "nontarget_scores")
    allowed = fpr_percent / 100 * nontarget.size
    if allowed < 1:
        return float("nan")
    position = nontarget.size - 1 - int(allowed)  # ascending position of the (floor(x) + 1)-th highest
    v = np.partition(nontarget, position)[position]
    fa_above, fa_at = np.count_nonzero(nontarget > v), np.count_nonzero(nontarget == v)
    tp_above, tp_at = np.count_nonzero(target > v), np.count_nonzero(target == v)
    accepted_share = (allowed - fa_above) / fa_at  # of the trials scoring exactly v
    return float(100.0 * (tp_above + accepted_share * tp_at) / target.size)
