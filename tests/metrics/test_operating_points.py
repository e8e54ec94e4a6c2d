import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import norm

from tests.helpers.metrics_reference import interpolated_roc_tpr
from voxanon.errors import ConfigError
from voxanon.metrics import tpr_at_fpr

_integer_scores = st.lists(st.integers(-5, 5), min_size=1, max_size=30).map(lambda v: np.array(v, float))


def test_hand_computed_case():
    # non-targets 0..99; at 1 % one false positive is allowed: threshold 98 (only 99 above it)
    nontarget = np.arange(100.0)
    target = np.array([98.0, 98.5, 99.5, 150.0])
    assert tpr_at_fpr(target, nontarget, 1.0) == pytest.approx(75.0)
    # at 1.5 %: half of the trials scoring 98 (one non-target, one target) are accepted
    assert tpr_at_fpr(target, nontarget, 1.5) == pytest.approx(100 * (3 + 0.5) / 4)


def test_separated_and_inverted_scores():
    nontarget = np.random.default_rng(0).normal(size=5000)
    assert tpr_at_fpr(nontarget + 100, nontarget, 0.1) == 100.0
    assert tpr_at_fpr(nontarget - 100, nontarget, 1.0) == 0.0


def test_all_equal_scores_lie_on_the_chance_diagonal():
    assert tpr_at_fpr(np.zeros(7), np.zeros(1000), 0.1) == pytest.approx(0.1)
    assert tpr_at_fpr(np.zeros(7), np.zeros(1000), 1.0) == pytest.approx(1.0)


def test_too_few_nontargets_give_nan():
    assert np.isnan(tpr_at_fpr([1.0], np.zeros(99), 1.0))
    assert not np.isnan(tpr_at_fpr([1.0], np.zeros(100), 1.0))
    assert np.isnan(tpr_at_fpr([1.0], np.zeros(999), 0.1))
    assert not np.isnan(tpr_at_fpr([1.0], np.zeros(1000), 0.1))


@given(_integer_scores, _integer_scores, st.floats(1, 99))
def test_matches_the_interpolated_empirical_roc(target, nontarget, fpr_percent):
    result = tpr_at_fpr(target, nontarget, fpr_percent)
    if fpr_percent / 100 * nontarget.size < 1:
        assert np.isnan(result)
    else:
        assert result == pytest.approx(interpolated_roc_tpr(target, nontarget, fpr_percent / 100), abs=1e-9)


def test_gaussian_scores_match_the_analytic_tpr():
    rng = np.random.default_rng(1)
    target, nontarget = rng.normal(2.0, 1.0, 200_000), rng.normal(0.0, 1.0, 200_000)
    expected = 100 * norm.sf(norm.isf(0.01) - 2.0)
    assert tpr_at_fpr(target, nontarget, 1.0) == pytest.approx(expected, abs=0.5)


@pytest.mark.parametrize("fpr", [0.0, -1.0, 100.0, 150.0])
def test_rejects_fpr_outside_0_100(fpr):
    with pytest.raises(ConfigError, match="fpr_percent"):
        tpr_at_fpr([1.0], np.zeros(1000), fpr)
