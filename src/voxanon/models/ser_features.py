"""Batched log-mel filterbank features in torch (no torchaudio), for the compact SER.

25 ms Hann windows every 10 ms, 512-point FFT, 80 HTK-mel bands from 20 Hz to
Nyquist, natural log of the power with a 1e-6 floor. Frames start at sample 0
(no centring), so an utterance of ``n`` samples gives
``1 + (n - win) // hop`` frames (at least one: short input is zero-padded).
"""

from __future__ import annotations

import numpy as np
import torch

N_MELS = 80


def _hz_to_mel(hz: np.ndarray) -> np.ndarray:
    return 2595.0 * np.log10(1.0 + hz / 700.0)


def _mel_to_hz(mel: np.ndarray) -> np.ndarray:
    return 700.0 * (10.0 ** (mel / 2595.0) - 1.0)


def mel_matrix(sr: int, n_fft: int, n_mels: int = N_MELS, fmin: float = 20.0) -> torch.Tensor:
    """Triangular HTK-mel filters, shape ``(n_mels, n_fft // 2 + 1)``."""
    mels = np.linspace(_hz_to_mel(np.array(fmin)), _hz_to_mel(np.array(sr / 2)), n_mels + 2)
    edges = _mel_to_hz(mels)
    bins = np.linspace(0.0, sr / 2, n_fft // 2 + 1)
    lower, centre, upper = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    rising = (bins[None, :] - lower) / (centre - lower)
    falling = (upper - bins[None, :]) / (upper - centre)
    return torch.from_numpy(np.maximum(0.0, np.minimum(rising, falling)).astype(np.float32))


class LogMel:
    """Log-mel extractor for one sample rate; call on a list of waveforms."""

    def __init__(self, sr: int = 16000, n_mels: int = N_MELS, win_s: float = 0.025, hop_s: float = 0.010):
        self.sr, self.n_mels = sr, n_mels
        self.win, self.hop = int(round(win_s * sr)), int(round(hop_s * sr))
        self.n_fft = 1 << (self.win - 1).bit_length()
        self.window = torch.hann_window(self.win, periodic=True)
        self.filters = mel_matrix(sr, self.n_fft, n_mels)

    def n_frames(self, n_samples: int) -> int:
        """Frames produced for ``n_samples`` of audio."""
        return 1 + max(0, n_samples - self.win) // self.hop

    def __call__(self, wavs: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
        """Features ``(B, n_mels, T_max)`` (zero past each end) and frame counts ``(B,)``."""
        lengths = torch.tensor([self.n_frames(len(w)) for w in wavs])
        n = self.win + (int(lengths.max()) - 1) * self.hop
        batch = torch.zeros(len(wavs), n)
        for i, w in enumerate(wavs):
            m = min(len(w), n)
            batch[i, :m] = torch.from_numpy(np.asarray(w[:m], dtype=np.float32))
        frames = batch.unfold(1, self.win, self.hop) * self.window
        power = torch.fft.rfft(frames, n=self.n_fft).abs().pow(2)
        feats = torch.log(power @ self.filters.T + 1e-6).transpose(1, 2)
        mask = torch.arange(feats.shape[2])[None, :] < lengths[:, None]
        return feats * mask[:, None, :], lengths
