"""Scores of every trial utterance against every enrolled speaker's model.

Rank-based privacy metrics (rank-1 linkability, singling out, similarity rank
disclosure) need more than the score of each trial against its *claimed*
speaker: they need the trial's score against all N enrolled models and the
index of its true speaker. :class:`ScoreMatrix` holds exactly that, validated
once, so the metrics never re-check their input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from voxanon.errors import DataError


class ScoreMatrixError(DataError, ValueError):
    """A score matrix that is malformed: wrong shape, NaN, or a true speaker index out of range."""


def _labels(values, count: int, what: str) -> tuple[str, ...] | None:
    if values is None:
        return None
    labels = tuple(str(v) for v in values)
    if len(labels) != count:
        raise ScoreMatrixError(f"ScoreMatrix: {len(labels)} {what} ids for {count} {what}s; give one id per {what}")
    return labels


@dataclass(frozen=True, eq=False)
class ScoreMatrix:
    """Scores of ``n_trials`` trial utterances against ``n_speakers`` enrolled models.

    Attributes
    ----------
    scores : ndarray, shape (n_trials, n_speakers)
        ``scores[i, j]``: score of trial utterance ``i`` against the model of
        enrolled speaker ``j``; higher means more similar. Finite float64.
    true_index : ndarray of int64, shape (n_trials,)
        Column of each trial's true speaker.
    speakers : tuple of str, optional
        Enrolled speaker ids, one per column (used in messages and results).
    trials : tuple of str, optional
        Trial utterance ids, one per row (used in messages).

    Both arrays are copied and made read-only. Invalid input raises
    :class:`ScoreMatrixError` (a :class:`ValueError` and a
    :class:`~voxanon.errors.DataError`) naming the trial or speaker at fault.
    """

    scores: np.ndarray
    true_index: np.ndarray
    speakers: tuple[str, ...] | None = None
    trials: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        scores = np.array(self.scores, dtype=np.float64)  # own copy: freezing it leaves the caller's alone
        if scores.ndim != 2 or scores.shape[0] == 0 or scores.shape[1] < 2:
            raise ScoreMatrixError(f"ScoreMatrix: scores must be (n_trials >= 1, n_speakers >= 2), "
                                   f"got shape {scores.shape}")
        n_trials, n_speakers = scores.shape
        object.__setattr__(self, "speakers", _labels(self.speakers, n_speakers, "speaker"))
        object.__setattr__(self, "trials", _labels(self.trials, n_trials, "trial"))
        bad = ~np.isfinite(scores)
        if bad.any():
            row, col = np.argwhere(bad)[0]
            raise ScoreMatrixError(f"ScoreMatrix: {int(bad.sum())} NaN or infinite scores, the first of "
                                   f"{self.trial_name(row)} against {self.speaker_name(col)}; "
                                   "rescore or drop that trial")
        raw_index = np.asarray(self.true_index)
        if raw_index.shape != (n_trials,):
            raise ScoreMatrixError(f"ScoreMatrix: true_index must have one entry per trial ({n_trials}), "
                                   f"got shape {raw_index.shape}")
        if raw_index.dtype.kind not in "iu":
            raise ScoreMatrixError(f"ScoreMatrix: true_index must hold integer column indices, got {raw_index.dtype}")
        index = raw_index.astype(np.int64)
        outside = (index < 0) | (index >= n_speakers)
        if outside.any():
            row = int(np.flatnonzero(outside)[0])
            raise ScoreMatrixError(f"ScoreMatrix: {self.trial_name(row)} has true speaker index {index[row]}, "
                                   f"outside 0..{n_speakers - 1}; its speaker must be one of the enrolled columns")
        for name, array in (("scores", scores), ("true_index", index)):
            array.setflags(write=False)
            object.__setattr__(self, name, array)

    @property
    def n_trials(self) -> int:
        """Number of trial utterances (rows)."""
        return self.scores.shape[0]

    @property
    def n_speakers(self) -> int:
        """Number of enrolled speakers N (columns)."""
        return self.scores.shape[1]

    def speaker_name(self, column: int) -> str:
        """Id of the enrolled speaker in ``column``, or ``"speaker <column>"`` without ids."""
        return self.speakers[column] if self.speakers else f"speaker {column}"

    def trial_name(self, row: int) -> str:
        """``"trial <row> (<id>)"``, naming the trial utterance in messages."""
        return f"trial {row} ({self.trials[row]})" if self.trials else f"trial {row}"

    def mated_scores(self) -> np.ndarray:
        """Score of each trial against its true speaker's model, shape (n_trials,)."""
        return self.scores[np.arange(self.n_trials), self.true_index]

    def nonmated_scores(self) -> np.ndarray:
        """Scores of every trial against every other speaker's model, flattened."""
        other = np.ones(self.scores.shape, dtype=bool)
        other[np.arange(self.n_trials), self.true_index] = False
        return self.scores[other]

    def speaker_trials(self, column: int) -> tuple[np.ndarray, np.ndarray]:
        """Target and non-target scores of the model in ``column``.

        Returns
        -------
        target, nontarget : ndarray
            Scores of this speaker's own trials, and of every other trial,
            against its model.
        """
        own = self.true_index == column
        scores = self.scores[:, column]
        return scores[own], scores[~own]

    def subset(self, rows) -> ScoreMatrix:
        """The matrix restricted to the trials ``rows`` (indices or a boolean mask)."""
        rows = np.arange(self.n_trials)[rows]
        trials = None if self.trials is None else tuple(np.array(self.trials, dtype=object)[rows])
        return ScoreMatrix(self.scores[rows], self.true_index[rows], self.speakers, trials)


def held_out_split(matrix: ScoreMatrix) -> tuple[ScoreMatrix, ScoreMatrix]:
    """Split the trials into evaluated and held-out halves, alternating within each speaker.

    Each speaker's trials, in row order, go to the evaluated half (1st, 3rd,
    ...) and the held-out half (2nd, 4th, ...), so both halves hold every
    speaker with two or more trials. Deterministic: no random draw.

    Returns
    -------
    evaluated, held_out : ScoreMatrix
        The odd-numbered and even-numbered trials of each speaker. The held-out
        half is meant for :func:`voxanon.metrics.isolation_thresholds`.
    """
    order = np.argsort(matrix.true_index, kind="stable")
    sorted_index = matrix.true_index[order]
    first_of_speaker = np.searchsorted(sorted_index, sorted_index, side="left")
    position = np.empty(matrix.n_trials, dtype=np.int64)
    position[order] = np.arange(matrix.n_trials) - first_of_speaker
    held_out = position % 2 == 1
    if not held_out.any():
        raise ScoreMatrixError("held_out_split: no speaker has two trials, so nothing can be held out")
    return matrix.subset(~held_out), matrix.subset(held_out)
