"""Batched log-mel features in torch (no torchaudio), for the compact SER.

25 ms Hann windows every 10 ms, 512-point FFT, 80 HTK-mel bands from 20 Hz to
Nyquist (the filters of :mod:`voxanon.models.fbank`), natural log of the power
with a 1e-6 floor. Unlike the speaker front end there is no per-utterance
normalisation: absolute level is an emotion cue. Frames start at sample 0
(no centring), so an utterance of ``n`` samples gives
``1 + (n - win) // hop`` frames (at least one: short input is zero-padded).
"""

from __future__ import annotations

import numpy as np
import torch

from voxanon.models.fbank import FbankConfig, mel_filters

N_MELS = 80


class LogMel:
    """Log-mel extractor for one sample rate; call on a list of waveforms."""

    def __init__(self, sr: int = 16000, n_mels: int = N_MELS, win_s: float = 0.025, hop_s: float = 0.010):
        self.sr, self.n_mels = sr, n_mels
        self.win, self.hop = int(round(win_s * sr)), int(round(hop_s * sr))
        self.n_fft = 1 << (self.win - 1).bit_length()
        self.window = torch.hann_window(self.win, periodic=True)
        self.filters = torch.from_numpy(
            mel_filters(FbankConfig(sample_rate=sr, n_fft=self.n_fft, n_mels=n_mels, f_min=20.0))).float()

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
        feats = torch.log(power @ self.filters + 1e-6).transpose(1, 2)
        mask = torch.arange(feats.shape[2])[None, :] < lengths[:, None]
        return feats * mask[:, None, :], lengths
