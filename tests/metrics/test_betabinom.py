import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

from voxanon.metrics.betabinom import (
    LOG_BOUNDS,
    beta_binomial_logpmf,
    fit_beta_binomial,
)


def _reference_nll(row: np.ndarray) -> float:
    """Smallest negative log-likelihood that L-BFGS-B on scipy.stats.betabinom finds from several starts."""
    n, k = row.size - 1, np.arange(row.size)

    def nll(theta):
        return -(row * stats.betabinom.logpmf(k, n, *np.exp(theta))).sum()

    starts = [(0.0, 0.0), (-3.0, 2.0), (2.0, -3.0), (9.0, 9.0), (-6.0, 9.0), (9.0, -6.0)]
    return min(optimize.minimize(nll, s, method="L-BFGS-B", bounds=[LOG_BOUNDS] * 2).fun for s in starts)


def _nll(row: np.ndarray, alpha: float, beta: float) -> float:
    return -(row * stats.betabinom.logpmf(np.arange(row.size), row.size - 1, alpha, beta)).sum()


@pytest.mark.parametrize("n", [1, 2, 5, 39])
def test_logpmf_matches_scipy(n):
    alpha = np.array([1e-3, 0.5, 1.0, 30.0, 1e4, 1e4])
    beta = np.array([1e4, 2.0, 1.0, 0.2, 1e-3, 1e4])
    expected = stats.betabinom.logpmf(np.arange(n + 1)[None, :], n, alpha[:, None], beta[:, None])
    np.testing.assert_allclose(beta_binomial_logpmf(n, alpha, beta), expected, rtol=1e-9, atol=1e-9)


def test_recovers_the_parameters_of_a_large_sample():
    rng = np.random.default_rng(0)
    truth = [(1.0, 1.0), (0.3, 5.0), (20.0, 30.0), (4.0, 0.5)]
    counts = [np.bincount(stats.betabinom.rvs(39, a, b, size=20000, random_state=rng), minlength=40)
              for a, b in truth]
    alpha, beta = fit_beta_binomial(counts)
    np.testing.assert_allclose(alpha, [a for a, _ in truth], rtol=0.1)
    np.testing.assert_allclose(beta, [b for _, b in truth], rtol=0.1)


def test_uniform_counts_fit_alpha_beta_one():
    alpha, beta = fit_beta_binomial(np.ones((1, 40)))
    assert alpha[0] == pytest.approx(1.0, rel=1e-6) and beta[0] == pytest.approx(1.0, rel=1e-6)


def test_degenerate_counts_go_to_the_bounds():
    counts = np.zeros((2, 10))
    counts[0, 0] = counts[1, 9] = 5
    alpha, beta = fit_beta_binomial(counts)
    low, high = np.exp(LOG_BOUNDS)
    assert alpha[0] == pytest.approx(low) and beta[0] == pytest.approx(high)
    assert alpha[1] == pytest.approx(high) and beta[1] == pytest.approx(low)


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 30), st.lists(st.tuples(st.integers(0, 30), st.floats(0.25, 6)), min_size=1, max_size=8))
def test_likelihood_is_as_high_as_scipy_optimisation_finds(n, observations):
    row = np.zeros(n + 1)
    for k, weight in observations:
        row[min(k, n)] += weight
    alpha, beta = fit_beta_binomial(row[None, :])
    assert _nll(row, alpha[0], beta[0]) <= _reference_nll(row) + 1e-6


def test_rows_are_fitted_independently():
    rng = np.random.default_rng(3)
    rows = np.array([np.bincount(stats.betabinom.rvs(12, a, b, size=m, random_state=rng), minlength=13)
                     for a, b, m in [(0.5, 3.0, 7), (8.0, 2.0, 40), (1.0, 1.0, 3)]], dtype=float)
    together = np.stack(fit_beta_binomial(rows), axis=1)
    alone = np.array([np.ravel(fit_beta_binomial(row[None, :])) for row in rows])
    np.testing.assert_allclose(together, alone, rtol=1e-6)


@pytest.mark.parametrize("bad", [np.zeros((1, 5)), np.ones((1, 1)), -np.ones((1, 3)), np.ones(4)])
def test_rejects_invalid_counts(bad):
    with pytest.raises(ValueError):
        fit_beta_binomial(bad)
