import numpy as np
import pytest
from scipy.stats import norm

from voxanon.metrics import compute_eer, det_curve, score_histograms


def test_det_curve_hand_computed():
    # thresholds 1..5 give (pfa, pmiss) = (2/3, 0), (1/3, 0), (1/3, 1/2), (0, 1/2), (0, 1):
    # only (1/3, 1/2) has finite probits
    pfa, pmiss = det_curve([3, 5], [1, 2, 4])
    np.testing.assert_allclose(pfa, [norm.ppf(1 / 3)])
    np.testing.assert_allclose(pmiss, [0.0], atol=1e-15)


def test_det_curve_is_monotone_and_crosses_near_eer():
    rng = np.random.default_rng(0)
    target, nontarget = rng.normal(2, 1, 2000), rng.normal(0, 1, 2000)
    pfa, pmiss = det_curve(target, nontarget)
    assert (np.diff(pfa) <= 0).all() and (np.diff(pmiss) >= 0).all()
    crossing = np.argmin(np.abs(pfa - pmiss))
    eer = compute_eer(target, nontarget).eer / 100
    assert norm.cdf(pmiss[crossing]) == pytest.approx(eer, abs=2e-3)


def test_score_histograms():
    target, nontarget = [0.0, 0.5, 1.0, 1.0], [0.0, 0.0, 0.25]
    hist = score_histograms(target, nontarget, bins=4)
    np.testing.assert_allclose(hist.edges, [0, 0.25, 0.5, 0.75, 1])
    np.testing.assert_allclose(hist.centres, [0.125, 0.375, 0.625, 0.875])
    np.testing.assert_allclose(hist.target * 0.25, [0.25, 0, 0.25, 0.5])
    counts = score_histograms(target, nontarget, bins=4, density=False)
    np.testing.assert_array_equal(counts.nontarget, [2, 1, 0, 0])
