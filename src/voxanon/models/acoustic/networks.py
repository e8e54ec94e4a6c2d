"""The acoustic-model architectures by ``kind``: ``conv`` (:class:`AcousticNet`) and ``dit`` (:class:`DiTNet`).

Both map (content, pitch, speaker) frames to HiFi-GAN log-mels and share the
features, the training loop and the model-file format; a file names its kind
(files without one are ``conv``).
"""

from __future__ import annotations

from collections.abc import Mapping

from torch import nn

from voxanon.errors import ConfigError
from voxanon.models.acoustic.dit import DiTConfig, DiTNet
from voxanon.models.acoustic.model import AcousticConfig, AcousticNet

#: kind -> (config class, network class)
NETWORKS: dict[str, tuple[type, type[nn.Module]]] = {"conv": (AcousticConfig, AcousticNet), "dit": (DiTConfig, DiTNet)}


def build_net(cfg) -> nn.Module:
    """A fresh network of the kind whose config ``cfg`` is."""
    for config_cls, net_cls in NETWORKS.values():
        if type(cfg) is config_cls:
            return net_cls(cfg)
    raise TypeError(f"no acoustic network takes a {type(cfg).__name__}")


def config_from_dict(kind: str, d: Mapping):
    """The config of ``kind`` saved as ``d``; ValueError on an unknown kind or key."""
    if kind not in NETWORKS:
        raise ConfigError(f"unknown network kind {kind!r} (known: {', '.join(NETWORKS)})")
    return NETWORKS[kind][0].from_dict(d)
