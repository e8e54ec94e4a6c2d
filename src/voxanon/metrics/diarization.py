"""Diarization error rate (DER) and speaker-count error: how well a diarizer tells who spoke when.

DER follows NIST's md-eval (and pyannote.metrics): over the scored time, with
``N_ref`` reference and ``N_hyp`` hypothesis speakers talking at once,

- missed speech: ``max(0, N_ref - N_hyp)`` speaker-seconds,
- false alarm: ``max(0, N_hyp - N_ref)``,
- speaker confusion: ``min(N_ref, N_hyp) - N_correct``, where ``N_correct``
  counts the reference speakers talking whose mapped hypothesis speaker talks too,

each summed over time and divided by the reference speech (speaker-seconds).
Hypothesis speakers are mapped one to one onto reference speakers so that the
time they talk together is largest (``scipy.optimize.linear_sum_assignment``).
Overlapped speech is scored. A forgiveness collar (0.25 s by default, as
md-eval's) around every boundary of every reference speaker's speech is not
scored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from voxanon.data.rttm import Turn

#: md-eval's forgiveness collar, seconds either side of a reference boundary
DEFAULT_COLLAR = 0.25


@dataclass(frozen=True)
class DiarizationErrors:
    """Error components (speaker-seconds) of one or more recordings."""

    reference: float
    missed: float
    false_alarm: float
    confusion: float

    @property
    def der(self) -> float:
        """Diarization error rate in percent (NaN without reference speech)."""
        if self.reference == 0:
            return float("nan")
        return 100.0 * (self.missed + self.false_alarm + self.confusion) / self.reference

    def __add__(self, other: DiarizationErrors) -> DiarizationErrors:
        return DiarizationErrors(self.reference + other.reference, self.missed + other.missed,
                                 self.false_alarm + other.false_alarm, self.confusion + other.confusion)


def speech_of(turns: Iterable[Turn]) -> dict[str, list[tuple[float, float]]]:
    """Each speaker's speech as sorted, disjoint ``(start, end)`` intervals (touching turns merged)."""
    by_speaker: dict[str, list[tuple[float, float]]] = {}
    for t in sorted(turns, key=lambda t: (t.speaker, t.start)):
        spans = by_speaker.setdefault(t.speaker, [])
        if spans and t.start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], t.end))
        else:
            spans.append((t.start, t.end))
    return by_speaker


def _activity(speech: dict[str, list[tuple[float, float]]], mids: np.ndarray) -> np.ndarray:
    """Boolean (elementary segment x speaker): who talks at each segment's midpoint."""
    columns = []
    for spans in speech.values():
        s = np.array(spans, dtype=float).reshape(-1, 2)
        columns.append(((s[:, 0][None] <= mids[:, None]) & (mids[:, None] < s[:, 1][None])).any(axis=1))
    return np.stack(columns, axis=1) if columns else np.zeros((len(mids), 0), dtype=bool)


def _scored_segments(ref: dict, hyp: dict, collar: float) -> tuple[np.ndarray, np.ndarray]:
    """Midpoints and durations of the elementary segments outside the collars."""
    bounds = {t for spans in (*ref.values(), *hyp.values()) for span in spans for t in span}
    edges = sorted(b for spans in ref.values() for span in spans for b in span)
    if collar > 0:
        bounds |= {max(0.0, b - collar) for b in edges} | {b + collar for b in edges}
    points = np.array(sorted(bounds))
    if len(points) < 2:
        return np.zeros(0), np.zeros(0)
    mids, durations = (points[1:] + points[:-1]) / 2, np.diff(points)
    if collar > 0:
        e = np.array(edges)
        near = (np.abs(mids[:, None] - e[None]) < collar).any(axis=1)
        mids, durations = mids[~near], durations[~near]
    return mids, durations


def optimal_mapping(cooccurrence: np.ndarray) -> list[tuple[int, int]]:
    """(reference, hypothesis) index pairs mapping speakers one to one for the largest total co-occurrence."""
    rows, cols = linear_sum_assignment(-cooccurrence) if cooccurrence.size else ([], [])
    return [(int(r), int(c)) for r, c in zip(rows, cols)]


def diarization_errors(reference: Iterable[Turn], hypothesis: Iterable[Turn], *,
                       collar: float = DEFAULT_COLLAR) -> DiarizationErrors:
    """Missed speech, false alarm and speaker confusion of one recording's ``hypothesis`` against its
    ``reference`` turns (speaker-seconds outside the collars; overlap scored)."""
    if collar < 0:
        raise ValueError(f"collar must be >= 0 seconds, not {collar}")
    ref, hyp = speech_of(reference), speech_of(hypothesis)
    mids, durations = _scored_segments(ref, hyp, collar)
    r, h = _activity(ref, mids), _activity(hyp, mids)
    n_ref, n_hyp = r.sum(axis=1), h.sum(axis=1)
    cooccurrence = (r * durations[:, None]).T @ h  # seconds each reference speaker talks with each hypothesis one
    correct = sum(cooccurrence[i, j] for i, j in optimal_mapping(cooccurrence))
    return DiarizationErrors(
        reference=float(durations @ n_ref),
        missed=float(durations @ np.maximum(0, n_ref - n_hyp)),
        false_alarm=float(durations @ np.maximum(0, n_hyp - n_ref)),
        confusion=float(durations @ np.minimum(n_ref, n_hyp) - correct),
    )


def corpus_diarization_errors(reference: Mapping[str, list[Turn]], hypothesis: Mapping[str, list[Turn]], *,
                              collar: float = DEFAULT_COLLAR) -> dict[str, DiarizationErrors]:
    """:func:`diarization_errors` of every reference recording (one missing from ``hypothesis`` is all missed);
    sum the values for the corpus DER."""
    unknown = sorted(set(hypothesis) - set(reference))
    if unknown:
        raise ValueError(f"hypothesis recordings not in the reference: {', '.join(unknown[:5])}")
    return {rec: diarization_errors(turns, hypothesis.get(rec, []), collar=collar)
            for rec, turns in reference.items()}


def speaker_count_error(reference: Iterable[Turn], hypothesis: Iterable[Turn]) -> int:
    """Hypothesis speakers minus reference speakers of one recording (negative: speakers merged)."""
    return len({t.speaker for t in hypothesis}) - len({t.speaker for t in reference})
