"""A streaming session that times its chunks, and the latency summary both ``stream`` and ``serve`` print."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from voxanon.anonymizers.base import Anonymizer
from voxanon.anonymizers.streaming import StreamSession

#: per-chunk compute times kept for the percentiles (the most recent ones)
KEPT_TIMES = 10_000


def percentiles(values_ms, qs: tuple[int, ...] = (50, 95, 99)) -> dict[str, float]:
    """``{"p50": ..., "p95": ..., "p99": ...}`` of the values in ms (NaN when there are none)."""
    values = np.asarray(list(values_ms), dtype=np.float64)
    return {f"p{q}": float(np.percentile(values, q)) if values.size else float("nan") for q in qs}


@dataclass
class TimedSession:
    """A stream session that counts samples and times every ``process`` call (the last :data:`KEPT_TIMES` kept)."""

    session: StreamSession
    method: str

    def __post_init__(self) -> None:
        self.samples_in = 0
        self.samples_out = 0
        self.compute_ms: deque[float] = deque(maxlen=KEPT_TIMES)
        self.compute_total_ms = 0.0

    @classmethod
    def open(cls, anonymizer: Anonymizer, sample_rate: int, seed: int | str, key: str) -> TimedSession:
        """Open ``anonymizer``'s stream for utterance ``key`` (ConfigError when it cannot stream)."""
        return cls(anonymizer.open_stream(sample_rate, seed, key), anonymizer.name)

    @property
    def sample_rate(self) -> int:
        return self.session.sample_rate

    @property
    def latency_ms(self) -> float:
        return self.session.latency_ms

    def process(self, chunk: np.ndarray) -> np.ndarray:
        """The session's output for ``chunk``, timed."""
        start = time.perf_counter()
        out = self.session.process(chunk)
        self.compute_ms.append(1000.0 * (time.perf_counter() - start))
        self.compute_total_ms += self.compute_ms[-1]
        self.samples_in += len(chunk)
        self.samples_out += out.size
        return out

    def flush(self) -> np.ndarray:
        """The rest of the output."""
        out = self.session.flush()
        self.samples_out += out.size
        return out

    def summary(self) -> dict:
        """Method, rate, samples, algorithmic latency and per-chunk compute percentiles (JSON-serialisable)."""
        return {"method": self.method, "sample_rate": self.sample_rate, "samples_in": self.samples_in,
                "samples_out": self.samples_out, "latency_ms": round(self.latency_ms, 3),
                "compute_ms": {k: round(v, 3) for k, v in percentiles(self.compute_ms).items()}}
