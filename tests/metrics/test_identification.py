import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.metrics_reference import tie_break_ranks
from tests.helpers.score_strategies import score_matrices
from voxanon.metrics import ScoreMatrix, rank1_linkability


def test_perfectly_separated_scores_link_every_trial():
    true = np.repeat(np.arange(5), 3)
    scores = np.random.default_rng(0).normal(size=(15, 5))
    scores[np.arange(15), true] = 10.0
    assert rank1_linkability(ScoreMatrix(scores, true)) == 100.0


@pytest.mark.parametrize("n_speakers", [2, 3, 7, 40])
def test_all_equal_scores_give_chance(n_speakers):
    matrix = ScoreMatrix(np.full((11, n_speakers), 0.3), np.arange(11) % n_speakers)
    assert rank1_linkability(matrix) == pytest.approx(100.0 / n_speakers, rel=1e-12)


def test_hand_computed_three_by_three():
    scores = [[0.9, 0.2, 0.1],   # true 0: first
              [0.5, 0.4, 0.6],   # true 1: third
              [0.3, 0.7, 0.7]]   # true 2: tied first with speaker 1 -> 1/2
    assert rank1_linkability(ScoreMatrix(scores, [0, 1, 2])) == pytest.approx(100 * 1.5 / 3)


@given(st.integers(0, 20), st.integers(1, 20))
def test_exactly_k_trials_rank_first(k, n_other):
    n_trials, n_speakers = k + n_other, 6
    true = np.arange(n_trials) % n_speakers
    scores = np.zeros((n_trials, n_speakers))
    scores[np.arange(n_trials), (true + 1) % n_speakers] = 1.0  # an impostor wins every trial ...
    scores[np.arange(k), true[:k]] = 2.0  # ... except the first k, won by the true speaker
    assert rank1_linkability(ScoreMatrix(scores, true)) == pytest.approx(100.0 * k / n_trials)


@given(score_matrices())
def test_matches_the_average_over_every_tie_break_order(case):
    scores, true = case
    expected = 100.0 * tie_break_ranks(scores, true)[0] / len(true)
    assert rank1_linkability(ScoreMatrix(scores, true)) == pytest.approx(expected, abs=1e-9)


@given(score_matrices())
def test_invariant_to_column_order_and_increasing_transforms(case):
    scores, true = case
    permutation = np.random.default_rng(len(true)).permutation(scores.shape[1])
    inverse = np.argsort(permutation)
    base = rank1_linkability(ScoreMatrix(scores, true))
    assert rank1_linkability(ScoreMatrix(scores[:, permutation], inverse[true])) == pytest.approx(base)
    assert rank1_linkability(ScoreMatrix(np.exp(scores), true)) == pytest.approx(base)
