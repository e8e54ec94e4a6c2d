"""Who owns each sample of a recording: a partition of the whole timeline among its speakers.

Every sample goes to exactly one speaker, so every sample goes through some
speaker's anonymizer and none passes with its original voice:

- speech of one speaker is theirs;
- overlapped speech (two turns at once) goes to the *dominant* speaker, the
  one whose turn there is the longest (ties: the earlier turn); both voices in
  it come out in that speaker's pseudo-voice;
- a pause between two speakers is split at its middle; the silence before the
  first turn goes to the first speaker, after the last turn to the last one.

Times are on a 10 ms grid. Pieces longer than ``max_seconds`` are cut into
equal parts (same speaker), so that no call to an anonymizer sees more than
that: the memory of a long recording stays bounded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from voxanon.data.rttm import Turn

#: the grid (seconds) of the partition
STEP = 0.01


@dataclass(frozen=True)
class Piece:
    """Samples ``[start, stop)`` owned by ``speaker``."""

    start: int
    stop: int
    speaker: str


def owners(turns: list[Turn], seconds: float) -> tuple[np.ndarray, list[str]]:
    """Owner index of every 10 ms step (-1: nobody speaks) and the speaker names; overlap to the longest turn."""
    n = max(1, math.ceil(seconds / STEP))
    speakers = sorted({t.speaker for t in turns})
    owner = np.full(n, -1)
    length = np.zeros(n)
    for turn in sorted(turns, key=lambda t: t.start):  # a later turn wins only where it is strictly longer
        a, b = min(n, round(turn.start / STEP)), min(n, max(round(turn.end / STEP), round(turn.start / STEP) + 1))
        longer = length[a:b] < turn.duration
        owner[a:b][longer] = speakers.index(turn.speaker)
        length[a:b][longer] = turn.duration
    return owner, speakers


def _fill_pauses(owner: np.ndarray) -> np.ndarray:
    """Each step nobody speaks goes to the nearer speaking neighbour (the middle of a pause splits it)."""
    spoken = np.flatnonzero(owner >= 0)
    if spoken.size == 0:  # turns only past the end of the grid: the first speaker takes it all
        return np.zeros_like(owner)
    idx = np.arange(len(owner))
    after = np.searchsorted(spoken, idx)  # first spoken step at or after each step
    left = spoken[np.clip(after - 1, 0, len(spoken) - 1)]
    right = spoken[np.clip(after, 0, len(spoken) - 1)]
    take_right = (after < len(spoken)) & ((after == 0) | (right - idx < idx - left))
    return np.where(owner >= 0, owner, owner[np.where(take_right, right, left)])


def partition(turns: list[Turn], n_samples: int, sr: int, max_seconds: float = 30.0) -> list[Piece]:
    """Consecutive pieces covering ``[0, n_samples)``, one speaker each (see the module notes); no turns: none."""
    if not turns:
        return []
    owner, speakers = owners(turns, n_samples / sr)
    owner = _fill_pauses(owner)
    cuts = np.flatnonzero(np.diff(owner)) + 1
    bounds = [0, *(min(n_samples, round(c * STEP * sr)) for c in cuts), n_samples]
    labels = [owner[0], *owner[cuts]]
    pieces = []
    longest = max(1, round(max_seconds * sr))
    for (a, b), label in zip(zip(bounds, bounds[1:]), labels):
        if b <= a:
            continue
        parts = math.ceil((b - a) / longest)
        edges = [a + (b - a) * k // parts for k in range(parts + 1)]
        pieces.extend(Piece(lo, hi, speakers[label]) for lo, hi in zip(edges, edges[1:]))
    return pieces


def speech_of(turns: list[Turn], speaker: str, wav: np.ndarray, sr: int, max_seconds: float) -> np.ndarray:
    """Up to ``max_seconds`` of ``speaker``'s turns, concatenated (their earliest turns first)."""
    out, total, limit = [], 0, round(max_seconds * sr)
    for turn in sorted(t for t in turns if t.speaker == speaker):
        piece = wav[round(turn.start * sr):round(turn.end * sr)][: limit - total]
        out.append(piece)
        total += len(piece)
        if total >= limit:
            break
    return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)
