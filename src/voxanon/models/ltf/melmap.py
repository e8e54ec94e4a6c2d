"""HiFi-GAN log-mels -> Whisper log-mels, differentiably: the bridge that lets LTF train in the mel domain.

Both front-ends use 80 slaney bands over 0-8 kHz. They differ in what they
take the log of (HiFi-GAN: ``ln`` of the magnitude mel at 22.05 kHz, 1024-point
window, hop 256; Whisper: ``log10`` of the power mel at 16 kHz, 400-point window,
hop 160) and in frame rate (86.13 against 100 frames/s). The map: linear
resampling in time to 100 frames/s (:func:`resample_frames`; LTF's mel
generator emits 100 frames/s directly), a per-band affine ``a_b * x + c_b``
fitted once by least squares on real speech (:meth:`MelMap.fit`), Whisper's
floor (``log10 1e-10``) and its normalisation. For ideal filters ``a_b`` would
be ``2 / ln 10`` (magnitude to power, ``ln`` to ``log10``); the fit also
absorbs the windows' gains and the 46 ms against 25 ms analysis.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from voxanon.audio.io import resample
from voxanon.models.content.whisper import HOP, SAMPLE_RATE, LogMel, normalise
from voxanon.models.vocoder.hifigan import PRESETS, MelFrontend

#: Whisper's frame rate, the rate of LTF's mel generator
FRAME_RATE = SAMPLE_RATE / HOP
#: frames more than this many log10 units below an utterance's maximum are Whisper's floor: left out of the fit
FLOOR_RANGE = 8.0


def resample_frames(mel: torch.Tensor, frames: int) -> torch.Tensor:
    """``(B, 80, T)`` mels linearly resampled in time to ``frames`` frames (frame centres kept in place)."""
    return F.interpolate(mel, size=frames, mode="linear", align_corners=False)


def vocoder_frames(frames: int) -> int:
    """Frames of the universal HiFi-GAN (22.05 kHz, hop 256) covering ``frames`` frames at 100 frames/s."""
    cfg = PRESETS["v1"]
    return max(1, round(frames * cfg.sampling_rate / (cfg.hop_size * FRAME_RATE)))


class MelPair:
    """Both front-ends on the same 16 kHz audio: HiFi-GAN log-mels at 100 frames/s and Whisper ``log10`` powers."""

    def __init__(self) -> None:
        self.hifigan = MelFrontend(PRESETS["v1"])
        self.whisper = LogMel()

    @torch.no_grad()
    def __call__(self, wav: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """``(80, T)`` HiFi-GAN log-mels resampled to Whisper's ``T = len(wav) // 160`` frames, and ``(80, T)``
        Whisper ``log10`` powers."""
        rate = PRESETS["v1"].sampling_rate
        wav22 = torch.from_numpy(resample(np.asarray(wav, dtype=np.float32), SAMPLE_RATE, rate))
        whisper = self.whisper.log10_power(torch.from_numpy(np.asarray(wav, dtype=np.float32))[None])
        hifigan = resample_frames(self.hifigan(wav22[None]), whisper.shape[-1])
        return hifigan[0], whisper[0]


class MelMap(nn.Module):
    """``(B, 80, T)`` HiFi-GAN log-mels at 100 frames/s -> ``(B, 80, T)`` normalised Whisper log-mels."""

    def __init__(self, scale: torch.Tensor, offset: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("scale", torch.as_tensor(scale, dtype=torch.float32).reshape(-1, 1))
        self.register_buffer("offset", torch.as_tensor(offset, dtype=torch.float32).reshape(-1, 1))

    def log10_power(self, mel: torch.Tensor) -> torch.Tensor:
        """The mapped ``log10`` powers, floored as Whisper floors them (before normalisation)."""
        return torch.clamp(self.scale * mel + self.offset, min=-10.0)

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        return normalise(self.log10_power(mel))

    def state(self) -> dict[str, list[float]]:
        """The fitted coefficients as plain lists (for checkpoints and JSON)."""
        return {"scale": self.scale.flatten().tolist(), "offset": self.offset.flatten().tolist()}

    @classmethod
    def from_state(cls, state: dict) -> MelMap:
        return cls(torch.tensor(state["scale"]), torch.tensor(state["offset"]))

    @classmethod
    def fit(cls, pairs: list[tuple[torch.Tensor, torch.Tensor]]) -> MelMap:
        """Least-squares ``a_b``, ``c_b`` per band over the frames of :class:`MelPair` outputs that are above
        Whisper's floor (within :data:`FLOOR_RANGE` of their utterance's maximum)."""
        xs, ys = [], []
        for hifigan, whisper in pairs:
            keep = whisper > whisper.max() - FLOOR_RANGE
            xs.append(torch.where(keep, hifigan, torch.nan))
            ys.append(torch.where(keep, whisper, torch.nan))
        if not xs:
            raise ValueError("MelMap.fit: no utterances")
        x, y = torch.cat(xs, 1).double(), torch.cat(ys, 1).double()
        n = (~x.isnan()).sum(1).clamp(min=1)
        mx, my = x.nansum(1) / n, y.nansum(1) / n
        cov = ((x - mx[:, None]) * (y - my[:, None])).nansum(1)
        var = (x - mx[:, None]).pow(2).nansum(1)
        scale = torch.where(var > 0, cov / var.clamp(min=1e-12), torch.full_like(var, 2 / np.log(10)))
        return cls(scale.float(), (my - scale * mx).float())
