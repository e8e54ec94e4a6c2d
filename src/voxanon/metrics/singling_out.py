"""Singling out, after the predicate singling out (PSO) metric of Vauquier et al. (2025).

The attacker turns each enrolled speaker j into a predicate on released
records: "the utterance scores above tau_j against j's model". The released
data set holds one trial utterance per speaker (R records). The predicate
*isolates* when it fires on exactly one record. tau_j is calibrated on
held-out utterances of the same speakers so that it fires on a fraction 1/R of
them, the PSO baseline: a predicate of that weight that carries no
information isolates with probability (1 - 1/R)^(R - 1), which tends to
1/e ~ 36.8 % as R grows.
"""

from dataclasses import dataclass

import numpy as np

from voxanon.errors import ConfigError
from voxanon.metrics.score_matrix import ScoreMatrix, ScoreMatrixError


@dataclass(frozen=True)
class SinglingOut:
    """Isolation rates of the enrolled speakers' predicates (percent).

    Attributes
    ----------
    rate : float
        pi_sing: probability that a predicate fires on exactly one record,
        whichever speaker's (the paper's definition).
    correct_rate : float
        Probability that it fires on exactly one record *and* that record is
        the predicate's own speaker's.
    chance, correct_chance : float
        The same for an uninformative predicate of weight 1/R:
        100 (1 - 1/R)^(R - 1) and that divided by R.
    n_records : int
        R: the speakers with trials, each one record of the released data set
        and one evaluated predicate.
    """

    rate: float
    correct_rate: float
    chance: float
    correct_chance: float
    n_records: int


def isolation_thresholds(calibration: ScoreMatrix, n_records: int | None = None) -> np.ndarray:
    """Per enrolled speaker, the threshold that fires on 1/R of its held-out scores.

    For each model (column), all ``n`` calibration scores (mated and
    non-mated, as in the paper) are ranked and the threshold is placed midway
    between the k-th and (k+1)-th highest, k = n / R rounded half up (at
    least 1), so exactly k of them lie above it unless those two scores tie.
    With M held-out utterances per speaker, n = M R and k = M: the paper's
    rule.

    Parameters
    ----------
    calibration : ScoreMatrix
        Held-out trials, disjoint from the evaluated ones, scored against the
        same enrolled models.
    n_records : int, optional
        R, the number of records the predicates will be applied to; by default
        the number of distinct speakers in ``calibration``.

    Returns
    -------
    ndarray, shape (n_speakers,)
        One threshold per enrolled speaker; a score strictly above it fires.
    """
    n = calibration.n_trials
    records = len(np.unique(calibration.true_index)) if n_records is None else int(n_records)
    if records < 2:
        raise ConfigError(f"isolation_thresholds: n_records is {records}; singling out needs at least 2 records")
    k = max(1, int(np.floor(n / records + 0.5)))
    if n < k + 1:
        raise ScoreMatrixError(f"isolation_thresholds: {n} calibration trials cannot place {k} above the "
                               "threshold and one below; hold out more trials per speaker")
    by_model = calibration.scores.T.copy()  # contiguous rows: partitioning them in place is faster
    by_model.partition([n - k - 1, n - k], axis=1)
    return (by_model[:, n - k - 1] + by_model[:, n - k]) / 2


def _product_of_others(q: np.ndarray) -> np.ndarray:
    """prod over rows t != s of q[t, j], for every (s, j), without dividing by zero."""
    zero = q == 0
    n_zero = zero.sum(axis=0)
    log_q = np.log(np.where(zero, 1.0, q))
    total = log_q.sum(axis=0)
    without_self = np.exp(total - log_q)
    no_other_zero = np.where(zero, n_zero == 1, n_zero == 0)
    return np.where(no_other_zero, without_self, 0.0)


def singling_out(matrix: ScoreMatrix, thresholds) -> SinglingOut:
    """How often an enrolled speaker's predicate isolates exactly one record (percent).

    The records are the speakers that have trials in ``matrix``, one trial
    each. When a speaker has several trials, the result is the exact
    expectation over choosing one of them uniformly at random (independently
    per speaker): with p[s, j] the fraction of speaker s's trials that fire
    j's predicate, P(exactly one fires) = sum_s p[s, j] prod_{t != s} (1 - p[t, j]).
    Only predicates of speakers with trials are evaluated (the own-record
    variant needs the speaker's record).

    Parameters
    ----------
    matrix : ScoreMatrix
        Evaluated trials against every enrolled model.
    thresholds : array_like, shape (n_speakers,)
        One threshold per model, from :func:`isolation_thresholds` on held-out
        trials (never on ``matrix`` itself).

    Returns
    -------
    SinglingOut
        pi_sing, its own-record variant, their chance levels and counts.

    References
    ----------
    N. Vauquier, B. M. L. Srivastava, S. A. Hosseini, E. Vincent, "Legally
    validated evaluation framework for voice anonymization", Interspeech 2025
    (pi_sing); A. Cohen and K. Nissim, "Towards formalizing the
    GDPR's notion of singling out", PNAS 117(15), 2020 (PSO).
    """
    thresholds = np.asarray(thresholds, dtype=np.float64)
    if thresholds.shape != (matrix.n_speakers,) or not np.isfinite(thresholds).all():
        raise ConfigError(f"singling_out: thresholds must be {matrix.n_speakers} finite values, one per "
                          f"enrolled speaker, got shape {thresholds.shape}")
    order = np.argsort(matrix.true_index, kind="stable")
    records, first, sizes = np.unique(matrix.true_index[order], return_index=True, return_counts=True)
    if records.size < 2:
        raise ScoreMatrixError("singling_out: the trials come from one speaker; isolating a record "
                               "needs trials of at least two speakers")
    fires = (matrix.scores > thresholds)[order]
    fire_rate = np.add.reduceat(fires, first, axis=0, dtype=np.int64) / sizes[:, None]
    isolates = fire_rate * _product_of_others(1.0 - fire_rate)
    own = isolates[np.arange(records.size), records]
    r = records.size
    chance = 100.0 * (1.0 - 1.0 / r) ** (r - 1)
    return SinglingOut(
        rate=float(100.0 * isolates[:, records].sum(axis=0).mean()),
        correct_rate=float(100.0 * own.mean()),
        chance=float(chance),
        correct_chance=float(chance / r),
        n_records=int(r),
    )
