"""Order-free seeded choices: every choice is a hash of the seed and the thing it is for."""

from __future__ import annotations

import hashlib


def unit(seed: int, *keys: str) -> float:
    """A number in [0, 1) from ``sha256(seed/key/...)``; equal inputs give equal outputs."""
    digest = hashlib.sha256("/".join([str(seed), *keys]).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0 ** 64
