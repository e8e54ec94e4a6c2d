"""Saving torch checkpoints atomically; reading them safely and checking a state dict key by key."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping
from typing import TypeVar

import torch

from voxanon.atomic import atomic_open
from voxanon.models.model_files import looks_like, model_file_error, require_keys, short_reason, unreadable_reason

T = TypeVar("T")


def save_atomic(obj: object, path: str | os.PathLike) -> None:
    """``torch.save`` through a temporary file and a rename (never a partial checkpoint)."""
    with atomic_open(path) as fh:
        torch.save(obj, fh)


def load_checkpoint(path: str | os.PathLike, what: str, error: type[Exception], *, expected: str | None = None,
                    todo: str | None = None) -> object:
    """``torch.load`` of tensors and plain containers only (``weights_only``), on the CPU.

    Every model file voxanon reads with torch comes through here. A missing, empty, truncated, foreign or
    hostile file (a pickle that would run code) raises ``error`` in one line: ``what`` and the path, a short
    reason of voxanon's own (never PyTorch's advice to load unsafely), ``expected`` (the format or kind) and
    ``todo`` (what to do). PyTorch's warnings about the file are not shown.
    """
    todo = todo or "check the path, or write the file again"
    if not os.path.exists(path):
        raise model_file_error(error, what, path, "not found", expected=expected, todo=todo)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is a bad checkpoint
        raise model_file_error(error, what, path, f"cannot be read ({unreadable_reason(path, exc)})",
                               expected=expected, todo=todo) from exc


def check_state_keys(state: Mapping[str, torch.Tensor], shapes: Mapping[str, tuple[int, ...]], what: str,
                     error: type[Exception], hint: str) -> None:
    """Raise ``error`` naming the first key of ``state`` missing from, absent in or shaped unlike ``shapes``.

    ``what`` names the checkpoint, ``hint`` says what a mismatch probably means.
    """
    if not isinstance(state, Mapping):
        raise error(f"{what}: holds {looks_like(state)}, not a state dict; {hint}")
    missing = [k for k in shapes if k not in state]
    if missing:
        raise error(f"{what}: missing key {missing[0]!r} ({len(missing)} missing); {hint}")
    unexpected = [k for k in state if k not in shapes]
    if unexpected:
        raise error(f"{what}: unexpected key {unexpected[0]!r} ({len(unexpected)} unexpected); {hint}")
    for k, shape in shapes.items():
        got = getattr(state[k], "shape", None)
        if got is None or tuple(got) != tuple(shape):
            found = f"shape {tuple(got)}" if got is not None else f"a {type(state[k]).__name__}"
            raise error(f"{what}: key {k!r} has {found}, expected {tuple(shape)}; {hint}")


def load_format(path: str | os.PathLike, what: str, error: type[Exception], fmt: str, keys: tuple[str, ...], *,
                todo: str) -> Mapping:
    """:func:`load_checkpoint` of a voxanon checkpoint ``{"format": fmt, <keys>...}``; ``error`` in one line saying
    what the file is instead when it is of another kind."""
    expected = f"a {fmt!r} checkpoint"
    ckpt = load_checkpoint(path, what, error, expected=expected, todo=todo)
    if not isinstance(ckpt, Mapping) or ckpt.get("format") != fmt:
        raise model_file_error(error, what, path, f"is {looks_like(ckpt)}", expected=expected, todo=todo)
    return require_keys(ckpt, keys, what, path, error, expected=expected, todo=todo)


def build_from_config(build: Callable[[], T], what: str, path: str | os.PathLike, error: type[Exception], *,
                      todo: str) -> T:
    """``build()`` (a network from a checkpoint's config); ``error`` in one line when the config does not fit."""
    try:
        return build()
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise model_file_error(error, what, path, f"has a config that does not fit ({short_reason(exc)})",
                               todo=todo) from exc


def load_state_checked(module: torch.nn.Module, state: Mapping[str, torch.Tensor], what: str,
                       error: type[Exception], hint: str) -> None:
    """``module.load_state_dict(state)`` after :func:`check_state_keys` (never PyTorch's multi-line message)."""
    check_state_keys(state, {k: tuple(v.shape) for k, v in module.state_dict().items()}, what, error, hint)
    module.load_state_dict(state)
