"""experiments/bench_content_layers_phones.py: each layer read from one encoder pass equals that layer's own
encoder, and the linear probe learns separable phones."""

from __future__ import annotations

import numpy as np

from tests.helpers.scripts import script_fixture
from voxanon.models.content import load_content_encoder

bench = script_fixture("bench_content_layers_phones")


def test_one_pass_gives_each_layers_own_features(bench):
    encoders = bench.layer_encoders("whisper-tiny", [2, 4])
    assert [e.layer for e in encoders] == [2, 4]
    t = np.arange(16000 * 2) / 16000
    wav = (0.3 * np.sin(2 * np.pi * 180 * t) * (1 + np.sin(2 * np.pi * 3 * t))).astype(np.float32)
    for enc in encoders:
        np.testing.assert_array_equal(enc.encode(wav, 16000), load_content_encoder(f"whisper-tiny:{enc.layer}")
                                      .encode(wav, 16000))
    assert encoders[0].model.last[1][-1].shape[-1] == 384 and len(encoders[0].model.last[1]) == 5  # up to layer 4


def test_probe_learns_separable_phones_and_scores_errors(bench):
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(5, 16)).astype(np.float32) * 3
    y = rng.integers(5, size=8000)
    x = centres[y] + rng.normal(size=(8000, 16)).astype(np.float32)
    probe = bench.fit_probe(x[:6000], y[:6000], seed=0)
    # the Bayes classifier of equal-variance Gaussians: the nearest centre
    bayes = 100 * np.mean(((x[6000:, None] - centres) ** 2).sum(-1).argmin(1) != y[6000:])
    assert bench.frame_error(probe, x[6000:], y[6000:]) <= bayes + 1.5
    assert bench.frame_error(probe, x[6000:], (y[6000:] + 1) % 5) > 90.0
