"""WORLD-vocoder pseudo-speaker conversion, and the base of all WORLD-domain anonymizers.

A :class:`WorldDomain` anonymizer is a transform of :class:`WorldFeatures`
(``transform(features, rng) -> features``); alone it runs analysis → transform
→ synthesis, and consecutive ones share one analysis/synthesis (``world``'s
``prosody`` list, ``chain``). All work at the input sample rate.

``world`` draws a pseudo-speaker per utterance from the utterance rng, without
speaker labels: a target log-F0 mean and spread (the utterance's z-scored
voiced log-F0 contour is mapped onto them, so intonation survives), a frequency
warp of the spectral envelope and an optional spectral tilt. The source gender,
used by ``gender_target = "opposite"`` and for the formant shift of a gender
change, is estimated from the utterance's median voiced F0.

Edge cases: an all-zero input gives an all-zero output of the same length; an
input shorter than one frame is analysed and converted as a single frame (in
practice an unvoiced one, so the output is near-silent noise); the
output always has the input's length and rate. Input below 16 kHz (telephone
speech at 8 kHz) is upsampled to 16 kHz for WORLD and the output resampled back
to the input's rate, because WORLD's aperiodicity estimator (D4C) is not
reproducible below that rate.
"""

from __future__ import annotations

import dataclasses
import math
from abc import abstractmethod
from collections.abc import Callable, Sequence

import numpy as np

from voxanon.anonymizers.base import Anonymizer, Chunking, check_config, copy_rng, param
from voxanon.anonymizers.steps import build_specs, config_hash, normalize_specs, spawn
from voxanon.audio.io import fit_length, resample
from voxanon.dsp import prosody as pros
from voxanon.dsp.warp import WARPS, apply_tilt, warp_envelope
from voxanon.dsp.world import (
    F0_METHODS,
    MIN_WORLD_RATE,
    WorldFeatures,
    analyze,
    estimate_f0,
    synthesize,
)
from voxanon.errors import ConfigError
from voxanon.ranges import Range

Transform = Callable[[WorldFeatures, np.random.Generator], WorldFeatures]

GENDER_TARGETS = ("any", "opposite", "female", "male")


@dataclasses.dataclass(frozen=True)
class AnalysisConfig:
    """WORLD analysis settings shared by every WORLD-domain anonymizer."""

    f0_method: str = param("dio", "F0 estimator: dio (DIO + StoneMask, fast, default) or harvest (slower)")
    frame_period: float = param(5.0, "WORLD frame hop in ms", range=Range(1, 50))
    f0_floor: float = param(60.0, "lowest F0 searched (Hz); converted F0 is kept above it", range=Range(20, 500))
    f0_ceil: float = param(600.0, "highest F0 searched (Hz); converted F0 is kept below it", range=Range(40, 2000))

    def __post_init__(self) -> None:
        check_config(self)
        if self.f0_method not in F0_METHODS:
            raise ConfigError(f"f0_method: {self.f0_method!r} is not one of {', '.join(F0_METHODS)}")
        if not self.f0_floor < self.f0_ceil:
            raise ConfigError(f"need f0_floor < f0_ceil, got {self.f0_floor}, {self.f0_ceil}")


def apply_transforms(
    features: WorldFeatures, transforms: Sequence[Transform], rngs: Sequence[np.random.Generator]
) -> WorldFeatures:
    """Apply WORLD-domain transforms in order, transform ``i`` drawing from ``rngs[i]``."""
    for transform, rng in zip(transforms, rngs, strict=True):
        features = transform(features, rng)
    return features


def run_world(
    wav: np.ndarray,
    sr: int,
    transforms: Sequence[Transform],
    rngs: Sequence[np.random.Generator],
    analysis: AnalysisConfig,
    reference_f0: np.ndarray | None = None,
) -> tuple[np.ndarray, int]:
    """One analysis, the transforms in order, one synthesis; silence stays silence.

    Input below :data:`~voxanon.dsp.world.MIN_WORLD_RATE` is analysed and synthesised at that rate
    and resampled back, so the output keeps the input's rate and length.
    ``reference_f0``: the whole utterance's F0 when ``wav`` is one chunk of it.
    """
    if not np.any(wav):
        return np.zeros(len(wav), dtype=np.float32), sr
    if sr < MIN_WORLD_RATE:
        high, _ = run_world(resample(wav, sr, MIN_WORLD_RATE), MIN_WORLD_RATE, transforms, rngs, analysis,
                            reference_f0)
        return fit_length(resample(high, MIN_WORLD_RATE, sr), len(wav)), sr
    features = analyze(
        wav,
        sr,
        f0_method=analysis.f0_method,
        f0_floor=analysis.f0_floor,
        f0_ceil=analysis.f0_ceil,
        frame_period=analysis.frame_period,
    ).replace(reference_f0=reference_f0)
    return synthesize(apply_transforms(features, transforms, rngs)), sr


def utterance_f0(wav: np.ndarray, sr: int, cuts: Sequence[int], analysis: AnalysisConfig) -> np.ndarray:
    """F0 track of a long utterance, estimated chunk by chunk between ``cuts`` (for its statistics)."""
    return np.concatenate([
        estimate_f0(wav[lo:hi], sr, method=analysis.f0_method, f0_floor=analysis.f0_floor,
                    f0_ceil=analysis.f0_ceil, frame_period=analysis.frame_period)[0]
        for lo, hi in zip(cuts, cuts[1:])
    ])


class WorldDomain(Anonymizer):
    """An anonymizer that is a transform of WORLD features (its Config extends :class:`AnalysisConfig`).

    Long inputs run in chunks (WORLD's features take about 5 kB per 5 ms frame
    at 16 kHz, 17.7 GB at peak for one hour in one piece); every chunk draws the
    same pseudo-speaker and converts against the whole utterance's F0 statistics.
    """

    Config = AnalysisConfig
    chunking = Chunking(seconds=20.0, overlap=1.0, fade=0.02)
    stream_limit = ("WORLD's F0 trackers (DIO, Harvest) filter the whole signal and its synthesis takes whole "
                    "feature arrays, so no output sample is final before the input ends; a chunked approximation "
                    "would not equal the offline output")

    @abstractmethod
    def transform(self, features: WorldFeatures, rng: np.random.Generator) -> WorldFeatures:
        """Transformed copy of ``features``."""

    def anonymize(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        return run_world(wav, sr, [self.transform], [rng], self.config)

    def anonymize_in_chunks(self, wav: np.ndarray, sr: int, rng: np.random.Generator, cuts: list[int]) -> np.ndarray:
        """Chunks as the base class, with the whole utterance's F0 as every chunk's reference."""
        reference = utterance_f0(wav, sr, cuts, self.config)
        pieces = (run_world(wav[a:b], sr, [self.transform], [copy_rng(rng)], self.config, reference)[0]
                  for a, b in self.chunking.spans(cuts, sr))
        return self.chunking.join(pieces, cuts, sr)


@dataclasses.dataclass(frozen=True)
class PseudoSpeaker:
    """The voice drawn for one utterance."""

    gender: str
    f0_mean_hz: float
    f0_spread_st: float
    warp_factor: float
    tilt_db_per_octave: float


def _log_uniform(rng: np.random.Generator, bounds: tuple[float, float]) -> float:
    return float(math.exp(rng.uniform(math.log(bounds[0]), math.log(bounds[1]))))


class World(WorldDomain):
    """WORLD pseudo-speaker conversion: per-utterance F0 statistics, envelope warp and tilt."""

    name = "world"
    stream_limit = (WorldDomain.stream_limit + "; besides, the pseudo-speaker maps the utterance's log-F0 mean and "
                    "spread and picks the source gender from its median F0, statistics of the whole utterance")

    @dataclasses.dataclass(frozen=True)
    class Config(AnalysisConfig):
        gender_target: str = param(
            "any",
            "pseudo-speaker gender: any (female or male, p = 0.5 each), opposite (of the gender estimated "
            "from the median F0), female or male",
        )
        gender_threshold_hz: float = param(
            165.0, "median voiced F0 at or above which the source counts as female", range=Range(50, 500)
        )
        male_f0_range: tuple[float, float] = param(
            (90.0, 150.0), "male target F0 mean (geometric, Hz), drawn log-uniformly in [lo, hi]", range=Range(20, 1000)
        )
        female_f0_range: tuple[float, float] = param(
            (170.0, 260.0), "female target F0 mean (geometric, Hz), drawn log-uniformly in [lo, hi]",
            range=Range(20, 1000),
        )
        f0_spread_range: tuple[float, float] = param(
            (1.5, 3.5), "target std of log-F0 in semitones, drawn uniformly in [lo, hi]", range=Range(0, 12)
        )
        warp: str = param("bilinear", "spectral-envelope warp: bilinear (all-pass) or vtln (piecewise linear)")
        warp_range: tuple[float, float] = param(
            (0.9, 1.1),
            "warp factor (low-frequency slope; > 1 moves formants up), drawn log-uniformly in [lo, hi]",
            range=Range(0.5, 2),
        )
        gender_formant_ratio: float = param(
            1.15, "extra warp factor for male->female (its inverse for female->male) conversions", range=Range(0.5, 2)
        )
        tilt_range: tuple[float, float] = param(
            (0.0, 0.0), "spectral tilt in dB/octave around 1 kHz, drawn uniformly in [lo, hi] (0, 0 = off)",
            range=Range(-24, 24),
        )
        prosody: tuple[dict, ...] = param(
            (), 'WORLD-domain transforms applied after the conversion: [{"method": ..., "params": {...}}, ...]'
        )

        def __post_init__(self) -> None:
            super().__post_init__()
            if self.gender_target not in GENDER_TARGETS:
                raise ConfigError(f"gender_target: {self.gender_target!r} is not one of {', '.join(GENDER_TARGETS)}")
            if self.warp not in WARPS:
                raise ConfigError(f"warp: {self.warp!r} is not one of {', '.join(WARPS)}")
            object.__setattr__(self, "prosody", normalize_specs(self.prosody, "prosody"))

        __hash__ = config_hash

    def __init__(self, config: Config | None = None, **params) -> None:
        super().__init__(config, **params)
        self.prosody = build_specs(self.config.prosody, "prosody")
        for i, step in enumerate(self.prosody):
            if not isinstance(step, WorldDomain):
                raise ConfigError(f"prosody[{i}]: {step.name!r} is not a WORLD-domain transform")

    def source_gender(self, f0: np.ndarray) -> str | None:
        """``"female"`` or ``"male"`` from the median voiced F0; None without voiced frames."""
        v = pros.voiced(f0)
        if not v.any():
            return None
        return "female" if np.median(f0[v]) >= self.config.gender_threshold_hz else "male"

    def draw_speaker(self, rng: np.random.Generator, f0: np.ndarray) -> PseudoSpeaker:
        """Draw a pseudo-speaker for an utterance with source F0 track ``f0``."""
        cfg = self.config
        source = self.source_gender(f0)
        coin = "female" if rng.random() < 0.5 else "male"
        if cfg.gender_target in ("female", "male"):
            gender = cfg.gender_target
        elif cfg.gender_target == "opposite" and source is not None:
            gender = "male" if source == "female" else "female"
        else:
            gender = coin
        f0_mean = _log_uniform(rng, cfg.female_f0_range if gender == "female" else cfg.male_f0_range)
        spread = float(rng.uniform(*cfg.f0_spread_range))
        warp = _log_uniform(rng, cfg.warp_range)
        if source is not None and source != gender:
            warp *= cfg.gender_formant_ratio if gender == "female" else 1.0 / cfg.gender_formant_ratio
        tilt = float(rng.uniform(*cfg.tilt_range))
        return PseudoSpeaker(gender, f0_mean, spread, warp, tilt)

    def convert(self, features: WorldFeatures, rng: np.random.Generator) -> WorldFeatures:
        """Features of the utterance re-voiced by a pseudo-speaker drawn from ``rng``."""
        speaker = self.draw_speaker(rng, features.utterance_f0)
        f0 = pros.map_log_f0(features.f0, math.log(speaker.f0_mean_hz), speaker.f0_spread_st * math.log(2) / 12,
                             reference=features.reference_f0)
        f0 = np.where(pros.voiced(f0), np.clip(f0, self.config.f0_floor, self.config.f0_ceil), 0.0)
        sp = warp_envelope(features.sp, speaker.warp_factor, self.config.warp)
        if speaker.tilt_db_per_octave:
            sp = apply_tilt(sp, features.sr, speaker.tilt_db_per_octave)
        return features.replace(f0=f0, sp=sp)

    def transform(self, features: WorldFeatures, rng: np.random.Generator) -> WorldFeatures:
        transforms = [self.convert, *(step.transform for step in self.prosody)]
        return apply_transforms(features, transforms, spawn(rng, len(transforms)))
