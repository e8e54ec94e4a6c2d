"""VPC-style ranking and privacy/utility trade-off analysis of systems.

The VPC 2024 ranks anonymization systems inside privacy categories
(average semi-informed EER >= 10, 20, 30 or 40 %) by WER (lower is better)
and, separately, by UAR (higher is better). This module adds the usual
trade-off views: relative changes against original data, Pareto fronts
and a min-max normalised performance matrix.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

PRIVACY_THRESHOLDS = (10.0, 20.0, 30.0, 40.0)
"""Lower EER bounds (percent) of the VPC 2024 privacy categories."""

# Trade-off views: (x attribute, y attribute, (maximize x, maximize y)).
PRIVACY_VS_UAR = ("eer", "uar", (True, True))
PRIVACY_VS_WER = ("eer", "wer", (True, False))
UAR_VS_WER = ("uar", "wer", (True, False))


@dataclass(frozen=True)
class SystemResult:
    """One row of a results table (all values in percent).

    Attributes
    ----------
    name : str
        System name ("orig" for original data).
    eer_f, eer_m, eer : float
        Female, male and average EER (privacy; higher is better).
    wer : float
        Word error rate (content; lower is better).
    uar : float
        Unweighted average recall of emotion (higher is better).
    """

    name: str
    eer_f: float
    eer_m: float
    eer: float
    wer: float
    uar: float


def privacy_category(eer: float) -> int:
    """VPC privacy category of an average EER (percent).

    Returns the largest threshold of :data:`PRIVACY_THRESHOLDS` that ``eer``
    reaches (EER >= threshold), as an int (10, 20, 30 or 40), or 0 below 10 %.
    """
    reached = [t for t in PRIVACY_THRESHOLDS if eer >= t]
    return int(reached[-1]) if reached else 0


@dataclass(frozen=True)
class RankedSystem:
    """A system with its privacy category and ranks inside that category."""

    system: SystemResult
    category: int
    wer_rank: int
    uar_rank: int | None


def rank_systems(rows: Sequence[SystemResult]) -> list[RankedSystem]:
    """Rank systems by WER (ascending) and by UAR (descending) per category.

    Ties share the best rank ("1224" ranking). Systems below 10 % EER get
    category 0 and are ranked among themselves. A system whose UAR is NaN
    (not measured) gets no UAR rank (None) and does not take a rank from others.

    Returns
    -------
    list of RankedSystem
        Sorted by category (highest first), then WER rank, then name.
    """
    ranked = []
    for category in sorted({privacy_category(r.eer) for r in rows}, reverse=True):
        members = [r for r in rows if privacy_category(r.eer) == category]
        wer_ranks = rankdata([r.wer for r in members], method="min")
        uar_ranks = rankdata([-r.uar for r in members], method="min", nan_policy="omit")
        ranked += sorted(
            (RankedSystem(r, category, int(w), None if np.isnan(u) else int(u))
             for r, w, u in zip(members, wer_ranks, uar_ranks)),
            key=lambda s: (s.wer_rank, s.system.name),
        )
    return ranked


@dataclass(frozen=True)
class RelativeChange:
    """Relative changes (percent of the original value) of one system."""

    name: str
    d_eer: float
    d_wer: float
    d_uar: float


def relative_changes(rows: Sequence[SystemResult], original: SystemResult) -> list[RelativeChange]:
    """ΔEER, ΔWER and ΔUAR of each system relative to original data.

    Δm = 100 * (m_system - m_original) / m_original, so ΔEER > 0 is a privacy
    gain, ΔWER > 0 a content loss and ΔUAR < 0 an emotion loss. A change
    relative to an original value of 0 (no error on a small corpus) is NaN.
    """

    def change(value: float, reference: float) -> float:
        return 100.0 * (value - reference) / reference if reference != 0 else float("nan")

    return [
        RelativeChange(r.name, change(r.eer, original.eer), change(r.wer, original.wer), change(r.uar, original.uar))
        for r in rows
    ]


def pareto_front(
    rows: Sequence[SystemResult], x: str, y: str, maximize: tuple[bool, bool] = (True, True)
) -> list[SystemResult]:
    """Systems not dominated on the two attributes ``x`` and ``y``.

    A system dominates another when it is at least as good on both attributes
    and strictly better on one. Use e.g. ``pareto_front(rows, *UAR_VS_WER)``.

    Parameters
    ----------
    rows : sequence of SystemResult
    x, y : str
        Attribute names ("eer", "wer", "uar", "eer_f", "eer_m").
    maximize : (bool, bool)
        Whether larger is better for ``x`` and for ``y``.

    Returns
    -------
    list of SystemResult
        The non-dominated rows, in input order.
    """
    signs = np.where(maximize, 1.0, -1.0)
    values = np.array([[getattr(r, x), getattr(r, y)] for r in rows]) * signs
    at_least = (values[:, None, :] >= values[None, :, :]).all(axis=2)
    better = (values[:, None, :] > values[None, :, :]).any(axis=2)
    dominated = (at_least & better).any(axis=0)
    return [r for r, d in zip(rows, dominated) if not d]


@dataclass(frozen=True)
class NormalisedScore:
    """Min-max normalised scores (1 = best among the systems) and overall rank."""

    name: str
    privacy: float
    content: float
    emotion: float
    combined: float
    rank: int


def _min_max(values: np.ndarray) -> np.ndarray:
    """Scale to [0, 1] (1 = largest); a constant column maps to 1."""
    span = values.max() - values.min()
    return np.ones_like(values) if span == 0 else (values - values.min()) / span


def performance_matrix(rows: Sequence[SystemResult]) -> list[NormalisedScore]:
    """Normalised performance matrix ranking all systems on all three axes.

    EER, WER and UAR are min-max normalised over ``rows``; the WER (a loss) is
    inverted so that 1 is always best. The combined score is the mean of the
    three, and systems are ranked by it (1 = best, ties share a rank).
    Whether original data belongs in ``rows`` is the caller's choice.

    Returns
    -------
    list of NormalisedScore
        Sorted by rank.
    """
    privacy = _min_max(np.array([r.eer for r in rows], dtype=float))
    content = _min_max(-np.array([r.wer for r in rows], dtype=float))
    emotion = _min_max(np.array([r.uar for r in rows], dtype=float))
    combined = (privacy + content + emotion) / 3
    ranks = rankdata(-combined, method="min")
    scores = [
        NormalisedScore(r.name, float(p), float(c), float(e), float(s), int(k))
        for r, p, c, e, s, k in zip(rows, privacy, content, emotion, combined, ranks)
    ]
    return sorted(scores, key=lambda s: (s.rank, s.name))
