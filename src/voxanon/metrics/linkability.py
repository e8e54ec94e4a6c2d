"""Global linkability D<->sys of Gomez-Barrero et al. (2017), VPC flavour."""

import numpy as np

from voxanon.metrics._scores import as_scores

#: fewest mated scores that give two histogram bins (one per ten scores)
MIN_MATED = 20


def linkability(mated_scores, nonmated_scores, omega: float = 1.0) -> float:
    """Global linkability D<->sys of mated vs non-mated scores, in [0, 1].

    Both score sets are histogrammed as densities on a common range with
    min(len(mated) // 10, 100) bins (at least one). With LR(s) the ratio of
    the mated to the non-mated density, the local linkability is
    D(s) = 2 * omega*LR / (1 + omega*LR) - 1 where omega*LR > 1, 0 elsewhere,
    and 1 where only mated scores fall. D<->sys integrates D(s) * p(s | mated)
    over the bin centres with the trapezoidal rule, as the VPC evaluation
    (``anonymization_metrics``) does.

    Parameters
    ----------
    mated_scores, nonmated_scores : array_like
        Scores of same-speaker (mated) and different-speaker trials.
    omega : float
        Prior ratio P(mated) / P(non-mated); the VPC uses 1.

    Returns
    -------
    float
        0 when the distributions are indistinguishable, 1 when fully linkable.
        Also 0 when all scores are equal. NaN when there are fewer than
        :data:`MIN_MATED` mated scores: one histogram bin has no density to
        integrate, and the VPC recipe would report a meaningless 0.

    References
    ----------
    Gomez-Barrero et al., "General framework to evaluate unlinkability in
    biometric template protection systems", IEEE TIFS 13(6), 2018 (online 2017).
    """
    mated = as_scores(mated_scores, "mated_scores")
    nonmated = as_scores(nonmated_scores, "nonmated_scores")
    low = min(mated.min(), nonmated.min())
    high = max(mated.max(), nonmated.max())
    if low == high:
        return 0.0
    if mated.size < MIN_MATED:
        return float("nan")
    n_bins = min(mated.size // 10, 100)
    edges = np.linspace(low, high, n_bins + 1)
    mated_density = np.histogram(mated, bins=edges, density=True)[0]
    nonmated_density = np.histogram(nonmated, bins=edges, density=True)[0]
    ratio = omega * np.divide(
        mated_density, nonmated_density, out=np.ones_like(mated_density), where=nonmated_density > 0
    )
    local = np.where(ratio > 1, 2 * ratio / (1 + ratio) - 1, 0.0)
    local[(nonmated_density == 0) & (mated_density > 0)] = 1.0
    centres = (edges[1:] + edges[:-1]) / 2
    return float(np.trapezoid(local * mated_density, centres))
