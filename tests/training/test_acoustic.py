"""Speaker-conditioned acoustic model: pitch features, network and file format, training CLI, shipped default."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from tests.helpers.acoustic_data import CLIP, train_dir, train_log
from voxanon.audio.io import load_audio
from voxanon.audio.synthetic import speech_like
from voxanon.cli import main
from voxanon.dsp.frames import relative_pitch
from voxanon.errors import EXIT_PARTIAL, ConfigError
from voxanon.models.acoustic import load_acoustic
from voxanon.models.acoustic.inference import (
    AcousticError,
    AcousticModel,
    ModelSpecs,
    model_file,
)
from voxanon.models.acoustic.model import AcousticConfig, AcousticNet
from voxanon.models.checkpoint import save_atomic

TINY = AcousticConfig(channels=16, dilations=(1, 2))


def test_relative_pitch_is_semitones_minus_voiced_median():
    f0 = np.array([0, 220, 440, 880, 0, 0], dtype=float)        # 200 Hz frames -> 100 Hz output frames
    out = relative_pitch(f0, 200.0, 3, 100.0)
    # output frame i (centre (i + 0.5) / 100 s) takes F0 frame round((i + 0.5) * 2) = 1, 3, 5
    np.testing.assert_allclose(out[:, 0], [-12.0, 12.0, 0.0], atol=1e-5)
    assert out[:, 1].tolist() == [1.0, 1.0, 0.0]
    assert not relative_pitch(np.zeros(4), 200.0, 2, 100.0).any()


def test_net_shapes_and_fp16_file_round_trip(tmp_path):
    torch.manual_seed(0)
    net = AcousticNet(TINY)
    for p in net.parameters():                 # FiLM starts at zero: give it weights so the speaker matters
        torch.nn.init.normal_(p, std=0.2)
    content, pitch, emb = torch.randn(2, 30, 384), torch.randn(2, 30, 2), torch.randn(2, 256)
    out = net(content, pitch, emb).detach()
    assert out.shape == (2, 30, 80)
    save_atomic(model_file(net, ModelSpecs()), tmp_path / "m.pt")
    loaded = AcousticModel.from_file(tmp_path / "m.pt")
    assert loaded.content_spec == "whisper-tiny:3" and loaded.speaker_spec == "ge2e"
    assert all(v.dtype == torch.float16 for v in torch.load(tmp_path / "m.pt")["state"].values())
    again = loaded.net(content, pitch, emb).detach()
    assert float((again - out).abs().max()) < 0.05 * float(out.abs().max())
    assert float((loaded.net(content, pitch, -emb).detach() - again).abs().mean()) > 1e-3   # the embedding matters


def test_bad_model_files_are_named(tmp_path):
    save_atomic({"format": "something-else"}, tmp_path / "x.pt")
    with pytest.raises(AcousticError, match="x.pt is a 'something-else' checkpoint; expected a 'voxanon-acoustic/1'"):
        AcousticModel.from_file(tmp_path / "x.pt")
    saved = model_file(AcousticNet(TINY), ModelSpecs())
    saved["config"]["channels"] = 32
    save_atomic(saved, tmp_path / "y.pt")
    with pytest.raises(AcousticError, match="has shape"):
        AcousticModel.from_file(tmp_path / "y.pt")
    with pytest.raises(AcousticError, match="not found"):
        AcousticModel.from_file(tmp_path / "missing.pt")


def test_source_features_on_a_real_clip():
    model = AcousticModel(AcousticNet(TINY), ModelSpecs())
    wav, sr = load_audio(CLIP)
    feats = model.features(wav, sr)
    mel = model.vocoder().analyze(wav, sr)
    assert feats.content.shape == (len(mel), 384) and feats.pitch.shape == (len(mel), 2)
    voiced = feats.pitch[:, 1] > 0
    assert 0.3 < voiced.mean() < 0.95
    assert abs(np.median(feats.pitch[voiced, 0])) < 0.5 and not feats.pitch[~voiced, 0].any()
    assert np.isfinite(feats.content).all() and feats.content.std() > 0.1


@pytest.mark.slow
def test_train_command_writes_resumes_and_fine_tunes(tmp_path, capsys):
    data = train_dir(tmp_path)
    out = tmp_path / "run"
    common = [str(data), "--valid", str(data), "--cache", str(tmp_path / "cache"), "--channels", "16",
              "--dilations", "1", "2", "--batch-size", "2", "--segment", "16", "--device", "cpu", "--threads", "1"]
    assert main(["train", "acoustic", *common, "--out", str(out), "--epochs", "0.2"]) == EXIT_PARTIAL
    err = capsys.readouterr().err
    assert "skipping utterance a-bad" in err and "bad.wav" in err
    first = train_log(out)
    assert first[-1]["step"] == 2 and "valid_l1" in first[-1] and np.isfinite(first[-1]["train_l1"])
    summary = json.loads((out / "model.json").read_text())
    assert summary["steps"] == 2 and summary["data"]["train_utterances"] == 4
    assert len(summary["data"]["skipped"]) == 2 and summary["feature_seconds"] > 0
    assert (out / "checkpoint.pt").exists() and AcousticModel.from_file(out / "model.pt").config.channels == 16

    # rerun with a larger budget: continues from the checkpoint (features from the cache)
    assert main(["train", "acoustic", *common, "--out", str(out), "--epochs", "0.4"]) == EXIT_PARTIAL
    assert "resuming at step 2" in capsys.readouterr().err
    steps = [r["step"] for r in train_log(out)]
    assert steps == sorted(set(steps)) and steps[-1] == 3     # ceil(0.4 epochs * 172 frames / (2 x 16))

    # fine-tune from the model just written, into a fresh folder
    tuned = tmp_path / "tuned"
    assert main(["train", "acoustic", *common, "--out", str(tuned), "--epochs", "0.2",
                 "--init", str(out / "model.pt"), "--channels", "64"]) == EXIT_PARTIAL
    meta = json.loads((tuned / "model.json").read_text())
    assert meta["init"] == str(out / "model.pt") and meta["config"]["channels"] == 16   # the init's layout wins


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA present")
def test_cuda_without_cuda_is_a_config_error(tmp_path, capsys):
    assert main(["train", "acoustic", str(tmp_path), "--out", str(tmp_path / "o"), "--device", "cuda"]) == 2
    assert "--device cuda: CUDA is not available" in capsys.readouterr().err
    from voxanon.training.trainer import resolve_device

    with pytest.raises(ConfigError):
        resolve_device("cuda")


@pytest.mark.slow
def test_shipped_default_converts_and_follows_the_embedding():
    model = load_acoustic("default")
    wav, sr = load_audio(CLIP)
    feats = model.features(wav, sr)
    enc = model.speaker_encoder()
    own = enc.embed([wav], sr)[0]
    other = enc.embed([speech_like(1.0, 16000, f0=230.0, seed=1)], 16000)[0]       # another "voice"
    mel_own, mel_other = model.mel(feats, own), model.mel(feats, other)
    assert mel_own.shape == (feats.n_frames, 80) and np.isfinite(mel_own).all()
    assert np.abs(mel_own - mel_other).mean() > 0.05
    out, rate = model.convert(wav, sr, own)
    assert rate == 22050 and abs(len(out) - feats.n_frames * 256) <= 256 and np.isfinite(out).all()
