"""Pseudo-speaker generators on speaker embeddings, and the pool and flow they draw from.

``make_generator(kind, pool=None, flow=None, **params)`` returns a callable
``(source_embedding, rng) -> pseudo_embedding``; ``kind`` is one of
:data:`GENERATORS`:

``pool``          VPC B1: average ``n_avg`` (100) random speakers of the ``n_far`` (200) farthest in the pool
``same_gender``   the same within the source's predicted gender
``cross_gender``  the same within the other gender
``gaussian``      a draw from a Gaussian fitted to the pool, mixed with the source by ``alpha`` (0)
``f3va``          the F3-VA flow-matching anonymizer: ``w`` (0) or ``w_range``, ``solver`` (euler), ``steps`` (16)

``pool=None`` / ``flow=None`` use the defaults shipped in ``voxanon/resources/pseudo``
(:func:`load_default_pool`, :func:`load_default_flow`); see docs/pseudo_speakers.md.
The torch-based flow is imported only when ``f3va`` is asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from voxanon.anonymizers.pseudo.defaults import load_default_flow, load_default_pool
from voxanon.anonymizers.pseudo.generators import (
    GaussianGenerator,
    PoolGenerator,
    predict_gender,
)
from voxanon.anonymizers.pseudo.pool import SpeakerPool, load_pool
from voxanon.errors import ConfigError

GENERATORS = ("pool", "same_gender", "cross_gender", "gaussian", "f3va")

#: parameters each kind accepts, with their types
PARAMS: dict[str, dict[str, type]] = {
    "pool": {"n_far": int, "n_avg": int},
    "same_gender": {"n_far": int, "n_avg": int},
    "cross_gender": {"n_far": int, "n_avg": int},
    "gaussian": {"alpha": float},
    "f3va": {"w": float, "w_range": tuple, "solver": str, "steps": int},
}

__all__ = ["GENERATORS", "PARAMS", "SpeakerPool", "load_default_flow", "load_default_pool", "load_pool",
           "make_generator", "predict_gender"]


def _coerce(kind: str, name: str, value: Any, typ: type) -> Any:
    """``value`` as ``typ`` (numbers and ranges may come as strings from ``--param``); ConfigError if not."""
    try:
        if typ is tuple:
            if isinstance(value, str):
                value = value.strip("()[] ").replace(":", ",").split(",")
            lo, hi = (float(v) for v in value)
            return (lo, hi)
        if typ is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            return int(value)
        return typ(value)
    except (TypeError, ValueError):
        expected = "two numbers 'lo,hi'" if typ is tuple else f"a {typ.__name__}"
        raise ConfigError(f"pseudo-speaker generator {kind!r}: parameter {name}={value!r} must be {expected}") from None


def make_generator(kind: str, *, pool: SpeakerPool | None = None, flow=None,
                   **params: Any) -> Callable[[np.ndarray, np.random.Generator], np.ndarray]:
    """A pseudo-speaker generator of ``kind`` (see the module docstring); ConfigError on a bad kind or parameter."""
    if kind not in GENERATORS:
        raise ConfigError(f"unknown pseudo-speaker generator {kind!r}: use one of {', '.join(GENERATORS)}")
    allowed = PARAMS[kind]
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ConfigError(f"pseudo-speaker generator {kind!r} has no parameter {unknown[0]!r} "
                          f"(it takes {', '.join(allowed)})")
    params = {k: _coerce(kind, k, v, allowed[k]) for k, v in params.items() if v is not None}
    if kind == "f3va":
        from voxanon.anonymizers.pseudo.f3va import F3VAGenerator

        return F3VAGenerator(flow, **params)
    pool = pool if pool is not None else load_default_pool()
    if kind == "gaussian":
        return GaussianGenerator(pool, **params)
    gender = {"pool": None, "same_gender": "same", "cross_gender": "cross"}[kind]
    return PoolGenerator(pool, gender=gender, **params)
