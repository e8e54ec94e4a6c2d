"""Shared timing for the benchmarks: process CPU seconds per audio second."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def cpu_rtf(fn: Callable[[], object], seconds: float, repeats: int) -> float:
    """Median process CPU seconds per audio second over ``repeats`` calls of ``fn`` (after one warm-up call)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times) / seconds
