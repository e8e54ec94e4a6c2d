"""ZEBRA privacy disclosure (Nautsch et al., Interspeech 2020)."""

from dataclasses import dataclass

import numpy as np

from voxanon.metrics._scores import tie_groups
from voxanon.metrics.pav import pav_llrs

# Upper bounds (inclusive) of max |LLR| in base 10 for the categorical tags,
# after the ENFSI verbal scale; above the last bound the tag is "F".
_TAG_BOUNDS = ((np.finfo(float).eps, "0"), (1.0, "A"), (2.0, "B"), (4.0, "C"), (5.0, "D"), (6.0, "E"))

#: the VPC kit's ``monotonicity_epsilon`` (natural-log LLR units), see :func:`_kit_worst_case`
MONOTONICITY_EPSILON = 1e-6


@dataclass(frozen=True)
class ZebraResult:
    """ZEBRA privacy disclosure of a set of verification scores.

    Attributes
    ----------
    expected_bits : float
        Population-level expected disclosure D_ECE in bits (0 = perfect
        privacy, at most 1/(2 ln 2) ~ 0.721 for perfect separation).
    worst_case_log10 : float
        Individual-level worst-case disclosure: max |LLR| in base 10.
    tag : str
        Categorical tag of ``worst_case_log10``: "0", "A" ... "F".
    """

    expected_bits: float
    worst_case_log10: float
    tag: str


def _ece_gain(llrs: np.ndarray) -> np.ndarray:
    """Integral over priors of the ECE reduction brought by one target LLR.

    With p = sigmoid(prior log-odds) uniform on [0, 1], a target trial with
    LLR a lowers the ECE (in nats, against the uninformative LLR 0) on average
    by Z(a) = 1/4 + (a - b) / (2 b^2), b = e^a - 1; Z(0) = 0, Z(+inf) = 1/4.
    """
    gain = np.full(llrs.shape, 0.25)
    small = np.abs(llrs) < 1e-4
    # Series of (a - b) / b^2 around 0: -1/2 + a/3 - a^2/12.
    a = llrs[small]
    gain[small] = 0.25 + 0.5 * (-0.5 + a / 3 - a * a / 12)
    regular = ~small & (llrs != np.inf)
    a = llrs[regular]
    with np.errstate(over="ignore"):
        b = np.expm1(a)
        gain[regular] = 0.25 + 0.5 * (a / b - 1.0) / b
    return gain


def tag_disclosure(worst_case_log10: float) -> str:
    """Categorical ZEBRA tag of a worst-case disclosure (max |LLR|, base 10).

    "0" up to machine epsilon, then A (<= 1), B (<= 2), C (<= 4), D (<= 5),
    E (<= 6) and F (> 6).
    """
    for bound, tag in _TAG_BOUNDS:
        if worst_case_log10 <= bound:
            return tag
    return "F"


def _kit_worst_case(groups, llrs: np.ndarray) -> float:
    """max |LLR| (natural log) with the VPC kit's monotonicity ramp added to the PAV LLRs.

    The kit's ``optimal_llr`` adds ``i * 1e-6 / N`` to the LLR of the i-th of
    the N trials in ascending score order, so its worst case (and the tag
    derived from it) differs from the plain PAV maximum by up to 1e-6 nats:
    enough to move a value that sits on a category boundary, and to turn the
    no-information case (all LLRs 0) into tag "A", as in the kit. Within a
    group of tied scores the LLR is one value; its trials take the positions
    from the group's first to its last.
    """
    sizes = groups.n_target + groups.n_nontarget
    n = int(sizes.sum())
    last = np.cumsum(sizes) - 1
    first = last - sizes + 1
    step = MONOTONICITY_EPSILON / n
    return float(np.maximum(np.abs(llrs + first * step), np.abs(llrs + last * step)).max())


def zebra(target_scores, nontarget_scores) -> ZebraResult:
    """ZEBRA expected and worst-case privacy disclosure of verification scores.

    Scores are calibrated to LLRs by PAV (tied scores pooled). The expected
    disclosure is the area between the empirical cross-entropy (ECE) of the
    uninformative LLR 0 and the ECE of these LLRs, integrated over the prior
    probability of a target (uniform on [0, 1]), in bits. The worst case is
    the largest |LLR| (base 10) after PAV with Laplace pseudo-trials, which
    keeps it finite; as in the VPC kit it includes the kit's monotonicity
    ramp of at most 1e-6 nats (see :func:`_kit_worst_case`), so the tag agrees
    with the kit's at category boundaries.

    Parameters
    ----------
    target_scores, nontarget_scores : array_like
        Scores of same-speaker and different-speaker trials.

    References
    ----------
    Nautsch et al., "The Privacy ZEBRA: Zero Evidence Biometric Recognition
    Assessment", Interspeech 2020.
    """
    groups = tie_groups(target_scores, nontarget_scores)
    llrs = pav_llrs(groups)
    has_target = groups.n_target > 0
    has_nontarget = groups.n_nontarget > 0
    target_gain = np.average(_ece_gain(llrs[has_target]), weights=groups.n_target[has_target])
    nontarget_gain = np.average(_ece_gain(-llrs[has_nontarget]), weights=groups.n_nontarget[has_nontarget])
    expected = (target_gain + nontarget_gain) / np.log(2.0)
    worst = _kit_worst_case(groups, pav_llrs(groups, laplace=True)) / np.log(10.0)
    return ZebraResult(expected_bits=float(expected), worst_case_log10=worst, tag=tag_disclosure(worst))
