"""A real two-person conversation for the conversation tests: the LibriVox reader and a second recorded voice."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.audio import LIBRIVOX
from voxanon.audio.io import load_audio, resample
from voxanon.data.debian_clips import find_clips
from voxanon.data.rttm import Turn

SR = 16000
#: the second voice: KLettres' English letter names (a different reader), when the package is installed
SECOND = "klettres-en"


def voices() -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Clips of two real speakers at 16 kHz, level-matched: (LibriVox reader, second voice); skips without it."""
    second = [c for c in find_clips() if c.speaker == SECOND]
    if not second:
        pytest.skip(f"needs the Debian clips of {SECOND} (klettres-data)")

    def level(wav: np.ndarray, sr: int) -> np.ndarray:
        wav = resample(wav, sr, SR)
        return (0.1 * wav / np.sqrt(np.mean(wav ** 2))).astype(np.float32)

    first = [level(*load_audio(p)) for p in sorted(LIBRIVOX.glob("*.flac"))]
    return first, [level(*load_audio(c.path)) for c in second[:12]]


def two_person(recording: str = "conv") -> tuple[np.ndarray, list[Turn]]:
    """About 36 s: A (LibriVox), B (four letter clips), A, B, ... with 0.5 s pauses, and the reference turns."""
    a, b = voices()
    pieces, turns, t = [], [], 0
    pause = np.zeros(SR // 2, dtype=np.float32)
    for k in range(6):
        letters = np.concatenate(b[(k // 2) * 4:(k // 2) * 4 + 4])
        who, speech = ("A", a[k // 2 % len(a)]) if k % 2 == 0 else ("B", letters)
        turns.append(Turn(recording, round(t / SR, 3), round(len(speech) / SR, 3), who))
        pieces += [speech, pause]
        t += len(speech) + len(pause)
    return np.concatenate(pieces), turns
