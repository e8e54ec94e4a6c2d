"""Fixed-step ODE solvers for ``dx/dt = f(x, t)`` from ``t0`` to ``t1`` (either direction)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from voxanon.errors import ConfigError

Field = Callable[[torch.Tensor, float], torch.Tensor]


def _euler(f: Field, x: torch.Tensor, t: float, h: float) -> torch.Tensor:
    return x + h * f(x, t)


def _midpoint(f: Field, x: torch.Tensor, t: float, h: float) -> torch.Tensor:
    return x + h * f(x + 0.5 * h * f(x, t), t + 0.5 * h)


def _rk4(f: Field, x: torch.Tensor, t: float, h: float) -> torch.Tensor:
    k1 = f(x, t)
    k2 = f(x + 0.5 * h * k1, t + 0.5 * h)
    k3 = f(x + 0.5 * h * k2, t + 0.5 * h)
    k4 = f(x + h * k3, t + h)
    return x + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)


#: solver name -> one step ``(f, x, t, h) -> x(t + h)``
SOLVERS: dict[str, Callable[[Field, torch.Tensor, float, float], torch.Tensor]] = {
    "euler": _euler, "midpoint": _midpoint, "rk4": _rk4}


def integrate(f: Field, x: torch.Tensor, t0: float, t1: float, *, steps: int = 16,
              solver: str = "euler") -> torch.Tensor:
    """Integrate ``dx/dt = f(x, t)`` from ``t0`` to ``t1`` in ``steps`` equal steps of ``solver``."""
    if solver not in SOLVERS:
        raise ConfigError(f"unknown ODE solver {solver!r}: use one of {', '.join(SOLVERS)}")
    if not isinstance(steps, int) or steps < 1:
        raise ConfigError(f"ODE steps must be a positive integer, got {steps!r}")
    step = SOLVERS[solver]
    h = (t1 - t0) / steps
    for i in range(steps):
        x = step(f, x, t0 + i * h, h)
    return x
