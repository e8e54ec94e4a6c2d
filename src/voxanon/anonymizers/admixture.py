"""Admixture: per utterance, one of several anonymizers, picked at random with given probabilities.

As VPC 2024 T8-3/4/5, which send a fraction p (0.2, 0.325, 0.4) of the
utterances through one system and the rest through another. The choice is the
first draw from the utterance rng; the same rng then goes on to the chosen
component, so every utterance is reproducible on its own. The output rate is the
chosen component's.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np

from voxanon.anonymizers.base import Anonymizer, param
from voxanon.anonymizers.steps import (
    build_specs,
    component_files,
    config_hash,
    normalize_specs,
    run_at_rate,
)
from voxanon.errors import ConfigError


class Admixture(Anonymizer):
    """Pick one component anonymizer per utterance with probability ``p``."""

    name = "admixture"

    @dataclasses.dataclass(frozen=True)
    class Config:
        components: tuple[dict, ...] = param(
            (
                {"method": "cascade", "params": {}, "p": 0.325},
                {"method": "world", "params": {}, "p": 0.675},
            ),
            'components as [{"method": name, "params": {...}, "p": probability}, ...]; p must sum to 1 '
            "(default: T8-4's mix, the ASR-TTS cascade for 32.5 % of utterances, voice conversion for the rest)",
        )

        def __post_init__(self) -> None:
            components = normalize_specs(self.components, "components", extra=("p",))
            if not components:
                raise ConfigError("components: give at least one component")
            for i, c in enumerate(components):
                if isinstance(c["p"], bool) or not isinstance(c["p"], (int, float)) or not c["p"] >= 0:
                    raise ConfigError(f"components[{i}]: p must be a non-negative number, got {c['p']!r}")
            total = sum(c["p"] for c in components)
            if not math.isclose(total, 1.0, abs_tol=1e-6):
                raise ConfigError(f"components: probabilities sum to {total}, not 1")
            object.__setattr__(self, "components", components)

        __hash__ = config_hash

    def __init__(self, config: Config | None = None, **params) -> None:
        super().__init__(config, **params)
        self.components = build_specs(self.config.components, "components")
        self.needs_model = any(c.needs_model for c in self.components)  # e.g. when the cascade is mixed in
        p = np.array([c["p"] for c in self.config.components], dtype=np.float64)
        self.probabilities = p / p.sum()

    def model_files(self) -> dict[str, Path]:
        return component_files(self.components)

    def choose(self, rng: np.random.Generator) -> int:
        """Index of the component for the utterance whose rng is ``rng`` (one draw)."""
        return int(rng.choice(len(self.components), p=self.probabilities))

    def anonymize(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        self._chosen = self.components[self.choose(rng)]
        return run_at_rate(self._chosen, wav, sr, rng)

    def report(self) -> dict | None:
        """The report of the component chosen for the last utterance."""
        chosen = getattr(self, "_chosen", None)
        return chosen.report() if chosen is not None else None
