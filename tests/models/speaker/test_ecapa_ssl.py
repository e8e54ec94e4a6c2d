"""The VPC 2026 ``ecapa_ssl`` attacker against a reference written here from the kit's code and the tensors.

The reference follows the kit for one utterance, unbatched: peak normalisation and
``np.trim_zeros`` for the Fbank, ``F.layer_norm`` of the whole waveform for WavLM, the raw
output of every layer of the transformers ``WavLMModel`` the weights came from (forward hooks),
a softmax-weighted stack sum, speechbrain's ECAPA blocks (reflect padding, eval batch norm,
Res2Net, SE over all frames, attentive statistics pooling) written as plain functions,
``resample_tensor`` as the kit's loops, and the element-wise product before ``mfa``.
Only the log-mel front end is voxanon's own :class:`Fbank` (tested against speechbrain's elsewhere).
"""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tests.helpers.asv_ssl_checkpoint import (
    ECAPA_KIT,
    ECAPA_SMALL,
    WAVLM_LARGE_CFG,
    WAVLM_SMALL_CFG,
    ecapa_ssl_shapes,
    random_ecapa_state,
    reference_wavlm,
    unilm_state,
    write_asv_ssl,
)
from voxanon.audio.io import AudioError
from voxanon.audio.synthetic import speech_like
from voxanon.models.content import ContentError
from voxanon.models.fbank import Fbank
from voxanon.models.speaker import EncoderError, load_encoder
from voxanon.models.speaker.ecapa_ssl import (
    EcapaSslEncoder,
    best_checkpoint_folder,
    ecapa_ssl_from_states,
    resample_frames,
)

torch.set_num_threads(1)
DILATIONS = (1, 2, 3, 4)


@pytest.fixture(scope="module")
def asv_ssl(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exp") / "asv_ssl"
    wavlm, ecapa = write_asv_ssl(folder)
    return folder, wavlm, ecapa


# ---- the kit's computation, one utterance, from the tensors ----

def kit_resample(x: torch.Tensor, n: int) -> torch.Tensor:
    """``resample_tensor`` of the kit on ``(C, T)``: bins averaged one by one, or the whole sequence repeated."""
    t = x.shape[1]
    if t == n:
        return x
    if t > n:
        base, extra = t // n, t % n
        sizes = [base] * (n - extra) + [base + 1] * extra
        starts = np.cumsum([0] + sizes[:-1])
        return torch.stack([x[:, s:s + size].mean(1) for s, size in zip(starts, sizes)], dim=1)
    return torch.cat([x] * (n // t) + [x[:, : n % t]], dim=1)


def conv(x, sd, p, dilation=1):
    """speechbrain Conv1d, "same" length by reflection; ``x`` is ``(C, T)``."""
    w = sd[p + ".weight"]
    pad = dilation * (w.shape[2] - 1) // 2
    x = F.pad(x[None], (pad, pad), mode="reflect") if pad else x[None]
    return F.conv1d(x, w, sd[p + ".bias"], dilation=dilation)[0]


def batch_norm(x, sd, p):
    n = p + ".norm."
    return F.batch_norm(x[None], sd[n + "running_mean"], sd[n + "running_var"], sd[n + "weight"], sd[n + "bias"],
                        training=False, eps=1e-5)[0]


def tdnn(x, sd, p, dilation=1):
    return batch_norm(torch.relu(conv(x, sd, p + ".conv.conv", dilation)), sd, p + ".norm")


def se_res2net(x, sd, p, dilation, scale):
    y = tdnn(x, sd, p + ".tdnn1")
    parts, out, prev = y.chunk(scale, dim=0), [], None
    for j, part in enumerate(parts):
        if j:
            prev = tdnn(part if prev is None else part + prev, sd, f"{p}.res2net_block.blocks.{j - 1}", dilation)
        out.append(part if j == 0 else prev)
    y = tdnn(torch.cat(out), sd, p + ".tdnn2")
    s = y.mean(1, keepdim=True)
    s = torch.sigmoid(conv(torch.relu(conv(s, sd, p + ".se_block.conv1.conv")), sd, p + ".se_block.conv2.conv"))
    return s * y + x


def pooled_stats(x, weights):
    mean = (weights * x).sum(1)
    return mean, torch.sqrt((weights * (x - mean[:, None]) ** 2).sum(1).clamp(min=1e-12))


def kit_ecapa(sd, fbank: torch.Tensor, ssl: torch.Tensor, scale: int) -> torch.Tensor:
    """``ECAPA_TDNN_test.forward`` for ``(T, 80)`` Fbank and ``(T', D)`` combined WavLM features."""
    x, xl = tdnn(fbank.T, sd, "blocks.0"), []
    for i in (1, 2, 3):
        x = se_res2net(x, sd, f"blocks.{i}", DILATIONS[i], scale)
        xl.append(x)
    f, fl = ssl.T, []
    for i in (0, 1, 2, 3):
        f = se_res2net(f, sd, f"blocks_features.{i}", DILATIONS[i], scale)
        fl.append(f)
    x_cat = torch.cat(xl)
    x = tdnn(x_cat * kit_resample(torch.cat(fl[1:]), x_cat.shape[1]), sd, "mfa")
    t = x.shape[1]
    mean, std = pooled_stats(x, torch.full((1, t), 1 / t))
    context = torch.cat([x, mean[:, None].expand(-1, t), std[:, None].expand(-1, t)])
    attn = torch.softmax(conv(torch.tanh(tdnn(context, sd, "asp.tdnn")), sd, "asp.conv.conv"), dim=1)
    stats = torch.cat(pooled_stats(x, attn))[:, None]
    return conv(batch_norm(stats, sd, "asp_bn"), sd, "fc.conv")[:, 0]


def kit_embedding(wav: np.ndarray, wavlm, sd, scale: int) -> tuple[torch.Tensor, int, int]:
    """The kit's embedding (before L2) of one 16 kHz waveform, with its WavLM and Fbank frame counts."""
    fbank_in = np.trim_zeros(wav / np.abs(wav).max())
    wavlm_in = F.layer_norm(torch.from_numpy(wav), wav.shape)
    outs = []
    hooks = [layer.register_forward_hook(lambda m, i, o: outs.append(o[0])) for layer in wavlm.encoder.layers]
    try:
        wavlm(wavlm_in[None])
    finally:
        for h in hooks:
            h.remove()
    weights = torch.softmax(sd["weighted_sum.layer_weights"], dim=0)
    ssl = (torch.stack(outs) * weights.view(-1, 1, 1, 1)).sum(0)[0]
    feats = Fbank()(torch.from_numpy(fbank_in.astype(np.float32))[None])[0][0]
    return kit_ecapa(sd, feats, ssl, scale), ssl.shape[0], feats.shape[0]


def utterances() -> list[np.ndarray]:
    """Speech-like audio: 1.3 s, 0.7 s, and 0.5 s between 0.8 s runs of exact zeros (more WavLM than Fbank frames)."""
    padded = np.concatenate([np.zeros(12800), speech_like(0.5, f0=180, seed=3), np.zeros(12800)])
    return [speech_like(1.3, seed=1), 0.3 * speech_like(0.7, f0=210, seed=2), padded.astype(np.float32)]


# ---- tests ----

def test_matches_the_kits_computation(asv_ssl):
    folder, wavlm, sd = asv_ssl
    enc = load_encoder(f"ecapa_ssl:{folder}")
    assert isinstance(enc, EcapaSslEncoder) and enc.dim == 24 and enc.sample_rate == 16000
    frames = []
    with torch.inference_mode():
        for wav in utterances():
            ref, t_wavlm, t_fbank = kit_embedding(wav.astype(np.float32), wavlm, sd, ECAPA_SMALL["scale"])
            frames.append((t_wavlm, t_fbank))
            got = enc.model(torch.from_numpy(wav)[None])[0]
            torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(enc.embed([wav], 16000)[0], F.normalize(ref, dim=0).numpy(), atol=1e-5)
            assert ref.abs().max() > 0.1                                # not a vanishing network
    assert frames[0][0] < frames[0][1] and frames[2][0] > frames[2][1]  # tiled, and averaged


def test_every_weight_is_used(asv_ssl):
    """Changing one layer weight, one gating block or one ECAPA block moves the embedding."""
    folder, _, _ = asv_ssl
    enc = load_encoder(f"ecapa_ssl:{folder}")
    wav = utterances()[0]
    base = enc.embed([wav], 16000)
    ecapa = enc.model.ecapa
    for param in (ecapa.weighted_sum.layer_weights, ecapa.blocks_features[3].tdnn2.conv.conv.bias,
                  ecapa.blocks[2].tdnn1.conv.conv.bias, enc.model.wavlm.encoder.layers[2].feed_forward.output_dense.bias):
        with torch.no_grad():
            param[-1] += 0.5
        assert np.abs(enc.embed([wav], 16000) - base).max() > 1e-3
        with torch.no_grad():
            param[-1] -= 0.5
    np.testing.assert_allclose(enc.embed([wav], 16000), base, atol=1e-6)


def test_batch_equals_one_at_a_time(asv_ssl):
    folder, _, _ = asv_ssl
    enc = load_encoder(f"ecapa_ssl:{folder}")
    wavs = utterances() + [speech_like(0.9, f0=140, seed=4)]
    batch = enc.embed(wavs, 16000)
    single = np.concatenate([enc.embed([w], 16000) for w in wavs])
    np.testing.assert_allclose(batch, single, atol=2e-5)
    np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1, atol=1e-6)
    assert np.abs(batch[0] - batch[1]).max() > 1e-2
    # other rates are resampled; an utterance shorter than one WavLM frame is named
    assert enc.embed([speech_like(0.8, seed=5, sr=8000)], 8000).shape == (1, 24)
    with pytest.raises(AudioError, match="utterance 1 of the batch.*shorter than one WavLM frame"):
        enc.embed([wavs[0], np.ones(399, np.float32)], 16000)


def test_resample_frames_is_the_kits():
    x = torch.randn(3, 5, 40)
    for lengths, targets in (([7, 40, 12], [20, 13, 12]), ([40, 9, 1], [40, 31, 6])):
        out = resample_frames(x, torch.tensor(lengths), torch.tensor(targets))
        assert out.shape == (3, 5, max(targets))
        for b, (t, n) in enumerate(zip(lengths, targets)):
            torch.testing.assert_close(out[b, :, :n], kit_resample(x[b, :, :t], n), rtol=0, atol=1e-6)
            assert not out[b, :, n:].any()


def test_spec_forms_and_name(asv_ssl, tmp_path):
    folder, _, sd = asv_ssl
    by_dir = load_encoder(f"ecapa_ssl:{folder}")
    by_file = load_encoder(f"ecapa_ssl:{folder / 'embedding_model.ckpt'}")
    wav = utterances()[1]
    np.testing.assert_array_equal(by_dir.embed([wav], 16000), by_file.embed([wav], 16000))
    digests = by_dir.name.split("-")[2:]
    assert by_dir.name == by_file.name and len(digests) == 2 and all(len(d) == 12 for d in digests)
    # a DataParallel-style file ('state_dict' wrapper, 'module.' prefixes) loads as the kit loads it
    wrapped = tmp_path / "wrapped"
    wrapped.mkdir()
    (wrapped / "WavLM-Large.pt").symlink_to(folder / "WavLM-Large.pt")
    torch.save({"state_dict": {f"module.{k}": v for k, v in sd.items()}}, wrapped / "embedding_model.ckpt")
    np.testing.assert_allclose(load_encoder(f"ecapa_ssl:{wrapped}").embed([wav], 16000),
                               by_dir.embed([wav], 16000), atol=1e-6)
    assert load_encoder(f"ecapa_ssl:{wrapped}").name != by_dir.name


def test_finetuning_folder_picks_the_kits_epoch(asv_ssl, tmp_path):
    folder, _, _ = asv_ssl
    for epoch in (1, 2, 3):
        (tmp_path / f"CKPT+{epoch}").mkdir()
    (tmp_path / "CKPT+old").mkdir()
    assert best_checkpoint_folder(tmp_path) == str(tmp_path / "CKPT+3")           # no log: the highest epoch
    (tmp_path / "train_log.txt").write_text(
        "epoch: 1, lr: 1.44e-04 - train loss: 14.85 - valid loss: 9.5, valid ErrorRate: 9.99e-01\n"
        "epoch: 2, lr: 2.88e-04 - train loss: 10.1 - valid loss: 7.25e+00, valid ErrorRate: 8.0e-01\n"
        "epoch: 3, lr: 4.32e-04 - train loss: 8.2 - valid loss: 8.0, valid ErrorRate: 7.0e-01\n")
    assert best_checkpoint_folder(tmp_path) == str(tmp_path / "CKPT+2")           # the lowest validation loss
    for name in ("embedding_model.ckpt", "WavLM-Large.pt"):
        (tmp_path / "CKPT+2" / name).symlink_to(folder / name)
    assert load_encoder(f"ecapa_ssl:{tmp_path}").name == load_encoder(f"ecapa_ssl:{folder}").name
    assert best_checkpoint_folder(tmp_path / "CKPT+old") is None


def test_kit_size_layout_on_the_meta_device():
    """The kit's WavLM-Large and ECAPA_TDNN_test() at their real shapes; nothing is allocated."""
    from transformers import WavLMModel

    from voxanon.models.content.unilm import transformers_config

    with torch.device("meta"):
        wavlm = {k: v.to("meta") for k, v in unilm_state(WavLMModel(transformers_config(WAVLM_LARGE_CFG))).items()}
    shapes = ecapa_ssl_shapes(24, **ECAPA_KIT)
    ecapa = {k: torch.empty(s, device="meta") for k, s in shapes.items()}
    model = ecapa_ssl_from_states(ecapa, WAVLM_LARGE_CFG, wavlm)
    assert len(wavlm) == 488 and sum(p.numel() for p in model.wavlm.parameters()) == 315_453_120
    n_ecapa = sum(math.prod(s) for k, s in shapes.items() if "norm.running" not in k and "num_batches" not in k)
    assert sum(p.numel() for p in model.ecapa.parameters()) == n_ecapa
    assert 31e6 < n_ecapa < 33e6 and model.ecapa.cfg.channels == (1024, 1024, 1024, 1024, 3072)
    assert model.ecapa.cfg.dilations == (1, 2, 3, 4, 1) and model.ecapa.cfg.embedding_dim == 192
    assert len(model.ecapa.blocks_features) == 4 and model.normalize_waveform
    assert {p.device.type for p in model.parameters()} == {"meta"}


@pytest.mark.parametrize("edit, error, message", [
    (lambda sd: sd.pop("blocks_features.1.se_block.conv2.conv.bias"), EncoderError,
     r"embedding_model.ckpt: missing key 'blocks_features.1.se_block.conv2.conv.bias'"),
    (lambda sd: sd.pop("blocks.2.tdnn1.conv.conv.weight"), EncoderError, r"missing key 'blocks.2.tdnn1.conv.conv.weight'"),
    (lambda sd: sd.pop("weighted_sum.layer_weights"), EncoderError, r"missing key 'weighted_sum.layer_weights'"),
    (lambda sd: sd.__setitem__("blocks_features.4.tdnn1.conv.conv.weight", torch.zeros(1)), EncoderError,
     r"unexpected key 'blocks_features.4.tdnn1.conv.conv.weight'"),
    (lambda sd: sd.__setitem__("mfa.conv.conv.weight", torch.zeros(96, 64, 1)), EncoderError,
     r"key 'mfa.conv.conv.weight' has shape \(96, 64, 1\), expected \(96, 96, 1\)"),
    (lambda sd: sd.__setitem__("weighted_sum.layer_weights", torch.ones(24)), EncoderError,
     r"does not fit .*WavLM-Large.pt: 24 layer weights for a WavLM of 3 layers"),
])
def test_bad_embedding_model_names_the_key(asv_ssl, tmp_path, edit, error, message):
    folder, _, sd = asv_ssl
    sd = dict(sd)
    edit(sd)
    torch.save(sd, tmp_path / "embedding_model.ckpt")
    (tmp_path / "WavLM-Large.pt").symlink_to(folder / "WavLM-Large.pt")
    with pytest.raises(error, match=message):
        load_encoder(f"ecapa_ssl:{tmp_path}")


def test_bad_files_are_refused(asv_ssl, tmp_path):
    folder, wavlm, sd = asv_ssl
    (tmp_path / "embedding_model.ckpt").symlink_to(folder / "embedding_model.ckpt")
    with pytest.raises(EncoderError, match="WavLM-Large.pt not found.*copy or link it there"):
        load_encoder(f"ecapa_ssl:{tmp_path}")
    state = unilm_state(wavlm)
    state.pop("encoder.layers.1.self_attn.grep_linear.bias")
    torch.save({"cfg": WAVLM_SMALL_CFG, "model": state}, tmp_path / "WavLM-Large.pt")
    with pytest.raises(ContentError, match="WavLM-Large.pt: missing key 'encoder.layers.1.self_attn.grep_linear.bias'"):
        load_encoder(f"ecapa_ssl:{tmp_path}")
    narrow = {**WAVLM_SMALL_CFG, "encoder_embed_dim": 24}
    torch.save({"cfg": narrow, "model": unilm_state(reference_wavlm(narrow))}, tmp_path / "WavLM-Large.pt")
    with pytest.raises(EncoderError, match="ECAPA channels 32 differ from the WavLM width 24"):
        load_encoder(f"ecapa_ssl:{tmp_path}")
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "embedding_model.ckpt").write_bytes(b"\x80\x02 not a checkpoint")
    (garbage / "WavLM-Large.pt").symlink_to(folder / "WavLM-Large.pt")
    with pytest.raises(EncoderError, match="ecapa_ssl embedding model .*embedding_model.ckpt cannot be read"):
        load_encoder(f"ecapa_ssl:{garbage}")
    torch.save({"model": {"a": 1}}, garbage / "embedding_model.ckpt")
    with pytest.raises(EncoderError, match="expected the state dict of the kit's ECAPA_TDNN_test"):
        load_encoder(f"ecapa_ssl:{garbage}")
    torch.save(random_ecapa_state({"fc.conv.weight": (24, 192, 1)}), garbage / "embedding_model.ckpt")
    with pytest.raises(EncoderError, match="missing key 'blocks.0.conv.conv.weight'"):
        load_encoder(f"ecapa_ssl:{garbage}")
    (tmp_path / "empty").mkdir()
    with pytest.raises(EncoderError, match="no embedding_model.ckpt and no CKPT"):
        load_encoder(f"ecapa_ssl:{tmp_path / 'empty'}")
    with pytest.raises(EncoderError, match="ecapa_ssl model not found"):
        load_encoder(f"ecapa_ssl:{tmp_path / 'nowhere'}")
