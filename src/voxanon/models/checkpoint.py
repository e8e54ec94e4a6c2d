"""Saving torch checkpoints atomically."""

from __future__ import annotations

import os

import torch

from voxanon.atomic import atomic_open


def save_atomic(obj: object, path: str | os.PathLike) -> None:
    """``torch.save`` through a temporary file and a rename (never a partial checkpoint)."""
    with atomic_open(path) as fh:
        torch.save(obj, fh)
