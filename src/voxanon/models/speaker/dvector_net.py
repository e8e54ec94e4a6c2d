"""A trainable float PyTorch port of the d-vector network, with weights dequantised from its int8 ONNX model.

:class:`DVectorNet` is ``nn.LSTM(40, 768, 3, batch_first=True)`` and a linear projection of the last
step's output to 256 (parameter names ``lstm.*`` and ``proj.linear_layer.*``, as the ONNX initialiser
``proj.linear_layer.weight`` and the upstream ``embedder.pt`` name them). :meth:`DVectorNet.from_onnx`
reads each ``DynamicQuantizeLSTM`` and the projection's ``MatMulInteger`` of the graph described in
:mod:`voxanon.models.speaker.dvector`, dequantises the int8 weights, ``(q - zero_point) * scale`` with
one scale per tensor or per output channel as the graph stores them, and reorders the gates from ONNX's
i, o, f, c to PyTorch's i, f, g, o.

The port uses the dequantised weights in float; ONNX Runtime also quantises the activations (uint8, one
scale per batch and step), so the two differ a little. On real recorded speech (the 159 Debian clips of
:mod:`voxanon.data.debian_clips` and the 3 LibriVox test clips, each utterance on its own) the port's
utterance embeddings (both L2-normalised) have a cosine of at least 0.9991 (mean 0.9997) to the ONNX
model's, and no coordinate differs by more than 0.0103; ``tests/models/speaker/test_dvector_net.py``
holds it to cosine >= 0.997 and 0.02 on 24 of those clips.

Checkpoints of a (fine-tuned) port, written by :func:`save_dvector` and read by :func:`load_dvector`
(``load_encoder("dvector:<checkpoint.pt>")``), are ``{"format": "voxanon-dvector/1", "config":
<DVectorConfig fields>, "model": <state dict>, "meta": {...}}``.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np
import torch
from torch import nn

from voxanon.models.checkpoint import check_state_keys, load_checkpoint, save_atomic
from voxanon.models.model_files import model_file_error, short_reason
from voxanon.models.speaker.base import EncoderError, file_digest
from voxanon.models.speaker.dvector import (
    HOW_TO_INSTALL,
    DVectorConfig,
    DVectorEncoder,
    config_from_metadata,
    model_path,
)

FORMAT = "voxanon-dvector/1"
CHECKPOINT_KEYS = ("format", "config", "model", "meta")
#: windows per forward pass of :class:`TorchDVector`
_CHUNK = 256


class _Projection(nn.Module):
    """The last LSTM output to the embedding (a module of its own for the upstream parameter names)."""

    def __init__(self, hidden: int, dim: int) -> None:
        super().__init__()
        self.linear_layer = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear_layer(x)


class DVectorNet(nn.Module):
    """The d-vector LSTM: ``(batch, window, n_mels)`` log-mel windows to raw ``(batch, emb_dim)`` embeddings."""

    def __init__(self, cfg: DVectorConfig = DVectorConfig()) -> None:
        super().__init__()
        self.cfg = cfg
        self.lstm = nn.LSTM(cfg.n_mels, cfg.lstm_hidden, cfg.lstm_layers, batch_first=True)
        self.proj = _Projection(cfg.lstm_hidden, cfg.emb_dim)

    def forward(self, windows: torch.Tensor) -> torch.Tensor:
        """Unnormalised embedding of each window (the ONNX model's ``embedding``)."""
        out, _ = self.lstm(windows)
        return self.proj(out[:, -1])

    @classmethod
    def from_onnx(cls, path: str | os.PathLike | None = None) -> "DVectorNet":
        """The port of an int8 ONNX d-vector (default :func:`~voxanon.models.speaker.dvector.model_path`)."""
        import onnx

        path = Path(path) if path is not None else model_path()
        try:
            model = onnx.load(str(path))
        except Exception as exc:  # noqa: BLE001 - any parse failure is a bad file
            raise model_file_error(EncoderError, "d-vector model", path, f"cannot be read "
                                   f"({short_reason(exc)})", expected="the int8 ONNX d-vector", todo=HOW_TO_INSTALL
                                   ) from exc
        cfg = config_from_metadata({p.key: p.value for p in model.metadata_props}, str(path))
        net = cls(cfg)
        state = onnx_state_dict(model.graph, cfg, str(path))
        check_state_keys(state, {k: tuple(v.shape) for k, v in net.state_dict().items()}, str(path), EncoderError,
                         "the graph's layer sizes differ from its metadata")
        net.load_state_dict(state)
        return net


def dequantize(q: np.ndarray, scale: np.ndarray, zero_point: np.ndarray) -> np.ndarray:
    """``(q - zero_point) * scale`` in float32; a per-channel scale and zero point run along the last axis."""
    return ((q.astype(np.float32) - np.asarray(zero_point, dtype=np.float32)) * scale).astype(np.float32)


def _ifgo(rows: np.ndarray) -> np.ndarray:
    """Gate blocks along axis 0 from ONNX's i, o, f, c to PyTorch's i, f, g (= c), o."""
    i, o, f, c = np.split(rows, 4, axis=0)
    return np.concatenate([i, f, c, o])


def onnx_state_dict(graph, cfg: DVectorConfig, where: str) -> dict[str, torch.Tensor]:
    """:class:`DVectorNet`'s state dict from a quantised d-vector graph (``onnx.GraphProto``)."""
    from onnx import helper, numpy_helper

    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}

    def init(name: str, what: str) -> np.ndarray:
        if name not in inits:
            raise EncoderError(f"{where}: {what} {name!r} is not a constant of the graph; not a quantised d-vector")
        return inits[name]

    lstms = [n for n in graph.node if n.op_type == "DynamicQuantizeLSTM"]
    if len(lstms) != cfg.lstm_layers:
        raise EncoderError(f"{where}: {len(lstms)} DynamicQuantizeLSTM nodes, the metadata says "
                           f"{cfg.lstm_layers} layers; not a quantised d-vector")
    state = {}
    for layer, node in enumerate(lstms):
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        ins = [*node.input, *[""] * (12 - len(node.input))]
        if attrs.get("direction", b"forward") != b"forward" or attrs.get("input_forget", 0) or ins[4] or ins[7] \
                or {"activations", "clip"} & set(attrs):
            raise EncoderError(f"{where}: LSTM {node.name!r} is not a plain forward LSTM (direction, coupled "
                               "gates, sequence lengths, peepholes, activations or clip); the port cannot run it")
        w = dequantize(init(ins[1], "weight")[0], init(ins[8], "scale")[0], init(ins[9], "zero point")[0])
        r = dequantize(init(ins[2], "weight")[0], init(ins[10], "scale")[0], init(ins[11], "zero point")[0])
        bias = init(ins[3], "bias")[0]
        hidden = r.shape[0]
        state[f"lstm.weight_ih_l{layer}"] = _ifgo(w.T)
        state[f"lstm.weight_hh_l{layer}"] = _ifgo(r.T)
        state[f"lstm.bias_ih_l{layer}"] = _ifgo(bias[:4 * hidden])
        state[f"lstm.bias_hh_l{layer}"] = _ifgo(bias[4 * hidden:])
    state.update(_projection(graph, init, where))
    return {k: torch.tensor(v) for k, v in state.items()}


def _projection(graph, init, where: str) -> dict[str, np.ndarray]:
    """The dequantised projection: ``MatMulInteger`` weight, the scale its output is multiplied by, the bias."""
    matmuls = [n for n in graph.node if n.op_type == "MatMulInteger"]
    if len(matmuls) != 1:
        raise EncoderError(f"{where}: {len(matmuls)} MatMulInteger nodes, expected one (the projection)")
    a, b, _, b_zero = [*matmuls[0].input, "", ""][:4]
    producer = {out: n for n in graph.node for out in n.output}
    a_scale = producer[a].output[1] if a in producer and producer[a].op_type == "DynamicQuantizeLinear" else None
    scales = [i for n in graph.node if n.op_type == "Mul" and a_scale in n.input for i in n.input if i != a_scale]
    biases = [i for n in graph.node if n.op_type == "Add" for i in n.input if i in {t.name for t in graph.initializer}]
    if len(scales) != 1 or len(biases) != 1:
        raise EncoderError(f"{where}: cannot find the projection's weight scale and bias next to its MatMulInteger")
    zero = init(b_zero, "zero point") if b_zero else np.zeros((), dtype=np.int8)
    weight = dequantize(init(b, "weight"), init(scales[0], "scale"), zero)
    return {"proj.linear_layer.weight": weight.T, "proj.linear_layer.bias": init(biases[0], "bias")}


class TorchDVector(DVectorEncoder):
    """:class:`DVectorEncoder` over a :class:`DVectorNet`: the windows of a whole batch go through it together."""

    def __init__(self, net: DVectorNet, name: str, device: str = "cpu") -> None:
        super().__init__(net.cfg, name)
        self.net, self.device = net.to(device).eval(), device

    @torch.inference_mode()
    def window_embeddings(self, windows: list[np.ndarray]) -> list[np.ndarray]:
        """All windows in passes of at most 256, split back per utterance."""
        flat = np.concatenate(windows)
        out = np.concatenate([self.net(torch.from_numpy(flat[s:s + _CHUNK]).to(self.device)).cpu().numpy()
                              for s in range(0, len(flat), _CHUNK)])
        return np.split(out, np.cumsum([len(w) for w in windows])[:-1])


def save_dvector(path: str | os.PathLike, net: DVectorNet, **meta) -> None:
    """Write a :class:`DVectorNet` checkpoint atomically; ``meta`` (plain values) is kept under ``"meta"``."""
    save_atomic({"format": FORMAT, "config": dataclasses.asdict(net.cfg), "model": net.state_dict(),
                 "meta": meta}, path)


def load_dvector_net(path: str | os.PathLike) -> tuple[DVectorNet, dict]:
    """The network and ``meta`` of a :func:`save_dvector` checkpoint; EncoderError naming the first wrong key."""
    what = f"d-vector checkpoint {os.fspath(path)}"
    hint = "not a voxanon d-vector checkpoint (write one with save_dvector)"
    ckpt = load_checkpoint(path, "d-vector checkpoint", EncoderError, expected=f"a {FORMAT!r} checkpoint",
                           todo="point dvector: to a file written by save_dvector (or a d-vector fine-tuning)")
    if not isinstance(ckpt, dict):
        raise EncoderError(f"{what}: holds a {type(ckpt).__name__}, not a dict; {hint}")
    _check_keys(ckpt, CHECKPOINT_KEYS, what, hint)
    if ckpt["format"] != FORMAT:
        raise EncoderError(f"{what}: key 'format' is {ckpt['format']!r}, expected {FORMAT!r}; {hint}")
    fields = [f.name for f in dataclasses.fields(DVectorConfig)]
    if not isinstance(ckpt["config"], dict) or not isinstance(ckpt["model"], dict):
        raise EncoderError(f"{what}: 'config' and 'model' must be dicts; {hint}")
    _check_keys(ckpt["config"], fields, f"{what}: config", hint)
    try:
        net = DVectorNet(DVectorConfig(**ckpt["config"]))
    except ValueError as exc:
        raise EncoderError(f"{what}: config: {exc}; {hint}") from None
    check_state_keys(ckpt["model"], {k: tuple(v.shape) for k, v in net.state_dict().items()}, what, EncoderError,
                     "the state dict does not fit its config")
    net.load_state_dict(ckpt["model"])
    return net, ckpt["meta"]


def _check_keys(d: dict, expected, what: str, hint: str) -> None:
    """EncoderError naming the first key of ``expected`` missing from ``d``, else the first extra one."""
    missing = [k for k in expected if k not in d]
    extra = [k for k in d if k not in expected]
    if missing or extra:
        key, how = (missing[0], "missing") if missing else (extra[0], "unexpected")
        raise EncoderError(f"{what}: {how} key {key!r}; {hint}")


def load_dvector(path: str | os.PathLike, device: str = "cpu") -> TorchDVector:
    """Encoder from a :func:`save_dvector` checkpoint, named by the file's digest."""
    net, _ = load_dvector_net(path)
    return TorchDVector(net, name=f"dvector-{file_digest(path)}", device=device)
