"""The Pretrainer's checkpoint files poured into the modules built from a hyperparams file, key by key.

A loadable is either a module node (its file holds that module's state dict)
or a ``torch.nn.ModuleList`` of module nodes (``[enc, ctc_lin]``: keys
``0.*``, ``1.*``). Every tensor of the built modules must come from a
loadable, and every file must hold exactly the keys and shapes of the modules
it fills; the first missing, unexpected or mis-shaped key is named.
Weight-normed convolutions may be stored the old way (``weight_g``/``weight_v``)
or as parametrizations (``parametrizations.weight.original0/1``); both load.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from voxanon.models.checkpoint import check_state_keys, load_checkpoint
from voxanon.models.model_files import looks_like, model_file_error
from voxanon.models.speechbrain.hparams import Node, SbFolderError

_PARAMETRIZED = (".parametrizations.weight.original0", ".parametrizations.weight.original1")
_LEGACY = (".weight_g", ".weight_v")


def read_state(path: Path) -> dict[str, torch.Tensor]:
    """A checkpoint file's state dict (tensors only), floating point as float32."""
    what, expected = "speechbrain checkpoint", "a state dict of tensors (a speechbrain .ckpt of a module)"
    todo = "copy the kit's folder again (its download script fetches every .ckpt)"
    state = load_checkpoint(path, what, SbFolderError, expected=expected, todo=todo)
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise model_file_error(SbFolderError, what, path, f"is {looks_like(state)}", expected=expected, todo=todo)
    return {k: v.float() if v.is_floating_point() else v for k, v in state.items()}


def file_naming(key: str, legacy: bool) -> str:
    """``key`` (a module's state-dict name) as a file spells it: with ``weight_g``/``weight_v`` if ``legacy``."""
    if legacy:
        for new, old in zip(_PARAMETRIZED, _LEGACY):
            if key.endswith(new):
                return key[: -len(new)] + old
    return key


def holders(files: dict[str, tuple[Path, object]], built: dict[int, tuple[nn.Module, object]]
            ) -> dict[Path, dict[str, nn.Module]]:
    """For each loadable file that holds modules, the built modules it fills by key prefix.

    ``built`` maps ``id(node)`` to ``(module, ...)`` (see :func:`voxanon.models.speechbrain.layers.build_layer`); loadables
    that are not modules (tokenizers, label encoders) are left to their users.
    """
    out: dict[Path, dict[str, nn.Module]] = {}
    for name, (path, obj) in files.items():
        if not isinstance(obj, Node):
            continue
        if obj.target == "torch.nn.ModuleList":
            nodes = obj.args[0] if obj.args and isinstance(obj.args[0], list) else []
            pairs = [(f"{i}.", node) for i, node in enumerate(nodes)]
        elif id(obj) in built:
            pairs = [("", obj)]
        else:
            continue
        for prefix, node in pairs:
            if id(node) not in built:
                raise SbFolderError(f"{path}: loadable {name!r} holds {getattr(node, 'target', node)!r}, which "
                                    "the model does not use; is the hyperparams file the kit's?")
            out.setdefault(path, {})[prefix] = built[id(node)][0]
    return out


def check_filled(model: nn.Module, where: Path) -> None:
    """Refuse a model (built on the meta device) with a tensor no checkpoint file filled."""
    left = next((k for k, v in model.state_dict().items() if v.is_meta), None)
    if left is not None:
        raise SbFolderError(f"{where}: no pretrainer loadable holds the weights of {left!r}; "
                            "is the hyperparams file the kit's?")


def fill(parts: dict[str, nn.Module], path: Path, state: dict[str, torch.Tensor]) -> None:
    """Assign ``state`` (the file at ``path``) to ``parts`` (modules by key prefix), checked key by key."""
    legacy = any(k.endswith(_LEGACY) for k in state)
    expected = {file_naming(prefix + k, legacy): (prefix, k, tuple(v.shape))
                for prefix, module in parts.items() for k, v in module.state_dict().items()}
    check_state_keys(state, {k: shape for k, (_, _, shape) in expected.items()}, str(path), SbFolderError,
                     "is this file the kit's checkpoint for this hyperparams file?")
    for prefix, module in parts.items():
        module.load_state_dict({k: state[key] for key, (p, k, _) in expected.items() if p == prefix},
                               strict=True, assign=True)
