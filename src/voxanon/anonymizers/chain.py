"""Chain: several anonymizers applied in order from one config.

Step ``i`` draws from child ``i`` of the utterance rng (``rng.spawn``; a
one-step chain uses the rng itself). Each step gets its input resampled to its
preferred rate; the chain's output rate is the last step's.

Fusion: with ``fuse`` on, a run of consecutive WORLD-domain steps (``world`` and
the prosody transforms) with the same preferred rate (all of voxanon's work at
the input rate) shares one WORLD analysis and one synthesis, with the
analysis settings of the run's first step; each step transforms the features of
the previous one. This saves time and vocoder passes, and a fused chain
``[world, t1, t2]`` gives exactly the output of ``world`` with
``prosody = [t1, t2]``.

Long inputs: a chain of steps that keep the input's rate is chunked as a
whole with the first step's chunking (each chunk runs every step, converting
against that chunk's F0 statistics); in other chains each step chunks itself.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from voxanon.anonymizers.base import Anonymizer, param
from voxanon.anonymizers.steps import (
    at_rate,
    build_specs,
    component_files,
    config_hash,
    normalize_specs,
    run_at_rate,
    spawn,
)
from voxanon.anonymizers.world import WorldDomain, run_world
from voxanon.errors import ConfigError


class Chain(Anonymizer):
    """Apply ``steps`` in order, fusing consecutive WORLD-domain steps."""

    name = "chain"

    @dataclasses.dataclass(frozen=True)
    class Config:
        steps: tuple[dict, ...] = param(
            ({"method": "world", "params": {}}, {"method": "f0_mean_reversion", "params": {}}),
            'steps as [{"method": name, "params": {...}}, ...], applied in order',
        )
        fuse: bool = param(True, "share one WORLD analysis/synthesis across consecutive WORLD-domain steps")

        def __post_init__(self) -> None:
            steps = normalize_specs(self.steps, "steps")
            if not steps:
                raise ConfigError("steps: give at least one step")
            object.__setattr__(self, "steps", steps)

        __hash__ = config_hash

    def __init__(self, config: Config | None = None, **params) -> None:
        super().__init__(config, **params)
        self.steps = build_specs(self.config.steps, "steps")
        self.needs_model = any(s.needs_model for s in self.steps)
        if all(s.sample_rate is None for s in self.steps):  # rate-keeping steps: chunk the chain as a whole
            self.chunking = next((s.chunking for s in self.steps if s.chunking is not None), None)

    def model_files(self) -> dict[str, Path]:
        return component_files(self.steps)

    def groups(self) -> list[list[int]]:
        """Step indices grouped as they run: fused WORLD runs together, every other step alone."""
        out: list[list[int]] = []
        for i, step in enumerate(self.steps):
            previous = self.steps[i - 1] if i else None
            if (
                self.config.fuse
                and isinstance(step, WorldDomain)
                and isinstance(previous, WorldDomain)
                and step.sample_rate == previous.sample_rate
            ):
                out[-1].append(i)
            else:
                out.append([i])
        return out

    def anonymize(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        rngs = spawn(rng, len(self.steps))
        for group in self.groups():
            first = self.steps[group[0]]
            if len(group) == 1:
                wav, sr = run_at_rate(first, wav, sr, rngs[group[0]])
            else:
                wav, sr = at_rate(wav, sr, first.sample_rate)
                transforms = [self.steps[i].transform for i in group]
                wav, sr = run_world(wav, sr, transforms, [rngs[i] for i in group], first.config)
        return wav, sr

    def report(self) -> dict | None:
        """The report of the last step that has one (e.g. ``seca`` after a voice anonymizer)."""
        return next((r for r in (s.report() for s in reversed(self.steps)) if r is not None), None)
