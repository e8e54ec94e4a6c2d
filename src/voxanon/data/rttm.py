"""Who spoke when: RTTM files (NIST's Rich Transcription Time Marked format).

One ``SPEAKER`` line a turn, ten whitespace-separated fields::

    SPEAKER <recording> <channel> <start> <duration> <NA> <NA> <speaker> <NA> <NA>

Times are in seconds. Other line types (``SPKR-INFO``, ``LEXEME`` ...) and blank
lines are skipped. Every error names the file, the line and what is wrong.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from voxanon.atomic import write_texts
from voxanon.data.kaldi import read_text_file
from voxanon.errors import DataError

_FIELDS = 10


@dataclass(frozen=True, order=True)
class Turn:
    """One stretch of one speaker's speech in one recording (seconds)."""

    recording: str
    start: float
    duration: float
    speaker: str
    channel: int = 1

    @property
    def end(self) -> float:
        """When the turn ends (seconds)."""
        return self.start + self.duration


def seconds(text: str, what: str, where: str) -> float:
    """A time field in seconds (finite, >= 0); DataError naming ``where`` and ``what`` otherwise."""
    try:
        value = float(text)
    except ValueError:
        raise DataError(f"{where}: {what} {text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise DataError(f"{where}: {what} {text!r} must be a finite number >= 0")
    return value


def parse_line(line: str, where: str) -> Turn | None:
    """The turn on one RTTM line, or None for a blank or non-``SPEAKER`` line."""
    fields = line.split()
    if not fields or fields[0] != "SPEAKER":
        return None
    if len(fields) < 8:
        raise DataError(f"{where}: a SPEAKER line needs {_FIELDS} fields (at least 8), found {len(fields)}")
    try:
        channel = int(fields[2])
    except ValueError:
        raise DataError(f"{where}: channel {fields[2]!r} is not an integer") from None
    start = seconds(fields[3], "start", where)
    duration = seconds(fields[4], "duration", where)
    if duration == 0:
        raise DataError(f"{where}: a turn of zero duration")
    return Turn(fields[1], start, duration, fields[7], channel)


def read_rttm(path: str | os.PathLike) -> dict[str, list[Turn]]:
    """Turns of an RTTM file by recording, each list sorted by start time."""
    path = Path(path)
    turns: dict[str, list[Turn]] = {}
    for number, line in enumerate(read_text_file(path).splitlines(), 1):
        turn = parse_line(line, f"{path}:{number}")
        if turn is not None:
            turns.setdefault(turn.recording, []).append(turn)
    if not turns:
        raise DataError(f"{path}: no SPEAKER lines; expected 'SPEAKER <recording> <channel> <start> <duration> "
                        "<NA> <NA> <speaker> <NA> <NA>'")
    return {recording: sorted(items) for recording, items in turns.items()}


def format_turn(turn: Turn) -> str:
    """One RTTM ``SPEAKER`` line (millisecond precision)."""
    return (f"SPEAKER {turn.recording} {turn.channel} {turn.start:.3f} {turn.duration:.3f} "
            f"<NA> <NA> {turn.speaker} <NA> <NA>")


def write_rttm(path: str | os.PathLike, turns: Iterable[Turn]) -> Path:
    """Write turns as an RTTM file (atomically), sorted by recording and start."""
    path = Path(path)
    lines = [format_turn(t) for t in sorted(turns)]
    write_texts({path: "".join(line + "\n" for line in lines)})
    return path
