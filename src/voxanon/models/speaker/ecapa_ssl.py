"""The VPC 2026 ``ecapa_ssl`` attacker: WavLM-Large's layer outputs gating an ECAPA-TDNN over an 80-band Fbank.

What the kit (``Voice-Privacy-Challenge-2026``, files under ``evaluation/privacy/asv/``
unless named otherwise) computes for one utterance, and :class:`EcapaSsl` for a batch:

1. **Two inputs from one waveform** (``speaker_extraction.py:41-48``,
   ``speechbrain_vectors.py:146-157``). The Fbank branch gets the waveform scaled to
   peak 1 (``utils.py:97-140`` normalises the loudness, then divides by the peak, which
   leaves a plain peak normalisation) with its leading and trailing exact zeros cut
   (``np.trim_zeros``). The WavLM branch reads the file again, untrimmed, and
   standardises it over all its samples (``F.layer_norm``, because WavLM-Large's
   ``cfg.normalize`` is true; ``speechbrain_vectors.py:39-52``).
2. **WavLM** (unilm's ``WavLM.py``, run here as the transformers ``WavLMModel`` that
   :func:`voxanon.models.content.unilm.wavlm_from_state` builds): the raw output of every
   transformer layer, 1 to 24, at 50 frames/s. These are unilm's
   ``extract_features(ret_layer_results=True)`` results without the first
   (``layer_results[1:]``): the CNN and positional input is left out and the last layer is
   taken before the encoder's final layer norm (``speechbrain_vectors.py:70-77``,
   ``WavLM.py:572-612``).
3. **Layer combination** (``ecapa_model_wavlm_24layer.py:74-113``): a softmax over 24 learnt
   weights (``weighted_sum.layer_weights``, initialised equal), then the weighted sum of the
   layer outputs.
4. **Fbank**: speechbrain's ``Fbank(n_mels=80)`` at 100 frames/s minus its mean over the
   utterance (``InputNormalization(norm_type="sentence", std_norm=False)``), i.e.
   :class:`voxanon.models.fbank.Fbank`.
5. **The ECAPA variant** ``ECAPA_TDNN_test`` (``ecapa_model_wavlm_24layer.py:116-342``), built
   with its defaults: channels 1024, 1024, 1024, 1024, 3072, kernels 5, 3, 3, 3, 1,
   dilations 1, 2, 3, 4, 1, attention 128, SE 128, Res2Net scale 8, 192-d. The Fbank runs
   speechbrain's ECAPA blocks (``blocks``: a TDNN, then three SE-Res2Net blocks); the combined
   WavLM features run a second chain of four SE-Res2Net blocks (``blocks_features``, 1024 in
   and out, the kernels and dilations of ``blocks``). The last three outputs of each chain are
   concatenated (3072 channels each). The WavLM side is brought to the Fbank's frame count by
   the kit's ``resample_tensor`` (lines 11-72, :func:`resample_frames`): too few frames are
   *tiled* (frames ``0..T-1, 0..T-1, ...``, cut at the target; no interpolation, so the two
   branches are not aligned in time), too many are averaged over consecutive bins. The two
   are multiplied element by element, and the product goes through ``mfa`` (a TDNN 3072 to
   3072), attentive statistics pooling with global context, ``asp_bn`` and ``fc``.
6. **The embedding is L2-normalised** (``speechbrain_vectors.py:160-163``; by
   :class:`EcapaSslEncoder`), so enrollment models (``speaker_embeddings.py:152-170``, the mean
   over a speaker's utterances) average unit vectors; trials are scored by cosine.

Every length-dependent step uses each utterance's own lengths (per-utterance standardising,
peak and trimming, WavLM with zeroed padding and an attention mask, length-aware ECAPA
blocks, tiling or averaging per utterance), so a padded batch gives what the kit gives one
utterance at a time.

Files (``01_download_data_model_track1.sh:83-95``, ``run_evaluation.py:148-162``):
``exp/asv_ssl/`` holds ``embedding_model.ckpt`` (the ``ECAPA_TDNN_test`` state dict, loaded
strictly once a ``state_dict`` wrapper and ``module.`` prefixes are dropped;
``speechbrain_vectors.py:106-113``) and ``WavLM-Large.pt`` (unilm's ``{"cfg", "model"}``). A
fine-tuning output folder holds ``CKPT+<epoch>/`` folders: the kit evaluates the epoch with the
lowest validation loss in ``train_log.txt``, else the highest epoch
(``utils/path_management.py:45-99``), and copies ``WavLM-Large.pt`` into that folder.

Where this differs from the kit: an all-zero waveform is embedded as it is (the kit replaces
it by random noise of amplitude 1e-6, ``utils.py:128-130``), and both branches see the input
resampled to 16 kHz (the kit's WavLM branch reads the file at its own rate; the VPC data are
16 kHz).
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from voxanon.audio.io import AudioError
from voxanon.errors import ConfigError
from voxanon.models.checkpoint import check_state_keys, load_checkpoint
from voxanon.models.content.unilm import read_checkpoint, wavlm_from_state
from voxanon.models.fbank import Fbank, FbankConfig
from voxanon.models.model_files import looks_like, model_file_error
from voxanon.models.speaker.base import BatchedEncoder, EncoderError, file_digest
from voxanon.models.speaker.ecapa import (
    EcapaConfig,
    EcapaTdnn,
    SERes2NetBlock,
    padded_batch,
)
from voxanon.models.speaker.speechbrain_ecapa import config_from_state_dict

ECAPA_FILE = "embedding_model.ckpt"
WAVLM_FILE = "WavLM-Large.pt"
SAMPLE_RATE = 16000
#: the order in which ``ECAPA_TDNN_test`` registers its parts: keys are checked in it
KIT_ORDER = ("blocks", "blocks_features", "mfa", "weighted_sum", "asp", "asp_bn", "fc")


class WeightedLayerSum(nn.Module):
    """Softmax-weighted sum of layer outputs (``layer_weights`` start equal, as in the kit)."""

    def __init__(self, n_layers: int) -> None:
        super().__init__()
        self.layer_weights = nn.Parameter(torch.ones(n_layers))

    def forward(self, layers: Iterable[torch.Tensor]) -> torch.Tensor:
        """Sum of equal-shape layer outputs, taken one at a time from any iterable (a generator keeps one in memory)."""
        weights = torch.softmax(self.layer_weights, dim=0)
        total, n = None, 0
        for n, layer in enumerate(layers, 1):
            if n > len(weights):
                raise ValueError(f"more than {len(weights)} layer outputs for {len(weights)} layer weights")
            total = weights[n - 1] * layer if total is None else total + weights[n - 1] * layer
        if n != len(weights):
            raise ValueError(f"{n} layer outputs for {len(weights)} layer weights")
        return total


def resample_frames(x: torch.Tensor, lengths: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The kit's ``resample_tensor`` per utterance: ``(B, C, T)`` with ``lengths`` valid frames → ``targets`` frames.

    Fewer frames than the target are tiled (``0..t-1, 0..t-1, ...``, cut at the target);
    more are averaged over consecutive bins of ``t // n`` frames, the last ``t % n`` bins
    one frame longer. Frames past each target are zero.
    """
    out = x.new_zeros(x.shape[0], x.shape[1], int(targets.max()))
    for b, (t, n) in enumerate(zip(lengths.tolist(), targets.tolist())):
        y = x[b, :, :t]
        if t < n:
            y = y[:, torch.arange(n, device=x.device) % t]
        elif t > n:
            base, extra = divmod(t, n)
            cut = (n - extra) * base
            y = torch.cat([y[:, :cut].reshape(len(y), n - extra, base).mean(2),
                           y[:, cut:].reshape(len(y), extra, base + 1).mean(2)], dim=1)
        out[b, :, :n] = y
    return out


class EcapaTdnnSsl(EcapaTdnn):
    """The kit's ``ECAPA_TDNN_test``: an :class:`EcapaTdnn` over the Fbank whose block outputs are gated by SSL features.

    ``blocks_features`` holds one SE-Res2Net block per ECAPA block but the last (``channels[i]``
    in and out, the kernel and dilation of block ``i``); ``weighted_sum`` combines ``n_layers``
    SSL layer outputs of ``channels[0]`` dimensions. Parameter names are the kit's.
    """

    def __init__(self, cfg: EcapaConfig, n_layers: int) -> None:
        if len(set(cfg.channels[:-1])) != 1:
            raise ConfigError(f"the SSL-gated ECAPA needs equal channels in all blocks but the last, got {cfg.channels}")
        super().__init__(cfg)
        self.blocks_features = nn.ModuleList(
            [SERes2NetBlock(c, c, cfg, k, d) for c, k, d in zip(cfg.channels[:-1], cfg.kernel_sizes, cfg.dilations)])
        self.weighted_sum = WeightedLayerSum(n_layers)

    def forward(self, feats: torch.Tensor, lengths: torch.Tensor, ssl: torch.Tensor,
                ssl_lengths: torch.Tensor) -> torch.Tensor:
        """``(B, embedding_dim)`` from ``(B, T, n_mels)`` Fbank features and ``(B, T', channels[0])`` combined SSL features."""
        fbank = self.block_outputs(feats.transpose(1, 2), lengths)
        x, gates = ssl.transpose(1, 2), []
        for block in self.blocks_features:
            x = block(x, ssl_lengths)
            gates.append(x)
        gate = resample_frames(torch.cat(gates[1:], dim=1), ssl_lengths, lengths)
        return self.head(torch.cat(fbank[1:], dim=1) * gate, lengths)


def _valid(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """``(B, N)`` float mask of the first ``lengths`` samples of each row."""
    return (torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]).to(x.dtype)


def standardize(wavs: torch.Tensor, lengths: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """Each waveform minus its mean over its standard deviation (``F.layer_norm`` over its own samples); padding 0."""
    valid = _valid(wavs, lengths)
    n = lengths[:, None].to(wavs.dtype)
    mean = (wavs * valid).sum(1, keepdim=True) / n
    var = ((wavs - mean) * valid).pow(2).sum(1, keepdim=True) / n
    return (wavs - mean) / torch.sqrt(var + eps) * valid


def peak_trim(wavs: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Each waveform over its absolute peak with leading and trailing exact zeros cut, and the new lengths.

    An all-zero waveform is kept whole (the kit's ``np.trim_zeros`` would leave nothing).
    """
    x = wavs * _valid(wavs, lengths)
    peak = x.abs().amax(1, keepdim=True)
    x = x / torch.where(peak > 0, peak, torch.ones_like(peak))
    nonzero = (x != 0).to(torch.uint8)
    found = nonzero.amax(1) > 0
    first = torch.where(found, nonzero.argmax(1), 0)
    last = torch.where(found, x.shape[1] - 1 - nonzero.flip(1).argmax(1), lengths - 1)
    new = last - first + 1
    idx = (first[:, None] + torch.arange(int(new.max()), device=x.device)[None, :]).clamp(max=x.shape[1] - 1)
    out = torch.gather(x, 1, idx)
    return out * _valid(out, new), new


def conv_frames(config, lengths: torch.Tensor) -> torch.Tensor:
    """Frames a transformers WavLM ``config``'s convolution stack makes of ``lengths`` samples."""
    for kernel, stride in zip(config.conv_kernel, config.conv_stride):
        lengths = torch.div(lengths - kernel, stride, rounding_mode="floor") + 1
    return lengths


def receptive_field(config) -> int:
    """Samples under one frame of the convolution stack (400 for WavLM's: 25 ms at 16 kHz)."""
    field = 1
    for kernel, stride in zip(reversed(config.conv_kernel), reversed(config.conv_stride)):
        field = (field - 1) * stride + kernel
    return field


def wavlm_layer_outputs(model, wavs: torch.Tensor, lengths: torch.Tensor) -> tuple[Iterator[torch.Tensor], torch.Tensor]:
    """Raw output of each transformer layer of a transformers ``WavLMModel``, and the frame counts.

    The outputs are unilm's ``layer_results[1:]`` (the last before the final layer norm),
    computed as each is drawn from the iterator. Padding never reaches a valid frame:
    padded frames are zeroed before the positional convolution and masked out of attention.
    """
    config = model.config
    frames = conv_frames(config, lengths)
    hidden, _ = model.feature_projection(model.feature_extractor(wavs).transpose(1, 2))
    mask = torch.arange(hidden.shape[1], device=wavs.device)[None, :] < frames[:, None]
    hidden = hidden * mask[..., None].to(hidden.dtype)
    hidden = hidden + model.encoder.pos_conv_embed(hidden)
    if not config.do_stable_layer_norm:                  # post-LN models normalise before the first layer
        hidden = model.encoder.layer_norm(hidden)

    padded = None if bool(mask.all()) else mask             # no mask: nothing to hide, and no torch warning

    def layers(hidden: torch.Tensor) -> Iterator[torch.Tensor]:
        bias = None
        for layer in model.encoder.layers:
            with warnings.catch_warnings():                  # transformers pairs a bool padding mask with a float bias
                warnings.filterwarnings("ignore", "Support for mismatched key_padding_mask", UserWarning)
                hidden, bias = layer(hidden, attention_mask=padded, position_bias=bias)[:2]
            yield hidden

    return layers(hidden), frames


class EcapaSsl(nn.Module):
    """The kit's ``ecapa_ssl`` embedding of 16 kHz waveforms: WavLM, layer weighting, Fbank, :class:`EcapaTdnnSsl`.

    ``normalize_waveform`` is the WavLM checkpoint's ``cfg.normalize`` (true for WavLM-Large).
    """

    def __init__(self, wavlm, ecapa: EcapaTdnnSsl, normalize_waveform: bool) -> None:
        super().__init__()
        n_layers, dim = wavlm.config.num_hidden_layers, wavlm.config.hidden_size
        if len(ecapa.weighted_sum.layer_weights) != n_layers:
            raise ValueError(f"{len(ecapa.weighted_sum.layer_weights)} layer weights for a WavLM of {n_layers} layers")
        if ecapa.cfg.channels[0] != dim:
            raise ValueError(f"ECAPA channels {ecapa.cfg.channels[0]} differ from the WavLM width {dim}")
        self.wavlm, self.ecapa = wavlm, ecapa
        self.fbank = Fbank(FbankConfig(n_mels=ecapa.cfg.n_mels))
        self.normalize_waveform = normalize_waveform

    def forward(self, wavs: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """``(B, embedding_dim)`` embeddings (before L2 normalisation) of a zero-padded ``(B, N)`` batch."""
        if lengths is None:
            lengths = torch.full((wavs.shape[0],), wavs.shape[1], dtype=torch.long, device=wavs.device)
        shortest = int(lengths.min())
        if shortest < receptive_field(self.wavlm.config):
            raise AudioError(f"a waveform of {shortest} samples is shorter than one WavLM frame "
                             f"({receptive_field(self.wavlm.config)} samples)")
        ssl_in = standardize(wavs, lengths) if self.normalize_waveform else wavs * _valid(wavs, lengths)
        layers, frames = wavlm_layer_outputs(self.wavlm, ssl_in, lengths)
        ssl = self.ecapa.weighted_sum(layers)
        feats, feat_frames = self.fbank(*peak_trim(wavs, lengths))
        return self.ecapa(feats, feat_frames, ssl, frames)


class EcapaSslEncoder(BatchedEncoder):
    """:class:`SpeakerEncoder` over :class:`EcapaSsl`; L2-normalised embeddings, as the kit's extractor returns them."""

    sample_rate = SAMPLE_RATE

    def __init__(self, model: EcapaSsl, name: str, device: str = "cpu", max_batch_seconds: float = 60.0) -> None:
        self.model = model.to(device).eval()
        self.name, self.device = name, device
        self.dim = model.ecapa.cfg.embedding_dim
        self.max_batch_seconds = max_batch_seconds

    def embed(self, wavs: list[np.ndarray], sr: int) -> np.ndarray:
        """Embed waveforms (any rate; resampled); AudioError names one shorter than a WavLM frame."""
        shortest = receptive_field(self.model.wavlm.config)
        for i, w in enumerate(wavs):
            if len(w) * self.sample_rate < shortest * sr:
                raise AudioError(f"utterance {i} of the batch: {len(w) / sr:.4f} s is shorter than one WavLM frame "
                                 f"({shortest} samples at {self.sample_rate} Hz)")
        return super().embed(wavs, sr)

    @torch.inference_mode()
    def embed_padded(self, sigs: list[np.ndarray]) -> np.ndarray:
        """One forward pass over a zero-padded batch of 16 kHz signals; unit-length rows."""
        return F.normalize(self.model(*padded_batch(sigs, self.device)), dim=1).cpu().numpy()


def best_checkpoint_folder(train_dir: str | os.PathLike) -> str | None:
    """The ``CKPT+<epoch>`` folder the kit evaluates, or None if there is none.

    The epoch with the lowest ``valid loss`` in ``train_log.txt`` (the first on ties),
    else the highest epoch, as ``scan_checkpoint`` in the kit's ``utils/path_management.py``.
    """
    train_dir = os.fspath(train_dir)
    epochs = {int(m.group(1)): os.path.join(train_dir, name) for name in os.listdir(train_dir)
              if (m := re.fullmatch(r"CKPT\+(\d+)", name)) and os.path.isdir(os.path.join(train_dir, name))}
    if not epochs:
        return None
    log, best, lowest = os.path.join(train_dir, "train_log.txt"), None, float("inf")
    if os.path.isfile(log):
        with open(log, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = re.search(r"epoch:\s*(\d+).*?valid loss:\s*([-+.\deE]+)", line)
                if m and float(m.group(2)) < lowest:
                    best, lowest = int(m.group(1)), float(m.group(2))
    return epochs.get(best, epochs[max(epochs)])


def asv_ssl_files(path: str | os.PathLike) -> tuple[str, str]:
    """``(embedding_model.ckpt, WavLM-Large.pt)`` of a kit model.

    ``path`` is a folder holding both (``exp/asv_ssl``), a fine-tuning output folder (its
    :func:`best_checkpoint_folder`), or the ``.ckpt`` itself with the WavLM file beside it.
    """
    path = os.fspath(path)
    if os.path.isfile(path):
        ckpt = path
    elif os.path.isdir(path):
        folder = path if os.path.isfile(os.path.join(path, ECAPA_FILE)) else best_checkpoint_folder(path)
        if folder is None:
            raise EncoderError(f"{path}: no {ECAPA_FILE} and no CKPT+<epoch> folder; point to the kit's exp/asv_ssl, "
                               f"to a fine-tuning output folder or to an {ECAPA_FILE}")
        ckpt = os.path.join(folder, ECAPA_FILE)
    else:
        raise EncoderError(f"ecapa_ssl model not found: {path}")
    wavlm = os.path.join(os.path.dirname(ckpt), WAVLM_FILE)
    if not os.path.isfile(wavlm):
        raise EncoderError(f"{wavlm} not found: the kit keeps {WAVLM_FILE} beside {ECAPA_FILE} (exp/asv_ssl/); "
                           "copy or link it there")
    return ckpt, wavlm


def read_ecapa_state(path: str | os.PathLike) -> dict[str, torch.Tensor]:
    """State dict of a kit ``embedding_model.ckpt``; a ``state_dict`` wrapper and ``module.`` prefixes are dropped."""
    what, expected = "ecapa_ssl embedding model", "the state dict of the kit's ECAPA_TDNN_test (VPC 2026)"
    todo = "point ecapa_ssl: to the kit's exp/asv_ssl (or its embedding_model.ckpt)"
    obj = load_checkpoint(path, what, EncoderError, expected=expected, todo=todo)
    if isinstance(obj, Mapping) and isinstance(obj.get("state_dict"), Mapping):
        obj = obj["state_dict"]
    if not isinstance(obj, Mapping) or not obj or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        raise model_file_error(EncoderError, what, path, f"is {looks_like(obj)}", expected=expected, todo=todo)
    return {k.removeprefix("module."): v for k, v in obj.items()}


def ecapa_ssl_from_states(ecapa_state: Mapping[str, torch.Tensor], wavlm_cfg: Mapping,
                          wavlm_state: Mapping[str, torch.Tensor], ecapa_source: str = ECAPA_FILE,
                          wavlm_source: str = WAVLM_FILE) -> EcapaSsl:
    """:class:`EcapaSsl` (eval mode) holding the two state dicts, each checked key by key.

    EncoderError (ECAPA) or ContentError (WavLM) names the file (``*_source``) and its first
    missing, unexpected or mis-shaped key. Meta tensors give a meta model: a layout check that
    allocates nothing.
    """
    wavlm = wavlm_from_state(wavlm_cfg, wavlm_state, wavlm_source)
    try:
        cfg = config_from_state_dict(dict(ecapa_state))
    except EncoderError as exc:
        raise EncoderError(f"{ecapa_source}: {exc}") from exc
    if "weighted_sum.layer_weights" not in ecapa_state:
        raise EncoderError(f"{ecapa_source}: missing key 'weighted_sum.layer_weights': an ECAPA-TDNN without the "
                           "kit's WavLM layer weights (for speechbrain's own ECAPA use speechbrain:<ckpt>)")
    try:
        with torch.device("meta"):
            ecapa = EcapaTdnnSsl(cfg, ecapa_state["weighted_sum.layer_weights"].numel())
        model = EcapaSsl(wavlm, ecapa, bool(wavlm_cfg.get("normalize", False)))
    except ValueError as exc:
        raise EncoderError(f"{ecapa_source} does not fit {wavlm_source}: {exc}") from exc
    expected = ecapa.state_dict()
    order = sorted(expected, key=lambda k: KIT_ORDER.index(k.split(".")[0]))
    check_state_keys(ecapa_state, {k: tuple(expected[k].shape) for k in order}, ecapa_source, EncoderError,
                     "is this the VPC 2026 kit's ECAPA_TDNN_test (exp/asv_ssl/embedding_model.ckpt)?")
    ecapa.load_state_dict(ecapa_state, strict=True, assign=True)
    return model.eval()


def load_ecapa_ssl(path: str | os.PathLike, device: str = "cpu") -> EcapaSslEncoder:
    """Encoder from a kit model (see :func:`asv_ssl_files`); its ``name`` carries digests of both files."""
    ckpt, wavlm_path = asv_ssl_files(path)
    ecapa_state = read_ecapa_state(ckpt)
    cfg, wavlm_state = read_checkpoint(wavlm_path)
    model = ecapa_ssl_from_states(ecapa_state, cfg, wavlm_state, ckpt, f"WavLM checkpoint {wavlm_path}")
    return EcapaSslEncoder(model, name=f"ecapa-ssl-{file_digest(ckpt)}-{file_digest(wavlm_path)}", device=device)
