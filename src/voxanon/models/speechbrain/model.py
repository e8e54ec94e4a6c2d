"""The modules named in a speechbrain hyperparams file, built and filled from the folder's checkpoint files."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import torch
from torch import nn

from voxanon.digest import file_digest
from voxanon.models.speechbrain.hparams import Node, file_of, loadable_files
from voxanon.models.speechbrain.layers import build_layer
from voxanon.models.speechbrain.wav2vec2 import LOBES, build_lobe
from voxanon.models.speechbrain.weights import check_filled, fill, holders, read_state


def _lobes(value: object) -> Iterator[Node]:
    """The wav2vec2 lobe nodes in ``value`` and below it."""
    if isinstance(value, Node):
        if value.target in LOBES:
            yield value
            return
        for sub in [*value.args, *value.kwargs.values()]:
            yield from _lobes(sub)
    elif isinstance(value, list):
        for sub in value:
            yield from _lobes(sub)


def load_modules(folder: Path, hparams: dict, where: Path, nodes: list[Node]
                 ) -> tuple[list[nn.Module], dict[str, tuple[Path, object]]]:
    """The modules of ``nodes`` with the weights of the folder's Pretrainer loadables, on the CPU, in eval mode.

    Returns the modules and the loadable files (``{name: (path, object)}``, for the callers' tokenizers and label
    encoders). Every tensor of every module must come from a file, key by key (see
    :mod:`voxanon.models.speechbrain.weights`).
    """
    files = loadable_files(folder, hparams, where)
    built: dict[int, tuple[nn.Module, int | None]] = {}
    states: dict[Path, dict[str, torch.Tensor]] = {}
    with torch.device("meta"):
        for lobe in _lobes(nodes):
            path = file_of(files, lobe, where, "wav2vec2 lobe")
            states[path] = read_state(path)
            built[id(lobe)] = build_lobe(lobe, folder, states[path], where)
        modules = [build_layer(node, None, where, built)[0] for node in nodes]
    for path, parts in holders(files, built).items():
        fill(parts, path, states[path] if path in states else read_state(path))
    for module in modules:
        check_filled(module, where)
        module.eval()
    return modules, files


def model_id(folder: Path, where: Path, files: dict[str, tuple[Path, object]]) -> str:
    """``<folder name>@<digest>``: the model folder (a ``CKPT<n>`` folder by its parent's name) and a digest of its
    hyperparams file and loadable files, for cache keys."""
    name = folder.resolve().parent.name if folder.name.startswith("CKPT") else folder.resolve().name
    digests = "".join(file_digest(p, 64) for p in [where, *(p for p, _ in files.values())])
    return f"{name}@{hashlib.sha256(digests.encode()).hexdigest()[:12]}"
