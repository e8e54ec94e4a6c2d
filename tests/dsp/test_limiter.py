"""Peak limiter and truncated-WAV detection: the signal-level pieces of 'no silent damage'."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers.audio import write_utterance
from voxanon.audio.wavcheck import wav_truncation
from voxanon.dsp import limiter
from voxanon.dsp.limiter import limit_peaks


def test_limiter_keeps_full_scale_and_touches_only_the_peaks() -> None:
    rng = np.random.default_rng(0)
    x = (0.2 * rng.standard_normal(16000)).astype(np.float32)
    x[8000:8003] = [1.7, -2.5, 1.2]
    y = limit_peaks(x, 16000)
    assert y.dtype == np.float32 and np.abs(y).max() <= 1.0 + 1e-6
    assert abs(y[8001]) > 0.99  # the peak is brought to full scale, not below
    w = 80  # 5 ms at 16 kHz
    far = np.r_[: 8000 - 2 * w, 8003 + 2 * w:16000]
    np.testing.assert_array_equal(y[far], x[far])  # exactly unchanged away from the peaks
    gain = y[8000 - w:8003 + w] / x[8000 - w:8003 + w]
    assert np.all((gain > 0) & (gain <= 1.0 + 1e-6))


def test_limiter_returns_its_input_when_nothing_exceeds_full_scale() -> None:
    x = np.linspace(-1.0, 1.0, 1000, dtype=np.float32)
    assert limit_peaks(x, 16000) is x


def test_limiter_in_blocks_equals_one_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    """Peaks at, just before and just after block edges; blocks without peaks are returned untouched."""
    x = np.clip(0.3 * np.random.default_rng(1).standard_normal(20000), -0.9, 0.9).astype(np.float32)
    for edge in (4000, 8000):
        for d in (-163, -81, -1, 0, 1, 80, 162):
            x[edge + d] = 1.5 if d % 2 else -1.7
    x[0], x[-1] = 1.3, -1.2
    whole = limit_peaks(x, 16000)
    monkeypatch.setattr(limiter, "BLOCK", 4000)
    blocks = limit_peaks(x, 16000)
    np.testing.assert_allclose(blocks, whole, rtol=0, atol=1e-7)  # the moving average's float rounding only
    assert np.abs(blocks).max() <= 1.0 + 1e-6
    np.testing.assert_array_equal(blocks[10000:19000], x[10000:19000])


def test_truncation_only_for_cut_short_wav_files(tmp_path: Path) -> None:
    whole = write_utterance(tmp_path / "whole.wav")
    assert wav_truncation(whole) is None
    cut = tmp_path / "cut.wav"
    cut.write_bytes(whole.read_bytes()[:1044])
    assert wav_truncation(cut).startswith("truncated WAV: header declares 9600 bytes of audio, the file holds 1000")
    assert wav_truncation(write_utterance(tmp_path / "x.flac")) is None
    assert wav_truncation(f"cat {cut} |") is None and wav_truncation(tmp_path / "missing.wav") is None
