import numpy as np
import pytest
from hypothesis import given

from tests.helpers.metrics_reference import pooled_pav_llrs
from tests.helpers.score_strategies import score_pairs
from voxanon.metrics import cllr, logistic_calibrate, min_cllr, pav_calibrate


def test_cllr_hand_computed():
    assert cllr([0.0], [0.0]) == pytest.approx(1.0)
    # every trial costs log2(1 + 1/3)
    assert cllr([np.log(3)], [-np.log(3)]) == pytest.approx(np.log2(4 / 3))
    assert cllr([np.inf], [-np.inf]) == 0.0


def test_min_cllr_hand_computed():
    # PAV blocks {1,2}: LLR -inf, {3,4}: log(1/2 / (1/2)) - log(2/3) = log(3/2), {5}: +inf
    # targets cost log2(1 + 2/3) and 0, non-targets 0, 0 and log2(1 + 3/2)
    expected = 0.5 * (np.log2(5 / 3) / 2 + np.log2(5 / 2) / 3)
    assert min_cllr([3, 5], [1, 2, 4]) == pytest.approx(expected)


def test_tied_target_and_nontarget_get_one_llr():
    # splitting the tie (non-targets first) would claim perfect discrimination
    assert min_cllr([1.0, 2.0], [1.0, 0.0]) == pytest.approx(
        0.5 * (np.log2(1 + 1 / 1) / 2 + np.log2(1 + 1) / 2)
    )


@given(score_pairs)
def test_min_cllr_matches_naive_pav(pair):
    target_llrs, nontarget_llrs = pooled_pav_llrs(*pair)
    assert min_cllr(*pair) == pytest.approx(cllr(target_llrs, nontarget_llrs), abs=1e-12)


@given(score_pairs)
def test_min_cllr_below_cllr_and_one_bit(pair):
    target, nontarget = pair
    value = min_cllr(target, nontarget)
    assert 0.0 <= value <= 1.0 + 1e-12
    assert value <= cllr(target / 10, nontarget / 10) + 1e-12


@given(score_pairs)
def test_pav_calibration_reproduces_min_cllr(pair):
    target, nontarget = pair
    calibrate = pav_calibrate(target, nontarget, laplace=False)
    assert cllr(calibrate(target), calibrate(nontarget)) == pytest.approx(min_cllr(target, nontarget), abs=1e-12)


@given(score_pairs)
def test_laplace_pav_calibration_is_finite_and_monotone(pair):
    calibrate = pav_calibrate(*pair)
    grid = np.linspace(-40, 40, 161)
    llrs = calibrate(grid)
    assert np.isfinite(llrs).all()
    assert (np.diff(llrs) >= 0).all()


def test_logistic_calibration_recovers_gaussian_llr():
    # N(2, 1) vs N(0, 1): true LLR(s) = 2 s - 2
    rng = np.random.default_rng(0)
    calibration = logistic_calibrate(rng.normal(2, 1, 20000), rng.normal(0, 1, 20000))
    assert calibration.scale == pytest.approx(2.0, abs=0.1)
    assert calibration.offset == pytest.approx(-2.0, abs=0.1)
    np.testing.assert_allclose(calibration([0.0, 1.0]), [calibration.offset, calibration.offset + calibration.scale])


def test_logistic_calibration_beats_raw_cosine_scores():
    rng = np.random.default_rng(1)
    target, nontarget = rng.normal(0.6, 0.1, 500), rng.normal(0.2, 0.1, 2000)
    calibration = logistic_calibrate(target, nontarget)
    assert cllr(calibration(target), calibration(nontarget)) < cllr(target, nontarget)
