"""Prosody changes after synthesis: F0 level and intonation range by WORLD resynthesis."""

from __future__ import annotations

import numpy as np

from voxanon.dsp import world


def shift_pitch(wav: np.ndarray, sr: int, factor: float, range_factor: float = 1.0) -> np.ndarray:
    """Scale F0 by ``factor`` and its log-excursions around the mean by ``range_factor`` (WORLD, DIO F0).

    The spectral envelope and aperiodicity are kept; the output has the input's length.
    Unvoiced input is returned unchanged.
    """
    features = world.analyze(wav, sr, f0_floor=71.0, f0_ceil=800.0)
    f0 = features.f0
    voiced = f0 > 0
    if not np.any(voiced):
        return wav
    log_f0 = np.log(f0[voiced])
    mean = log_f0.mean()
    new_f0 = np.zeros_like(f0)
    new_f0[voiced] = np.exp(mean + range_factor * (log_f0 - mean)) * factor
    return world.synthesize(features.replace(f0=new_f0))
