"""The F3-VA speaker anonymizer: invert the source embedding to the flow's latent, mix it with noise, flow back.

ODE-1 takes the source from t = 1 to its latent ``z_orig`` at t = 0;
``z_anon = (w z_orig + (1 - w) z_rand) / sqrt((1 - w)^2 + w^2)`` with
``z_rand ~ N(0, I)`` (the denominator keeps unit variance per dimension);
ODE-2 takes ``z_anon`` to t = 1. ``w = 1`` returns the source (up to solver
error), ``w = 0`` ignores it, ``w < 0`` pushes away from it. The dynamic mode
draws ``w`` uniformly from ``w_range`` for every call (every utterance).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from voxanon.anonymizers.pseudo.defaults import load_default_flow
from voxanon.anonymizers.pseudo.generators import check_source
from voxanon.anonymizers.pseudo.pool import unit_rows
from voxanon.errors import ConfigError
from voxanon.models.flow import SOLVERS, EmbeddingFlow


def mix_latents(z_orig: np.ndarray, z_rand: np.ndarray, w: float) -> np.ndarray:
    """``(w z_orig + (1 - w) z_rand) / sqrt((1 - w)^2 + w^2)``."""
    return (w * z_orig + (1 - w) * z_rand) / np.sqrt((1 - w) ** 2 + w ** 2)


@dataclass
class F3VAGenerator:
    """F3-VA pseudo-speaker: ``w`` fixed, or drawn from ``w_range = (lo, hi)`` per call (dynamic mode).

    ``flow=None`` loads the shipped default (after the parameters are checked).
    """

    flow: EmbeddingFlow | None = None
    w: float = 0.0
    w_range: tuple[float, float] | None = None
    solver: str = "euler"
    steps: int = 16

    def __post_init__(self) -> None:
        if not -1.0 <= self.w <= 1.0:
            raise ConfigError(f"w must be in [-1, 1], got {self.w!r}")
        if self.w_range is not None:
            lo, hi = self.w_range
            if not -1.0 <= lo <= hi <= 1.0:
                raise ConfigError(f"w_range must be (lo, hi) with -1 <= lo <= hi <= 1, got {self.w_range!r}")
        if self.solver not in SOLVERS:
            raise ConfigError(f"unknown ODE solver {self.solver!r}: use one of {', '.join(SOLVERS)}")
        if isinstance(self.steps, bool) or not isinstance(self.steps, (int, np.integer)) or self.steps < 1:
            raise ConfigError(f"steps must be a positive integer, got {self.steps!r}")
        if self.flow is None:
            self.flow = load_default_flow()

    def __call__(self, source: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        source = check_source(source, self.flow.dim, "speaker flow")
        w = float(rng.uniform(*self.w_range)) if self.w_range is not None else self.w
        if w == 0.0:  # the source does not enter: skip ODE-1
            return self.sample(rng)
        z_rand = rng.standard_normal(self.flow.dim).astype(np.float32)
        z_orig = self.flow.to_noise(unit_rows(source), steps=self.steps, solver=self.solver)[0]
        return self.from_latent(mix_latents(z_orig, z_rand, w))

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """A pseudo-speaker of no source: ``z ~ N(0, I)`` taken by ODE-2 to an embedding (the ``w = 0`` case)."""
        return self.from_latent(rng.standard_normal(self.flow.dim).astype(np.float32))

    def from_latent(self, z: np.ndarray) -> np.ndarray:
        """The unit embedding ODE-2 takes latent ``z`` to."""
        return unit_rows(self.flow.from_noise(z, steps=self.steps, solver=self.solver)[0])
