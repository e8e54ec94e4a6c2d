"""VPC-style ranking and privacy/utility trade-off analysis of systems.

The VPC 2024 ranks anonymization systems inside privacy categories
(average semi-informed EER >= 10, 20, 30 or 40 %) by WER (lower is better)
and, separately, by UAR (higher is better). The functions here take the
privacy number and any utility measures (:class:`Measure`: a name and
whether higher is better), so a caller decides which measures rank; this
module adds the usual trade-off views: relative changes against original
data, Pareto fronts and a min-max normalised performance matrix.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import rankdata

PRIVACY_THRESHOLDS = (10.0, 20.0, 30.0, 40.0)
"""Lower EER bounds (percent) of the VPC 2024 privacy categories."""

#: the name of the privacy axis in :meth:`SystemResult.value`, Pareto views and relative changes
PRIVACY = "eer"


@dataclass(frozen=True)
class Measure:
    """A utility measure systems are ranked by: its name in :attr:`SystemResult.utility` and its direction."""

    name: str
    higher_better: bool


#: the VPC's utility measures: content (WER, lower is better) and emotion (UAR, higher is better)
WER = Measure("wer", higher_better=False)
UAR = Measure("uar", higher_better=True)

# Trade-off views: (x name, y name, (maximize x, maximize y)).
PRIVACY_VS_UAR = (PRIVACY, "uar", (True, True))
PRIVACY_VS_WER = (PRIVACY, "wer", (True, False))
UAR_VS_WER = ("uar", "wer", (True, False))


@dataclass(frozen=True)
class SystemResult:
    """One row of a results table (all values in percent).

    Attributes
    ----------
    name : str
        System name ("orig" for original data).
    eer : float
        Average EER (privacy; higher is better).
    utility : dict of str -> float
        Each utility measure's value by name (e.g. ``wer``, ``uar``; NaN: not measured).
    """

    name: str
    eer: float
    utility: dict[str, float] = field(default_factory=dict)

    def value(self, name: str) -> float:
        """The EER (``name`` :data:`PRIVACY`) or the utility measure ``name``."""
        return self.eer if name == PRIVACY else self.utility[name]


def privacy_category(eer: float) -> int:
    """VPC privacy category of an average EER (percent).

    Returns the largest threshold of :data:`PRIVACY_THRESHOLDS` that ``eer``
    reaches (EER >= threshold), as an int (10, 20, 30 or 40), or 0 below 10 %.
    """
    reached = [t for t in PRIVACY_THRESHOLDS if eer >= t]
    return int(reached[-1]) if reached else 0


@dataclass(frozen=True)
class RankedSystem:
    """A system with its privacy category and its rank by each measure inside that category."""

    system: SystemResult
    category: int
    ranks: dict[str, int | None]


def rank_systems(rows: Sequence[SystemResult], measures: Sequence[Measure] = (WER, UAR)) -> list[RankedSystem]:
    """Rank systems by each measure (best first: ascending where lower is better) per category.

    Ties share the best rank ("1224" ranking). Systems below 10 % EER get
    category 0 and are ranked among themselves. A system whose value of a
    measure is NaN (not measured) gets no rank by it (None) and does not take
    a rank from others.

    Returns
    -------
    list of RankedSystem
        Sorted by category (highest first), then rank by the first measure, then name.
    """
    ranked = []
    for category in sorted({privacy_category(r.eer) for r in rows}, reverse=True):
        members = [r for r in rows if privacy_category(r.eer) == category]
        ranks = {m.name: rankdata([(-1 if m.higher_better else 1) * r.utility[m.name] for r in members],
                                  method="min", nan_policy="omit") for m in measures}
        ranked += sorted(
            (RankedSystem(r, category, {m: None if np.isnan(k[i]) else int(k[i]) for m, k in ranks.items()})
             for i, r in enumerate(members)),
            key=lambda s: (s.ranks[measures[0].name] if measures else 0, s.system.name),
        )
    return ranked


@dataclass(frozen=True)
class RelativeChange:
    """Relative changes (percent of the original value) of one system, by axis (:data:`PRIVACY` and each
    measure)."""

    name: str
    changes: dict[str, float]


def relative_changes(rows: Sequence[SystemResult], original: SystemResult) -> list[RelativeChange]:
    """ΔEER and the change of every utility measure of each system relative to original data.

    Δm = 100 * (m_system - m_original) / m_original, so ΔEER > 0 is a privacy
    gain, ΔWER > 0 a content loss and ΔUAR < 0 an emotion loss. A change
    relative to an original value of 0 (no error on a small corpus) is NaN.
    """

    def change(value: float, reference: float) -> float:
        return 100.0 * (value - reference) / reference if reference != 0 else float("nan")

    return [RelativeChange(r.name, {k: change(r.value(k), original.value(k)) for k in (PRIVACY, *r.utility)})
            for r in rows]


def pareto_front(
    rows: Sequence[SystemResult], x: str, y: str, maximize: tuple[bool, bool] = (True, True)
) -> list[SystemResult]:
    """Systems not dominated on the two axes ``x`` and ``y``.

    A system dominates another when it is at least as good on both axes
    and strictly better on one. Use e.g. ``pareto_front(rows, *UAR_VS_WER)``.

    Parameters
    ----------
    rows : sequence of SystemResult
    x, y : str
        Axis names (:data:`PRIVACY` or a utility measure's name, :meth:`SystemResult.value`).
    maximize : (bool, bool)
        Whether larger is better for ``x`` and for ``y``.

    Returns
    -------
    list of SystemResult
        The non-dominated rows, in input order.
    """
    signs = np.where(maximize, 1.0, -1.0)
    values = np.array([[r.value(x), r.value(y)] for r in rows]) * signs
    at_least = (values[:, None, :] >= values[None, :, :]).all(axis=2)
    better = (values[:, None, :] > values[None, :, :]).any(axis=2)
    dominated = (at_least & better).any(axis=0)
    return [r for r, d in zip(rows, dominated) if not d]


@dataclass(frozen=True)
class NormalisedScore:
    """Min-max normalised scores (1 = best among the systems) by axis, their mean and the overall rank."""

    name: str
    scores: dict[str, float]
    combined: float
    rank: int


def _min_max(values: np.ndarray) -> np.ndarray:
    """Scale to [0, 1] (1 = largest); a constant column maps to 1."""
    span = values.max() - values.min()
    return np.ones_like(values) if span == 0 else (values - values.min()) / span


def performance_matrix(rows: Sequence[SystemResult], measures: Sequence[Measure] = (WER, UAR)
                       ) -> list[NormalisedScore]:
    """Normalised performance matrix ranking all systems on privacy and every measure.

    The EER and each measure are min-max normalised over ``rows``; a measure
    where lower is better (WER, a loss) is inverted so that 1 is always best.
    The combined score is the mean of them all, and systems are ranked by it
    (1 = best, ties share a rank). Whether original data belongs in ``rows``
    is the caller's choice.

    Returns
    -------
    list of NormalisedScore
        Sorted by rank.
    """
    axes = {PRIVACY: _min_max(np.array([r.eer for r in rows], dtype=float))}
    for m in measures:
        axes[m.name] = _min_max((1 if m.higher_better else -1) * np.array([r.utility[m.name] for r in rows],
                                                                          dtype=float))
    combined = sum(axes.values()) / len(axes)
    ranks = rankdata(-combined, method="min")
    scores = [NormalisedScore(r.name, {k: float(v[i]) for k, v in axes.items()}, float(combined[i]), int(ranks[i]))
              for i, r in enumerate(rows)]
    return sorted(scores, key=lambda s: (s.rank, s.name))
