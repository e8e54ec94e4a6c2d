"""Bark's coarse and fine acoustic models and EnCodec, driven as the 2024 kit's B4 drives them.

The models are transformers' ``BarkCoarseModel``, ``BarkFineModel`` and
``EncodecModel`` of a ``BarkModel`` folder (``suno/bark``; the text-to-semantic
model is not used: B4's semantic tokens come from the source audio). The loops
follow Bark's ``generate_coarse`` / ``generate_fine`` with the kit's settings
(coqui TTS's ``Bark.semantic_to_waveform``, which the kit calls):

coarse
    semantic tokens (49.9 per second) -> the first two EnCodec codebooks (75
    frames per second, interleaved: 2 tokens a frame, the second codebook's ids
    offset by 1024, all offset by the 10 000 semantic ids). The prompt's last
    ``floor(630 / ratio)`` semantic tokens and matching coarse tokens (less the
    last two, Bark's alignment hack) come first; then windows of 60 tokens, each
    conditioned on up to 256 semantic tokens (from ``floor(630 / ratio)`` behind
    the current position, padded with 12 048), the infer token 12 050 and the
    last 630 coarse tokens, sampled one by one with a key-value cache, each from
    its own codebook's 1024 logits at ``temperature`` (the kit: 0.7), no top-k/p.
fine
    the coarse codebooks, with the last 512 frames of the prompt's fine codes in
    front, padded to at least 1024 frames; windows of 1024 frames every 512,
    codebooks 2..7 predicted in turn by the non-causal fine model, each frame
    sampled at ``temperature`` (the kit: 0.5).
decode
    all eight codebooks -> EnCodec's quantiser and decoder -> 24 kHz, 320
    samples per frame.

Temperature 0 means arg-max (greedy) decoding. Sampling draws from a
``torch.Generator``, so a seed gives the same tokens on the same device.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import torch

from voxanon.errors import ModelError
from voxanon.models.model_files import short_reason
from voxanon.models.nac.prompts import VoicePrompt


@dataclasses.dataclass(frozen=True)
class Layout:
    """Bark's token layout and generation windows (the constants of its code, and the kit's)."""

    semantic_vocab: int = 10_000
    codebook_size: int = 1024
    n_coarse: int = 2
    n_fine: int = 8
    semantic_rate_hz: float = 49.9
    coarse_rate_hz: float = 75.0
    coarse_semantic_pad: int = 12_048
    coarse_infer: int = 12_050
    max_coarse_input: int = 256
    max_coarse_history: int = 630
    sliding_window: int = 60
    max_fine_history: int = 512
    fine_window: int = 1024
    sample_rate: int = 24_000
    hop: int = 320

    @property
    def ratio(self) -> float:
        """Coarse tokens (all codebooks) per semantic token."""
        return self.coarse_rate_hz / self.semantic_rate_hz * self.n_coarse

    @property
    def max_semantic_history(self) -> int:
        return int(np.floor(self.max_coarse_history / self.ratio))


BARK = Layout()


def sample(logits: torch.Tensor, temperature: float, generator: torch.Generator | None) -> torch.Tensor:
    """Indices drawn from ``softmax(logits / temperature)`` over the last axis (arg-max at temperature 0)."""
    if temperature == 0:
        return logits.argmax(-1)
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    flat = torch.multinomial(probs.reshape(-1, probs.shape[-1]), 1, generator=generator)
    return flat.reshape(probs.shape[:-1])


def coarse_history(prompt: VoicePrompt | None, layout: Layout = BARK) -> tuple[np.ndarray, np.ndarray]:
    """The prompt's semantic and flattened coarse tokens that condition the coarse model (empty without one)."""
    if prompt is None:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    offsets = layout.codebook_size * np.arange(prompt.coarse.shape[0])[:, None]
    flat = (prompt.coarse + offsets).T.reshape(-1) + layout.semantic_vocab  # frame by frame, codebook 0 first
    semantic = prompt.semantic
    n_semantic = min(layout.max_semantic_history, len(semantic) - len(semantic) % 2,
                     int(np.floor(len(flat) / layout.ratio)))
    n_coarse = int(round(n_semantic * layout.ratio))
    return semantic[len(semantic) - n_semantic:], flat[len(flat) - n_coarse:][:-2]


@torch.inference_mode()
def coarse_tokens(model, semantic: np.ndarray, prompt: VoicePrompt | None, temperature: float,
                  generator: torch.Generator | None = None, layout: Layout = BARK) -> np.ndarray:
    """Coarse codes ``(n_coarse, frames)`` of semantic tokens ``(n,)``, in the voice of ``prompt``."""
    device = model.device
    semantic_history, history = coarse_history(prompt, layout)
    n_steps = int(round(np.floor(len(semantic) * layout.ratio / layout.n_coarse) * layout.n_coarse))
    if n_steps <= 0:
        raise ValueError(f"{len(semantic)} semantic tokens give no coarse frame")
    x_semantic = torch.from_numpy(np.concatenate([semantic_history, semantic]).astype(np.int64)).to(device)
    x_coarse = torch.from_numpy(history.astype(np.int64)).to(device)
    base = len(semantic_history)
    pad = torch.tensor([layout.coarse_semantic_pad], device=device)
    infer = torch.tensor([layout.coarse_infer], device=device)
    n_step = 0
    for _ in range(math.ceil(n_steps / layout.sliding_window)):
        at = base + int(round(n_step / layout.ratio))
        context = x_semantic[max(0, at - layout.max_semantic_history):][:layout.max_coarse_input]
        context = torch.cat([context, pad.expand(layout.max_coarse_input - len(context))])
        step_input = torch.cat([context, infer, x_coarse[-layout.max_coarse_history:]])[None]
        cache = None
        for _ in range(min(layout.sliding_window, n_steps - n_step)):
            logits, cache = model(step_input, cache, use_cache=True, return_dict=False)[:2]
            start = layout.semantic_vocab + (n_step % layout.n_coarse) * layout.codebook_size
            token = sample(logits[0, -1, start:start + layout.codebook_size], temperature, generator) + start
            x_coarse = torch.cat([x_coarse, token.view(1)])
            step_input = token.view(1, 1)
            n_step += 1
    codes = x_coarse[len(history):].cpu().numpy().reshape(-1, layout.n_coarse).T - layout.semantic_vocab
    return codes - layout.codebook_size * np.arange(layout.n_coarse)[:, None]


@torch.inference_mode()
def fine_tokens(model, coarse: np.ndarray, prompt: VoicePrompt | None, temperature: float,
                generator: torch.Generator | None = None, layout: Layout = BARK) -> np.ndarray:
    """All ``n_fine`` codebooks ``(n_fine, frames)`` from the coarse ones ``(n_coarse, frames)``."""
    n_coarse, frames = coarse.shape
    window, hop = layout.fine_window, layout.max_fine_history
    codes = np.full((layout.n_fine, frames), layout.codebook_size, dtype=np.int64)
    codes[:n_coarse] = coarse
    n_history = 0
    if prompt is not None:
        history = prompt.fine[:, -hop:]
        codes, n_history = np.concatenate([history, codes], axis=1), history.shape[1]
    n_pad = max(0, window - codes.shape[1])
    codes = np.pad(codes, ((0, 0), (0, n_pad)), constant_values=layout.codebook_size)
    x = torch.from_numpy(codes.T.copy()).to(model.device)  # (time, codebook)
    for n in range(max(0, math.ceil((frames - (window - n_history)) / hop)) + 1):
        start = min(n * hop, len(x) - window)
        fill = min(n_history + n * hop, len(x) - hop) - start
        frame = x[start:start + window]  # a view: predictions land in x
        for book in range(n_coarse, layout.n_fine):
            logits = model(book, frame[None], return_dict=False)[0][0]
            frame[fill:, book] = sample(logits[fill:, :layout.codebook_size], temperature, generator)
    out = x.T[:, n_history:].cpu().numpy()
    return out[:, :out.shape[1] - n_pad]


@torch.inference_mode()
def codec_decode(codec, codes: np.ndarray) -> np.ndarray:
    """EnCodec's waveform ``(frames * hop,)`` of codes ``(n_q, frames)``."""
    indices = torch.from_numpy(np.ascontiguousarray(codes, dtype=np.int64))[:, None].to(codec.device)
    return codec.decoder(codec.quantizer.decode(indices))[0, 0].float().cpu().numpy()


def _check(config, folder: Path, layout: Layout) -> None:
    """ModelError when the Bark folder's configuration cannot run B4's layout."""
    coarse, fine, codec = config.coarse_acoustics_config, config.fine_acoustics_config, config.codec_config
    context = layout.max_coarse_input + 1 + layout.max_coarse_history + layout.sliding_window
    hop = int(np.prod(getattr(codec, "upsampling_ratios", [0])))
    problems = [
        (coarse.input_vocab_size <= layout.coarse_infer, f"coarse input vocabulary {coarse.input_vocab_size} "
         f"<= {layout.coarse_infer}"),
        (coarse.output_vocab_size < layout.semantic_vocab + layout.n_coarse * layout.codebook_size,
         f"coarse output vocabulary {coarse.output_vocab_size}"),
        (coarse.block_size < context, f"coarse context {coarse.block_size} < {context}"),
        (fine.n_codes_total != layout.n_fine, f"fine model of {fine.n_codes_total} codebooks, not {layout.n_fine}"),
        (fine.n_codes_given != 1, f"fine model given {fine.n_codes_given} codebooks, not 1"),
        (fine.input_vocab_size <= layout.codebook_size, f"fine input vocabulary {fine.input_vocab_size}"),
        (fine.block_size < layout.fine_window, f"fine context {fine.block_size} < {layout.fine_window}"),
        (getattr(codec, "model_type", "") != "encodec", f"codec {getattr(codec, 'model_type', '?')!r} is not encodec"),
        (getattr(codec, "sampling_rate", 0) != layout.sample_rate, f"codec rate {getattr(codec, 'sampling_rate', 0)}"),
        (hop != layout.hop, f"codec hop {hop}, not {layout.hop}"),
        (getattr(codec, "codebook_size", 0) != layout.codebook_size, "codec codebook size "
         f"{getattr(codec, 'codebook_size', 0)}"),
    ]
    bad = [why for failed, why in problems if failed]
    if bad:
        raise ModelError(f"{folder}: not a Bark model B4 can run ({'; '.join(bad)}); give suno/bark or "
                         "suno/bark-small")


def load_bark(folder: str | Path, device: str = "cpu", layout: Layout = BARK):
    """``(coarse, fine, codec)`` models of a ``BarkModel`` folder, in float32 eval mode on ``device``.

    ModelError when the folder's configuration does not fit Bark's layout or a weight is missing or mis-shaped
    (transformers would otherwise initialise it at random).
    """
    from transformers import BarkConfig, BarkModel

    folder = Path(folder)
    try:
        config = BarkConfig.from_pretrained(folder, local_files_only=True)
    except (OSError, ValueError, TypeError) as exc:
        raise ModelError(f"{folder}: cannot read the Bark configuration ({short_reason(exc)})") from exc
    _check(config, folder, layout)
    try:
        model, info = BarkModel.from_pretrained(folder, local_files_only=True, output_loading_info=True)
    except (OSError, ValueError, RuntimeError) as exc:
        raise ModelError(f"{folder}: cannot load the Bark weights ({short_reason(exc)})") from exc
    used = ("coarse_acoustics.", "fine_acoustics.", "codec_model.")
    wrong = [k for k in info.get("missing_keys", ()) if k.startswith(used)]
    wrong += [k[0] if isinstance(k, tuple) else k for k in info.get("mismatched_keys", ())]
    if wrong:
        raise ModelError(f"{folder}: the Bark checkpoint lacks or mis-shapes {len(wrong)} weight(s), e.g. "
                         f"{', '.join(sorted(map(str, wrong))[:3])}")
    parts = [getattr(model, name).float().eval().to(device) for name in ("coarse_acoustics", "fine_acoustics",
                                                                        "codec_model")]
    del model
    return tuple(parts)
