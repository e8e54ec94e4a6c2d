"""Pseudo-speaker generators on speaker embeddings: pool selection (VPC B1), gender-restricted pools, Gaussian.

Each generator is a callable ``(source, rng) -> pseudo`` on unit-norm embeddings
(D,); every random choice comes from ``rng`` (a ``numpy.random.Generator``), so
the per-utterance RNG of the runner makes them reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from voxanon.anonymizers.pseudo.pool import GENDERS, SpeakerPool, unit_rows
from voxanon.errors import ConfigError


def check_source(source: np.ndarray, dim: int, what: str) -> np.ndarray:
    """``source`` as a float32 (D,) vector; ConfigError if its size is not the ``what``'s ``dim``."""
    source = np.asarray(source, dtype=np.float32)
    if source.shape != (dim,):
        raise ConfigError(f"source embedding of shape {source.shape} does not fit the {what} of dimension {dim}: "
                          "use the speaker encoder the pool/flow was built with")
    if not np.isfinite(source).all():
        raise ConfigError("source embedding contains NaN or infinite values")
    return source


def gender_centroids(pool: SpeakerPool) -> np.ndarray:
    """Unit-norm mean embedding of each gender in :data:`GENDERS` order; (2, D)."""
    missing = [g for g in GENDERS if not (pool.genders == g).any()]
    if missing:
        raise ConfigError(f"the speaker pool has no speaker of gender {missing[0]!r}: gender-aware generators "
                          "need both genders")
    return unit_rows(np.stack([pool.embeddings[pool.genders == g].mean(axis=0) for g in GENDERS]))


def predict_gender(source: np.ndarray, centroids: np.ndarray) -> str:
    """Gender of the nearest (cosine) centroid from :func:`gender_centroids`."""
    return GENDERS[int(np.argmax(centroids @ unit_rows(source)))]


@dataclass
class PoolGenerator:
    """VPC B1 / VoicePAT selection: average a random ``n_avg`` of the ``n_far`` pool speakers farthest by cosine.

    ``gender`` restricts the pool: ``None`` (all speakers), ``"same"`` or
    ``"cross"`` (speakers of the source's / the other gender; the source gender
    is predicted by :func:`predict_gender` from the pool's gender centroids).
    ``n_far`` and ``n_avg`` are clipped to the size of the (restricted) pool.
    """

    pool: SpeakerPool
    n_far: int = 200
    n_avg: int = 100
    gender: str | None = None

    def __post_init__(self) -> None:
        for name in ("n_far", "n_avg"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        if self.gender not in (None, "same", "cross"):
            raise ConfigError(f"gender must be None, 'same' or 'cross', got {self.gender!r}")
        self._centroids = gender_centroids(self.pool) if self.gender else None

    def candidates(self, source: np.ndarray) -> np.ndarray:
        """Pool indices the selection may use for ``source`` (all, or one gender's)."""
        if self._centroids is None:
            return np.arange(len(self.pool))
        g = predict_gender(source, self._centroids)
        if self.gender == "cross":
            g = GENDERS[1 - GENDERS.index(g)]
        return np.flatnonzero(self.pool.genders == g)

    def farthest(self, source: np.ndarray) -> np.ndarray:
        """Indices of the ``n_far`` candidates with the lowest cosine to ``source`` (farthest first)."""
        source = check_source(source, self.pool.dim, "speaker pool")
        idx = self.candidates(source)
        cos = self.pool.embeddings[idx] @ unit_rows(source)
        return idx[np.argsort(cos, kind="stable")[:min(self.n_far, idx.size)]]

    def __call__(self, source: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        far = self.farthest(source)
        chosen = rng.choice(far, size=min(self.n_avg, far.size), replace=False)
        return unit_rows(self.pool.embeddings[chosen].mean(axis=0))


def shrunk_covariance(x: np.ndarray) -> tuple[np.ndarray, float]:
    """Ledoit-Wolf covariance of the rows of ``x``: ``(1 - s) S + s mu I``; returns it and the shrinkage ``s``."""
    n, d = x.shape
    xc = x - x.mean(axis=0)
    sample = xc.T @ xc / n
    mu = np.trace(sample) / d
    delta = np.sum((sample - mu * np.eye(d)) ** 2) / d
    # sum over rows r of ||r r' - S||_F^2 = sum ||r||^4 - n ||S||_F^2 (as S = X'X / n)
    beta = (np.sum(np.sum(xc ** 2, axis=1) ** 2) - n * np.sum(sample ** 2)) / (n * n * d)
    s = float(min(beta, delta) / delta) if delta > 0 else 1.0
    return (1 - s) * sample + s * mu * np.eye(d), s


@dataclass
class GaussianGenerator:
    """T10-style: a draw from a full-covariance Gaussian fitted to the pool's speakers, mixed with the source.

    The Gaussian is fitted to the speaker-level embeddings with Ledoit-Wolf
    shrinkage (a pool has fewer speakers than dimensions); the pseudo-speaker is
    ``normalise(alpha * source + (1 - alpha) * normalise(sample))`` (``alpha`` in
    [0, 1]; 0 ignores the source, 1 returns it).
    """

    pool: SpeakerPool
    alpha: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.alpha <= 1.0:
            raise ConfigError(f"alpha must be in [0, 1], got {self.alpha!r}")
        x = self.pool.embeddings.astype(np.float64)
        self.mean = x.mean(axis=0)
        self.cov, self.shrinkage = shrunk_covariance(x) if len(x) > 1 else (np.eye(x.shape[1]) / x.shape[1], 1.0)
        evals, evecs = np.linalg.eigh(self.cov)
        self._root = evecs * np.sqrt(np.clip(evals, 0.0, None))

    def sample(self, rng: np.random.Generator, n: int = 1) -> np.ndarray:
        """``n`` raw draws (n, D) from the fitted Gaussian (not normalised)."""
        return self.mean + rng.standard_normal((n, self.mean.size)) @ self._root.T

    def __call__(self, source: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        source = check_source(source, self.pool.dim, "speaker pool")
        draw = unit_rows(self.sample(rng)[0])
        return unit_rows(self.alpha * unit_rows(source) + (1 - self.alpha) * draw)
