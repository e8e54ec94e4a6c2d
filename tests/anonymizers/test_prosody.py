"""F0 track functions and the prosody-transform anonymizers."""

from __future__ import annotations

import numpy as np
import pytest

from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.prosody import (
    F0MeanReversion,
    F0Noise,
    F0Scale,
    SegmentScaling,
)
from voxanon.anonymizers.registry import build
from voxanon.audio.synthetic import speech_like
from voxanon.dsp import prosody as pros
from voxanon.dsp.world import WorldFeatures

SR = 16000
NAMES = ["f0_mean_reversion", "f0_noise", "f0_scale", "segment_scaling"]


def track(n: int = 4000, seed: int = 0) -> np.ndarray:
    """Synthetic F0 track: a slow contour plus jitter, unvoiced every fifth 40-frame block."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    f0 = 150 * (1 + 0.2 * np.sin(2 * np.pi * t / 400)) + rng.normal(0, 8, n)
    f0[(t // 40) % 5 == 4] = 0.0
    return f0


def features(f0: np.ndarray, bins: int = 33) -> WorldFeatures:
    n = len(f0)
    ones, zeros = np.ones((n, bins)), np.zeros((n, bins))
    return WorldFeatures(f0=f0, sp=ones, ap=zeros, sr=SR, frame_period=5.0, n_samples=n * 80)


# --- dsp.prosody -----------------------------------------------------------------------


@pytest.mark.parametrize("strength", [0.0, 0.3, 0.75, 1.0])
def test_mean_reversion_scales_deviations_by_one_minus_strength(strength: float) -> None:
    f0 = track()
    v = f0 > 0
    avg = pros.moving_average(f0, 60)
    out = pros.mean_reversion(f0, 60, strength)
    np.testing.assert_allclose(out[v] - avg[v], (1 - strength) * (f0[v] - avg[v]), atol=1e-9)
    assert np.var(out[v] - avg[v]) == pytest.approx((1 - strength) ** 2 * np.var(f0[v] - avg[v]), abs=1e-9)
    assert np.all(out[~v] == 0)


def test_moving_average_uses_voiced_frames_only() -> None:
    f0 = np.array([100.0, 0.0, 200.0, 300.0, 0.0, 0.0, 400.0])
    np.testing.assert_allclose(pros.moving_average(f0, 3), [100, 150, 250, 250, 300, 400, 400])
    np.testing.assert_array_equal(pros.moving_average(f0, 1)[f0 > 0], f0[f0 > 0])
    assert len(pros.moving_average(f0[:1], 60)) == 1  # window longer than the track


def test_noise_has_the_stated_std_and_keeps_unvoiced() -> None:
    f0 = track(20000)
    v = f0 > 0
    out = pros.add_noise(f0, 10.0, np.random.default_rng(1))
    diff = out[v] - f0[v]
    assert np.std(diff) == pytest.approx(10.0, rel=0.03)
    assert abs(np.mean(diff)) < 0.3
    assert np.all(out[~v] == 0)
    assert pros.add_noise(np.array([25.0]), 1e3, np.random.default_rng(0)).min() >= pros.MIN_F0


def test_map_log_f0_sets_mean_and_spread_and_keeps_shape() -> None:
    f0 = track()
    out = pros.map_log_f0(f0, np.log(220.0), 0.15)
    mean, std = pros.log_f0_stats(out)
    assert mean == pytest.approx(np.log(220.0)) and std == pytest.approx(0.15)
    v = f0 > 0
    assert np.array_equal(out > 0, v)
    assert np.corrcoef(np.log(f0[v]), np.log(out[v]))[0, 1] == pytest.approx(1.0)
    np.testing.assert_allclose(pros.map_log_f0(np.array([0, 130.0, 130.0]), np.log(200), 0.1), [0, 200, 200])
    assert not np.any(pros.map_log_f0(np.zeros(5), 5.0, 0.1))
    assert np.isnan(pros.log_f0_stats(np.zeros(5))[0])


def test_runs_spans_and_segment_track() -> None:
    mask = np.array([1, 1, 0, 0, 0, 1], dtype=bool)
    np.testing.assert_array_equal(pros.runs(mask), [[0, 2], [2, 5], [5, 6]])
    assert pros.runs(np.zeros(0, bool)).shape == (0, 2)
    np.testing.assert_array_equal(pros.fixed_spans(7, 3), [[0, 3], [3, 6], [6, 7]])
    np.testing.assert_array_equal(pros.segment_track(np.array([[1, 3]]), np.array([2.0]), 4), [1, 2, 2, 1])


# --- transforms on WORLD features ------------------------------------------------------------


def test_f0_mean_reversion_transform() -> None:
    f0 = track()
    out = F0MeanReversion(strength=0.5, window_ms=300).transform(features(f0), np.random.default_rng(0))
    np.testing.assert_allclose(out.f0, pros.mean_reversion(f0, 60, 0.5))


def test_f0_noise_transform() -> None:
    f0 = track(20000)
    v = f0 > 0
    out = F0Noise(std_hz=5.0).transform(features(f0), np.random.default_rng(0))
    assert np.std(out.f0[v] - f0[v]) == pytest.approx(5.0, rel=0.03)
    assert np.all(out.f0[~v] == 0)


@pytest.mark.parametrize("seed", range(20))
def test_f0_scale_is_one_factor_in_range(seed: int) -> None:
    f0 = track(200)
    v = f0 > 0
    out = F0Scale().transform(features(f0), np.random.default_rng(seed))
    ratio = out.f0[v] / f0[v]
    assert np.ptp(ratio) < 1e-12 and 0.8 <= ratio[0] <= 1.2
    assert np.all(out.f0[~v] == 0)


@pytest.mark.parametrize("segments", ["voicing", "fixed"])
def test_segment_scaling_factors_in_range_and_constant_per_segment(segments: str) -> None:
    f0 = track(1000)
    v = f0 > 0
    transform = SegmentScaling(segments=segments, span_ms=100.0)
    feats = features(f0)
    out = transform.transform(feats, np.random.default_rng(3))
    assert np.all(out.f0[~v] == 0)
    f0_gain = np.ones(len(f0))
    f0_gain[v] = out.f0[v] / f0[v]
    energy_gain = np.sqrt(out.sp[:, 0])
    np.testing.assert_allclose(out.sp, np.repeat(out.sp[:, :1], feats.sp.shape[1], axis=1))
    bounds = transform.bounds(feats)
    assert len(bounds) >= 10
    for start, stop in bounds:
        if v[start:stop].any():
            seg = f0_gain[start:stop][v[start:stop]]
            assert np.ptp(seg) < 1e-9 and 0.6 <= seg[0] <= 1.4
        seg = energy_gain[start:stop]
        assert np.ptp(seg) < 1e-9 and 0.6 <= seg[0] <= 1.4
    assert np.ptp(energy_gain) > 0.1  # factors differ between segments


# --- standalone anonymizers ----------------------------------------------------------------


@pytest.fixture(scope="module")
def speech() -> np.ndarray:
    return speech_like(1.0, SR, f0=140.0, seed=3)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [16000, 50])
def test_anonymizers_keep_length_rate_and_finiteness(speech: np.ndarray, name: str, n: int) -> None:
    y, sr = build(name).anonymize(speech[:n], SR, utterance_rng(0, "u"))
    assert sr == SR and len(y) == n and y.dtype == np.float32 and np.all(np.isfinite(y))


@pytest.mark.parametrize("name", NAMES)
def test_silence_stays_silent(name: str) -> None:
    y, _ = build(name).anonymize(np.zeros(1600, np.float32), SR, utterance_rng(0, "u"))
    assert len(y) == 1600 and not np.any(y)


@pytest.mark.parametrize("name", ["f0_noise", "f0_scale", "segment_scaling"])
def test_random_transforms_are_reproducible_per_utterance(speech: np.ndarray, name: str) -> None:
    anonymizer = build(name)
    a1, _ = anonymizer.anonymize(speech, SR, utterance_rng(0, "a"))
    a2, _ = anonymizer.anonymize(speech, SR, utterance_rng(0, "a"))
    b, _ = anonymizer.anonymize(speech, SR, utterance_rng(0, "b"))
    np.testing.assert_array_equal(a1, a2)
    assert not np.allclose(a1, b, atol=1e-3)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("f0_mean_reversion", {"strength": 1.5}),
        ("f0_mean_reversion", {"window_ms": 0}),
        ("f0_noise", {"std_hz": -1}),
        ("f0_scale", {"factor_range": [1.2, 0.8]}),
        ("segment_scaling", {"segments": "phones"}),
        ("segment_scaling", {"energy_range": [0, 1]}),
    ],
)
def test_bad_parameters_are_rejected(name: str, params: dict) -> None:
    with pytest.raises(ValueError):
        build(name, params)
