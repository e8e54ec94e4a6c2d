"""WORLD analysis/synthesis, envelope warps and the ``world`` pseudo-speaker anonymizer."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from voxanon.anonymizers.base import make_config, utterance_rng
from voxanon.anonymizers.registry import build
from voxanon.anonymizers.world import World
from voxanon.audio.synthetic import speech_like
from voxanon.dsp import prosody as pros
from voxanon.dsp.warp import apply_tilt, source_positions, tilt_gain, warp_envelope
from voxanon.dsp.world import analyze, estimate_f0, synthesize

SR = 16000


@pytest.fixture(scope="module")
def male() -> np.ndarray:
    return speech_like(1.5, SR, f0=120.0, seed=1)


@pytest.fixture(scope="module")
def female() -> np.ndarray:
    return speech_like(1.5, SR, f0=220.0, seed=2)


def geometric_mean_f0(wav: np.ndarray) -> float:
    f0, _ = estimate_f0(wav, SR)
    return float(np.exp(pros.log_f0_stats(f0)[0]))


def centroid(sp: np.ndarray, f0: np.ndarray) -> float:
    """Spectral centroid (bins) of the mean log-power envelope over voiced frames."""
    env = np.log(sp[f0 > 0]).mean(axis=0)
    weight = np.exp(env - env.max())
    return float((weight * np.arange(len(weight))).sum() / weight.sum())


# --- dsp.world -----------------------------------------------------------------------


@pytest.mark.parametrize("method", ["dio", "harvest"])
def test_f0_estimate_matches_known_contour(method: str) -> None:
    wav = speech_like(1.0, SR, f0=120.0, voiced_fraction=1.0)
    f0, times = estimate_f0(wav, SR, method=method)
    assert len(f0) == len(times)
    # the contour stays within 120 Hz +-20 %
    assert np.mean((f0 > 0.75 * 120) & (f0 < 1.25 * 120)) > 0.95


def test_unknown_f0_method_is_an_error(male: np.ndarray) -> None:
    with pytest.raises(ValueError, match="unknown F0 method"):
        estimate_f0(male, SR, method="yin")


def test_resynthesis_keeps_length_and_pitch(male: np.ndarray) -> None:
    feats = analyze(male, SR)
    assert feats.sp.shape == feats.ap.shape and feats.sp.shape[0] == len(feats.f0)
    y = synthesize(feats)
    assert y.dtype == np.float32 and len(y) == len(male)
    assert geometric_mean_f0(y) == pytest.approx(geometric_mean_f0(male), rel=0.03)


# --- dsp.warp --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["bilinear", "vtln"])
def test_warp_identity_endpoints_and_monotone(kind: str) -> None:
    np.testing.assert_allclose(source_positions(513, 1.0, kind), np.arange(513), atol=1e-9)
    for alpha in (0.8, 1.25):
        pos = source_positions(513, alpha, kind)
        assert pos[0] == pytest.approx(0.0) and pos[-1] == pytest.approx(512.0)
        assert np.all(np.diff(pos) > 0)


@pytest.mark.parametrize("kind", ["bilinear", "vtln"])
@pytest.mark.parametrize("alpha", [0.85, 1.2])
def test_warp_moves_a_peak_in_the_factor_direction(kind: str, alpha: float) -> None:
    bins = np.arange(513)
    sp = np.exp(-0.5 * ((bins - 100) / 8.0) ** 2)[None, :] + 1e-6
    peak = int(np.argmax(warp_envelope(sp, alpha, kind)[0]))
    if kind == "vtln":  # linear below the break frequency
        assert peak == pytest.approx(100 * alpha, abs=1)
    assert (peak - 100) * (alpha - 1) > 0
    assert abs(peak - 100 * alpha) < 0.1 * 100 * alpha


def test_bilinear_warps_with_reciprocal_factors_cancel() -> None:
    bins = np.arange(513)
    sp = np.exp(sum(np.exp(-0.5 * ((bins - c) / 15.0) ** 2) for c in (60, 150, 260, 400)))[None, :]
    back = warp_envelope(warp_envelope(sp, 1.2), 1 / 1.2)
    np.testing.assert_allclose(np.log(back), np.log(sp), atol=0.02)


def test_tilt_gain_in_db_per_octave() -> None:
    gain = tilt_gain(513, SR, 6.0)  # bin k is at k * 15.625 Hz
    assert 10 * np.log10(gain[64]) == pytest.approx(0.0, abs=1e-9)  # 1 kHz
    assert 10 * np.log10(gain[128]) == pytest.approx(6.0, abs=1e-9)  # 2 kHz
    assert 10 * np.log10(gain[32]) == pytest.approx(-6.0, abs=1e-9)  # 500 Hz
    sp = np.ones((2, 513))
    np.testing.assert_allclose(apply_tilt(sp, SR, 6.0), sp * gain)


# --- the world anonymizer ------------------------------------------------------------------


@pytest.mark.parametrize("f0_method", ["dio", "harvest"])
@pytest.mark.parametrize("n", [24000, 800, 50, 1])
def test_output_finite_same_length_and_rate(male: np.ndarray, n: int, f0_method: str) -> None:
    y, sr = World(f0_method=f0_method).anonymize(male[:n], SR, utterance_rng(0, "u"))
    assert sr == SR and len(y) == n and y.dtype == np.float32 and np.all(np.isfinite(y))


def test_silence_stays_silent() -> None:
    y, sr = World().anonymize(np.zeros(4000, np.float32), SR, utterance_rng(0, "u"))
    assert sr == SR and len(y) == 4000 and not np.any(y)


def test_works_at_the_input_rate() -> None:
    wav = speech_like(0.5, 22050, f0=150.0)
    y, sr = World().anonymize(wav, 22050, utterance_rng(0, "u"))
    assert sr == 22050 and len(y) == len(wav)


def test_reproducible_and_different_per_utterance(male: np.ndarray) -> None:
    world = World()
    a1, _ = world.anonymize(male, SR, utterance_rng(0, "utt-a"))
    a2, _ = world.anonymize(male, SR, utterance_rng(0, "utt-a"))
    b, _ = world.anonymize(male, SR, utterance_rng(0, "utt-b"))
    np.testing.assert_array_equal(a1, a2)
    f0 = analyze(male, SR).f0
    assert world.draw_speaker(utterance_rng(0, "utt-a"), f0) != world.draw_speaker(utterance_rng(0, "utt-b"), f0)
    assert not np.allclose(a1, b, atol=1e-3)


@pytest.mark.parametrize("key", ["u1", "u2", "u3"])
def test_output_mean_f0_reaches_the_drawn_target(male: np.ndarray, key: str) -> None:
    world = World(gender_target="female")
    speaker = world.draw_speaker(utterance_rng(0, key), analyze(male, SR).f0)
    lo, hi = world.config.female_f0_range
    assert speaker.gender == "female" and lo <= speaker.f0_mean_hz <= hi
    y, _ = world.anonymize(male, SR, utterance_rng(0, key))
    # tolerance: 5 % (re-analysis error plus voicing decisions at segment edges)
    assert geometric_mean_f0(y) == pytest.approx(speaker.f0_mean_hz, rel=0.05)


@pytest.mark.parametrize("kind", ["bilinear", "vtln"])
def test_envelope_centroid_follows_the_warp(male: np.ndarray, kind: str) -> None:
    src = analyze(male, SR)
    base = centroid(src.sp, src.f0)
    for alpha in (0.85, 1.2):
        world = World(gender_target="male", warp=kind, warp_range=(alpha, alpha), male_f0_range=(120.0, 120.0))
        y, _ = world.anonymize(male, SR, utterance_rng(0, "u"))
        out = analyze(y, SR)
        assert (centroid(out.sp, out.f0) - base) * (alpha - 1) > 0


def test_cross_gender_uses_the_estimated_source_gender(male: np.ndarray, female: np.ndarray) -> None:
    world = World(gender_target="opposite", warp_range=(1.0, 1.0))
    ratio = world.config.gender_formant_ratio
    from_male = world.draw_speaker(utterance_rng(0, "u"), analyze(male, SR).f0)
    from_female = world.draw_speaker(utterance_rng(0, "u"), analyze(female, SR).f0)
    assert (from_male.gender, from_female.gender) == ("female", "male")
    assert from_male.warp_factor == pytest.approx(ratio)
    assert from_female.warp_factor == pytest.approx(1 / ratio)
    assert world.source_gender(np.zeros(10)) is None


def test_intonation_contour_is_kept(male: np.ndarray) -> None:
    feats = analyze(male, SR)
    out = World().convert(feats, utterance_rng(0, "u"))
    v = feats.f0 > 0
    assert np.array_equal(out.f0 > 0, v)
    assert np.corrcoef(np.log(feats.f0[v]), np.log(out.f0[v]))[0, 1] > 0.999


def test_config_from_json_is_hashable_and_serialisable() -> None:
    params = json.loads(
        '{"warp": "vtln", "warp_range": [0.9, 1.0], "prosody": [{"method": "f0_noise", "params": {"std_hz": 3}}]}'
    )
    config = make_config(World.Config, params)
    assert config.warp_range == (0.9, 1.0)
    assert hash(config) == hash(make_config(World.Config, params))
    world = World(config)
    assert [p.name for p in world.prosody] == ["f0_noise"]
    assert json.loads(json.dumps(world.settings()))["params"]["prosody"][0]["params"] == {"std_hz": 3}
    assert build("world", params).settings() == world.settings()


@pytest.mark.parametrize(
    "params",
    [
        {"gender_target": "child"},
        {"warp": "linear"},
        {"warp_range": [1.2, 1.1]},
        {"female_f0_range": [0, 200]},
        {"f0_method": "yin"},
        {"prosody": [{"method": "no_such_method"}]},
        {"prosody": [{"method": "world", "weight": 1}]},
    ],
)
def test_bad_config_is_rejected(params: dict) -> None:
    with pytest.raises(ValueError):
        build("world", params)


def test_prosody_must_be_world_domain() -> None:
    with pytest.raises(ValueError, match="not a WORLD-domain"):
        World(prosody=({"method": "admixture", "params": {"components": [{"method": "world", "p": 1}]}},))


def test_config_fields_have_help() -> None:
    assert all(f.metadata.get("help") for f in dataclasses.fields(World.Config))
