"""Energy-frame speech detection (voxanon.audio.level)."""

from __future__ import annotations

import numpy as np
import pytest

from voxanon.audio.level import speech_edges, speech_frames
from voxanon.audio.synthetic import speech_like


@pytest.mark.parametrize("sr, noise", [(16000, 0.0), (22050, 3e-3), (8000, 1e-2)])
def test_speech_edges_find_the_burst_in_silence_or_noise(sr: int, noise: float):
    wav = noise * np.random.default_rng(0).standard_normal(3 * sr)
    wav[sr: 2 * sr] += 0.3 * speech_like(1.0, sr, seed=1)
    frames = speech_frames(wav.astype(np.float32), sr)
    start, end = speech_edges(frames, sr, 0.0, 3.0)
    assert abs(start - 1.0) < 0.02 and abs(end - 2.0) < 0.02
    assert speech_edges(frames, sr, 2.1, 3.0) is None  # only noise there
    assert speech_edges(frames, sr, 1.5, 2.5)[0] == pytest.approx(1.5, abs=0.011)
