"""speechbrain's small layers with its parameter names, built from hyperparams nodes.

Each class holds its torch layer under speechbrain's attribute name, so a
speechbrain state dict loads into it key for key (speechbrain 0.5.16 and 1.x
``nnet/linear.py``, ``nnet/normalization.py``, ``nnet/activations.py``,
``nnet/containers.py``, ``lobes/models/VanillaNN.py``):

- ``Linear``: ``w.weight``, ``w.bias``;
- ``BatchNorm1d``: ``norm.weight``, ``norm.bias``, ``norm.running_mean``,
  ``norm.running_var``, ``norm.num_batches_tracked``, over the last axis of
  ``(batch, time, channels)``;
- ``Sequential``: its layers by name (``<name>.w.weight``), unnamed ones by
  position; ``VanillaNN(dnn_blocks=n)`` is a Sequential of ``linear``, ``act``,
  ``linear_0``, ``act_0``, ``linear_1`` ... (speechbrain appends ``_<i>`` to a
  name already taken);
- ``Softmax(apply_log)``: (log-)softmax over the last axis.

Dropout layers are kept and are the identity in evaluation mode.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from voxanon.models.speechbrain.hparams import Node, SbFolderError

LINEAR = "speechbrain.nnet.linear.Linear"
BATCHNORM = "speechbrain.nnet.normalization.BatchNorm1d"
SOFTMAX = "speechbrain.nnet.activations.Softmax"
VANILLA_NN = "speechbrain.lobes.models.VanillaNN.VanillaNN"
SEQUENTIAL = ("speechbrain.nnet.containers.Sequential", "speechbrain.nnet.containers.LengthsCapableSequential")
#: parameter-free torch activations a hyperparams file may name
ACTIVATIONS = ("LeakyReLU", "ReLU", "GELU", "Tanh", "Sigmoid", "ELU", "SiLU")


class Linear(nn.Module):
    """``speechbrain.nnet.linear.Linear``: an ``nn.Linear`` held as ``w``."""

    def __init__(self, n_in: int, n_out: int, bias: bool = True):
        super().__init__()
        self.w = nn.Linear(n_in, n_out, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w(x)


class BatchNorm1d(nn.Module):
    """``speechbrain.nnet.normalization.BatchNorm1d``: ``nn.BatchNorm1d`` held as ``norm``, on the last axis."""

    def __init__(self, n: int, eps: float = 1e-5, affine: bool = True):
        super().__init__()
        self.norm = nn.BatchNorm1d(n, eps=eps, affine=affine)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x.transpose(-1, 1)).transpose(1, -1)


class Softmax(nn.Module):
    """``speechbrain.nnet.activations.Softmax``: softmax, or log-softmax, over the last axis."""

    def __init__(self, apply_log: bool = False):
        super().__init__()
        self.apply_log = apply_log

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=-1) if self.apply_log else torch.softmax(x, dim=-1)


class Chain(nn.ModuleDict):
    """speechbrain's ``Sequential``: named layers applied in order."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.values():
            x = layer(x)
        return x


def _last(shape: object) -> int | None:
    return int(shape[-1]) if isinstance(shape, list) and shape and shape[-1] is not None else None


def _refuse(node: Node, where: Path, option: str) -> None:
    raise SbFolderError(f"{where}: {node.target} with {option} is not supported")


def _size(node: Node, n_in: int | None, where: Path) -> int:
    size = node.kwargs.get("input_size") or _last(node.kwargs.get("input_shape")) or n_in
    if size is None:
        raise SbFolderError(f"{where}: cannot tell the input size of {node.target} (no input_size/input_shape)")
    return int(size)


def _activation(node: Node | None, where: Path) -> nn.Module:
    if node is None:
        return nn.LeakyReLU()
    if not (node.target.startswith("torch.nn.") and node.name in ACTIVATIONS):
        raise SbFolderError(f"{where}: activation {node.target!r} is not supported (torch.nn.{'/'.join(ACTIVATIONS)})")
    return getattr(nn, node.name)(**node.kwargs)


def _vanilla_nn(node: Node, where: Path) -> tuple[nn.Module, int]:
    n = _size(node, None, where)
    neurons, chain = int(node.kwargs.get("dnn_neurons", 512)), Chain()
    for block in range(int(node.kwargs.get("dnn_blocks", 2))):
        suffix = f"_{block - 1}" if block else ""
        chain[f"linear{suffix}"] = Linear(n, neurons)
        chain[f"act{suffix}"] = _activation(node.kwargs.get("activation"), where)
        n = neurons
    return chain, n


def build_layer(node: Node, n_in: int | None, where: Path, built: dict[int, tuple[nn.Module, int | None]]
                ) -> tuple[nn.Module, int | None]:
    """The module a layer node stands for, given the size of its input; with the size of its output.

    ``built`` maps ``id(node)`` to modules built so far (or given, e.g. a wav2vec2 lobe): a node found there is
    reused, a new one is added, so the weights of every node can be found later. ``where`` names the
    hyperparams file in errors (an unsupported layer or option is refused).
    """
    if id(node) not in built:
        built[id(node)] = _build(node, n_in, where, built)
    return built[id(node)]


def _build(node: Node, n_in: int | None, where: Path, built: dict) -> tuple[nn.Module, int | None]:
    kw = node.kwargs
    if node.target == LINEAR:
        if kw.get("max_norm") is not None or kw.get("combine_dims"):
            _refuse(node, where, "max_norm or combine_dims")
        n_out = int(kw["n_neurons"])
        return Linear(_size(node, n_in, where), n_out, bool(kw.get("bias", True))), n_out
    if node.target == BATCHNORM:
        if kw.get("combine_batch_time") or kw.get("skip_transpose") or kw.get("track_running_stats") is False:
            _refuse(node, where, "combine_batch_time, skip_transpose or without running statistics")
        size = _size(node, n_in, where)
        return BatchNorm1d(size, float(kw.get("eps", 1e-5)), bool(kw.get("affine", True))), size
    if node.target == SOFTMAX:
        if kw.get("dim", -1) != -1:
            _refuse(node, where, f"dim={kw['dim']}")
        return Softmax(bool(kw.get("apply_log", False))), n_in
    if node.target == VANILLA_NN:
        return _vanilla_nn(node, where)
    if node.target in SEQUENTIAL:
        n, chain = _last(kw.get("input_shape")) or n_in, Chain()
        layers = [(str(i), v) for i, v in enumerate(node.args)] + [(k, v) for k, v in kw.items() if k != "input_shape"]
        for name, sub in layers:
            if not isinstance(sub, Node):
                raise SbFolderError(f"{where}: layer {name!r} of {node.target} is not a !new:/!name: entry")
            chain[name], n = build_layer(sub, n, where, built)
        return chain, n
    if node.target == "torch.nn.Dropout":
        return nn.Dropout(**kw), n_in
    if node.target.startswith("torch.nn.") and node.name in ACTIVATIONS:
        return _activation(node, where), n_in
    raise SbFolderError(f"{where}: layer {node.target!r} is not supported (speechbrain Linear, BatchNorm1d, "
                        f"Softmax, Sequential, VanillaNN; torch.nn Dropout and {', '.join(ACTIVATIONS)})")
