"""Given turns and speaker labels: Kaldi ``segments`` files and speaker maps (RTTM: :mod:`voxanon.data.rttm`).

``segments``
    Kaldi's ``<segment> <recording> <start> <end>`` lines (seconds), with the
    ``utt2spk`` beside it naming each segment's speaker. Kaldi speaker ids are
    corpus-wide, so they are labels across recordings.
Speaker map
    ``<recording> <speaker> <label>`` lines: the speaker as the turns name it
    in that recording (RTTM label, or ``ch1``, ``ch2`` with one speaker per
    channel) and the label of that person across recordings.
"""

from __future__ import annotations

import os
from pathlib import Path

from voxanon.data.kaldi import read_text_file
from voxanon.data.rttm import Turn, seconds
from voxanon.errors import DataError


def _lines(path: Path, what: str) -> list[tuple[str, list[str]]]:
    """``(where, fields)`` of the non-blank lines of a text file."""
    rows = [(f"{path}:{number}", line.split())
            for number, line in enumerate(read_text_file(path).splitlines(), 1) if line.strip()]
    if not rows:
        raise DataError(f"{path}: the {what} is empty")
    return rows


def read_segments(path: str | os.PathLike) -> dict[str, list[Turn]]:
    """Turns by recording from a Kaldi ``segments`` file and the ``utt2spk`` beside it (see the module notes)."""
    path = Path(path)
    utt2spk_path = path.parent / "utt2spk"
    if not utt2spk_path.is_file():
        raise DataError(f"{path}: needs the utt2spk beside it ({utt2spk_path}) naming each segment's speaker")
    speakers = {}
    for where, fields in _lines(utt2spk_path, "utt2spk"):
        if len(fields) != 2:
            raise DataError(f"{where}: expected '<segment> <speaker>', found {len(fields)} fields")
        speakers[fields[0]] = fields[1]
    turns: dict[str, list[Turn]] = {}
    for where, fields in _lines(path, "segments file"):
        if len(fields) != 4:
            raise DataError(f"{where}: expected '<segment> <recording> <start> <end>', found {len(fields)} fields")
        segment, recording = fields[0], fields[1]
        start, end = seconds(fields[2], "start", where), seconds(fields[3], "end", where)
        if end <= start:
            raise DataError(f"{where}: end {end:g} is not after start {start:g}")
        if segment not in speakers:
            raise DataError(f"{where}: segment {segment!r} has no speaker in {utt2spk_path}")
        turns.setdefault(recording, []).append(Turn(recording, start, end - start, speakers[segment]))
    return {recording: sorted(items) for recording, items in turns.items()}


def read_speaker_map(path: str | os.PathLike) -> dict[tuple[str, str], str]:
    """``(recording, speaker) -> label`` from a speaker map (see the module notes)."""
    path = Path(path)
    out: dict[tuple[str, str], str] = {}
    for where, fields in _lines(path, "speaker map"):
        if len(fields) != 3:
            raise DataError(f"{where}: expected '<recording> <speaker> <label>', found {len(fields)} fields")
        out[(fields[0], fields[1])] = fields[2]
    return out


def check_recordings(turns: dict[str, list[Turn]], recordings: set[str], where: str) -> None:
    """DataError when the turns name recordings the input does not have."""
    unknown = sorted(set(turns) - recordings)
    if unknown:
        shown = ", ".join(unknown[:3]) + (f" ... ({len(unknown)} in all)" if len(unknown) > 3 else "")
        raise DataError(f"{where}: turns for recording(s) the input does not have: {shown}; the recording ids "
                        "must be the input's utterance ids (wav.scp) or file paths without extension (folders)")
