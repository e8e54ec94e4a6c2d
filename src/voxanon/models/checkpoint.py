"""Saving torch checkpoints atomically; reading them safely and checking a state dict key by key."""

from __future__ import annotations

import os
from collections.abc import Mapping

import torch

from voxanon.atomic import atomic_open


def save_atomic(obj: object, path: str | os.PathLike) -> None:
    """``torch.save`` through a temporary file and a rename (never a partial checkpoint)."""
    with atomic_open(path) as fh:
        torch.save(obj, fh)


def load_checkpoint(path: str | os.PathLike, what: str, error: type[Exception]) -> object:
    """``torch.load`` of tensors and plain containers only (``weights_only``), on the CPU.

    A missing or unreadable file raises ``error`` saying which ``what`` it is.
    """
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise error(f"{what} not found: {os.fspath(path)}") from None
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is a bad checkpoint
        raise error(f"{what} {os.fspath(path)} cannot be read: {exc}") from exc


def check_state_keys(state: Mapping[str, torch.Tensor], shapes: Mapping[str, tuple[int, ...]], what: str,
                     error: type[Exception], hint: str) -> None:
    """Raise ``error`` naming the first key of ``state`` missing from, absent in or shaped unlike ``shapes``.

    ``what`` names the checkpoint, ``hint`` says what a mismatch probably means.
    """
    missing = [k for k in shapes if k not in state]
    if missing:
        raise error(f"{what}: missing key {missing[0]!r} ({len(missing)} missing); {hint}")
    unexpected = [k for k in state if k not in shapes]
    if unexpected:
        raise error(f"{what}: unexpected key {unexpected[0]!r} ({len(unexpected)} unexpected); {hint}")
    for k, shape in shapes.items():
        if tuple(state[k].shape) != tuple(shape):
            raise error(f"{what}: key {k!r} has shape {tuple(state[k].shape)}, expected {tuple(shape)}; {hint}")
