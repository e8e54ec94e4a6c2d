import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.metrics_reference import enumerated_isolation
from tests.helpers.score_strategies import score_matrices
from voxanon.errors import ConfigError
from voxanon.metrics import (
    ScoreMatrix,
    ScoreMatrixError,
    isolation_thresholds,
    singling_out,
)


def _separated(n_speakers: int, per_speaker: int, seed: int) -> ScoreMatrix:
    true = np.repeat(np.arange(n_speakers), per_speaker)
    scores = np.random.default_rng(seed).uniform(0, 1, size=(true.size, n_speakers))
    scores[np.arange(true.size), true] += 5.0
    return ScoreMatrix(scores, true)


def test_perfectly_separated_scores_single_out_every_speaker():
    calibration = _separated(8, 3, seed=1)
    thresholds = isolation_thresholds(calibration)  # between the 3 mated and the non-mated scores
    result = singling_out(_separated(8, 2, seed=2), thresholds)
    assert (result.rate, result.correct_rate, result.n_records) == (100.0, 100.0, 8)


def test_chance_levels():
    result = singling_out(_separated(4, 1, seed=0), np.full(4, 0.5))
    assert result.chance == pytest.approx(100 * (3 / 4) ** 3)
    assert result.correct_chance == pytest.approx(100 * (3 / 4) ** 3 / 4)


def test_hand_computed_three_speakers():
    # thresholds 0.5. Model 0 fires on speaker 0's trial only: isolated, own.
    # Model 1 fires on speakers 0 and 1: not isolated. Model 2 fires on speaker 1 only: isolated, not own.
    scores = [[0.9, 0.8, 0.1],
              [0.2, 0.7, 0.6],
              [0.3, 0.1, 0.4]]
    result = singling_out(ScoreMatrix(scores, [0, 1, 2]), [0.5, 0.5, 0.5])
    assert result.rate == pytest.approx(100 * 2 / 3)
    assert result.correct_rate == pytest.approx(100 * 1 / 3)


def test_several_trials_per_speaker_give_the_expectation_over_the_choice():
    # Two speakers, model 0, threshold 0.5: speaker 0 fires on 1 of 2 trials, speaker 1 on 1 of 4.
    # P(exactly one) = 1/2 * 3/4 + 1/4 * 1/2 = 1/2; own: 3/8. Model 1 never fires: 0.
    scores = np.array([[0.9, 0.0], [0.1, 0.0], [0.9, 0.0], [0.1, 0.0], [0.1, 0.0], [0.1, 0.0]])
    result = singling_out(ScoreMatrix(scores, [0, 0, 1, 1, 1, 1]), [0.5, 0.5])
    assert result.rate == pytest.approx(100 * (1 / 2 + 0) / 2)
    assert result.correct_rate == pytest.approx(100 * (3 / 8 + 0) / 2)


@given(score_matrices(max_speakers=3, max_trials=7), st.lists(st.integers(-3, 3), min_size=3, max_size=3))
def test_matches_enumeration_of_every_choice_of_records(case, threshold_values):
    scores, true = case
    if len(set(true.tolist())) < 2:
        return
    thresholds = np.array(threshold_values[: scores.shape[1]], dtype=float) + 0.5 * (np.arange(scores.shape[1]) % 2)
    result = singling_out(ScoreMatrix(scores, true), thresholds)
    rate, correct = enumerated_isolation(scores, true, thresholds)
    assert result.rate == pytest.approx(rate, abs=1e-9)
    assert result.correct_rate == pytest.approx(correct, abs=1e-9)


def test_uninformative_scores_isolate_at_the_pso_baseline_near_one_over_e():
    # Independent uniform scores and a threshold firing with probability exactly 1/R: the
    # expected isolation rate is (1 - 1/R)^(R - 1) (-> 1/e); ten trials per speaker average
    # the choice of record, so the estimate sits within a fraction of a point of it.
    n_records, per_speaker = 1000, 10
    true = np.repeat(np.arange(n_records), per_speaker)
    scores = np.random.default_rng(0).uniform(size=(true.size, n_records))
    result = singling_out(ScoreMatrix(scores, true), np.full(n_records, 1 - 1 / n_records))
    assert result.chance == pytest.approx(100 / np.e, abs=0.02)
    assert result.rate == pytest.approx(result.chance, abs=1.0)


def test_uninformative_scores_with_calibrated_thresholds():
    rng = np.random.default_rng(1)
    n_records = 200
    calibration = ScoreMatrix(rng.normal(size=(50 * n_records, n_records)), np.repeat(np.arange(n_records), 50))
    evaluated = ScoreMatrix(rng.normal(size=(5 * n_records, n_records)), np.repeat(np.arange(n_records), 5))
    result = singling_out(evaluated, isolation_thresholds(calibration))
    assert result.rate == pytest.approx(result.chance, abs=2.0)
    assert result.correct_rate == pytest.approx(result.correct_chance, abs=0.1)


@given(st.integers(2, 6), st.integers(1, 5), st.integers(0, 1000))
def test_thresholds_fire_on_one_in_r_calibration_scores(n_records, per_speaker, seed):
    true = np.repeat(np.arange(n_records), per_speaker)
    scores = np.random.default_rng(seed).normal(size=(true.size, n_records + 1))  # distinct scores
    thresholds = isolation_thresholds(ScoreMatrix(scores, true))
    np.testing.assert_array_equal((scores > thresholds).sum(axis=0), per_speaker)
    sorted_scores = np.sort(scores, axis=0)[::-1]
    np.testing.assert_allclose(thresholds, (sorted_scores[per_speaker - 1] + sorted_scores[per_speaker]) / 2)


def test_threshold_count_rounds_to_the_nearest_integer_and_n_records_overrides():
    scores = np.arange(30, dtype=float).reshape(10, 3)  # column 0: 0, 3, ..., 27
    calibration = ScoreMatrix(scores, np.arange(10) % 3)
    assert isolation_thresholds(calibration)[0] == pytest.approx((21 + 18) / 2)  # k = round(10 / 3) = 3
    assert isolation_thresholds(calibration, n_records=4)[0] == pytest.approx((21 + 18) / 2)  # 2.5 rounds up
    assert isolation_thresholds(calibration, n_records=5)[0] == pytest.approx((24 + 21) / 2)  # k = 2
    assert isolation_thresholds(calibration, n_records=100)[0] == pytest.approx((27 + 24) / 2)  # k at least 1


def test_invalid_inputs():
    matrix = ScoreMatrix([[1.0, 0.0], [0.0, 1.0]], [0, 1])
    with pytest.raises(ConfigError, match="2 finite values"):
        singling_out(matrix, [0.5])
    with pytest.raises(ConfigError, match="2 finite values"):
        singling_out(matrix, [0.5, np.nan])
    with pytest.raises(ScoreMatrixError, match="one speaker"):
        singling_out(ScoreMatrix([[1.0, 0.0], [0.5, 0.0]], [0, 0]), [0.5, 0.5])
    with pytest.raises(ConfigError, match="at least 2 records"):
        isolation_thresholds(ScoreMatrix([[1.0, 0.0], [0.5, 0.0]], [0, 0]))
    with pytest.raises(ScoreMatrixError, match="hold out more"):
        isolation_thresholds(ScoreMatrix([[1.0, 0.0]], [0]), n_records=2)
