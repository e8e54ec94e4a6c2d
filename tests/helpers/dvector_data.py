"""Data of the d-vector tests: real clips, and small quantised d-vectors generated the way the shipped one was
made (PyTorch export, then ONNX Runtime's dynamic int8 quantisation)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import torch

from tests.helpers.audio import LIBRIVOX
from voxanon.audio.io import load_audio
from voxanon.data.debian_clips import find_clips
from voxanon.models.speaker.dvector import CONFIG_KEY, DVectorConfig
from voxanon.models.speaker.dvector_net import DVectorNet

#: a d-vector small enough to export and quantise in a second
SMALL = DVectorConfig(n_mels=8, window=10, stride=5, lstm_hidden=16, lstm_layers=2, emb_dim=12)


def librivox_clips() -> list[tuple[str, np.ndarray, int]]:
    """The three LibriVox test clips (one reader): ``(name, waveform, rate)``."""
    return [(p.stem, *load_audio(p)) for p in sorted(LIBRIVOX.glob("*.flac"))]


def debian_sample(per_speaker: int = 3) -> list[tuple[str, np.ndarray, int]]:
    """Up to ``per_speaker`` clips of each Debian speaker (none where the packages are not installed)."""
    out, seen = [], {}
    for clip in find_clips():
        if seen.setdefault(clip.speaker, 0) < per_speaker:
            seen[clip.speaker] += 1
            out.append((clip.utt, *load_audio(clip.path)))
    return out


def write_quantised(net: DVectorNet, path: Path, per_channel: bool, metadata: dict | None = None) -> Path:
    """Export ``net`` to ONNX, quantise it dynamically to int8 and add the d-vector metadata."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    float_path = path.with_suffix(".float.onnx")
    windows = torch.zeros(2, net.cfg.window, net.cfg.n_mels)
    with warnings.catch_warnings():  # the TorchScript exporter's deprecation and tracing notes
        warnings.simplefilter("ignore")
        torch.onnx.export(net.eval(), (windows,), str(float_path), input_names=["mel_window"],
                          output_names=["embedding"], opset_version=17, dynamo=False,
                          dynamic_axes={"mel_window": {0: "batch"}, "embedding": {0: "batch"}})
    quantize_dynamic(str(float_path), str(path), per_channel=per_channel, weight_type=QuantType.QInt8)
    model = onnx.load(str(path))
    props = metadata if metadata is not None else {
        "model_kind": "dvector", "schema_version": "1", CONFIG_KEY: json.dumps(net.cfg.metadata())}
    onnx.helper.set_model_props(model, props)
    onnx.save(model, str(path))
    return path
