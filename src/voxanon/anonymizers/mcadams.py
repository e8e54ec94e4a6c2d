"""McAdams-coefficient anonymization, the VoicePrivacy 2024 baseline B2.

Per utterance, ``alpha ~ U(alpha_min, alpha_max)`` from the utterance rng (or a
fixed ``alpha``); the LPC pole angles of every 20 ms frame are raised to the
power ``alpha`` (:mod:`voxanon.dsp.mcadams`), and the output is peak-normalised
as VPC writes it (peak 32766 in 16-bit PCM). Silence stays silence; the output
has the input's length. The pole-angle warp depends on the sample rate, so the
method asks for 16 kHz, the rate VPC applies it at.

The method streams (:meth:`McAdams.stream`): the session draws the same alpha
as the offline path and yields the unnormalised transform, which equals the
offline output before its peak normalisation sample for sample, whatever the
chunking. The normalisation needs the whole utterance's peak, so a stream
keeps the transform's own level; scaling the streamed output by
:func:`~voxanon.dsp.mcadams.normalization_gain` of itself (as float32) gives the
offline output exactly.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from voxanon.anonymizers.base import Anonymizer, check_config, param
from voxanon.anonymizers.streaming import StreamSession
from voxanon.dsp.mcadams import McAdamsStream, mcadams, normalization_gain
from voxanon.errors import ConfigError, DataError
from voxanon.ranges import Range


@dataclasses.dataclass(frozen=True)
class McAdamsConfig:
    """Parameters of the McAdams anonymizer (VPC 2024 B2 defaults)."""

    alpha_min: float = param(0.5, "lowest McAdams coefficient drawn per utterance", range=Range(0, 2, lo_open=True))
    alpha_max: float = param(0.9, "highest McAdams coefficient drawn per utterance", range=Range(0, 2, lo_open=True))
    alpha: float | None = param(
        None, "fixed McAdams coefficient for every utterance (None: draw one)", range=Range(0, 2, lo_open=True)
    )
    winlen: float = param(0.02, "analysis/synthesis window length in seconds", range=Range(0.005, 0.2))
    shift: float = param(0.01, "hop between frames in seconds", range=Range(0.001, 0.1))
    lp_order: int = param(20, "LPC order", range=Range(1, 100))

    def __post_init__(self) -> None:
        check_config(self)
        if not self.alpha_min <= self.alpha_max:
            raise ConfigError(f"need alpha_min <= alpha_max, got {self.alpha_min}, {self.alpha_max}")
        if not self.shift <= self.winlen:
            raise ConfigError(f"need shift <= winlen, got shift={self.shift}, winlen={self.winlen}")


class McAdamsSession(StreamSession):
    """Streaming McAdams with one alpha: :class:`~voxanon.dsp.mcadams.McAdamsStream`, unnormalised.

    A sample is final once the last frame that covers it has been analysed: at
    most one window less one sample after it arrives, which is the declared latency.
    """

    def __init__(self, alpha: float, sr: int, config: McAdamsConfig) -> None:
        self.sample_rate = sr
        self.alpha = alpha
        self._stream = McAdamsStream(alpha, sr, winlen=config.winlen, shift=config.shift, lp_order=config.lp_order)

    @property
    def latency_ms(self) -> float:
        """``(window - 1)`` samples, in ms."""
        return 1000.0 * (self._stream.n - 1) / self.sample_rate

    def process(self, chunk: np.ndarray) -> np.ndarray:
        """Transform the next samples; return the final ones."""
        return self._stream.process(chunk)

    def flush(self) -> np.ndarray:
        """Transform the last frames (zero-padded past the end); return the rest."""
        return self._stream.flush()


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
            raise DataError(f"mcadams: expected mono 1-D audio, got shape {np.shape(wav)}")
        cfg = self.config
        out = mcadams(
            wav, sr, self.draw_alpha(rng), winlen=cfg.winlen, shift=cfg.shift, lp_order=cfg.lp_order, dtype=np.float32
        )
        out *= np.float32(normalization_gain(out))
        return out, sr

    def stream(self, sr: int, rng: np.random.Generator) -> McAdamsSession:
        """A session with the utterance's alpha; its output is the transform before peak normalisation."""
        return McAdamsSession(self.draw_alpha(rng), sr, self.config)
