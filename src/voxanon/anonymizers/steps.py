"""Nested anonymizer specifications for composite anonymizers (chain, admixture, world's prosody).

A specification is a JSON-style dict ``{"method": name, "params": {...}}``
(admixture adds ``"p"``). Configs keep them as a tuple of plain dicts, so
``make_config(Config, json.load(f))`` and ``settings()`` round-trip through JSON.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from voxanon.anonymizers import registry
from voxanon.anonymizers.base import Anonymizer
from voxanon.audio.io import resample
from voxanon.errors import ConfigError


def normalize_specs(specs: Iterable[Any], field: str, extra: tuple[str, ...] = ()) -> tuple[dict[str, Any], ...]:
    """Validated deep copies of ``{"method", "params"[, extra...]}`` dicts; errors name ``field[i]``."""
    if isinstance(specs, (str, dict)):
        raise ConfigError(f"{field}: expected a list of {{'method': ..., 'params': {{...}}}} objects, got {specs!r}")
    out = []
    for i, spec in enumerate(specs):
        if not isinstance(spec, dict) or not isinstance(spec.get("method"), str):
            raise ConfigError(f"{field}[{i}]: expected an object with a 'method' name, got {spec!r}")
        unknown = sorted(set(spec) - {"method", "params", *extra})
        missing = sorted(set(extra) - set(spec))
        if unknown or missing:
            raise ConfigError(f"{field}[{i}]: unknown key(s) {unknown}, missing key(s) {missing}")
        params = spec.get("params") or {}
        if not isinstance(params, dict):
            raise ConfigError(f"{field}[{i}]: 'params' must be an object, got {params!r}")
        try:
            out.append(json.loads(json.dumps({**spec, "params": params})))
        except TypeError as exc:
            raise ConfigError(f"{field}[{i}]: not JSON-serialisable ({exc})") from None
    return tuple(out)


def build_specs(specs: Iterable[dict[str, Any]], field: str) -> list[Anonymizer]:
    """Instantiate each specification through the registry; errors name ``field[i]``."""
    built = []
    for i, spec in enumerate(specs):
        try:
            built.append(registry.build(spec["method"], spec["params"]))
        except (KeyError, ValueError, TypeError) as exc:
            raise ConfigError(f"{field}[{i}] ({spec['method']}): {exc}") from exc
    return built


def component_files(parts: Iterable[Anonymizer]) -> dict[str, Path]:
    """The :meth:`~voxanon.anonymizers.base.Anonymizer.model_files` of a composite method's parts, each role
    prefixed by the part's index (``0.model``)."""
    return {f"{i}.{role}": path for i, part in enumerate(parts) for role, path in part.model_files().items()}


def config_hash(config: Any) -> int:
    """Hash of a config by its canonical JSON (for frozen configs holding dicts)."""
    return hash(json.dumps(dataclasses.asdict(config), sort_keys=True))


def spawn(rng: np.random.Generator, n: int) -> list[np.random.Generator]:
    """Independent child generators for ``n`` steps; a single step uses ``rng`` itself."""
    return [rng] if n == 1 else list(rng.spawn(n))


def at_rate(wav: np.ndarray, sr: int, target: int | None) -> tuple[np.ndarray, int]:
    """``wav`` resampled to ``target`` Hz (unchanged when ``target`` is None or equal)."""
    if target is None or target == sr:
        return wav, sr
    return resample(wav, sr, target), target


def run_at_rate(anonymizer: Anonymizer, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Resample to the anonymizer's preferred rate, then anonymize (in chunks when the method asks)."""
    wav, sr = at_rate(wav, sr, anonymizer.sample_rate)
    return anonymizer.process(wav, sr, rng)
