"""ECAPA-TDNN shapes, batch-padding invariance, length-aware padding and checkpoints."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from voxanon.audio.synthetic import speech_like
from voxanon.models.speaker import EncoderError, load_encoder
from voxanon.models.speaker.ecapa import (
    EcapaConfig,
    EcapaEncoder,
    EcapaTdnn,
    load_ecapa_checkpoint,
    pad_same,
    save_ecapa,
)

torch.set_num_threads(1)
TINY = dict(channels=(32, 32, 32, 32, 96), attention_channels=16, se_channels=16, res2net_scale=4, embedding_dim=24)


def _randomise_bn(model, seed=0):
    """Non-trivial running statistics so eval-mode batch norm is not the identity."""
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
    return model.eval()


@pytest.mark.parametrize("cfg", [EcapaConfig(**TINY), EcapaConfig(**TINY, global_context=False),
                                 EcapaConfig(**{**TINY, "channels": (24, 24, 24, 72)}, kernel_sizes=(5, 3, 3, 1),
                                             dilations=(1, 2, 3, 1))])
def test_forward_shapes(cfg):
    model = EcapaTdnn(cfg).eval()
    out = model(torch.randn(3, 57, 80), torch.tensor([57, 40, 12]))
    assert out.shape == (3, cfg.embedding_dim) and torch.isfinite(out).all()


def test_full_config_size():
    n = sum(p.numel() for p in EcapaTdnn(EcapaConfig.full()).parameters())
    assert 20e6 < n < 21e6  # speechbrain's spkrec-ecapa-voxceleb has about 20.8 M parameters


@pytest.mark.parametrize("mode", ["zeros", "reflect"])
def test_embedding_invariant_to_batch_padding(mode):
    model = _randomise_bn(EcapaTdnn(EcapaConfig(**TINY, padding_mode=mode)))
    enc = EcapaEncoder(model, name="t")
    wavs = [speech_like(d, f0=f, seed=s) for d, f, s in [(0.4, 100, 0), (1.5, 200, 1), (0.9, 150, 2)]]
    together = enc.embed(wavs, 16000)
    alone = np.stack([enc.embed([w], 16000)[0] for w in wavs])
    np.testing.assert_allclose(together, alone, atol=1e-4, rtol=1e-4)
    assert np.abs(together[0] - together[1]).max() > 1e-3


def test_resamples_other_rates():
    enc = EcapaEncoder(_randomise_bn(EcapaTdnn(EcapaConfig(**TINY))), name="t")
    w16 = speech_like(0.8, sr=16000, seed=4)
    w8 = speech_like(0.8, sr=8000, seed=4)
    assert enc.embed([w8], 8000).shape == (1, 24) and enc.embed([w16], 16000).shape == (1, 24)


def test_pad_same_reflects_at_each_utterance_end():
    x = torch.randn(2, 3, 10)
    lengths = torch.tensor([10, 6])
    out = pad_same(x, lengths, 2, "reflect")
    torch.testing.assert_close(out[0], F.pad(x[:1], (2, 2), mode="reflect")[0])
    torch.testing.assert_close(out[1, :, :10], F.pad(x[1:, :, :6], (2, 2), mode="reflect")[0])
    zeros = pad_same(x, lengths, 2, "zeros")
    torch.testing.assert_close(zeros[1, :, :10], F.pad(x[1:, :, :6], (2, 2))[0])


def test_checkpoint_round_trip_and_corrupt(tmp_path):
    model = _randomise_bn(EcapaTdnn(EcapaConfig(**TINY)))
    path = tmp_path / "m.pt"
    save_ecapa(path, model, epoch=3)
    enc = load_encoder(f"ecapa:{path}")
    w = [speech_like(0.7, seed=5)]
    np.testing.assert_allclose(enc.embed(w, 16000), EcapaEncoder(model, "x").embed(w, 16000), atol=1e-6)
    assert enc.name.startswith("ecapa-") and enc.dim == 24
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(EncoderError, match=r"m.pt cannot be read \(truncated zip archive\)"):
        load_ecapa_checkpoint(path)
    with pytest.raises(EncoderError, match="not found"):
        load_encoder(f"ecapa:{tmp_path / 'nope.pt'}")
    with pytest.raises(EncoderError, match="unknown speaker encoder"):
        load_encoder("xvector")


def test_bad_config():
    with pytest.raises(ValueError, match="divisible"):
        EcapaConfig(channels=(30, 30, 30, 30, 90))
    with pytest.raises(ValueError, match="same length"):
        EcapaConfig(channels=(32, 32, 96))
