"""The float PyTorch port of the d-vector: dequantisation, agreement with ONNX Runtime, training, checkpoints."""

import numpy as np
import onnx
import pytest
import torch
from onnx import numpy_helper

from tests.helpers.dvector_data import SMALL, debian_sample, librivox_clips
from voxanon.audio.io import resample
from voxanon.audio.synthetic import speech_like
from voxanon.models.speaker import EncoderError, load_encoder
from voxanon.models.speaker.dvector import OnnxDVector
from voxanon.models.speaker.dvector_net import (
    FORMAT,
    DVectorNet,
    TorchDVector,
    dequantize,
    load_dvector_net,
    save_dvector,
)

torch.set_num_threads(1)
#: the port's utterance embeddings against the int8 ONNX model's on real speech (both L2-normalised)
MIN_COSINE, MAX_ABS = 0.997, 0.02


def test_dequantize_per_tensor_and_per_channel():
    q = np.array([[-128, 0, 127], [5, -5, 1]], dtype=np.int8)
    np.testing.assert_allclose(dequantize(q, np.float32(0.5), np.int8(0)), q * 0.5)
    scale, zero = np.array([0.1, 0.2, 0.3], dtype=np.float32), np.array([1, 0, -2], dtype=np.int8)
    expected = [[(int(q[r, c]) - int(zero[c])) * scale[c] for c in range(3)] for r in range(2)]
    np.testing.assert_allclose(dequantize(q, scale, zero), expected, rtol=1e-6)


def test_port_weights_are_the_exported_ones_within_half_a_step(small_quantised):
    net, path = small_quantised
    scales = [numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer if t.name.endswith("_scale")]
    half_step = max(float(s.max()) for s in scales) / 2
    port = DVectorNet.from_onnx(path)
    for key, value in net.state_dict().items():  # the gates come back in PyTorch's order
        diff = (port.state_dict()[key] - value).abs().max().item()
        assert diff <= half_step * 1.001, key
        if "bias" in key:
            assert diff < 1e-6, key


def test_port_follows_onnx_runtime_on_a_generated_model(small_quantised):
    _, path = small_quantised
    windows = np.random.default_rng(0).normal(-2, 1, (6, SMALL.window, SMALL.n_mels)).astype(np.float32)
    ref = OnnxDVector(path, threads=1).session.run(None, {"mel_window": windows})[0]
    with torch.no_grad():
        out = DVectorNet.from_onnx(path)(torch.from_numpy(windows)).numpy()
    cos = (ref * out).sum(1) / np.linalg.norm(ref, axis=1) / np.linalg.norm(out, axis=1)
    assert cos.min() > 0.99


@pytest.fixture(scope="module")
def real_port(real_model):
    return DVectorNet.from_onnx(real_model)


def test_port_matches_the_shipped_model_on_real_speech(real_model, real_port):
    wavs = [resample(w, sr, 16000) for _, w, sr in librivox_clips() + debian_sample(3)]
    onnx_emb = OnnxDVector(real_model, threads=1).embed(wavs, 16000)
    port_emb = TorchDVector(real_port, "port").embed(wavs, 16000)
    assert (onnx_emb * port_emb).sum(1).min() >= MIN_COSINE
    assert np.abs(onnx_emb - port_emb).max() <= MAX_ABS


def test_port_batch_equals_one_at_a_time(real_port):
    enc = TorchDVector(real_port, "port")
    wavs = [speech_like(d, f0=f, seed=s) for d, f, s in [(0.3, 110, 0), (2.5, 210, 1), (1.2, 150, 2)]]
    np.testing.assert_allclose(enc.embed(wavs, 16000), np.concatenate([enc.embed([w], 16000) for w in wavs]),
                               atol=1e-5)


def test_port_is_trainable_from_log_mels():
    net = DVectorNet(SMALL)
    windows = torch.randn(4, SMALL.window, SMALL.n_mels)
    loss = torch.nn.functional.normalize(net(windows), dim=1).sum(0).norm()
    loss.backward()
    assert all(p.requires_grad and p.grad is not None and p.grad.abs().sum() > 0 for p in net.parameters())


def test_checkpoint_round_trip(tmp_path):
    torch.manual_seed(1)
    net = DVectorNet(SMALL)
    path = tmp_path / "dv.pt"
    save_dvector(path, net, epoch=3, source="test")
    enc = load_encoder(f"dvector:{path}")
    assert isinstance(enc, TorchDVector) and enc.name.startswith("dvector-") and enc.cfg == SMALL
    wavs = [speech_like(1.1, seed=0), speech_like(0.2, seed=1)]
    np.testing.assert_array_equal(enc.embed(wavs, 16000), TorchDVector(net, "same").embed(wavs, 16000))
    assert load_dvector_net(path)[1] == {"epoch": 3, "source": "test"}


def _ckpt(net, **changes):
    ckpt = {"format": FORMAT, "config": dict(vars(net.cfg)), "model": net.state_dict(), "meta": {}}
    for key, value in changes.items():
        if value is None:
            ckpt.pop(key)
        else:
            ckpt[key] = value
    return ckpt


@pytest.mark.parametrize("make, named", [
    (lambda n: _ckpt(n, format=None), "missing key 'format'"),
    (lambda n: _ckpt(n, format="voxanon-ecapa"), "key 'format' is 'voxanon-ecapa'"),
    (lambda n: _ckpt(n, extra=1), "unexpected key 'extra'"),
    (lambda n: _ckpt(n, config={**vars(n.cfg), "dropout": 0.1}), "config: unexpected key 'dropout'"),
    (lambda n: _ckpt(n, config={k: v for k, v in vars(n.cfg).items() if k != "stride"}), "missing key 'stride'"),
    (lambda n: _ckpt(n, config={**vars(n.cfg), "n_fft": -1}), "n_fft must be a positive"),
    (lambda n: _ckpt(n, model={k: v for k, v in n.state_dict().items() if k != "lstm.weight_hh_l1"}),
     "missing key 'lstm.weight_hh_l1'"),
    (lambda n: _ckpt(n, model={**n.state_dict(), "proj.linear_layer.bias": torch.zeros(5)}),
     "'proj.linear_layer.bias' has shape"),
    (lambda n: {"model_state": n.state_dict()}, "missing key 'format'"),
    (lambda n: [1, 2], "holds a list"),
])
def test_wrong_checkpoints_are_refused_naming_the_key(tmp_path, make, named):
    path = tmp_path / "bad.pt"
    torch.save(make(DVectorNet(SMALL)), path)
    with pytest.raises(EncoderError, match="bad.pt") as err:
        load_encoder(f"dvector:{path}")
    assert named in str(err.value)


def test_unreadable_or_missing_checkpoint(tmp_path):
    (tmp_path / "junk.pt").write_bytes(b"\x00junk")
    with pytest.raises(EncoderError, match="cannot be read"):
        load_encoder(f"dvector:{tmp_path / 'junk.pt'}")
    with pytest.raises(EncoderError, match="not found"):
        load_encoder(f"dvector:{tmp_path / 'absent.pt'}")
