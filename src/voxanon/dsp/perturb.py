"""Random voice perturbations (vocal-tract warp + F0 scaling through WORLD) that hide who is speaking.

Used to train models on content features that carry less speaker identity: the
content is computed on a perturbed copy while the target stays the clean speech.
"""

from __future__ import annotations

import numpy as np

from voxanon.dsp.warp import warp_envelope
from voxanon.dsp.world import WorldFeatures, synthesize


def random_factors(rng: np.random.Generator, max_warp: float = 0.18, min_warp: float = 0.06,
                   max_semitones: float = 6.0, min_semitones: float = 2.0) -> tuple[float, float]:
    """A warp factor and an F0 ratio, each away from identity: ``exp(+-U(min_warp, max_warp))`` and
    ``2 ** (+-U(min_semitones, max_semitones) / 12)``, signs drawn independently."""
    log_alpha = rng.uniform(min_warp, max_warp) * rng.choice((-1.0, 1.0))
    semis = rng.uniform(min_semitones, max_semitones) * rng.choice((-1.0, 1.0))
    return float(np.exp(log_alpha)), float(2.0 ** (semis / 12.0))


def perturb_voice(features: WorldFeatures, alpha: float, f0_ratio: float) -> np.ndarray:
    """The WORLD resynthesis of ``features`` with the envelope warped by ``alpha`` and F0 scaled by ``f0_ratio``."""
    return synthesize(features.replace(sp=warp_envelope(features.sp, alpha), f0=features.f0 * f0_ratio))
