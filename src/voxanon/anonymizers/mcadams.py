"""McAdams-coefficient anonymization, the VoicePrivacy 2024 baseline B2.

Per utterance, ``alpha ~ U(alpha_min, alpha_max)`` from the utterance rng (or a
fixed ``alpha``); the LPC pole angles of every 20 ms frame are raised to the
power ``alpha`` (:mod:`voxanon.dsp.mcadams`), and the output is peak-normalised
as VPC writes it (peak 32766 in 16-bit PCM). Silence stays silence; the output
has the input's length. The pole-angle warp depends on the sample rate, so the
method asks for 16 kHz, the rate VPC applies it at.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from voxanon.anonymizers.base import Anonymizer, param
from voxanon.dsp.mcadams import mcadams, normalization_gain


@dataclasses.dataclass(frozen=True)
class McAdamsConfig:
    """Parameters of the McAdams anonymizer (VPC 2024 B2 defaults)."""

    alpha_min: float = param(0.5, "lowest McAdams coefficient drawn per utterance")
    alpha_max: float = param(0.9, "highest McAdams coefficient drawn per utterance")
    alpha: float | None = param(None, "fixed McAdams coefficient for every utterance (None: draw one)")
    winlen: float = param(0.02, "analysis/synthesis window length in seconds")
    shift: float = param(0.01, "hop between frames in seconds")
    lp_order: int = param(20, "LPC order")

    def __post_init__(self) -> None:
        if not 0 < self.alpha_min <= self.alpha_max:
            raise ValueError(f"need 0 < alpha_min <= alpha_max, got {self.alpha_min}, {self.alpha_max}")
        if self.alpha is not None and not self.alpha > 0:
            raise ValueError(f"alpha must be > 0, got {self.alpha}")
        if not 0 < self.shift <= self.winlen:
            raise ValueError(f"need 0 < shift <= winlen, got shift={self.shift}, winlen={self.winlen}")
        if self.lp_order < 1:
            raise ValueError(f"lp_order must be >= 1, got {self.lp_order}")


class McAdams(Anonymizer):
    """VPC 2024 B2: McAdams transformation of the LPC pole angles."""

    name = "mcadams"
    Config = McAdamsConfig
    sample_rate = 16000

    def draw_alpha(self, rng: np.random.Generator) -> float:
        """The utterance's coefficient: the fixed ``alpha``, or one draw of ``U(alpha_min, alpha_max)``."""
        cfg = self.config
        return float(cfg.alpha) if cfg.alpha is not None else float(rng.uniform(cfg.alpha_min, cfg.alpha_max))

    def anonymize(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        """Transform with the utterance's alpha, then peak-normalise as VPC."""
        if np.ndim(wav) != 1:
            raise ValueError(f"mcadams: expected mono 1-D audio, got shape {np.shape(wav)}")
        cfg = self.config
        out = mcadams(
            wav, sr, self.draw_alpha(rng), winlen=cfg.winlen, shift=cfg.shift, lp_order=cfg.lp_order, dtype=np.float32
        )
        out *= np.float32(normalization_gain(out))
        return out, sr
