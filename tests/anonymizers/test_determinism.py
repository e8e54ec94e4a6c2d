"""Byte identity across runs for every registered anonymizer at every common sample rate.

The promise behind resumable, parallel runs: the same input, seed and
utterance id give the same bytes, whatever the process, the order or the rate.
Methods that load models (the ASR-TTS cascade, admixture, which mixes it in,
and the neural families) are marked slow. f3va and ltf run with their shipped models (f3va with 2 mel steps).
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from tests.helpers.nac_checkpoint import save_bark, save_hubert, save_quantizer
from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.registry import available, build
from voxanon.audio.synthetic import speech_like

RATES = (8000, 16000, 22050, 44100, 48000)


def _cases():
    for name, cls in available().items():
        slow = cls.needs_model or build(name).needs_model
        for sr in RATES:
            yield pytest.param(name, sr, id=f"{name}-{sr}", marks=[pytest.mark.slow] if slow else [])


@pytest.fixture(scope="module")
def small_targets(tmp_path_factory) -> dict[str, dict]:
    """Parameters giving the kNN-VC family three small target speakers (its defaults synthesise their voices),
    and the shipped f3va and ltf one thread (f3va two mel steps)."""
    root = tmp_path_factory.mktemp("targets")
    for i in range(3):
        (root / f"t{i}").mkdir()
        sf.write(root / f"t{i}" / "a.wav", 0.5 * speech_like(3.0, 16000, f0=100 + 60 * i, seed=i), 16000)
    params = {"knnvc": {"targets": str(root)}}
    params["f3va"] = {"mel_steps": 2, "threads": 1}
    params["ltf"] = {"threads": 1}
    return params


@pytest.fixture(scope="module")
def b4_weights(tmp_path_factory) -> dict[str, str]:
    """Parameters giving b4 its parts as small random checkpoints (built only when b4's cases run)."""
    weights = tmp_path_factory.mktemp("b4")
    return {"model": str(save_bark(weights / "bark")), "hubert": str(save_hubert(weights / "hubert")),
            "quantizer": str(save_quantizer(weights / "quantizer.pth")), "threads": "1"}


def _run(name: str, wav: np.ndarray, sr: int, params: dict | None = None) -> tuple[bytes, int]:
    out, out_sr = build(name, params or {}).anonymize(wav.copy(), sr, utterance_rng(3, "spk1-utt1"))
    return np.asarray(out, dtype=np.float32).tobytes(), out_sr


@pytest.mark.parametrize("name, sr", _cases())
def test_two_runs_give_the_same_bytes(name: str, sr: int, small_targets, tmp_path, monkeypatch, request) -> None:
    monkeypatch.setenv("VOXANON_CACHE", str(tmp_path))
    wav = (0.5 * speech_like(0.5, sr, seed=sr)).astype(np.float32)
    params = request.getfixturevalue("b4_weights") if name == "b4" else small_targets.get(name)
    first, second = _run(name, wav, sr, params), _run(name, wav, sr, params)
    assert first[1] == second[1]
    assert first[0] == second[0]


@pytest.mark.parametrize("sr", [8000, 11025, 12000])
def test_world_below_16k_is_reproducible_and_keeps_rate_and_length(sr: int) -> None:
    # before WORLD ran at 16 kHz for such input, D4C flipped single frames' aperiodicity between runs
    for seed in range(3):
        wav = (0.5 * speech_like(1.0, sr, seed=seed)).astype(np.float32)
        first, second = _run("world", wav, sr), _run("world", wav, sr)
        assert first == second
        assert first[1] == sr and len(first[0]) == 4 * len(wav)


@pytest.mark.parametrize("sr", [8000, 11025])
def test_world_helpers_below_16k_are_reproducible_and_keep_length(sr: int) -> None:
    # b1 and kNN-VC impose the source's F0 with transfer_f0; SECA's infill stretches with WORLD
    from voxanon.dsp.world import stretch, transfer_f0

    for seed in range(3):
        source = (0.5 * speech_like(1.0, sr, f0=120, seed=seed)).astype(np.float32)
        converted = (0.5 * speech_like(1.0, sr, f0=200, seed=seed + 10)).astype(np.float32)
        runs = [(transfer_f0(converted, source, sr), stretch(source, sr, int(1.3 * sr))) for _ in range(2)]
        for first, second in zip(*runs):
            assert first.tobytes() == second.tobytes()
        assert len(runs[0][0]) == sr and len(runs[0][1]) == int(1.3 * sr)
