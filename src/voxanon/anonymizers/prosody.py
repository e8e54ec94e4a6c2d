"""Prosody transforms in the WORLD domain, each usable alone or after ``world`` / in a ``chain``.

- ``f0_mean_reversion``: each voiced frame pulled towards its moving average,
  ``f0' = avg + (f0 - avg) (1 - strength)`` (as VPC 2024 T12-5).
- ``f0_noise``: additive white Gaussian noise on voiced F0 (as T12-6).
- ``f0_scale``: one random global F0 factor per utterance (as T14-2).
- ``segment_scaling``: random F0 and energy factors per segment (B3 does it per
  phone; here segments are runs of equal voicing or fixed spans).

Unvoiced frames stay unvoiced in all of them.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from voxanon.anonymizers.base import param
from voxanon.anonymizers.world import AnalysisConfig, WorldDomain
from voxanon.dsp import prosody as pros
from voxanon.dsp.world import WorldFeatures
from voxanon.errors import ConfigError
from voxanon.ranges import Range


def _frames(ms: float, features: WorldFeatures) -> int:
    return max(1, round(ms / features.frame_period))


class F0MeanReversion(WorldDomain):
    """Shrink F0 excursions around the local moving average (deterministic)."""

    name = "f0_mean_reversion"

    @dataclasses.dataclass(frozen=True)
    class Config(AnalysisConfig):
        strength: float = param(
            0.5, "fraction of each frame's deviation from the moving average removed", range=Range(0, 1)
        )
        window_ms: float = param(
            300.0, "length of the centred moving-average window (ms, voiced frames only)", range=Range(1, 10000)
        )

    def transform(self, features: WorldFeatures, rng: np.random.Generator) -> WorldFeatures:
        window = _frames(self.config.window_ms, features)
        return features.replace(f0=pros.mean_reversion(features.f0, window, self.config.strength))


class F0Noise(WorldDomain):
    """Add white Gaussian noise to voiced F0."""

    name = "f0_noise"

    @dataclasses.dataclass(frozen=True)
    class Config(AnalysisConfig):
        std_hz: float = param(
            10.0, "standard deviation of the noise added to each voiced frame (Hz)", range=Range(0, 200)
        )

    def transform(self, features: WorldFeatures, rng: np.random.Generator) -> WorldFeatures:
        return features.replace(f0=pros.add_noise(features.f0, self.config.std_hz, rng))


class F0Scale(WorldDomain):
    """Multiply voiced F0 by one factor drawn uniformly per utterance."""

    name = "f0_scale"

    @dataclasses.dataclass(frozen=True)
    class Config(AnalysisConfig):
        factor_range: tuple[float, float] = param(
            (0.8, 1.2), "F0 factor drawn uniformly in [lo, hi]", range=Range(0.25, 4)
        )

    def transform(self, features: WorldFeatures, rng: np.random.Generator) -> WorldFeatures:
        return features.replace(f0=features.f0 * rng.uniform(*self.config.factor_range))


class SegmentScaling(WorldDomain):
    """Scale F0 and energy by independent random factors per segment."""

    name = "segment_scaling"
    stream_limit = (WorldDomain.stream_limit + "; besides, the energy factors are drawn after all the F0 factors, "
                    "so each depends on how many segments the whole utterance has")

    @dataclasses.dataclass(frozen=True)
    class Config(AnalysisConfig):
        f0_range: tuple[float, float] = param(
            (0.6, 1.4), "per-segment F0 factor, drawn uniformly in [lo, hi]", range=Range(0.25, 4)
        )
        energy_range: tuple[float, float] = param(
            (0.6, 1.4), "per-segment amplitude factor (envelope power scales by its square), uniform in [lo, hi]",
            range=Range(0, 4, lo_open=True),
        )
        segments: str = param("voicing", "segments: voicing (runs of voiced or unvoiced frames) or fixed spans")
        span_ms: float = param(200.0, "length of a fixed span (ms), used when segments = fixed", range=Range(1, 10000))

        def __post_init__(self) -> None:
            super().__post_init__()
            if self.segments not in ("voicing", "fixed"):
                raise ConfigError(f"segments: {self.segments!r} is not one of voicing, fixed")

    def bounds(self, features: WorldFeatures) -> np.ndarray:
        """``(k, 2)`` start/stop frames of the segments of an utterance."""
        if self.config.segments == "voicing":
            return pros.runs(pros.voiced(features.f0))
        return pros.fixed_spans(len(features.f0), _frames(self.config.span_ms, features))

    def transform(self, features: WorldFeatures, rng: np.random.Generator) -> WorldFeatures:
        bounds = self.bounds(features)
        n = len(features.f0)
        f0_gain = pros.segment_track(bounds, rng.uniform(*self.config.f0_range, size=len(bounds)), n)
        energy_gain = pros.segment_track(bounds, rng.uniform(*self.config.energy_range, size=len(bounds)), n)
        return features.replace(f0=features.f0 * f0_gain, sp=features.sp * (energy_gain**2)[:, None])
