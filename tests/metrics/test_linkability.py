import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.score_strategies import score_pairs
from voxanon.metrics import linkability


def test_hand_computed_two_bins():
    # 20 mated scores -> 2 bins on [0, 1]; densities: mated (0, 2), non-mated (2, 0)
    # D = (0, 1); trapezoid over centres (0.25, 0.75) of D * p_mated = (0, 2) -> 0.5
    assert linkability(np.ones(20), np.zeros(20)) == pytest.approx(0.5)


def test_local_linkability_formula():
    # 20 mated -> 2 bins on [0, 1]. Bin 1: mated 5/20, non-mated 15/20 (LR < 1, D = 0);
    # bin 2: mated 15/20, non-mated 5/20, LR = 3, D = 2*3/4 - 1 = 1/2, density 1.5.
    # Trapezoid over the centres 0.25 and 0.75: (0 + 0.5 * 1.5) / 2 * 0.5.
    mated = np.r_[np.zeros(5), np.ones(15)]
    nonmated = np.r_[np.zeros(15), np.ones(5)]
    assert linkability(mated, nonmated) == pytest.approx(0.75 * 0.5 / 2)


def test_identical_distributions_are_unlinkable():
    scores = np.random.default_rng(0).normal(size=1000)
    assert linkability(scores, scores) == 0.0
    assert linkability([1.0, 1.0], [1.0]) == 0.0


@given(score_pairs)
def test_bounded_between_0_and_1(pair):
    value = linkability(*pair)
    assert 0.0 <= value <= 1.0 or (np.isnan(value) and pair[0].size < 20)


def test_too_few_mated_scores_is_undefined():
    rng = np.random.default_rng(0)
    assert np.isnan(linkability(rng.normal(3, 1, 19), rng.normal(0, 1, 500)))
    assert not np.isnan(linkability(rng.normal(3, 1, 20), rng.normal(0, 1, 500)))


@given(score_pairs, st.floats(0.1, 10))
def test_non_decreasing_in_omega(pair, omega):
    low, high = linkability(*pair, omega=omega), linkability(*pair, omega=omega * 2)
    assert low <= high + 1e-12 or (np.isnan(low) and np.isnan(high))


def test_well_separated_gaussians_are_almost_fully_linkable():
    rng = np.random.default_rng(0)
    assert linkability(rng.normal(10, 1, 5000), rng.normal(0, 1, 5000)) > 0.95
