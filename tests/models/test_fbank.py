"""The filterbank against a from-the-definition numpy computation, and its batch behaviour."""

import numpy as np
import pytest
import torch
from scipy.signal import get_window

from voxanon.audio.synthetic import speech_like
from voxanon.models.fbank import Fbank, FbankConfig, n_frames

torch.set_num_threads(1)


def reference_fbank(x, sr=16000, n_fft=400, hop=160, n_mels=80):
    """Straight from the definition: framed periodic-Hamming power spectrum, HTK-mel triangles, dB, CMN."""
    xp = np.pad(x.astype(np.float64), n_fft // 2)
    frames = np.stack([xp[i * hop:i * hop + n_fft] for i in range(len(x) // hop + 1)])
    power = np.abs(np.fft.rfft(frames * get_window("hamming", n_fft, fftbins=True), axis=1)) ** 2
    mel = lambda f: 2595 * np.log10(1 + f / 700)
    edges = 700 * (10 ** (np.linspace(mel(0), mel(sr / 2), n_mels + 2) / 2595) - 1)
    freqs = np.arange(n_fft // 2 + 1) * sr / n_fft
    fb = np.zeros((n_fft // 2 + 1, n_mels))
    for m in range(n_mels):
        lo, c = edges[m], edges[m + 1]
        w = c - lo  # speechbrain: symmetric triangle, half-width = the band to the left of the centre
        fb[:, m] = np.clip(1 - np.abs(freqs - c) / w, 0, None)
    db = 10 * np.log10(np.maximum(power @ fb, 1e-10))
    db = np.maximum(db, db.max() - 80)
    return db - db.mean(axis=0)


def test_matches_reference():
    x = speech_like(1.03, seed=3)
    feats, frames = Fbank()(torch.from_numpy(x)[None])
    ref = reference_fbank(x)
    assert feats.shape == (1, len(x) // 160 + 1, 80) and int(frames[0]) == ref.shape[0]
    np.testing.assert_allclose(feats[0].numpy(), ref, atol=5e-3)  # dB; float32 vs float64


def test_top_db_floor_and_silence():
    x = np.zeros(8000, dtype=np.float32)
    x[4000:4100] = 0.5
    feats, _ = Fbank()(torch.from_numpy(x)[None])
    ref = reference_fbank(x)
    np.testing.assert_allclose(feats[0].numpy(), ref, atol=5e-3)  # dB; float32 vs float64
    assert np.ptp(ref) <= 80 + 1e-6


def test_padding_in_a_batch_changes_nothing():
    a, b = speech_like(0.5, seed=1), speech_like(1.2, seed=2)
    batch = torch.zeros(2, len(b))
    batch[0, :len(a)] = torch.from_numpy(a)
    batch[1] = torch.from_numpy(b)
    feats, frames = Fbank()(batch, torch.tensor([len(a), len(b)]))
    alone, _ = Fbank()(torch.from_numpy(a)[None])
    assert int(frames[0]) == n_frames(len(a))
    np.testing.assert_allclose(feats[0, :frames[0]].numpy(), alone[0].numpy(), atol=1e-4)
    assert torch.all(feats[0, frames[0]:] == 0)


@pytest.mark.parametrize("n_mels", [40, 80])
def test_filters_cover_band(n_mels):
    fb = Fbank(FbankConfig(n_mels=n_mels)).filters.numpy()
    assert fb.shape == (201, n_mels) and fb.max() <= 1 and np.all(fb.sum(axis=0) > 0)
