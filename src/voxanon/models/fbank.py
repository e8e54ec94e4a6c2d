"""Log-mel filterbank front end of the ECAPA-TDNN, numerically as speechbrain's ``Fbank``.

Hamming-windowed (periodic) STFT, 25 ms / 10 ms at 16 kHz (``n_fft`` 400, hop
160), centred frames with zero padding; power spectrum; triangular filters
equally spaced on the HTK mel scale (2595 log10(1 + f/700)) from 0 to
sr/2, each with the width of the band to its left on both sides; 10 log10 with
a floor of 1e-10 and a per-utterance cut at 80 dB below the utterance's peak;
finally the per-utterance mean over frames is removed (speechbrain's
``InputNormalization(norm_type="sentence", std_norm=False)``).

Batches are length-aware: statistics use only each utterance's own frames, so
padding an utterance inside a batch never changes its features.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class FbankConfig:
    """Filterbank settings (speechbrain's defaults for ``spkrec-ecapa-voxceleb``)."""

    sample_rate: int = 16000
    n_fft: int = 400
    win_length: int = 400
    hop_length: int = 160
    n_mels: int = 80
    f_min: float = 0.0
    f_max: float | None = None
    amin: float = 1e-10
    top_db: float = 80.0


def hz_to_mel(hz):
    """HTK mel scale."""
    return 2595.0 * np.log10(1.0 + np.asarray(hz, dtype=np.float64) / 700.0)


def mel_to_hz(mel):
    """Inverse of :func:`hz_to_mel`."""
    return 700.0 * (10.0 ** (np.asarray(mel, dtype=np.float64) / 2595.0) - 1.0)


def mel_filters(cfg: FbankConfig) -> np.ndarray:
    """Triangular filter matrix, shape ``(n_fft // 2 + 1, n_mels)``."""
    f_max = cfg.sample_rate / 2 if cfg.f_max is None else cfg.f_max
    hz = mel_to_hz(np.linspace(hz_to_mel(cfg.f_min), hz_to_mel(f_max), cfg.n_mels + 2))
    centre, width = hz[1:-1], (hz[1:] - hz[:-1])[:-1]
    freqs = np.linspace(0, cfg.sample_rate // 2, cfg.n_fft // 2 + 1)
    slope = (freqs[:, None] - centre[None, :]) / width[None, :]
    return np.maximum(0.0, np.minimum(1.0 + slope, 1.0 - slope))


def n_frames(n_samples, hop_length: int = 160):
    """Frames of a centred STFT of ``n_samples`` samples (works on ints and tensors)."""
    return n_samples // hop_length + 1


class Fbank(torch.nn.Module):
    """``(B, N)`` waveforms + sample lengths → ``(B, T, n_mels)`` features + frame lengths."""

    def __init__(self, cfg: FbankConfig = FbankConfig()) -> None:
        super().__init__()
        self.cfg = cfg
        self.register_buffer("window", torch.hamming_window(cfg.win_length, dtype=torch.float32), persistent=False)
        self.register_buffer("filters", torch.from_numpy(mel_filters(cfg)).float(), persistent=False)

    def forward(self, wavs: torch.Tensor, lengths: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Features of a padded batch; ``lengths`` are sample counts (default: all of ``N``)."""
        cfg = self.cfg
        if lengths is None:
            lengths = torch.full((wavs.shape[0],), wavs.shape[1], dtype=torch.long, device=wavs.device)
        spec = torch.stft(wavs, cfg.n_fft, cfg.hop_length, cfg.win_length, self.window, center=True,
                          pad_mode="constant", normalized=False, onesided=True, return_complex=True)
        power = spec.real.pow(2) + spec.imag.pow(2)                      # (B, F, T)
        db = 10.0 * torch.log10(torch.clamp(power.transpose(1, 2) @ self.filters, min=cfg.amin))
        frames = n_frames(lengths, cfg.hop_length).clamp(max=db.shape[1])
        mask = (torch.arange(db.shape[1], device=db.device)[None, :] < frames[:, None]).unsqueeze(-1)
        peak = db.masked_fill(~mask, -math.inf).amax(dim=(1, 2), keepdim=True)
        db = torch.maximum(db, peak - cfg.top_db)
        mean = (db * mask).sum(dim=1, keepdim=True) / frames[:, None, None]
        return (db - mean) * mask, frames
