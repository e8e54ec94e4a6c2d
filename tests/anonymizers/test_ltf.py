"""The LTF content-embedding anonymizer: generator shapes, FVQ, gradient reversal, loss, training, inference."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

from tests.helpers.speaks import CLIPS, words_and_voice
from voxanon.anonymizers.base import Chunking
from voxanon.anonymizers.ltf import Ltf
from voxanon.audio.io import AudioError
from voxanon.cli import main
from voxanon.errors import EXIT_PARTIAL, ConfigError, ModelError
from voxanon.models.checkpoint import save_atomic
from voxanon.models.ltf.fvq import FactorizedVQ, usage
from voxanon.models.ltf.inference import LtfModel, model_file
from voxanon.models.ltf.loss import content_loss
from voxanon.models.ltf.melmap import MelMap, MelPair, resample_frames, vocoder_frames
from voxanon.models.ltf.model import LtfConfig, LtfNet
from voxanon.models.ltf.speaker import SpeakerPredictor, reverse_gradient
from voxanon.models.vocoder.hifigan import PRESETS, Generator, retime_state

SMALL = LtfConfig(content_dim=384, codebook_size=64, code_dim=4, gru_dim=16, vocoder="v2-16k")


def test_generator_turns_20ms_frames_into_16khz_audio_of_the_same_duration():
    torch.manual_seed(0)
    net = LtfNet(SMALL)
    assert net.sample_rate == 16000 and net.samples_per_frame == 320
    wav, codes, vq_loss, q = net(torch.randn(2, 7, 384))
    assert wav.shape == (2, 7 * 320) and codes.shape == (2, 14) and q.shape == (2, 14, 384)
    assert vq_loss.ndim == 0 and torch.isfinite(wav).all() and wav.abs().max() <= 1
    assert codes.min() >= 0 and codes.max() < 64
    odd = LtfNet(LtfConfig(content_dim=8, upsample=3, codebook_size=4, code_dim=2, gru_dim=4, vocoder="v2-16k"))
    assert odd(torch.randn(1, 5, 8))[0].shape == (1, 5 * 3 * 160)


def test_mel_generator_emits_80_log_mels_per_10ms_and_has_no_vocoder_inside():
    net = LtfNet(dataclasses.replace(SMALL, output="mel"))
    mel, codes, _, _ = net(torch.randn(2, 7, 384))
    assert mel.shape == (2, 80, 14) and codes.shape == (2, 14) and net.vocoder is None
    with pytest.raises(ValueError, match="output"):
        LtfNet(dataclasses.replace(SMALL, output="spectrogram"))
    assert LtfConfig.from_dict({k: v for k, v in dataclasses.asdict(SMALL).items() if k != "output"}).output == \
        "waveform"                                   # model.pt files written before the mel design still load


def test_mel_map_fit_recovers_a_known_per_band_affine_map_and_ignores_the_floor():
    rng = np.random.default_rng(0)
    a, c = rng.uniform(0.8, 0.95, 80), rng.uniform(-2, 1, 80)
    pairs = []
    for _ in range(3):
        x = torch.from_numpy(rng.normal(-4, 1, (80, 200)))
        y = torch.from_numpy(a[:, None] * x.numpy() + c[:, None])
        y[:, :20] = y.max() - 9.0               # frames at Whisper's floor: left out of the fit
        pairs.append((x.float(), y.float()))
    fitted = MelMap.fit(pairs)
    assert np.allclose(fitted.scale.flatten(), a, atol=1e-4) and np.allclose(fitted.offset.flatten(), c, atol=1e-3)
    again = MelMap.from_state(fitted.state())
    assert torch.equal(again(pairs[0][0][None]), fitted(pairs[0][0][None]))


def test_hifigan_mels_mapped_onto_whisper_match_whisper_own_on_held_out_real_speech():
    from voxanon.models.content.whisper import normalise

    pair = MelPair()
    fit = MelMap.fit([pair(_clip(i)[0]) for i in range(len(CLIPS) - 1)])
    hifigan, whisper = pair(_clip(len(CLIPS) - 1)[0])
    assert hifigan.shape == whisper.shape == (80, len(_clip(len(CLIPS) - 1)[0]) // 160)
    native, mapped = normalise(whisper[None]), fit(hifigan[None])
    assert np.corrcoef(native.flatten(), mapped.flatten())[0, 1] > 0.9
    assert (native - mapped).pow(2).mean().sqrt() < 0.25
    assert resample_frames(hifigan[None], 50).shape == (1, 80, 50) and vocoder_frames(100) == 86


def test_fvq_picks_the_nearest_unit_codeword_passes_gradients_straight_through_and_counts_usage():
    torch.manual_seed(0)
    vq = FactorizedVQ(dim=6, size=16, code_dim=3)
    x = torch.randn(2, 9, 6, requires_grad=True)
    out, codes, loss = vq(x)
    z = torch.nn.functional.normalize(vq.proj_in(x), dim=-1)
    book = torch.nn.functional.normalize(vq.codebook, dim=-1)
    assert torch.equal(codes, (z @ book.T).argmax(-1))
    assert torch.allclose(out, vq.proj_out(book[codes]), atol=1e-6)
    out.sum().backward(retain_graph=True)
    assert x.grad is not None and x.grad.abs().sum() > 0          # straight-through: the encoder side learns
    assert vq.codebook.grad is None                                # ... and only the VQ loss moves codewords
    loss.backward()
    assert loss > 0 and vq.codebook.grad.abs().sum() > 0
    stats = usage(torch.tensor([0, 0, 1, 1]), 4)
    assert stats["usage"] == 0.5 and stats["perplexity"] == pytest.approx(2.0)


def test_gradient_reversal_flips_and_scales_the_gradient_only():
    x = torch.randn(5, requires_grad=True)
    y = reverse_gradient(x, 0.5)
    assert torch.equal(y, x)
    (y * 3).sum().backward()
    assert torch.allclose(x.grad, torch.full((5,), -1.5))
    pred = SpeakerPredictor(dim=6, n_speakers=3, channels=8, layers=2)
    frames = torch.randn(2, 10, 6, requires_grad=True)
    loss = torch.nn.functional.cross_entropy(pred(frames), torch.tensor([0, 2]))
    loss.backward()
    grad_grl = frames.grad.clone()
    frames.grad = None
    pred.grl = False
    torch.nn.functional.cross_entropy(pred(frames), torch.tensor([0, 2])).backward()
    assert torch.allclose(grad_grl, -frames.grad)


def test_content_loss_is_zero_for_identical_features_and_grows_with_the_difference():
    x = torch.randn(3, 10, 16)
    assert content_loss(x, x.clone()).item() == pytest.approx(0.0, abs=1e-6)
    assert 0 < content_loss(x, x + 0.1).item() < content_loss(x, x + 1.0).item()
    assert content_loss(x, -x).item() == pytest.approx(0.5 * 4 * x.pow(2).mean().item() + 1.0, rel=1e-4)
    with pytest.raises(ValueError):
        content_loss(x, x[:, :5])


def test_universal_hifigan_retimed_to_16khz_keeps_every_weight_but_the_stretched_kernel():
    src = Generator(PRESETS["v1"])
    state = retime_state(src.state_dict(), PRESETS["v1"], PRESETS["v1-16k"])
    dst = Generator(PRESETS["v1-16k"])
    dst.load_state_dict(state)
    assert state["ups.1.weight"].shape[-1] == 10 and torch.equal(state["ups.0.weight"], src.state_dict()["ups.0.weight"])
    assert dst(torch.randn(1, 80, 4)).shape == (1, 1, 640)


def _clip(i: int = 0) -> tuple[np.ndarray, int]:
    wav, sr = sf.read(CLIPS[i], dtype="float32")
    return wav, sr


@pytest.mark.slow
def test_a_few_steps_on_real_speech_lower_the_content_loss():
    from voxanon.models.content import load_content_encoder

    torch.manual_seed(0)
    enc = load_content_encoder("whisper-tiny:3")
    wav, sr = _clip()
    assert sr == 16000
    seg = torch.from_numpy(wav[16000:16000 + 16 * 320])[None]
    content = torch.from_numpy(enc.encode(wav, sr)[50:66])[None]
    net = LtfNet(SMALL)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3, betas=(0.8, 0.99))
    target = enc.encode_segments(seg).detach()
    losses = []
    for _ in range(8):
        loss = content_loss(target, enc.encode_segments(net(content)[0]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert enc.encode_segments(seg).shape == (1, 16, 384)
    assert content_loss(target, enc.encode_segments(seg)).item() < 1e-6
    assert losses[-1] < 0.8 * losses[0], losses


def _data_dir(root: Path) -> Path:
    data = root / "data"
    data.mkdir()
    (data / "wav.scp").write_text("".join(f"u{i} {p}\n" for i, p in enumerate(CLIPS)) + f"u9 {root}/missing.wav\n")
    (data / "utt2spk").write_text("".join(f"u{i} {'ab'[i % 2]}\n" for i in range(len(CLIPS))) + "u9 b\n")
    return data


def _log(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize("output", ["waveform", "mel"])
def test_train_ltf_logs_resumes_at_the_same_step_and_writes_a_loadable_model(tmp_path, capsys, output):
    data = _data_dir(tmp_path)
    out = tmp_path / "run"
    common = [str(data), "--out", str(out), "--codebook-size", "32", "--code-dim", "4", "--gru-dim", "8",
              "--vocoder", "v2-16k", "--batch-size", "1", "--segment", "3200", "--lambda-s", "0.1", "--device", "cpu", "--threads", "1",
              "--init", "scratch", "--output", output]
    assert main(["train", "ltf", *common, "--epochs", "0.1"]) == EXIT_PARTIAL   # the missing file is skipped
    err = capsys.readouterr().err
    assert "skipping utterance u9" in err and "speaker predictor" in err
    summary = json.loads((out / "model.json").read_text())
    log = _log(out)
    assert summary["steps"] == log[-1]["step"] > 0 and summary["data"]["valid_utterances"] == 1
    assert {"l_c", "l_s", "l_vq", "usage", "perplexity", "lr", "valid_l_c"} <= set(log[-1])
    first = summary["steps"]
    assert main(["train", "ltf", *common, "--epochs", "0.2"]) == EXIT_PARTIAL
    assert f"resuming at step {first}" in capsys.readouterr().err
    steps = [r["step"] for r in _log(out)]
    assert steps == sorted(set(steps)) and steps[-1] > first
    ckpt = torch.load(out / "model.pt")
    assert all(v.dtype == torch.float16 for v in ckpt["model"].values() if v.is_floating_point())
    model = LtfModel.from_file(out / "model.pt")
    wav, sr = _clip(1)
    assert model.convert(wav[:8000], sr).shape == (8000,)
    assert (model.vocoder is not None) == (output == "mel")
    if output == "mel":       # the fitted map travels with the model: 80 scales near 2 / ln 10
        scale = np.array(summary["melmap"]["scale"])
        assert scale.shape == (80,) and 0.6 < np.median(scale) < 1.2


@pytest.fixture(scope="module")
def model_path(tmp_path_factory) -> Path:
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("ltf") / "model.pt"
    save_atomic(model_file(LtfNet(SMALL), {"note": "untrained"}), path)
    return path


@pytest.mark.slow
def test_anonymizer_keeps_length_and_rate_and_chunked_runs_match_one_pass(model_path):
    anon = Ltf(model=str(model_path), threads=1)
    wav = np.concatenate([_clip(i)[0] for i in range(len(CLIPS))])[: 16000 * 9]
    one, sr = anon.anonymize(wav, 16000, np.random.default_rng(0))
    assert sr == 16000 and one.shape == wav.shape and np.isfinite(one).all()
    at8k, sr8 = anon.anonymize(wav[::2].copy(), 8000, np.random.default_rng(0))
    assert sr8 == 8000 and at8k.shape == (len(wav) // 2,)
    anon.chunking = Chunking(seconds=3.0, overlap=1.0, fade=0.05)
    chunked, _ = anon.process(wav, 16000, np.random.default_rng(0))
    assert chunked.shape == wav.shape and np.isfinite(chunked).all()
    # away from the cuts the chunks see enough context: same waveform up to the encoder's window effects
    assert np.corrcoef(one[16000:40000], chunked[16000:40000])[0, 1] > 0.9


def test_bad_inputs_and_models_give_clear_errors(tmp_path, model_path, monkeypatch):
    import voxanon.anonymizers.ltf as ltf_module

    rng = np.random.default_rng(0)
    silent = Ltf().anonymize(np.zeros(1234, dtype=np.float32), 16000, rng)[0]
    assert silent.shape == (1234,) and not silent.any()       # silence in, silence out, no model needed
    monkeypatch.setattr(ltf_module, "DEFAULT_MODEL", tmp_path / "gone.pt")
    with pytest.raises(ConfigError, match="shipped model .*gone.pt.* is missing"):
        Ltf().anonymize(np.ones(100, dtype=np.float32), 16000, rng)
    anon = Ltf(model=str(model_path))
    for bad in (np.array([0.1, np.nan], dtype=np.float32), np.zeros((100, 2), dtype=np.float32),
                np.zeros(0, dtype=np.float32)):
        with pytest.raises(AudioError):
            anon.anonymize(bad, 16000, rng)
    torch.save({"not": "a model"}, tmp_path / "other.pt")
    with pytest.raises(ModelError, match="other.pt is a dict of 1 key .*; expected a .voxanon-ltf"):
        Ltf(model=str(tmp_path / "other.pt")).anonymize(np.ones(100, dtype=np.float32), 16000, rng)
    with pytest.raises(ModelError, match="not found"):
        Ltf(model=str(tmp_path / "nope.pt")).anonymize(np.ones(100, dtype=np.float32), 16000, rng)


@pytest.mark.slow
def test_shipped_default_speaks_real_speech_in_another_voice():
    error, cos, hyps = words_and_voice(Ltf(threads=1))
    assert error < 35, hyps                                   # the words survive (the originals': under 10 %)
    assert cos < 0.8                                          # the voice does not
