"""Rank of each trial's true speaker among the N enrolled speakers, ties resolved at random.

Trial i's true speaker outscores ``n_speakers - 1 - greater[i] - tied[i]``
models, is outscored by ``greater[i]`` and ties (exactly equal score) with
``tied[i]`` others. Under a uniformly random tie break its rank (1 = most
similar) is uniform on ``greater + 1 .. greater + tied + 1``: every rank-based
metric here is the expectation over that tie break, so it is exact, does not
depend on column order, and all-equal scores give exactly the chance level.
"""

from dataclasses import dataclass

import numpy as np

from voxanon.metrics.score_matrix import ScoreMatrix

#: matrix elements compared at once (bounds the boolean temporaries to a few MB)
_CHUNK_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class TrueRanks:
    """Per trial: models scoring strictly above, and equal to, the true speaker's model."""

    greater: np.ndarray
    tied: np.ndarray


def true_ranks(matrix: ScoreMatrix) -> TrueRanks:
    """Count, per trial, the other models scoring above and equal to its true speaker's."""
    n_trials, n_speakers = matrix.scores.shape
    mated = matrix.mated_scores()[:, None]
    greater = np.empty(n_trials, dtype=np.int64)
    equal = np.empty(n_trials, dtype=np.int64)
    step = max(1, _CHUNK_ELEMENTS // n_speakers)
    for start in range(0, n_trials, step):
        rows = slice(start, start + step)
        greater[rows] = np.count_nonzero(matrix.scores[rows] > mated[rows], axis=1)
        equal[rows] = np.count_nonzero(matrix.scores[rows] == mated[rows], axis=1)
    return TrueRanks(greater=greater, tied=equal - 1)  # the true model equals itself


def rank_counts(ranks: TrueRanks, n_speakers: int, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Expected number of trials at each rank, per group of trials.

    Parameters
    ----------
    ranks : TrueRanks
        From :func:`true_ranks`.
    n_speakers : int
        N, the number of possible ranks.
    groups : ndarray of int
        Group (e.g. true speaker) of each trial, in ``0 .. n_groups - 1``.
    n_groups : int
        Number of groups.

    Returns
    -------
    ndarray, shape (n_groups, n_speakers)
        Column r holds the expected count of trials at rank r + 1; a trial
        tied with k others adds 1 / (k + 1) to each of its k + 1 possible ranks.
    """
    weight = 1.0 / (ranks.tied + 1)
    width = n_speakers + 1  # one spare column for the end of each uniform run
    start = groups * width + ranks.greater
    stop = start + ranks.tied + 1
    size = n_groups * width
    steps = np.bincount(start, weight, size) - np.bincount(stop, weight, size)
    return np.cumsum(steps.reshape(n_groups, width), axis=1)[:, :n_speakers]
