"""The F3-VA DiT flow-matching backbone: RoPE, CFM loss, overfitting real speech, ODE sampling, the model file,
``voxanon train f3va`` (resume) and the ``f3va`` anonymizer."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.helpers.acoustic_data import train_dir, train_log
from tests.helpers.audio import LIBRIVOX
from tests.helpers.speaks import words_and_voice
from voxanon.anonymizers.base import Chunking, utterance_rng
from voxanon.anonymizers.f3va import F3VA, Voice
from voxanon.anonymizers.registry import build
from voxanon.audio.io import load_audio
from voxanon.cli import main
from voxanon.errors import EXIT_PARTIAL, ConfigError
from voxanon.models.acoustic.dit import DiTConfig, DiTNet, Sampling, cfm_path, rope
from voxanon.models.acoustic.inference import AcousticModel, ModelSpecs, model_file
from voxanon.models.acoustic.model import AcousticConfig, AcousticNet
from voxanon.models.checkpoint import save_atomic

CLIP = LIBRIVOX / "sense_and_sensibility_01_austen_64kb-0880.flac"
TINY = DiTConfig(width=32, depth=2, heads=2, codebook_size=0, cfg_dropout=0.0)


def _randomised(cfg: DiTConfig, seed: int = 0) -> DiTNet:
    """A network whose zero-initialised output layers got weights, so that every input matters."""
    torch.manual_seed(seed)
    net = DiTNet(cfg)
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.1)
    return net.eval()


def test_rope_scores_depend_only_on_the_relative_position():
    torch.manual_seed(0)
    q, k = torch.randn(1, 2, 1, 16), torch.randn(1, 2, 1, 16)
    n = 40

    def score(i: int, j: int) -> torch.Tensor:   # q at frame i, k at frame j of an n-frame sequence
        qs, ks = torch.zeros(1, 2, n, 16), torch.zeros(1, 2, n, 16)
        qs[:, :, i], ks[:, :, j] = q[:, :, 0], k[:, :, 0]
        return (rope(qs)[:, :, i] * rope(ks)[:, :, j]).sum(-1)

    for offset in (1, 7, 25):
        torch.testing.assert_close(score(3, 10), score(3 + offset, 10 + offset), atol=1e-5, rtol=1e-5)
    assert float((score(3, 10) - score(3, 12)).abs().max()) > 1e-3      # the distance does matter
    x = torch.randn(2, 3, 10, 8)
    torch.testing.assert_close(rope(x).norm(dim=-1), x.norm(dim=-1))     # a rotation: norms kept
    torch.testing.assert_close(rope(x)[:, :, 0], x[:, :, 0])              # frame 0 is not rotated


def test_cfm_path_and_loss():
    torch.manual_seed(0)
    x0, x1, t = torch.randn(3, 5, 4), torch.randn(3, 5, 4), torch.tensor([0.0, 0.5, 1.0])
    xt, target = cfm_path(x0, x1, t, 0.01)
    torch.testing.assert_close(xt[0], x0[0])
    torch.testing.assert_close(xt[2], 0.01 * x0[2] + x1[2])
    eps = 1e-3                                        # the target is dx_t/dt
    torch.testing.assert_close((cfm_path(x0, x1, t + eps, 0.01)[0] - xt) / eps, target, atol=1e-3, rtol=1e-3)

    net = DiTNet(TINY)
    content, pitch, spk, mel = torch.randn(2, 12, 384), torch.randn(2, 12, 2), torch.randn(2, 256), torch.randn(2, 12, 80)
    loss = net.loss(content, pitch, spk, mel).detach()
    assert loss.shape == () and 1.5 < float(loss) < 2.5              # output layer starts at 0: E|x1 - x0|^2 ~ 2
    x1 = (mel - net.mel_mean) / net.mel_std
    s = TINY.sigma_min

    def perfect(x, t, frames, speaker):              # knows x1, so recovers x0 and the exact velocity
        x0 = (x - t[:, None, None] * x1) / (1 - (1 - s) * t[:, None, None])
        return x1 - (1 - s) * x0

    net.forward = perfect
    assert float(net.loss(content, pitch, spk, mel)) < 1e-8


def test_a_tiny_backbone_learns_one_real_utterance():
    from voxanon.models.acoustic.features import network_content

    model = AcousticModel(DiTNet(TINY), ModelSpecs())
    wav, sr = load_audio(CLIP)
    feats = model.features(wav, sr)
    mel = model.vocoder().analyze(wav, sr)
    crop = slice(40, 168)                             # 128 frames (1.5 s) of speech
    content = torch.as_tensor(network_content(feats.content, True)[crop])[None]
    pitch, mel = torch.as_tensor(feats.pitch[crop])[None], torch.as_tensor(mel[crop])[None]
    spk = torch.ones(1, 256) / 16
    torch.manual_seed(0)
    net = DiTNet(DiTConfig(width=48, depth=2, heads=2, codebook_size=0, cfg_dropout=0.0))
    net.set_mel_stats(mel[0].mean(0).numpy(), mel[0].std(0).numpy())
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3)
    batch = [t.repeat(4, *([1] * (t.dim() - 1))) for t in (content, pitch, spk, mel)]

    def fixed_noise_loss() -> float:                 # the same noise and times before and after training
        state = torch.get_rng_state()
        torch.manual_seed(123)
        with torch.no_grad():
            value = float(net.loss(*batch))
        torch.set_rng_state(state)
        return value

    before = fixed_noise_loss()
    for _ in range(60):
        loss = net.loss(*batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = fixed_noise_loss()
    assert after < 0.6 * before, (before, after)


def test_ode_sampling_shape_determinism_and_guidance():
    net = _randomised(TINY)
    content, pitch, spk = torch.randn(1, 20, 384), torch.randn(1, 20, 2), torch.randn(1, 256)
    a = net.generate(content, pitch, spk, Sampling(steps=4, seed=1))
    assert a.shape == (1, 20, 80) and torch.isfinite(a).all()
    torch.testing.assert_close(net.generate(content, pitch, spk, Sampling(steps=4, seed=1)), a, atol=0, rtol=0)
    assert float((net.generate(content, pitch, spk, Sampling(steps=4, seed=2)) - a).abs().mean()) > 1e-3
    guided = net.generate(content, pitch, spk, Sampling(steps=4, seed=1, guidance=2.0))
    assert float((guided - a).abs().mean()) > 1e-4
    rk4 = net.generate(content, pitch, spk, Sampling(steps=2, solver="rk4", seed=1))
    assert rk4.shape == a.shape
    with pytest.raises(ConfigError, match="unknown ODE solver"):
        net.generate(content, pitch, spk, Sampling(solver="heun"))


def _with_conv_prior(seed: int = 0) -> tuple[DiTNet, AcousticNet]:
    """An untrained (zero-output) DiT whose prior is a random small conv network, and that conv network."""
    torch.manual_seed(seed)
    conv = AcousticNet(AcousticConfig(channels=8, dilations=(1, 2)))
    for p in conv.parameters():
        torch.nn.init.normal_(p, std=0.1)
    net = DiTNet(dataclasses.replace(TINY, prior=json.dumps(dataclasses.asdict(conv.cfg))))
    net.prior.load_state_dict(conv.state_dict())
    net.set_mel_stats(np.full(80, -5.0), np.full(80, 2.0))
    net.set_prior_std(np.linspace(0.2, 0.6, 80))
    return net, conv.eval()


def test_data_dependent_prior_starts_the_flow_at_the_conv_prediction(tmp_path):
    net, conv = _with_conv_prior()
    content, pitch, spk, mel = torch.randn(2, 30, 384), torch.randn(2, 30, 2), torch.randn(2, 256), torch.randn(2, 30, 80)
    with torch.no_grad():
        mu = conv(content, pitch, spk)
        # an untrained backbone (zero velocity) returns its starting point: at temperature 0 the conv's mels
        torch.testing.assert_close(net.generate(content, pitch, spk, Sampling(steps=3, temperature=0.0)), mu)
        sampled = net.generate(content, pitch, spk, Sampling(steps=3, seed=4))
    spread = ((sampled - mu) / net.mel_std).std(dim=(0, 1))           # noise of prior_std (standardised) per bin
    assert float((spread - net.prior_std).abs().max()) < 0.2 and float(spread[-10:].mean()) > float(spread[:10].mean())
    # the velocity target is x1 - x0 with x0 around the conv's prediction: far smaller than from N(0, I)
    torch.manual_seed(0)
    with torch.no_grad():
        assert float(net.loss(content, pitch, spk, mu)) < 0.3 * float(DiTNet(TINY).loss(content, pitch, spk, mu))
    # the prior is frozen: no gradient reaches it, and it travels in the model file
    net.loss(content, pitch, spk, mel).backward()
    assert all(p.grad is None for p in net.prior.parameters()) and net.mu_in.weight.grad is not None
    save_atomic(model_file(net, ModelSpecs()), tmp_path / "prior.pt")
    loaded = AcousticModel.from_file(tmp_path / "prior.pt")
    assert loaded.config.prior_config() == conv.cfg
    torch.testing.assert_close(loaded.net.prior_std, net.prior_std.half().float())


def test_dit_model_file_round_trip_and_kind_checks(tmp_path):
    net = _randomised(DiTConfig(width=32, depth=1, heads=2, codebook_size=8))
    save_atomic(model_file(net, ModelSpecs()), tmp_path / "dit.pt")
    loaded = AcousticModel.from_file(tmp_path / "dit.pt")
    assert loaded.kind == "dit" and loaded.config == net.cfg and loaded.n_speakers == 0
    content, pitch, spk = torch.randn(1, 10, 384), torch.randn(1, 10, 2), torch.randn(1, 256)
    with torch.no_grad():
        torch.testing.assert_close(loaded.net.mel_std, net.mel_std.half().float())
    assert AcousticModel.from_file(tmp_path / "dit.pt").net.generate(content, pitch, spk).shape == (1, 10, 80)
    with pytest.raises(ValueError, match="deterministic"):
        AcousticNet(AcousticConfig(channels=8, dilations=(1,))).generate(content, pitch, spk, Sampling())


@pytest.mark.slow
def test_train_f3va_writes_resumes_and_checks_kinds(tmp_path, capsys):
    data = train_dir(tmp_path)
    common = [str(data), "--valid", str(data), "--max-valid", "1", "--cache", str(tmp_path / "cache"),
              "--width", "16", "--depth", "1", "--heads", "2", "--codebook", "4", "--batch-size", "2",
              "--segment", "16", "--device", "cpu", "--threads", "1"]
    out = tmp_path / "run"
    assert main(["train", "f3va", *common, "--out", str(out), "--epochs", "0.2"]) == EXIT_PARTIAL
    first = train_log(out)
    assert first[-1]["step"] == 2 and "valid_l1" in first[-1] and np.isfinite(first[-1]["train_cfm"])
    summary = json.loads((out / "model.json").read_text())
    assert summary["config"]["codebook_size"] == 4 and np.isfinite(summary["final_train_cfm"])
    model = AcousticModel.from_file(out / "model.pt")
    assert model.kind == "dit" and model.config.width == 16 and model.net.vq.codebook.abs().sum() > 0
    assert float(model.net.mel_std.min()) > 0.01 and float(model.net.mel_mean.abs().sum()) > 0  # fitted stats

    # the rerun continues from the checkpoint: the optimizer's state and the step count carry over
    before = torch.load(out / "checkpoint.pt")
    assert main(["train", "f3va", *common, "--out", str(out), "--epochs", "0.4"]) == EXIT_PARTIAL
    assert "resuming at step 2" in capsys.readouterr().err
    after = torch.load(out / "checkpoint.pt")
    assert [r["step"] for r in train_log(out)] == [2, 3] and after["step"] == 3 and after["kind"] == "dit"
    assert all(float(st["step"]) == 3 for st in after["optimizer"]["state"].values())
    assert not torch.equal(before["model"]["mel_out.weight"], after["model"]["mel_out.weight"])
    torch.testing.assert_close(before["model"]["vq.codebook"], after["model"]["vq.codebook"])  # fixed codebook

    # a conv checkpoint or model is not continued or fine-tuned by 'train f3va'
    assert main(["train", "acoustic", str(data), "--cache", str(tmp_path / "cache"), "--channels", "8",
                 "--dilations", "1", "--batch-size", "2", "--segment", "16", "--epochs", "0.1", "--threads", "1",
                 "--out", str(tmp_path / "conv")]) == EXIT_PARTIAL
    capsys.readouterr()
    assert main(["train", "f3va", *common, "--out", str(tmp_path / "conv"), "--epochs", "0.2"]) != 0
    assert "holds a conv model" in capsys.readouterr().err
    assert main(["train", "f3va", *common, "--out", str(tmp_path / "ft"), "--epochs", "0.2",
                 "--init", str(tmp_path / "conv" / "model.pt")]) == 2
    assert "is a conv model" in capsys.readouterr().err

    # --prior: the conv model is frozen inside the backbone, which starts its flow at the conv's prediction
    conv = AcousticModel.from_file(tmp_path / "conv" / "model.pt")
    assert main(["train", "f3va", *common, "--out", str(tmp_path / "prior"), "--epochs", "0.2",
                 "--prior", str(tmp_path / "conv" / "model.pt")]) == EXIT_PARTIAL
    with_prior = AcousticModel.from_file(tmp_path / "prior" / "model.pt")
    assert with_prior.config.prior_config() == conv.config
    assert json.loads((tmp_path / "prior" / "model.json").read_text())["prior"].endswith("model.pt")
    for key, value in conv.net.state_dict().items():              # not trained: the conv's own weights
        torch.testing.assert_close(with_prior.net.prior.state_dict()[key], value)
    std = with_prior.net.prior_std
    assert 0.01 <= float(std.min()) and float(std.std()) > 0      # the fitted spread, not the ones it starts at
    assert main(["train", "f3va", *common, "--out", str(tmp_path / "prior2"), "--epochs", "0.2",
                 "--prior", str(out / "model.pt")]) == 2
    assert "need a conv acoustic model" in capsys.readouterr().err


def test_f3va_anonymizer_config_errors(tmp_path):
    assert build("f3va", {}).config.model == "f3va"             # the shipped backbone by default
    with pytest.raises(ConfigError, match="mel_solver"):
        build("f3va", {"model": "m.pt", "mel_solver": "heun"})
    with pytest.raises(ConfigError, match="w"):
        build("f3va", {"model": "m.pt", "w": 2.0})
    save_atomic(model_file(AcousticNet(AcousticConfig(channels=8, dilations=(1,))), ModelSpecs()), tmp_path / "c.pt")
    with pytest.raises(ConfigError, match="is a conv acoustic model"):
        build("f3va", {"model": str(tmp_path / "c.pt")}).parts()


@pytest.fixture(scope="module")
def tiny_backbone(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("f3va") / "model.pt"
    save_atomic(model_file(_randomised(DiTConfig(width=32, depth=1, heads=2, codebook_size=0)), ModelSpecs()), path)
    return path


def test_f3va_anonymizer_length_rate_silence_and_seeds(tiny_backbone):
    anon = build("f3va", {"model": str(tiny_backbone), "mel_steps": 2, "w_range": [0.0, 0.5], "threads": 1})
    silent, sr = anon.process(np.zeros(16000, dtype=np.float32), 16000, utterance_rng(0, "u"))
    assert sr == 16000 and len(silent) == 16000 and not silent.any() and anon._parts is None
    wav, sr = load_audio(CLIP)
    wav = wav[:sr]
    out, out_sr = anon.process(wav, sr, utterance_rng(0, "a"))
    assert out_sr == sr and len(out) == len(wav) and out.dtype == np.float32 and np.isfinite(out).all()
    again, _ = anon.process(wav, sr, utterance_rng(0, "a"))
    np.testing.assert_array_equal(again, out)                      # reproducible from the utterance's RNG
    voice_a = anon.pseudo_speaker(wav, sr, utterance_rng(0, "a"))
    voice_b = anon.pseudo_speaker(wav, sr, utterance_rng(0, "b"))
    assert voice_a.seed != voice_b.seed and not np.allclose(voice_a.embedding, voice_b.embedding)


def test_f3va_chunks_share_one_voice_and_noise_seed(tiny_backbone, monkeypatch):
    anon = F3VA(model=str(tiny_backbone), mel_steps=1, threads=1)
    monkeypatch.setattr(anon, "chunking", Chunking(seconds=0.8, overlap=0.2, fade=0.05))
    seen: list[Voice] = []
    original = F3VA.resynthesize

    def spy(self, wav, sr, speaker):
        seen.append(speaker)
        return original(self, wav, sr, speaker)

    monkeypatch.setattr(F3VA, "resynthesize", spy)
    wav, sr = load_audio(CLIP)
    wav = wav[: int(2.1 * sr)]
    out, out_sr = anon.process(wav, sr, utterance_rng(0, "long"))
    assert out_sr == sr and len(out) == len(wav) and np.isfinite(out).all()
    assert len(seen) == 3 and all(v is seen[0] for v in seen)


@pytest.mark.slow
def test_shipped_backbone_speaks_real_speech_in_another_voice():
    anon = F3VA(threads=1)
    error, cos, hyps = words_and_voice(anon)
    assert anon.acoustic().kind == "dit" and anon.acoustic().config.prior_config() is not None
    assert error < 35, hyps                                   # the words survive (the originals': under 10 %)
    assert cos < 0.8                                          # the voice does not
