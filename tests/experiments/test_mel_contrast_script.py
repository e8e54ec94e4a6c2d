"""experiments/bench_b5_mel_contrast.py's scaling of the mels' movement over time."""

from __future__ import annotations

import numpy as np

from tests.helpers.scripts import script_fixture

bench = script_fixture("bench_b5_mel_contrast")


def test_sharpened_scales_each_bins_deviation_from_its_mean(bench):
    mel = np.random.default_rng(0).normal(-5.0, 2.0, size=(50, 80)).astype(np.float32)
    assert np.allclose(bench.sharpened(mel, 1.0), mel, atol=1e-5)
    out = bench.sharpened(mel, 1.4)
    assert np.allclose(out.mean(0), mel.mean(0), atol=1e-4)
    assert np.allclose(out.std(0), 1.4 * mel.std(0), rtol=1e-4)
    assert np.allclose(bench.sharpened(mel, 0.0), np.broadcast_to(mel.mean(0), mel.shape), atol=1e-5)
