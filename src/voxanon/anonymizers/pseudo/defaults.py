"""The pool and flow shipped in ``voxanon/resources/pseudo`` (see docs/pseudo_speakers.md for their origin)."""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from pathlib import Path

from voxanon.anonymizers.pseudo.pool import SpeakerPool, load_pool

DEFAULT_POOL = "pool_ge2e.npz"
DEFAULT_FLOW = "flow_ge2e.pt"


def default_file(name: str) -> Path:
    """The shipped file ``name`` (:data:`DEFAULT_POOL`, :data:`DEFAULT_FLOW`)."""
    return Path(str(files("voxanon.resources") / "pseudo" / name))


@lru_cache(maxsize=1)
def load_default_pool() -> SpeakerPool:
    """The shipped GE2E pool: the Kokoro corpus's training-side speakers (never its dev/test speakers)."""
    return load_pool(default_file(DEFAULT_POOL))


@lru_cache(maxsize=2)
def load_default_flow(device: str = "cpu"):
    """The shipped GE2E speaker flow (trained on the default pool's utterance embeddings)."""
    from voxanon.models.flow import load_flow

    return load_flow(default_file(DEFAULT_FLOW), device=device)
