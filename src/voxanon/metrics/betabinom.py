"""Maximum-likelihood beta-binomial fits of many count histograms at once.

A beta-binomial BB(n, alpha, beta) on k = 0 .. n has
log P(k) = log C(n, k) + ln B(k + alpha, n - k + beta) - ln B(alpha, beta).
:func:`fit_beta_binomial` maximises the (weighted) likelihood of each row of
a count matrix by Newton's method in (log alpha, log beta), all rows in one
vectorised iteration, with a backtracking line search so that every step
raises each row's likelihood. Only non-zero counts enter the sums, so the cost
is proportional to the number of distinct observed values, not to n.
"""

import numpy as np
from scipy.special import betaln, digamma, zeta

#: alpha and beta are kept in [1e-3, 1e4]: at 1e-3 a beta-binomial puts more
#: than 99 % of its mass on one end, at 1e4 it is within 1e-3 of a binomial.
LOG_BOUNDS = (np.log(1e-3), np.log(1e4))
_MAX_ITERATIONS = 200
_MAX_HALVINGS = 50
#: a step may lower a row's log-likelihood by this much relative (rounding at the optimum)
_RELATIVE_SLACK = 1e-12


def _trigamma(x: np.ndarray) -> np.ndarray:
    return zeta(2, x)  # the Hurwitz zeta: psi'(x) = zeta(2, x)


class _Observations:
    """Non-zero counts of each row as flat (row, k, weight) arrays."""

    def __init__(self, counts: np.ndarray):
        self.n = counts.shape[1] - 1
        self.rows, self.k = np.nonzero(counts)
        self.weight = counts[self.rows, self.k]
        self.total = counts.sum(axis=1)
        self.n_rows = counts.shape[0]

    def _sum(self, values: np.ndarray) -> np.ndarray:
        return np.bincount(self.rows, self.weight * values, self.n_rows)

    def loglik(self, theta: np.ndarray) -> np.ndarray:
        """Log-likelihood of each row, without the binomial coefficients."""
        a, b = np.exp(theta[:, 0]), np.exp(theta[:, 1])
        obs = self._sum(betaln(self.k + a[self.rows], self.n - self.k + b[self.rows]))
        return obs - self.total * betaln(a, b)

    def gradient_hessian(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gradient (rows, 2) and Hessian (rows, 2, 2) of :meth:`loglik` in (log alpha, log beta)."""
        a, b = np.exp(theta[:, 0]), np.exp(theta[:, 1])
        ka, kb = self.k + a[self.rows], self.n - self.k + b[self.rows]
        w = self.total
        d_a = self._sum(digamma(ka)) - w * (digamma(a + b + self.n) + digamma(a) - digamma(a + b))
        d_b = self._sum(digamma(kb)) - w * (digamma(a + b + self.n) + digamma(b) - digamma(a + b))
        cross = w * (_trigamma(a + b) - _trigamma(a + b + self.n))
        d_aa = self._sum(_trigamma(ka)) - w * _trigamma(a) + cross
        d_bb = self._sum(_trigamma(kb)) - w * _trigamma(b) + cross
        gradient = np.stack([a * d_a, b * d_b], axis=1)
        hessian = np.empty((self.n_rows, 2, 2))
        hessian[:, 0, 0] = a * a * d_aa + a * d_a
        hessian[:, 1, 1] = b * b * d_bb + b * d_b
        hessian[:, 0, 1] = hessian[:, 1, 0] = a * b * cross
        return gradient, hessian


def _moment_start(obs: _Observations, counts: np.ndarray) -> np.ndarray:
    """Method-of-moments (log alpha, log beta), clipped to the bounds, as Newton's start."""
    k = np.arange(obs.n + 1)
    mean = counts @ k / obs.total
    var = counts @ (k * k) / obs.total - mean**2
    p = np.clip(mean / obs.n, 1e-3, 1 - 1e-3)
    # var = n p (1 - p) (c + n) / (c + 1) with c = alpha + beta; solve for c.
    ratio = np.clip(var / (obs.n * p * (1 - p)), 1 + 1e-6, max(obs.n - 1e-6, 1 + 2e-6))
    c = (obs.n - ratio) / (ratio - 1) if obs.n > 1 else np.full_like(p, 2.0)
    return np.clip(np.log(np.stack([p * c, (1 - p) * c], axis=1)), *LOG_BOUNDS)


def _ascent_direction(theta: np.ndarray, gradient: np.ndarray, hessian: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Projected Newton direction: free coordinates only, a shifted Hessian where not concave.

    A coordinate at a bound whose gradient points outwards is held fixed and
    the Newton step is taken in the other one alone. Where the (reduced)
    Hessian is not negative definite, its eigenvalues are shifted below zero
    (Levenberg-Marquardt): a plain gradient step crawls along the narrow curved
    ridges that such rows have (counts near one end of a small n). Returns the
    directions and which rows were concave.
    """
    low, high = LOG_BOUNDS
    free = ~(((theta <= low) & (gradient < 0)) | ((theta >= high) & (gradient > 0)))
    g = np.where(free, gradient, 0.0)
    h00 = np.where(free[:, 0], hessian[:, 0, 0], -1.0)
    h11 = np.where(free[:, 1], hessian[:, 1, 1], -1.0)
    h01 = np.where(free.all(axis=1), hessian[:, 0, 1], 0.0)
    det = h00 * h11 - h01 * h01
    concave = (h00 < 0) & (det > 1e-12 * (h00 * h00 + h11 * h11))
    largest = (h00 + h11) / 2 + np.sqrt(((h00 - h11) / 2) ** 2 + h01 * h01)
    scale = np.abs(h00) + np.abs(h11) + np.linalg.norm(g, axis=1) + 1e-12
    shift = np.where(concave, 0.0, np.maximum(largest, 0.0) + 1e-3 * scale)
    h00, h11 = h00 - shift, h11 - shift
    det = h00 * h11 - h01 * h01
    return -np.stack([h11 * g[:, 0] - h01 * g[:, 1], h00 * g[:, 1] - h01 * g[:, 0]], axis=1) / det[:, None], concave


def fit_beta_binomial(counts) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood beta-binomial parameters of each row of ``counts``.

    Parameters
    ----------
    counts : array_like, shape (rows, n + 1)
        Row r, column k: (possibly fractional) number of observations equal
        to k, for k = 0 .. n. Every row needs a positive total.

    Returns
    -------
    alpha, beta : ndarray, shape (rows,)
        The maximiser of each row's likelihood within :data:`LOG_BOUNDS`. When
        n = 1 only alpha / (alpha + beta) is identified (a Bernoulli), and
        only that ratio is meaningful.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[1] < 2 or (counts < 0).any() or (counts.sum(axis=1) <= 0).any():
        raise ValueError("fit_beta_binomial: counts must be (rows, n + 1 >= 2), non-negative, "
                         "with a positive total in every row")
    obs = _Observations(counts)
    theta = _moment_start(obs, counts)
    loglik = obs.loglik(theta)
    for _ in range(_MAX_ITERATIONS):
        floor = loglik - _RELATIVE_SLACK * (1 + np.abs(loglik))
        direction, concave = _ascent_direction(theta, *obs.gradient_hessian(theta))
        step = np.ones(obs.n_rows)
        candidate, accepted = theta, np.zeros(obs.n_rows, dtype=bool)
        for _ in range(_MAX_HALVINGS):
            trial = np.clip(theta + step[:, None] * direction, *LOG_BOUNDS)
            trial_loglik = obs.loglik(trial)
            better = ~accepted & (trial_loglik >= floor)
            candidate = np.where(better[:, None], trial, candidate)
            accepted |= better
            if accepted.all():
                break
            step = np.where(accepted, step, step / 2)
        new_loglik = np.where(accepted, obs.loglik(candidate), loglik)
        # where the shifted step was taken whole, a longer one along it may gain more (a flat ridge)
        growing = ~concave & accepted & (step == 1)
        for _ in range(_MAX_HALVINGS if growing.any() else 0):
            step = np.where(growing, step * 2, step)
            trial = np.clip(theta + step[:, None] * direction, *LOG_BOUNDS)
            trial_loglik = obs.loglik(trial)
            growing &= trial_loglik > new_loglik
            candidate = np.where(growing[:, None], trial, candidate)
            new_loglik = np.where(growing, trial_loglik, new_loglik)
            if not growing.any():
                break
        moved = np.abs(candidate - theta).max()
        gained = np.abs(new_loglik - loglik).max()
        theta, loglik = candidate, new_loglik
        if moved < 1e-9 or gained < 1e-13 * (1 + np.abs(loglik).max()):
            break
    return np.exp(theta[:, 0]), np.exp(theta[:, 1])


def beta_binomial_logpmf(n: int, alpha, beta) -> np.ndarray:
    """log P(k) for k = 0 .. n, one row per (alpha, beta) pair, shape (len(alpha), n + 1).

    Uses log P(0) = ln B(alpha, n + beta) - ln B(alpha, beta) and the ratio
    P(k + 1) / P(k) = (n - k) (k + alpha) / ((k + 1) (n - k - 1 + beta)),
    accumulated in log space: one logarithm per value instead of a log-beta.
    """
    a = np.asarray(alpha, dtype=np.float64)[:, None]
    b = np.asarray(beta, dtype=np.float64)[:, None]
    k = np.arange(n)
    log_ratio = np.log((n - k) * (k + a)) - np.log((k + 1) * (n - k - 1 + b))
    log_first = betaln(a, n + b) - betaln(a, b)
    return np.concatenate([log_first, log_first + np.cumsum(log_ratio, axis=1)], axis=1)
