"""transformers self-supervised speech encoders (WavLM, HuBERT, wav2vec 2.0), any layer.

For users who have the weights as a ``save_pretrained`` directory (no hub
access here: ``local_files_only``). Layer 0 is the CNN feature projection
(``hidden_states[0]``), layer ``i`` the output of transformer layer ``i``. Inputs
of different lengths are encoded one by one (these models were not trained with
padding masks in every variant, so padding could change the features); inputs
longer than ``max_seconds`` go in overlapping windows, each frame taken from
the window whose centre is nearest. The model comes from a directory
(:meth:`HfContent.from_dir`) or from a converter (:mod:`.unilm`); the
transformer layers above the chosen one are dropped from it (kNN-VC's layer 6
of WavLM-Large's 24 runs a quarter of the encoder).
"""

from __future__ import annotations

import math
import os

import numpy as np
import torch

from voxanon.models.content.base import ContentEncoder, ContentError, stitch_windows
from voxanon.models.model_files import short_reason

SAMPLE_RATE = 16000


class HfContent(ContentEncoder):
    """One hidden layer of a transformers ``WavLMModel``/``HubertModel``/``Wav2Vec2Model``."""

    sample_rate = SAMPLE_RATE

    def __init__(self, model, layer: int, name: str, *, max_seconds: float = 30.0,
                 overlap_seconds: float = 5.0) -> None:
        config = model.config
        self.model = model.eval()
        self.n_layers = config.num_hidden_layers
        self.layer = self.check_layer(layer)
        if self.layer < self.n_layers:          # later layers cannot change this one: run only those up to it
            model.encoder.layers = model.encoder.layers[: max(self.layer, 1)]
        self.dim = config.hidden_size
        stride = int(np.prod(config.conv_stride))
        self.frame_rate = SAMPLE_RATE / stride
        self.stride = stride
        self.name = f"{name}:{self.layer}"
        self.window = int(max_seconds * SAMPLE_RATE) // stride * stride
        self.hop = self.window - int(overlap_seconds * SAMPLE_RATE) // stride * stride

    @classmethod
    def from_dir(cls, model_dir: str | os.PathLike, layer: int, **kw) -> HfContent:
        """The encoder of a ``save_pretrained`` directory (``config.json`` + weights)."""
        try:
            from transformers import AutoConfig, AutoModel
        except ImportError as exc:
            raise ContentError("HF content encoders need transformers: pip install transformers") from exc
        model_dir = os.fspath(model_dir)
        if not os.path.isfile(os.path.join(model_dir, "config.json")):
            raise ContentError(f"{model_dir}: no config.json; pass a directory written by save_pretrained")
        config = AutoConfig.from_pretrained(model_dir, local_files_only=True)
        if config.model_type not in ("wavlm", "hubert", "wav2vec2"):
            raise ContentError(f"{model_dir}: model_type {config.model_type!r} is not wavlm, hubert or wav2vec2")
        try:
            model = AutoModel.from_pretrained(model_dir, local_files_only=True)
        except (OSError, RuntimeError, ValueError) as exc:
            raise ContentError(f"{model_dir}: cannot load the weights ({short_reason(exc)})") from exc
        return cls(model, layer, f"{config.model_type}:{os.path.basename(os.path.normpath(model_dir))}", **kw)

    def _layer(self, wav: torch.Tensor) -> torch.Tensor:
        out = self.model(wav[None], output_hidden_states=True)
        return out.hidden_states[self.layer][0]

    def encode_tensor(self, wav: torch.Tensor) -> torch.Tensor:
        """Differentiable ``(T, dim)`` features of one 16 kHz waveform."""
        if len(wav) <= self.window:
            return self._layer(wav)
        starts = [i * self.hop for i in range(math.ceil((len(wav) - self.window) / self.hop) + 1)]
        parts = [self._layer(wav[s:s + self.window]) for s in starts]
        n = starts[-1] // self.stride + parts[-1].shape[0]
        feats = torch.nn.utils.rnn.pad_sequence(parts, batch_first=True)
        return stitch_windows(feats, n, self.window // self.stride, self.hop // self.stride)

    def encode_segments(self, wavs: torch.Tensor) -> torch.Tensor:
        """Features of ``(B, N)`` equal-length segments (no padding, so no mask is needed)."""
        return self.model(wavs, output_hidden_states=True).hidden_states[self.layer]

    @torch.inference_mode()
    def encode_batch(self, wavs: list[np.ndarray]) -> list[np.ndarray]:
        return [self.encode_tensor(torch.from_numpy(np.asarray(w, dtype=np.float32))).numpy() for w in wavs]
