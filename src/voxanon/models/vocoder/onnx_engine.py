"""HiFi-GAN generators run by ONNX Runtime: exported once per set of weights, cached on disk.

ONNX Runtime's convolutions are faster than PyTorch's on one core for the
universal generator (docs/experiments/knnvc.md, "HiFi-GAN V1 universal on one CPU core"), with the same output
to float rounding. The generator (weight norm already folded) is exported with
every 1-D convolution written as a ``(1, k)`` 2-D one, because ONNX Runtime
runs 2-D convolutions with its blocked (NCHWc) kernels (graph optimisation
level ALL), with the LeakyReLU that follows a convolution fused into it; 1-D
convolutions do not get those kernels and run slower (same page).
The export has a dynamic frame axis and goes to
``$VOXANON_CACHE/vocoder/hifigan-<digest>.onnx`` (default cache
``~/.cache/voxanon``), where the digest hashes the config and every weight: a
different checkpoint gets a different file, the same weights reuse it. Exporting
needs the ``onnx`` package; running a cached export needs only ``onnxruntime``.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import os
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

from voxanon.models.model_files import model_file_error, onnx_reason
from voxanon.models.vocoder.base import VocoderError

#: bump when the exported graph changes (input/output names, opset, export settings)
EXPORT_FORMAT = "2"
OPSET = 17
ENGINES = ("auto", "torch", "onnx")


def cache_dir() -> Path:
    """``$VOXANON_CACHE/vocoder`` or ``~/.cache/voxanon/vocoder``."""
    return Path(os.environ.get("VOXANON_CACHE") or Path.home() / ".cache" / "voxanon") / "vocoder"


def onnx_available() -> bool:
    """Whether both ONNX Runtime (to run) and ``onnx`` (to export) are installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))


def resolve_engine(engine: str) -> str:
    """``torch`` or ``onnx``: ``auto`` is ONNX Runtime when it is installed, else PyTorch."""
    if engine not in ENGINES:
        raise VocoderError(f"unknown HiFi-GAN engine {engine!r}; use one of {', '.join(ENGINES)}")
    if engine == "auto":
        return "onnx" if onnx_available() else "torch"
    return engine


def weights_digest(generator: torch.nn.Module) -> str:
    """Hex digest of the generator's config and weights (names, shapes and values)."""
    h = hashlib.sha256(f"{EXPORT_FORMAT}|{OPSET}|{generator.cfg!r}".encode())
    for key, value in generator.state_dict().items():
        h.update(f"{key}{tuple(value.shape)}".encode())
        h.update(np.ascontiguousarray(value.detach().float().numpy()).data)
    return h.hexdigest()[:20]


def _convs_to_2d(module: nn.Module) -> None:
    """Replace, in place, every ``Conv1d``/``ConvTranspose1d`` below ``module`` by its ``(1, k)`` 2-D equivalent."""
    for name, child in module.named_children():
        if isinstance(child, nn.Conv1d):
            new = nn.Conv2d(child.in_channels, child.out_channels, (1, child.kernel_size[0]), (1, child.stride[0]),
                            (0, child.padding[0]), (1, child.dilation[0]))
        elif isinstance(child, nn.ConvTranspose1d):
            new = nn.ConvTranspose2d(child.in_channels, child.out_channels, (1, child.kernel_size[0]),
                                     (1, child.stride[0]), (0, child.padding[0]))
        else:
            _convs_to_2d(child)
            continue
        new.weight.data, new.bias.data = child.weight.data.unsqueeze(2), child.bias.data
        setattr(module, name, new)


class Conv2dGenerator(nn.Module):
    """A generator computed with 2-D convolutions on ``(B, C, 1, T)``: same input, output and result."""

    def __init__(self, generator: nn.Module) -> None:
        super().__init__()
        self.lin_pre = generator.lin_pre
        self.body = copy.deepcopy(generator)
        self.body.lin_pre = None
        _convs_to_2d(self.body)

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        if self.lin_pre is not None:
            mel = self.lin_pre(mel.transpose(1, 2)).transpose(1, 2)
        return self.body(mel.unsqueeze(2)).squeeze(2)


def export(generator: torch.nn.Module, path: Path) -> None:
    """Write the generator to ``path`` as ONNX (input ``mel`` ``(1, C, frames)``, output ``wav``), atomically."""
    if importlib.util.find_spec("onnx") is None:
        raise VocoderError("exporting HiFi-GAN to ONNX needs the onnx package: run tools/setup.sh "
                           "(or pip install 'voxanon[models]'), or use engine='torch'")
    cfg = generator.cfg
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # the TorchScript exporter: needs no onnxscript
            torch.onnx.export(Conv2dGenerator(generator).eval().requires_grad_(False), (torch.zeros(1, cfg.hubert_dim or cfg.num_mels, 32),), str(tmp),
                              input_names=["mel"], output_names=["wav"], opset_version=OPSET,
                              dynamic_axes={"mel": {2: "frames"}, "wav": {2: "samples"}}, dynamo=False)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


class OnnxGenerator:
    """A cached ONNX export of a generator, called like it: ``(1, C, T)`` tensor → ``(1, 1, T * hop)`` tensor."""

    def __init__(self, generator: torch.nn.Module, threads: int = 0) -> None:
        try:
            import onnxruntime as ort
        except ImportError:
            raise VocoderError("engine='onnx' needs onnxruntime: run tools/setup.sh "
                               "(or pip install 'voxanon[models]'), or use engine='torch'") from None
        self.path = cache_dir() / f"hifigan-{weights_digest(generator)}.onnx"
        if not self.path.exists():
            export(generator, self.path)
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        threads = threads or int(os.environ.get("OMP_NUM_THREADS", "0") or 0)  # a corpus worker's share
        if threads > 0:
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(str(self.path), opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - a truncated or foreign file: say which, and how to fix it
            raise model_file_error(VocoderError, "cached HiFi-GAN export", self.path,
                                   f"cannot be loaded ({onnx_reason(self.path, exc)})",
                                   todo="delete it to export again") from exc

    def __call__(self, mel: torch.Tensor) -> torch.Tensor:
        wav = self.session.run(None, {"mel": np.ascontiguousarray(mel.numpy(), dtype=np.float32)})[0]
        return torch.from_numpy(wav)
