"""The content-encoder interface: speech → frame-level content features from a chosen layer."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from voxanon.errors import ModelError


class ContentError(ModelError):
    """A content-encoder checkpoint that is missing, of the wrong layout or unusable; names the key at fault."""


class ContentEncoder(ABC):
    """Frame-level features of one layer of a speech encoder.

    Attributes
    ----------
    name : identifies weights and layer (used in cache keys and results)
    sample_rate : input rate the encoder expects (inputs are resampled to it)
    frame_rate : output frames per second
    dim : feature dimension
    layer : chosen layer (0 = the input embeddings, ``n_layers`` = the last)
    n_layers : number of transformer layers
    """

    name: str
    sample_rate: int
    frame_rate: float
    dim: int
    layer: int
    n_layers: int

    @abstractmethod
    def encode_batch(self, wavs: list[np.ndarray]) -> list[np.ndarray]:
        """``(T_i, dim)`` float32 features of each waveform (at :attr:`sample_rate`), any length."""

    def encode(self, wav: np.ndarray, sr: int) -> np.ndarray:
        """``(T, dim)`` features of one mono waveform at rate ``sr``."""
        from voxanon.audio.io import resample

        return self.encode_batch([resample(np.asarray(wav, dtype=np.float32), sr, self.sample_rate)])[0]

    def encode_segments(self, wavs):
        """Differentiable ``(B, T, dim)`` torch features of ``(B, N)`` equal-length 16 kHz segments, each encoded
        on its own (a short window, no padding to a long one): for training losses on short random segments."""
        raise ContentError(f"{type(self).__name__} cannot encode segments differentiably")

    def to(self, device) -> ContentEncoder:
        """Move the encoder's torch modules to ``device``; returns ``self``."""
        import torch

        for value in vars(self).values():
            if isinstance(value, torch.nn.Module):
                value.to(device)
        return self

    def check_layer(self, layer: int) -> int:
        """``layer`` if it exists (negative counts from the last), else ContentError."""
        if not -self.n_layers - 1 <= layer <= self.n_layers:
            raise ContentError(f"{type(self).__name__}: layer {layer} does not exist; choose 0..{self.n_layers}")
        return layer % (self.n_layers + 1)


def stitch_windows(per_window, n: int, win: int, hop: int):
    """``(n, D)`` frames from ``(K, >=win', D)`` windowed features whose starts are ``hop`` frames apart.

    Frame ``t`` is taken from the window whose centre is nearest, so every frame
    keeps at least ``(win - hop) / 2`` frames of context unless it lies at the input's own edge.
    Works on torch tensors (differentiable) of window features of length ``win``.
    """
    import torch

    t = torch.arange(n)
    which = torch.clamp(torch.div(t - (win - hop) // 2, hop, rounding_mode="floor"), 0, per_window.shape[0] - 1)
    return per_window[which, t - which * hop]
