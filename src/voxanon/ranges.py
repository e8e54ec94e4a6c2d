"""Valid ranges of parameters, checked by meaning when a configuration or command line is parsed.

One :class:`Range` serves anonymizer config fields (``param(..., range=Range(...))``,
checked when an anonymizer is built and shown by ``voxanon list``) and
command-line options (``type=Range(1).option(int)``). A value outside its range,
NaN or infinite raises :class:`voxanon.errors.ConfigError` naming the parameter
and the range. This module imports nothing heavy (the CLI uses it while
building its parser).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass

from voxanon.errors import ConfigError


@dataclass(frozen=True)
class Range:
    """Numbers in ``[lo, hi]`` (``(lo, ...`` / ``..., hi)`` when ``lo_open`` / ``hi_open``); None: unbounded.

    Every value must also be finite: no parameter means anything at ``inf`` or ``nan``.
    """

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False

    def __contains__(self, value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return False
        if self.lo is not None and (value <= self.lo if self.lo_open else value < self.lo):
            return False
        return self.hi is None or (value < self.hi if self.hi_open else value <= self.hi)

    def __str__(self) -> str:
        if self.lo is not None and self.hi is not None:
            return f"{'(' if self.lo_open else '['}{self.lo:g}, {self.hi:g}{')' if self.hi_open else ']'}"
        if self.lo is not None:
            return f"{'>' if self.lo_open else '>='} {self.lo:g}"
        if self.hi is not None:
            return f"{'<' if self.hi_open else '<='} {self.hi:g}"
        return "finite"

    def phrase(self) -> str:
        """The range as words: ``in [0, 1]``, ``>= 1``."""
        return f"in {self}" if self.lo is not None and self.hi is not None else str(self)

    def check(self, name: str, value: object) -> None:
        """Raise ConfigError unless ``value`` lies in the range; the message names ``name``."""
        if value not in self:
            raise ConfigError(f"{name} must be a finite number {self.phrase()}, got {value!r}")

    def option(self, kind: Callable[[str], float] = float) -> Callable[[str], float]:
        """An argparse ``type`` converting with ``kind`` and checking the range."""

        def convert(text: str) -> float:
            try:
                value = kind(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"expected {kind.__name__} {self.phrase()}, got {text!r}") from None
            if value not in self:
                raise argparse.ArgumentTypeError(f"must be {self.phrase()}, got {text}")
            return value

        convert.__name__ = kind.__name__
        return convert
