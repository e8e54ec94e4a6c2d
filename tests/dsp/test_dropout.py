"""Frequency and time dropout of waveform batches (the kits' speaker-training augmentation)."""

import numpy as np

from voxanon.dsp.dropout import drop_chunks, drop_frequencies, notch

SR = 16000


def _tone(hz: float, seconds: float = 0.5) -> np.ndarray:
    return np.sin(2 * np.pi * hz * np.arange(int(SR * seconds)) / SR).astype(np.float32)


def _gain_db(h: np.ndarray, hz: float) -> float:
    x = _tone(hz)
    y = np.convolve(x, h, mode="same")[1000:-1000]
    return 20 * np.log10(np.std(y) / np.std(x[1000:-1000]))


def test_notch_removes_its_band_and_passes_the_rest():
    h = notch(0.5, 0.05)                                        # 4 kHz +- 400 Hz at 16 kHz
    assert _gain_db(h, 4000) < -40
    assert abs(_gain_db(h, 1000)) < 0.1 and abs(_gain_db(h, 7000)) < 0.1
    assert abs(h.sum() - 1) < 1e-3                              # DC passes


def test_drop_frequencies_one_filter_for_the_batch():
    wavs = np.stack([_tone(500) + _tone(3000), _tone(500) + _tone(3000)])
    out = drop_frequencies(wavs, np.random.default_rng(0))
    assert out.shape == wavs.shape and out.dtype == wavs.dtype
    np.testing.assert_allclose(out[0], out[1])                 # the same notches for every row
    assert not np.allclose(out, wavs, atol=1e-3)
    np.testing.assert_array_equal(out, drop_frequencies(wavs, np.random.default_rng(0)))


def test_drop_chunks_zeroes_one_to_five_stretches_per_row():
    wavs = np.ones((50, 16000), dtype=np.float32)
    out = drop_chunks(wavs, np.random.default_rng(1))
    assert np.all(wavs == 1)                                    # the input is left as it was
    zeros = (out == 0).sum(axis=1)
    assert zeros.min() >= 1000 and zeros.max() <= 5 * 2000
    runs = [np.diff(np.concatenate([[0], (row == 0).astype(int), [0]])) for row in out]
    starts = [int((r == 1).sum()) for r in runs]
    assert 1 <= min(starts) and max(starts) <= 5 and len(set(starts)) > 1
    short = drop_chunks(np.ones((2, 500), dtype=np.float32), np.random.default_rng(2))
    assert np.all(short == 0)                                   # a stretch longer than the row takes all of it
