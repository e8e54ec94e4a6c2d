"""Who said what when: STM files (NIST's segment time mark format, sclite's reference transcripts).

One turn a line, its words last::

    <recording> <channel> <speaker> <start> <end> <words ...>

Times are in seconds. Blank lines and ``;;`` comments are skipped. Every error names the file and line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from voxanon.atomic import write_texts
from voxanon.data.kaldi import read_text_file
from voxanon.data.rttm import Turn
from voxanon.errors import DataError


@dataclass(frozen=True, order=True)
class Segment:
    """One turn of one speaker with its words."""

    recording: str
    start: float
    end: float
    speaker: str
    text: str
    channel: int = 1

    @property
    def turn(self) -> Turn:
        """The segment as an RTTM turn (who spoke when)."""
        return Turn(self.recording, self.start, self.end - self.start, self.speaker, self.channel)


def read_stm(path: str | os.PathLike) -> dict[str, list[Segment]]:
    """Segments of an STM file by recording, each list sorted by start time."""
    path = Path(path)
    lines = read_text_file(path).splitlines()
    out: dict[str, list[Segment]] = {}
    for number, line in enumerate(lines, 1):
        fields = line.split(maxsplit=5)
        if not fields or fields[0].startswith(";;"):
            continue
        where = f"{path}:{number}"
        if len(fields) < 5:
            raise DataError(f"{where}: expected '<recording> <channel> <speaker> <start> <end> <words>', "
                            f"found {len(fields)} fields")
        try:
            channel, start, end = int(fields[1]), float(fields[3]), float(fields[4])
        except ValueError:
            raise DataError(f"{where}: channel, start and end must be numbers ({' '.join(fields[1:5])})") from None
        if not 0 <= start < end:
            raise DataError(f"{where}: a segment needs 0 <= start < end, found {start} .. {end}")
        segment = Segment(fields[0], start, end, fields[2], fields[5] if len(fields) > 5 else "", channel)
        out.setdefault(segment.recording, []).append(segment)
    if not out:
        raise DataError(f"{path}: no segments; expected '<recording> <channel> <speaker> <start> <end> <words>'")
    return {rec: sorted(items) for rec, items in out.items()}


def write_stm(path: str | os.PathLike, segments: Iterable[Segment]) -> Path:
    """Write segments as an STM file (atomically), sorted by recording and start (millisecond precision)."""
    path = Path(path)
    lines = [f"{s.recording} {s.channel} {s.speaker} {s.start:.3f} {s.end:.3f} {s.text}\n" for s in sorted(segments)]
    write_texts({path: "".join(lines)})
    return path
