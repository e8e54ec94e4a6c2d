"""Load speechbrain's ECAPA-TDNN ``embedding_model.ckpt`` (e.g. ``spkrec-ecapa-voxceleb``) without speechbrain.

The checkpoint is a plain state dict whose names (``blocks.0.conv.conv.weight``,
``blocks.1.res2net_block.blocks.0.conv.conv.weight``, ``asp.tdnn.conv.conv.weight``,
``asp_bn.norm.running_mean``, ``fc.conv.weight``, ...) are those of
:class:`voxanon.models.speaker.ecapa.EcapaTdnn`. The architecture is read from the
tensor shapes (channels, kernel sizes, Res2Net scale, SE and attention sizes,
embedding size); dilations are not stored in the file and default to
speechbrain's ``[1, 2, 3, 4, 1]``. Convolutions pad by reflection and the
features are speechbrain's ``Fbank(n_mels=80)`` with sentence mean
normalisation, so embeddings equal speechbrain's ``encode_batch`` for each
utterance on its own.
"""

from __future__ import annotations

import os
import re

import torch

from voxanon.models.checkpoint import load_checkpoint
from voxanon.models.fbank import FbankConfig
from voxanon.models.model_files import looks_like, model_file_error
from voxanon.models.speaker.base import EncoderError, file_digest
from voxanon.models.speaker.ecapa import EcapaConfig, EcapaEncoder, EcapaTdnn


def config_from_state_dict(sd: dict[str, torch.Tensor], dilations: tuple[int, ...] | None = None) -> EcapaConfig:
    """The :class:`EcapaConfig` implied by a speechbrain ECAPA state dict's shapes."""
    def shape(key: str) -> tuple[int, ...]:
        if key not in sd:
            raise EncoderError(f"missing key {key!r}: not a speechbrain ECAPA-TDNN embedding_model.ckpt")
        return tuple(sd[key].shape)

    def count(pattern: str) -> int:                 # 1 + the highest index: a part missing a key is named, not dropped
        return 1 + max((int(m.group(1)) for k in sd if (m := re.match(pattern, k))), default=-1)

    first = shape("blocks.0.conv.conv.weight")
    channels, kernels = [first[0]], [first[2]]
    n_blocks = count(r"blocks\.(\d+)\.")
    if n_blocks == 1:
        raise EncoderError("no SE-Res2Net blocks (blocks.1.tdnn1...): not a speechbrain ECAPA-TDNN checkpoint")
    for i in range(1, n_blocks):
        channels.append(shape(f"blocks.{i}.tdnn1.conv.conv.weight")[0])
        kernels.append(shape(f"blocks.{i}.res2net_block.blocks.0.conv.conv.weight")[2])
    mfa = shape("mfa.conv.conv.weight")
    channels.append(mfa[0])
    kernels.append(mfa[2])
    scale = 1 + count(r"blocks\.1\.res2net_block\.blocks\.(\d+)\.")
    attention = shape("asp.tdnn.conv.conv.weight")
    n = len(channels)
    try:
        return EcapaConfig(
            n_mels=first[1],
            channels=tuple(channels),
            kernel_sizes=tuple(kernels),
            dilations=tuple(dilations) if dilations else (1, *range(2, n), 1),
            attention_channels=attention[0],
            res2net_scale=scale,
            se_channels=shape("blocks.1.se_block.conv1.conv.weight")[0],
            embedding_dim=shape("fc.conv.weight")[0],
            global_context=attention[1] == 3 * channels[-1],
            padding_mode="reflect",
        )
    except ValueError as exc:                          # shapes no ECAPA-TDNN has
        raise EncoderError(f"the tensor shapes describe no ECAPA-TDNN: {exc}") from exc


def load_state_dict_strict(model: torch.nn.Module, sd: dict[str, torch.Tensor], source: str) -> None:
    """Load ``sd`` into ``model``, raising EncoderError listing missing, unexpected or mis-shaped keys."""
    expected = model.state_dict()
    missing = [k for k in expected if k not in sd]
    unexpected = [k for k in sd if k not in expected]
    wrong = [f"{k} {tuple(sd[k].shape)} (expected {tuple(v.shape)})"
             for k, v in expected.items() if k in sd and tuple(sd[k].shape) != tuple(v.shape)]
    problems = []
    for label, keys in (("missing", missing), ("unexpected", unexpected), ("wrong shape", wrong)):
        if keys:
            problems.append(f"{len(keys)} {label}: {', '.join(keys[:5])}{' ...' if len(keys) > 5 else ''}")
    if problems:
        raise EncoderError(f"{source}: does not match the ECAPA-TDNN layout ({'; '.join(problems)})")
    model.load_state_dict(sd)


def load_speechbrain_ecapa(path: str | os.PathLike, device: str = "cpu",
                           dilations: tuple[int, ...] | None = None) -> EcapaEncoder:
    """Encoder from a speechbrain ECAPA-TDNN ``embedding_model.ckpt``."""
    what, expected = "speechbrain ECAPA checkpoint", "speechbrain's embedding_model.ckpt (a state dict of tensors)"
    todo = "point speechbrain: to such a file (best.pt of 'voxanon train attacker' is read by ecapa:)"
    sd = load_checkpoint(path, what, EncoderError, expected=expected, todo=todo)
    if not isinstance(sd, dict) or not sd or not all(isinstance(v, torch.Tensor) for v in sd.values()):
        raise model_file_error(EncoderError, what, path, f"is {looks_like(sd)}", expected=expected, todo=todo)
    try:
        cfg = config_from_state_dict(sd, dilations)
    except (EncoderError, IndexError) as exc:               # IndexError: a tensor of another rank
        raise model_file_error(EncoderError, what, path, f"does not fit: {exc}", expected=expected) from exc
    model = EcapaTdnn(cfg)
    load_state_dict_strict(model, sd, str(path))
    return EcapaEncoder(model, name=f"speechbrain-ecapa-{file_digest(path)}",
                        fbank=FbankConfig(n_mels=cfg.n_mels), device=device)
