"""Order-free seeded choices of the corpus: every choice is a hash of the seed and the thing it is for."""

from __future__ import annotations

from voxanon.anonymizers.base import seed_digest


def unit(seed: int, key: str, *keys: str) -> float:
    """A number in [0, 1) from :func:`~voxanon.anonymizers.base.seed_digest` of ``seed`` and the keys joined by
    ``/``; equal inputs give equal outputs."""
    return int.from_bytes(seed_digest(seed, "/".join((key, *keys)))[:8], "big") / 2.0 ** 64
