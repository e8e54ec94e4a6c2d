"""Similarity rank disclosure (Bäckström et al., 2025): what the true speaker's rank reveals, in bits.

Each trial's true speaker has a rank r in 1 .. N among the N enrolled models
(1 = most similar; ties split uniformly, see :mod:`voxanon.metrics._ranks`).
Without information r is uniform on 1 .. N, with entropy log2 N; the
disclosure of a rank distribution P is log2 N - H(P) bits: 0 at chance,
log2 N when the true speaker always ranks first.

Estimating P: the paper uses the rank histogram and, where data are scarce, a
beta-binomial model of r - 1 on 0 .. N - 1. A histogram of n trials over N
ranks underestimates H by about (N - 1) / (2 n ln 2) bits (Miller-Madow), so a
histogram is used only with at least 10 N trials (bias below 0.08 bit); below
that, the beta-binomial fitted by maximum likelihood
(:func:`voxanon.metrics.betabinom.fit_beta_binomial`) gives P. With 10 trials
spread over 10 different ranks out of 40, for example, the histogram reports
2 bits where the fit reports close to 0.

Assumptions where the paper's full text was not available offline: ranks
count from 1 at the most similar model; the mean disclosure is that of the
rank distribution pooled over all trials; the worst case is the largest
per-speaker disclosure over speakers with at least ``min_trials`` trials.
"""

from dataclasses import dataclass

import numpy as np

from voxanon.errors import ConfigError
from voxanon.metrics._ranks import TrueRanks, rank_counts, true_ranks
from voxanon.metrics.betabinom import beta_binomial_logpmf, fit_beta_binomial
from voxanon.metrics.score_matrix import ScoreMatrix

#: trials per rank below which a histogram is replaced by a beta-binomial fit
HISTOGRAM_TRIALS_PER_RANK = 10

#: fewest trials of a speaker for its own disclosure to enter the worst case
MIN_SPEAKER_TRIALS = 5


@dataclass(frozen=True)
class RankDisclosure:
    """Similarity rank disclosure, pooled and per enrolled speaker (bits).

    Attributes
    ----------
    mean_bits : float
        log2 N - H of the rank distribution of all trials pooled.
    max_bits : float
        log2 N, the disclosure when the true speaker always ranks first.
    worst_bits : float
        Largest per-speaker disclosure; NaN when no speaker has enough trials.
    worst_speaker : int or None
        Column of the speaker reaching ``worst_bits``.
    rank_distribution : ndarray, shape (N,)
        Pooled empirical P(rank = r + 1), ties split.
    speaker_bits : ndarray, shape (N,)
        Disclosure of each enrolled speaker's own trials; NaN for speakers
        with fewer than ``min_trials`` trials.
    speaker_trials : ndarray of int, shape (N,)
        Trials per enrolled speaker.
    speaker_fitted : ndarray of bool, shape (N,)
        True where ``speaker_bits`` comes from a beta-binomial fit, False
        where from the histogram (or not evaluated).
    """

    mean_bits: float
    max_bits: float
    worst_bits: float
    worst_speaker: int | None
    rank_distribution: np.ndarray
    speaker_bits: np.ndarray
    speaker_trials: np.ndarray
    speaker_fitted: np.ndarray

    @property
    def n_evaluated(self) -> int:
        """Speakers with enough trials for a per-speaker disclosure."""
        return int(np.count_nonzero(~np.isnan(self.speaker_bits)))


def _entropy_bits(probabilities: np.ndarray) -> np.ndarray:
    """Entropy in bits of each row of a probability matrix."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(probabilities > 0, probabilities * np.log2(probabilities), 0.0)
    return -terms.sum(axis=1)


def disclosure_bits(counts: np.ndarray, histogram_min_trials: int) -> tuple[np.ndarray, np.ndarray]:
    """Disclosure of each row of rank counts, and whether it was fitted.

    Rows with at least ``histogram_min_trials`` trials use the normalised
    histogram; the others a maximum-likelihood beta-binomial.
    """
    n_ranks = counts.shape[1]
    totals = counts.sum(axis=1)
    fitted = totals < histogram_min_trials
    probabilities = counts / totals[:, None]
    if fitted.any():
        alpha, beta = fit_beta_binomial(counts[fitted])
        probabilities[fitted] = np.exp(beta_binomial_logpmf(n_ranks - 1, alpha, beta))
    bits = np.log2(n_ranks) - _entropy_bits(probabilities)
    return np.maximum(bits, 0.0), fitted


def disclosure_from_ranks(ranks: TrueRanks, matrix: ScoreMatrix, min_trials: int = MIN_SPEAKER_TRIALS,
                          histogram_min_trials: int | None = None) -> RankDisclosure:
    """:func:`rank_disclosure` from precomputed true-speaker ranks."""
    if min_trials < 1:
        raise ConfigError(f"rank_disclosure: min_trials is {min_trials}; it must be at least 1")
    n = matrix.n_speakers
    threshold = HISTOGRAM_TRIALS_PER_RANK * n if histogram_min_trials is None else histogram_min_trials
    per_speaker = rank_counts(ranks, n, matrix.true_index, n)
    trials = np.bincount(matrix.true_index, minlength=n)
    pooled = per_speaker.sum(axis=0, keepdims=True)
    mean_bits, _ = disclosure_bits(pooled, threshold)
    speaker_bits = np.full(n, np.nan)
    speaker_fitted = np.zeros(n, dtype=bool)
    evaluated = trials >= min_trials
    if evaluated.any():
        speaker_bits[evaluated], speaker_fitted[evaluated] = disclosure_bits(per_speaker[evaluated], threshold)
    worst = int(np.nanargmax(speaker_bits)) if evaluated.any() else None
    return RankDisclosure(
        mean_bits=float(mean_bits[0]),
        max_bits=float(np.log2(n)),
        worst_bits=float(speaker_bits[worst]) if worst is not None else float("nan"),
        worst_speaker=worst,
        rank_distribution=pooled[0] / matrix.n_trials,
        speaker_bits=speaker_bits,
        speaker_trials=trials,
        speaker_fitted=speaker_fitted,
    )


def rank_disclosure(matrix: ScoreMatrix, *, min_trials: int = MIN_SPEAKER_TRIALS,
                    histogram_min_trials: int | None = None) -> RankDisclosure:
    """Similarity rank disclosure of the trials, pooled and per speaker, in bits.

    Parameters
    ----------
    matrix : ScoreMatrix
        Scores of each trial against every enrolled model, with true speakers.
    min_trials : int
        Speakers with fewer trials get no per-speaker disclosure (NaN) and
        cannot be the worst case.
    histogram_min_trials : int, optional
        Trials from which a rank histogram is used as is instead of a
        beta-binomial fit; default :data:`HISTOGRAM_TRIALS_PER_RANK` x N.

    Returns
    -------
    RankDisclosure
        Mean (pooled), worst-case and per-speaker disclosure; chance is 0 bits.

    References
    ----------
    T. Bäckström, M. H. Vali, M. Nguyen, S. Rech, "Privacy disclosure of
    similarity rank in speech and language processing", arXiv:2508.05250, 2025.
    """
    return disclosure_from_ranks(true_ranks(matrix), matrix, min_trials, histogram_min_trials)
