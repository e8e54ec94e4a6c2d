"""Rank-1 linkability: how often a trial is closest to its own speaker (Vauquier et al., 2025).

Named ``rank1_linkability`` (not ``linkability``) because
:func:`voxanon.metrics.linkability` is a different quantity that the VPC also
calls linkability: Gomez-Barrero's D<->sys, a score-distribution overlap
measure in [0, 1]. This one is an identification rate: the first point of the
cumulative match characteristic, with the Interspeech 2025 paper's name.
"""

import numpy as np

from voxanon.metrics._ranks import TrueRanks, true_ranks
from voxanon.metrics.score_matrix import ScoreMatrix


def rank1_from_ranks(ranks: TrueRanks) -> float:
    """Rank-1 linkability (percent) from precomputed true-speaker ranks."""
    wins = np.where(ranks.greater == 0, 1.0 / (ranks.tied + 1), 0.0)
    return float(100.0 * wins.mean())


def rank1_linkability(matrix: ScoreMatrix) -> float:
    """Probability (percent) that a trial scores highest against its own speaker's model.

    pi_link = P{ s(x_i, enroll_i) > max_{j != i} s(x_i, enroll_j) }, over the
    trials of ``matrix`` and with all N enrolled speakers as candidates. Chance
    level: 100 / N.

    Ties: a trial whose true model ties with k other models for the highest
    score counts 1 / (k + 1), the expected success of a random tie break, so
    all-equal scores give exactly the chance level. The authors' reference
    implementation (PyPI ``voice-anonymization-legal-eval``) instead lets the
    true speaker win every tie, which reports 100 % for constant scores; on
    continuous scores (no ties) the two agree.

    Parameters
    ----------
    matrix : ScoreMatrix
        Scores of each trial against every enrolled model, with true speakers.

    Returns
    -------
    float
        Rank-1 linkability in percent.

    References
    ----------
    N. Vauquier, B. M. L. Srivastava, S. A. Hosseini, E. Vincent, "Legally
    validated evaluation framework for voice anonymization", Interspeech 2025
    (its pi_link with the candidate set N' = all enrolled speakers).
    """
    return rank1_from_ranks(true_ranks(matrix))
