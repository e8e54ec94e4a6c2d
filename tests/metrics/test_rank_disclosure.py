import numpy as np
import pytest
from hypothesis import given

from tests.helpers.metrics_reference import tie_break_ranks
from tests.helpers.score_strategies import score_matrices
from voxanon.errors import ConfigError
from voxanon.metrics import ScoreMatrix, rank_disclosure


def _entropy(p) -> float:
    p = np.asarray(p, float)
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


def _ranked(ranks, n_speakers: int, true=None) -> ScoreMatrix:
    """A matrix whose trial i has its true speaker at rank ``ranks[i]`` (1 = best), no ties."""
    ranks = np.asarray(ranks)
    true = np.zeros(ranks.size, dtype=int) if true is None else np.asarray(true)
    scores = np.tile(np.arange(n_speakers, 0, -1, dtype=float), (ranks.size, 1))  # column order = rank order
    others = np.array([[j for j in range(n_speakers) if j != t] for t in true])
    for i, (t, r) in enumerate(zip(true, ranks)):
        order = np.insert(others[i], r - 1, t)
        scores[i, order] = np.arange(n_speakers, 0, -1)
    return ScoreMatrix(scores, true)


def test_hand_computed_three_by_three_histogram():
    # ranks 1, 1, 2 among N = 3: P = (2/3, 1/3, 0), disclosure log2 3 - H(P)
    matrix = ScoreMatrix([[0.9, 0.2, 0.1], [0.1, 0.8, 0.3], [0.5, 0.4, 0.6]], [0, 1, 0])
    result = rank_disclosure(matrix, histogram_min_trials=1, min_trials=1)
    np.testing.assert_allclose(result.rank_distribution, [2 / 3, 1 / 3, 0])
    assert result.mean_bits == pytest.approx(np.log2(3) - _entropy([2 / 3, 1 / 3]))
    assert result.max_bits == pytest.approx(np.log2(3))
    # speaker 0: ranks 1 and 2, H = 1 bit; speaker 1: rank 1, H = 0; speaker 2: no trials
    np.testing.assert_allclose(result.speaker_bits[:2], [np.log2(3) - 1, np.log2(3)])
    assert np.isnan(result.speaker_bits[2])
    assert (result.worst_speaker, result.n_evaluated) == (1, 2)
    np.testing.assert_array_equal(result.speaker_trials, [2, 1, 0])


def test_perfect_separation_discloses_log2_n():
    n = 8
    matrix = _ranked(np.ones(10 * n, dtype=int), n, true=np.arange(10 * n) % n)
    result = rank_disclosure(matrix)  # 10 N trials: pooled histogram
    assert result.mean_bits == pytest.approx(np.log2(n))
    # 10 trials per speaker: beta-binomial fits, at the bound alpha = 1e-3
    assert result.speaker_fitted[: n].all()
    np.testing.assert_allclose(result.speaker_bits, np.log2(n), atol=0.01)


def test_all_equal_scores_disclose_nothing():
    matrix = ScoreMatrix(np.zeros((12, 5)), np.arange(12) % 5)
    exact = rank_disclosure(matrix, histogram_min_trials=1, min_trials=1)
    assert exact.mean_bits == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(exact.speaker_bits, 0.0, atol=1e-12)
    fitted = rank_disclosure(matrix, min_trials=1)  # ties spread evenly: the fit is uniform too
    assert fitted.mean_bits == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(fitted.speaker_bits, 0.0, atol=1e-9)


def test_random_scores_disclose_almost_nothing():
    rng = np.random.default_rng(0)
    n, per = 20, 100
    matrix = ScoreMatrix(rng.normal(size=(n * per, n)), np.repeat(np.arange(n), per))
    result = rank_disclosure(matrix)  # pooled: 2000 = 10 N trials, a histogram; per speaker: fits
    assert result.mean_bits == pytest.approx(0.0, abs=0.03)
    assert result.speaker_fitted.all()
    assert result.worst_bits < 0.1
    histograms = rank_disclosure(matrix, histogram_min_trials=1)  # biased up by ~ 19 / (200 ln 2) bits
    assert np.mean(histograms.speaker_bits) > 0.1 > np.mean(result.speaker_bits)


def test_fit_removes_the_small_sample_bias_of_the_histogram():
    # 10 trials at 10 different, evenly spread ranks among 40: the histogram claims
    # log2 40 - log2 10 = 2 bits; the beta-binomial sees a flat distribution.
    matrix = _ranked(np.arange(1, 41, 4), 40)
    histogram = rank_disclosure(matrix, histogram_min_trials=1)
    fitted = rank_disclosure(matrix)
    assert histogram.speaker_bits[0] == pytest.approx(2.0)
    assert fitted.speaker_fitted[0]
    assert fitted.speaker_bits[0] < 0.05


def test_worst_case_finds_the_identifiable_speaker_and_skips_speakers_with_few_trials():
    rng = np.random.default_rng(2)
    n = 10
    true = np.r_[np.repeat(np.arange(n - 1), 30), [n - 1, n - 1]]
    scores = rng.normal(size=(true.size, n))
    scores[true == 4, 4] += 10.0  # speaker 4 always ranks first
    scores[true == n - 1, n - 1] += 10.0  # so does speaker 9, but with only 2 trials
    result = rank_disclosure(ScoreMatrix(scores, true))
    assert result.worst_speaker == 4
    assert result.worst_bits == pytest.approx(np.log2(n), abs=0.01)
    assert np.isnan(result.speaker_bits[n - 1])
    assert result.n_evaluated == n - 1
    assert np.nanmax(np.delete(result.speaker_bits, 4)) < 1.0


@given(score_matrices())
def test_histogram_disclosure_matches_every_tie_break_order(case):
    scores, true = case
    n = scores.shape[1]
    result = rank_disclosure(ScoreMatrix(scores, true), histogram_min_trials=1, min_trials=1)
    distribution = tie_break_ranks(scores, true) / len(true)
    np.testing.assert_allclose(result.rank_distribution, distribution, atol=1e-12)
    assert result.mean_bits == pytest.approx(np.log2(n) - _entropy(distribution), abs=1e-9)
    assert 0.0 <= result.mean_bits <= result.max_bits + 1e-12
    assert result.worst_bits >= np.nanmax(result.speaker_bits) - 1e-12


def test_no_speaker_with_enough_trials():
    result = rank_disclosure(ScoreMatrix([[1.0, 0.0]], [0]))
    assert np.isnan(result.worst_bits) and result.worst_speaker is None and result.n_evaluated == 0


def test_min_trials_must_be_positive():
    with pytest.raises(ConfigError, match="min_trials"):
        rank_disclosure(ScoreMatrix([[1.0, 0.0]], [0]), min_trials=0)
