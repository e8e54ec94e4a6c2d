"""Toy anonymizers for tests, importable as ``tests.helpers.toys:ToyGain`` etc.

Subprocesses find them when ``PYTHONPATH`` holds the repository root (:func:`tests.helpers.processes.subprocess_env`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from voxanon.anonymizers.base import Anonymizer, param


@dataclass(frozen=True)
class ToyConfig:
    delay: float = param(0.0, "seconds to sleep per utterance (to make runs slow enough to interrupt)")


class ToyGain(Anonymizer):
    """Test anonymizer: a random gain in [0.3, 0.9] with a random sign, from the rng."""

    name = "toy-gain"
    Config = ToyConfig

    def anonymize(self, wav, sr, rng):
        time.sleep(self.config.delay)
        return wav * (rng.uniform(0.3, 0.9) * rng.choice([-1.0, 1.0])), sr


class ToyGain8k(ToyGain):
    """ToyGain that wants 8 kHz input."""

    name = "toy-gain-8k"
    sample_rate = 8000


class ToyRaises(ToyGain):
    """Test anonymizer that always fails."""

    name = "toy-raises"

    def anonymize(self, wav, sr, rng):
        raise RuntimeError("toy failure")


@dataclass(frozen=True)
class ToyWeightsConfig:
    weights: str = param("", "a file standing for model weights (its content is not read)")


class ToyWeights(ToyGain):
    """ToyGain with a weights file: its content digest is part of the run's settings."""

    name = "toy-weights"
    Config = ToyWeightsConfig

    def anonymize(self, wav, sr, rng):
        return wav * 0.5, sr
