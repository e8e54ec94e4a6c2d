"""Composite anonymizers: admixture (random choice per utterance) and chain (steps in order)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from voxanon.anonymizers import registry
from voxanon.anonymizers.admixture import Admixture
from voxanon.anonymizers.base import make_config, utterance_rng
from voxanon.anonymizers.chain import Chain
from voxanon.anonymizers.prosody import F0Scale
from voxanon.anonymizers.world import World
from voxanon.audio.synthetic import speech_like
from voxanon.dsp import prosody as pros
from voxanon.dsp.world import estimate_f0

SR = 16000
THREE = [
    {"method": "world", "params": {}, "p": 0.2},
    {"method": "f0_noise", "params": {"std_hz": 5}, "p": 0.325},
    {"method": "f0_scale", "params": {}, "p": 0.475},
]
FIXED_WORLD = {"method": "world", "params": {"gender_target": "male", "male_f0_range": [120, 120]}}
DOUBLE_F0 = {"method": "f0_scale", "params": {"factor_range": [1.5, 1.5]}}


class F0Scale8k(F0Scale):
    """A WORLD-domain step that prefers 8 kHz input."""

    name = "_test_f0_scale_8k"
    sample_rate = 8000


@pytest.fixture
def probe_8k(monkeypatch: pytest.MonkeyPatch) -> str:
    registry.available()
    monkeypatch.setitem(registry._registry, F0Scale8k.name, F0Scale8k)
    return F0Scale8k.name


@pytest.fixture(scope="module")
def speech() -> np.ndarray:
    return speech_like(1.0, SR, f0=130.0, seed=4)


def mean_f0(wav: np.ndarray, sr: int = SR) -> float:
    return float(np.exp(pros.log_f0_stats(estimate_f0(wav, sr)[0])[0]))


# --- admixture -----------------------------------------------------------------------------


def test_choice_frequencies_match_p() -> None:
    admixture = Admixture(components=THREE)
    n = 2000
    counts = np.bincount([admixture.choose(utterance_rng(0, f"utt{i}")) for i in range(n)], minlength=3)
    for count, component in zip(counts, THREE):
        p = component["p"]
        assert abs(count - n * p) < 4 * np.sqrt(n * p * (1 - p))


def test_choice_comes_first_then_the_rng_goes_on(speech: np.ndarray) -> None:
    admixture = Admixture(components=THREE)
    for key in ("a", "b", "c", "d"):
        rng = utterance_rng(0, key)
        expected, _ = admixture.components[admixture.choose(rng)].anonymize(speech, SR, rng)
        y, sr = admixture.anonymize(speech, SR, utterance_rng(0, key))
        assert sr == SR
        np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("n", [16000, 50])
def test_admixture_output_contract(speech: np.ndarray, n: int) -> None:
    admixture = Admixture(components=THREE)
    for key in ("a", "b", "c"):
        y, sr = admixture.anonymize(speech[:n], SR, utterance_rng(0, key))
        assert sr == SR and len(y) == n and np.all(np.isfinite(y))
    y, _ = admixture.anonymize(np.zeros(800, np.float32), SR, utterance_rng(0, "a"))
    assert len(y) == 800 and not np.any(y)


def test_admixture_resamples_to_the_component_rate(speech: np.ndarray, probe_8k: str) -> None:
    admixture = Admixture(components=[{"method": probe_8k, "params": {}, "p": 1.0}])
    y, sr = admixture.anonymize(speech, SR, utterance_rng(0, "a"))
    assert sr == 8000 and len(y) == len(speech) // 2


@pytest.mark.parametrize(
    "components",
    [
        [{"method": "world", "p": 0.5}, {"method": "f0_noise", "p": 0.6}],
        [{"method": "world", "p": 1.2}, {"method": "f0_noise", "p": -0.2}],
        [{"method": "no_such_method", "p": 1.0}],
        [{"method": "world"}],
        [{"method": "world", "p": "half"}],
        [],
        [{"method": "world", "params": {"warp": "spiral"}, "p": 1.0}],
    ],
)
def test_admixture_rejects_bad_components(components: list) -> None:
    with pytest.raises(ValueError):
        registry.build("admixture", {"components": components})


def test_admixture_config_round_trips_json() -> None:
    config = make_config(Admixture.Config, json.loads(json.dumps({"components": THREE})))
    assert isinstance(config.components, tuple) and hash(config) == hash(Admixture.Config(components=THREE))
    settings = Admixture(config).settings()
    assert json.loads(json.dumps(settings))["params"]["components"] == THREE


def test_default_admixture_mixes_cascade_and_world_as_t8_4() -> None:
    if "cascade" not in registry.available():
        pytest.skip("cascade is not registered in this checkout")
    adm = Admixture()
    assert [c.name for c in adm.components] == ["cascade", "world"]
    assert [c["p"] for c in adm.config.components] == [0.325, 0.675]
    assert adm.needs_model  # the cascade loads an ASR and a voice (Ray reserves GPUs for such methods)
    assert not Admixture(components=[{"method": "world", "p": 1.0}]).needs_model


# --- chain ---------------------------------------------------------------------------------


def test_consecutive_world_steps_are_grouped() -> None:
    admix = {"method": "admixture", "params": {"components": [{"method": "world", "p": 1.0}]}}
    noise = {"method": "f0_noise", "params": {}}
    assert Chain(steps=[FIXED_WORLD, noise, DOUBLE_F0]).groups() == [[0, 1, 2]]
    assert Chain(steps=[FIXED_WORLD, noise], fuse=False).groups() == [[0], [1]]
    assert Chain(steps=[FIXED_WORLD, admix, noise, noise]).groups() == [[0], [1], [2, 3]]


def test_fused_chain_equals_world_with_prosody(speech: np.ndarray) -> None:
    prosody = [{"method": "f0_noise", "params": {"std_hz": 8}}, {"method": "segment_scaling", "params": {}}]
    world = World(prosody=prosody)
    chain = Chain(steps=[{"method": "world", "params": {}}, *prosody])
    for key in ("a", "b"):
        expected, _ = world.anonymize(speech, SR, utterance_rng(0, key))
        y, sr = chain.anonymize(speech, SR, utterance_rng(0, key))
        assert sr == SR
        np.testing.assert_array_equal(y, expected)


def test_unfused_chain_runs_the_vocoder_per_step(speech: np.ndarray) -> None:
    steps = [FIXED_WORLD, {"method": "f0_noise", "params": {"std_hz": 8}}]
    fused, _ = Chain(steps=steps).anonymize(speech, SR, utterance_rng(0, "a"))
    unfused, _ = Chain(steps=steps, fuse=False).anonymize(speech, SR, utterance_rng(0, "a"))
    assert len(unfused) == len(speech) and np.all(np.isfinite(unfused))
    assert not np.allclose(fused, unfused, atol=1e-3)


@pytest.mark.parametrize("fuse", [True, False])
def test_steps_run_in_order(speech: np.ndarray, fuse: bool) -> None:
    # world sets the mean F0 to 120 Hz whatever came before; a 1.5x scale after it lifts it to 180 Hz
    scale_then_world, _ = Chain(steps=[DOUBLE_F0, FIXED_WORLD], fuse=fuse).anonymize(speech, SR, utterance_rng(0, "a"))
    world_then_scale, _ = Chain(steps=[FIXED_WORLD, DOUBLE_F0], fuse=fuse).anonymize(speech, SR, utterance_rng(0, "a"))
    assert mean_f0(scale_then_world) == pytest.approx(120.0, rel=0.05)
    assert mean_f0(world_then_scale) == pytest.approx(180.0, rel=0.05)


def test_chain_resamples_between_steps(speech: np.ndarray, probe_8k: str) -> None:
    probe = {"method": probe_8k, "params": {"factor_range": [1.0, 1.0]}}
    admix = {"method": "admixture", "params": {"components": [{"method": "world", "p": 1.0}]}}
    chain = Chain(steps=[FIXED_WORLD, probe])
    assert chain.groups() == [[0], [1]]  # different preferred rates: not fused
    y, sr = chain.anonymize(speech, SR, utterance_rng(0, "a"))
    assert sr == 8000 and len(y) == len(speech) // 2
    y, sr = Chain(steps=[probe, admix]).anonymize(speech, SR, utterance_rng(0, "a"))
    assert sr == 8000 and len(y) == len(speech) // 2 and np.all(np.isfinite(y))


@pytest.mark.parametrize("n", [16000, 50])
def test_chain_output_contract_and_reproducibility(speech: np.ndarray, n: int) -> None:
    chain = Chain()
    a1, sr = chain.anonymize(speech[:n], SR, utterance_rng(0, "a"))
    a2, _ = chain.anonymize(speech[:n], SR, utterance_rng(0, "a"))
    assert sr == SR and len(a1) == n and np.all(np.isfinite(a1))
    np.testing.assert_array_equal(a1, a2)
    if n > 1000:
        b, _ = chain.anonymize(speech, SR, utterance_rng(0, "b"))
        assert not np.allclose(a1, b, atol=1e-3)
    y, _ = chain.anonymize(np.zeros(800, np.float32), SR, utterance_rng(0, "a"))
    assert len(y) == 800 and not np.any(y)


def test_chain_config_round_trips_json() -> None:
    steps = [FIXED_WORLD, DOUBLE_F0]
    config = make_config(Chain.Config, json.loads(json.dumps({"steps": steps, "fuse": "false"})))
    assert config.fuse is False and isinstance(config.steps, tuple)
    assert hash(config) == hash(Chain.Config(steps=steps, fuse=False))
    assert json.loads(json.dumps(Chain(config).settings()))["params"]["steps"] == steps


@pytest.mark.parametrize(
    "steps", [[], [{"method": "nope"}], [{"params": {}}], "world", [{"method": "world", "params": [1]}]]
)
def test_chain_rejects_bad_steps(steps: object) -> None:
    with pytest.raises(ValueError):
        registry.build("chain", {"steps": steps})
