"""Progress lines for long work: items done, rate, ETA and optional real-time factor."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _fmt_time(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    """Report progress of ``total`` items on stderr (silent when ``quiet``).

    Call :meth:`update` after each item with the seconds of audio it covered
    (for the real-time factor) and whether it failed.
    """

    def __init__(self, total: int, desc: str, *, quiet: bool = False, stream: TextIO | None = None,
                 min_interval: float | None = None) -> None:
        self.total, self.desc, self.quiet = total, desc, quiet
        self.stream = stream or sys.stderr
        self.done = self.failed = 0
        self.audio_seconds = 0.0
        self.start = time.monotonic()
        self._last = 0.0
        self._printed_done = -1
        # a terminal gets a live line; a log file one line every 10 s
        self.min_interval = min_interval if min_interval is not None else (0.5 if self.stream.isatty() else 10.0)

    def update(self, n: int = 1, *, audio_seconds: float = 0.0, failed: bool = False) -> None:
        """Count ``n`` finished items."""
        self.done += n
        self.failed += n if failed else 0
        self.audio_seconds += audio_seconds
        now = time.monotonic()
        if now - self._last >= self.min_interval or self.done >= self.total:
            self._last = now
            self._print(final=False)

    @property
    def rtf(self) -> float | None:
        """Wall time divided by audio time processed so far (None before any audio)."""
        if self.audio_seconds <= 0:
            return None
        return (time.monotonic() - self.start) / self.audio_seconds

    def line(self) -> str:
        """The current progress line."""
        elapsed = time.monotonic() - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else float("nan")
        parts = [f"{self.desc}: {self.done}/{self.total}", f"{rate:.1f} it/s", f"elapsed {_fmt_time(elapsed)}"]
        if self.done < self.total and rate > 0:
            parts.append(f"ETA {_fmt_time(eta)}")
        if self.rtf is not None:
            parts.append(f"RTF {self.rtf:.4f}")
        if self.failed:
            parts.append(f"{self.failed} failed")
        return " | ".join(parts)

    def _print(self, final: bool) -> None:
        if self.quiet:
            return
        tty = self.stream.isatty()
        if final and not tty and self._printed_done == self.done:
            return  # the last line already printed is the final state
        self._printed_done = self.done
        print(self.line(), end="\n" if final or not tty else "\r", file=self.stream, flush=True)

    def close(self) -> None:
        """Print the final line (once: not repeated in a log when it is already there)."""
        self._print(final=True)
