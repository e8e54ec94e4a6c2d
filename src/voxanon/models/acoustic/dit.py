"""The F3-VA backbone: a Diffusion Transformer (DiT) conditional flow-matching model on HiFi-GAN log-mels.

Inputs per frame (all at the vocoder's frame rate): the noisy mel ``x_t``, the
(per-utterance normalised, optionally k-means vector-quantised) content frames
and the normalised pitch (semitones re 440 Hz minus the utterance median, and
voicing); each is projected to the model width and the projections are summed,
then mixed locally by a depthwise convolution. ``depth`` transformer blocks
follow, each with self-attention whose queries and keys carry rotary position
embeddings (RoPE) and adaLN-Zero conditioning (per-block shift, scale and gate
from the sum of a flow-time embedding and the projected speaker embedding).

Training (conditional flow matching, Lipman et al. 2023): with ``x1`` the
target mel standardised per bin, ``x0 ~ N(0, I)``, ``t ~ U(0, 1)``,
``x_t = (1 - (1 - sigma_min) t) x0 + t x1``, the network regresses the velocity
``x1 - (1 - sigma_min) x0``. With ``cfg_dropout`` > 0 the conditions (content,
pitch and speaker together) are dropped for that fraction of the batch, so the
same network also gives the unconditional velocity for classifier-free guidance.
Inference integrates ``dx/dt = v`` from noise at t = 0 to t = 1 with the shared
fixed-step solvers of :mod:`voxanon.models.flow.solvers`.

Data-dependent prior (``prior``, the CPU design; as Grad-TTS and PriorGrad): a
frozen conv acoustic model (:class:`AcousticNet`) held inside the network
predicts the mel ``mu`` from the same inputs, and the flow starts from
``x0 = mu + prior_std * noise`` instead of N(0, I), with ``prior_std`` the
per-bin spread of the data around ``mu`` (fitted at the start of training). The
DiT is also conditioned on ``mu`` (as Matcha-TTS on its encoder output), so it
learns only the residual detail the regression model averages away.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from voxanon.errors import ConfigError
from voxanon.models.acoustic.model import AcousticConfig, AcousticNet, NetConfig
from voxanon.models.acoustic.vq import VectorQuantizer
from voxanon.models.flow.model import time_embedding, time_frequencies
from voxanon.models.flow.solvers import integrate


@dataclasses.dataclass(frozen=True)
class DiTConfig(NetConfig):
    """Sizes of :class:`DiTNet` and its flow-matching options (the defaults: the small CPU configuration).

    Attributes
    ----------
    content_dim, speaker_dim, n_mels : input and output sizes
    width, depth, heads : transformer width, number of blocks, attention heads (``width % heads == 0``,
        head size even for RoPE)
    ff_mult : feed-forward hidden size in multiples of ``width``
    conv_kernel : kernel of the depthwise convolution that mixes neighbouring input frames
    content_norm : normalise content per utterance before the network (as the conv model)
    codebook_size : > 0: quantise the content to the nearest of this many k-means codewords (the bottleneck)
    sigma_min : the CFM path's noise floor at t = 1
    cfg_dropout : fraction of training rows whose conditions are dropped (0: no classifier-free guidance)
    rope_base : base of the rotary embedding frequencies
    prior : JSON of the frozen conv prior's :class:`AcousticConfig` ("": the paper's N(0, I) prior)
    """

    content_dim: int = 384
    speaker_dim: int = 256
    n_mels: int = 80
    width: int = 192
    depth: int = 4
    heads: int = 3
    ff_mult: int = 2
    conv_kernel: int = 9
    content_norm: bool = True
    codebook_size: int = 64
    sigma_min: float = 1e-5
    cfg_dropout: float = 0.1
    rope_base: float = 10000.0
    prior: str = ""

    def __post_init__(self) -> None:
        head = self.width // max(self.heads, 1)
        if self.heads < 1 or self.width % self.heads or head % 2:
            raise ConfigError(f"width {self.width} must split into {self.heads} heads of an even size")
        if self.depth < 1 or self.ff_mult < 1 or self.conv_kernel < 1 or self.conv_kernel % 2 == 0:
            raise ConfigError(f"depth and ff_mult must be >= 1 and conv_kernel odd, got {self.depth}, "
                             f"{self.ff_mult}, {self.conv_kernel}")
        if not 0.0 <= self.cfg_dropout < 1.0 or not 0.0 <= self.sigma_min < 1.0:
            raise ConfigError(f"cfg_dropout and sigma_min must lie in [0, 1), got {self.cfg_dropout}, {self.sigma_min}")
        prior = self.prior_config()
        if prior is not None and (prior.content_dim, prior.speaker_dim, prior.n_mels) != (
                self.content_dim, self.speaker_dim, self.n_mels):
            raise ConfigError("the prior's content, speaker and mel sizes must be the backbone's")

    def prior_config(self) -> AcousticConfig | None:
        """The conv prior's config, or None for the N(0, I) prior."""
        return AcousticConfig.from_dict(json.loads(self.prior)) if self.prior else None


@dataclasses.dataclass(frozen=True)
class Sampling:
    """How :meth:`DiTNet.generate` integrates the ODE: ``steps`` of ``solver`` (euler, midpoint, rk4),
    classifier-free ``guidance`` scale (0: off), the ``seed`` of the starting noise and its ``temperature`` (a
    factor on the noise's spread)."""

    steps: int = 16
    solver: str = "euler"
    guidance: float = 0.0
    seed: int = 0
    temperature: float = 1.0


def rope(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding of ``x`` (B, H, T, Dh): pair ``(2i, 2i+1)`` of frame ``n`` rotated by
    ``n * base ** (-2i / Dh)``, so that ``rope(q) . rope(k)`` depends on positions only through their difference."""
    n, dh = x.shape[-2], x.shape[-1]
    freqs = base ** (-torch.arange(0, dh, 2, device=x.device, dtype=torch.float32) / dh)
    angles = torch.arange(n, device=x.device, dtype=torch.float32)[:, None] * freqs[None, :]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


class Attention(nn.Module):
    """Multi-head self-attention with RoPE on queries and keys."""

    def __init__(self, width: int, heads: int, rope_base: float) -> None:
        super().__init__()
        self.heads, self.rope_base = heads, rope_base
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, w = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        h = F.scaled_dot_product_attention(rope(q, self.rope_base), rope(k, self.rope_base), v)
        return self.out(h.transpose(1, 2).reshape(b, t, w))


def cfm_path(x0: torch.Tensor, x1: torch.Tensor, t: torch.Tensor, sigma_min: float) -> tuple[torch.Tensor, ...]:
    """The CFM point ``x_t = (1 - (1 - sigma_min) t) x0 + t x1`` between noise ``x0`` and data ``x1`` (B, T, F) at
    times ``t`` (B,), and its velocity ``x1 - (1 - sigma_min) x0`` (the regression target)."""
    t = t[:, None, None]
    return (1 - (1 - sigma_min) * t) * x0 + t * x1, x1 - (1 - sigma_min) * x0


def modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """adaLN: ``x * (1 + scale) + shift`` with per-row ``(B, 1, W)`` shift and scale."""
    return x * (1 + scale) + shift


class DiTBlock(nn.Module):
    """Pre-norm transformer block with adaLN-Zero conditioning: gates start at 0, so the block starts as identity."""

    def __init__(self, width: int, heads: int, ff_mult: int, rope_base: float) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.attn = Attention(width, heads, rope_base)
        self.norm2 = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.ff = nn.Sequential(nn.Linear(width, ff_mult * width), nn.GELU(approximate="tanh"),
                                nn.Linear(ff_mult * width, width))
        self.ada = nn.Sequential(nn.SiLU(), nn.Linear(width, 6 * width))
        nn.init.zeros_(self.ada[1].weight)
        nn.init.zeros_(self.ada[1].bias)

    def forward(self, x: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        """``x`` (B, T, W), ``cond`` (B, W) -> (B, T, W)."""
        shift1, scale1, gate1, shift2, scale2, gate2 = self.ada(cond)[:, None].chunk(6, dim=-1)
        x = x + gate1 * self.attn(modulate(self.norm1(x), shift1, scale1))
        return x + gate2 * self.ff(modulate(self.norm2(x), shift2, scale2))


class DiTNet(nn.Module):
    """The velocity field ``v(x_t, t | content (B, T, D), pitch (B, T, 2), speaker (B, S))`` on standardised mels.

    ``mel_mean``/``mel_std`` (buffers, set by training from the training mels) map between log-mels and the
    standardised space the flow runs in; :meth:`loss` and :meth:`generate` take and give plain log-mels.
    With ``cfg.prior``, ``prior`` is the frozen conv model and ``prior_std`` (standardised units) the spread of
    the starting noise around its prediction.
    """

    #: architecture name in model files (see :mod:`voxanon.models.acoustic.networks`)
    kind = "dit"
    #: name of the training loss (``train_cfm`` in the training log)
    loss_name = "cfm"

    def __init__(self, cfg: DiTConfig) -> None:
        super().__init__()
        self.cfg = cfg
        w = cfg.width
        self.vq = VectorQuantizer(cfg.codebook_size, cfg.content_dim) if cfg.codebook_size else None
        self.register_buffer("mel_mean", torch.zeros(cfg.n_mels))
        self.register_buffer("mel_std", torch.ones(cfg.n_mels))
        self.register_buffer("freqs", time_frequencies(w), persistent=False)
        self.x_in = nn.Linear(cfg.n_mels, w)
        self.content_in = nn.Linear(cfg.content_dim, w)
        self.pitch_in = nn.Linear(2, w)
        self.mix = nn.Conv1d(w, w, cfg.conv_kernel, padding=cfg.conv_kernel // 2, groups=w)
        self.time_mlp = nn.Sequential(nn.Linear(w, w), nn.SiLU(), nn.Linear(w, w))
        self.speaker_in = nn.Linear(cfg.speaker_dim, w)
        prior = cfg.prior_config()
        self.prior = AcousticNet(prior).requires_grad_(False) if prior is not None else None
        self.mu_in = nn.Linear(cfg.n_mels, w) if prior is not None else None
        self.register_buffer("prior_std", torch.ones(cfg.n_mels) if prior is not None else None)
        self.blocks = nn.ModuleList(DiTBlock(w, cfg.heads, cfg.ff_mult, cfg.rope_base) for _ in range(cfg.depth))
        self.norm_out = nn.LayerNorm(w, elementwise_affine=False, eps=1e-6)
        self.ada_out = nn.Sequential(nn.SiLU(), nn.Linear(w, 2 * w))
        self.mel_out = nn.Linear(w, cfg.n_mels)
        for layer in (self.ada_out[1], self.mel_out):
            nn.init.zeros_(layer.weight)
            nn.init.zeros_(layer.bias)

    def set_mel_stats(self, mean: np.ndarray, std: np.ndarray) -> None:
        """Install the per-bin mean and standard deviation of the training log-mels."""
        self.mel_mean.copy_(torch.as_tensor(np.asarray(mean, dtype=np.float32)))
        self.mel_std.copy_(torch.as_tensor(np.maximum(np.asarray(std, dtype=np.float32), 1e-3)))

    def set_prior_std(self, std: np.ndarray) -> None:
        """Install the per-bin spread (standardised units) of the training mels around the prior's prediction."""
        self.prior_std.copy_(torch.as_tensor(np.maximum(np.asarray(std, dtype=np.float32), 1e-2)))

    @torch.no_grad()
    def prior_mean(self, content: torch.Tensor, pitch: torch.Tensor, speaker: torch.Tensor) -> torch.Tensor | None:
        """The frozen prior's standardised mel prediction (B, T, n_mels), or None without a prior."""
        if self.prior is None:
            return None
        return (self.prior.eval()(content, pitch, speaker) - self.mel_mean) / self.mel_std

    def conditions(self, content: torch.Tensor, pitch: torch.Tensor, speaker: torch.Tensor,
                   keep: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Projected frame conditions (B, T, W), speaker vector (B, W) and the prior's standardised mean (or
        None); rows with ``keep`` 0 get no conditions (the prior's mean stays: it is where their flow starts)."""
        mu = self.prior_mean(content, pitch, speaker)
        if self.vq is not None:
            content = self.vq(content)[0]
        frames, spk = self.content_in(content) + self.pitch_in(pitch), self.speaker_in(speaker)
        if mu is not None:
            frames = frames + self.mu_in(mu)
        if keep is not None:
            frames, spk = frames * keep[:, None, None], spk * keep[:, None]
        return frames, spk, mu

    def start(self, mu: torch.Tensor | None, noise: torch.Tensor) -> torch.Tensor:
        """The flow's starting point: ``noise`` (N(0, I)), or ``mu + prior_std * noise`` with a prior."""
        return noise if mu is None else mu + self.prior_std * noise

    def forward(self, x: torch.Tensor, t: torch.Tensor, frames: torch.Tensor, spk: torch.Tensor) -> torch.Tensor:
        """Velocity (B, T, n_mels) at standardised mels ``x`` and times ``t`` (B,), given :meth:`conditions`."""
        h = self.x_in(x) + frames
        h = h + F.gelu(self.mix(h.transpose(1, 2)).transpose(1, 2))
        cond = self.time_mlp(time_embedding(t, self.freqs)) + spk
        for block in self.blocks:
            h = block(h, cond)
        shift, scale = self.ada_out(cond)[:, None].chunk(2, dim=-1)
        return self.mel_out(modulate(self.norm_out(h), shift, scale))

    def loss(self, content: torch.Tensor, pitch: torch.Tensor, speaker: torch.Tensor,
             mel: torch.Tensor) -> torch.Tensor:
        """The conditional flow-matching loss (see the module docstring) on a batch of target log-mels."""
        x1 = (mel - self.mel_mean) / self.mel_std
        b = len(x1)
        t = torch.rand(b, device=x1.device)
        keep = (torch.rand(b, device=x1.device) >= self.cfg.cfg_dropout).to(x1.dtype) if self.cfg.cfg_dropout else None
        frames, spk, mu = self.conditions(content, pitch, speaker, keep)
        xt, target = cfm_path(self.start(mu, torch.randn_like(x1)), x1, t, self.cfg.sigma_min)
        return F.mse_loss(self(xt, t, frames, spk), target)

    @torch.no_grad()
    def generate(self, content: torch.Tensor, pitch: torch.Tensor, speaker: torch.Tensor,
                 sampling: Sampling | None = None, known: tuple[torch.Tensor, torch.Tensor] | None = None
                 ) -> torch.Tensor:
        """Log-mels (B, T, n_mels): the ODE integrated from the seeded prior (:meth:`start`; noise scaled by the
        sampling's temperature) at t = 0 to t = 1.

        ``known`` = (log-mels (B, T, n_mels), mask (B, T) true where kept): speech editing. Known frames travel
        on their exact CFM path towards their own mels, so the frames in between are generated by a field
        that attends to the real context at every step; the result keeps the known frames exactly.
        """
        s = sampling or Sampling()
        frames, spk, mu = self.conditions(content, pitch, speaker)
        gen = torch.Generator().manual_seed(int(s.seed))
        noise = torch.randn((*frames.shape[:2], self.cfg.n_mels), generator=gen).to(frames.device, frames.dtype)
        x0 = self.start(mu, s.temperature * noise)
        if s.guidance:
            frames, spk = torch.cat([frames, torch.zeros_like(frames)]), torch.cat([spk, torch.zeros_like(spk)])

        def velocity(x: torch.Tensor, t: float) -> torch.Tensor:
            if not s.guidance:
                return self(x, torch.full((len(x),), t, device=x.device, dtype=x.dtype), frames, spk)
            v, v_null = self(x.repeat(2, 1, 1), torch.full((2 * len(x),), t, device=x.device, dtype=x.dtype),
                             frames, spk).chunk(2)
            return v + s.guidance * (v - v_null)

        field = velocity
        if known is not None:
            target = (known[0].to(x0) - self.mel_mean) / self.mel_std
            keep = known[1].to(x0.device)[..., None]
            path_velocity = target - (1 - self.cfg.sigma_min) * x0

            def field(x: torch.Tensor, t: float) -> torch.Tensor:
                on_path = cfm_path(x0, target, torch.full((len(x),), t, device=x.device, dtype=x.dtype),
                                   self.cfg.sigma_min)[0]
                return torch.where(keep, path_velocity, velocity(torch.where(keep, on_path, x), t))

        x1 = integrate(field, x0, 0.0, 1.0, steps=s.steps, solver=s.solver)
        if known is not None:
            x1 = torch.where(keep, target, x1)
        return x1 * self.mel_std + self.mel_mean
