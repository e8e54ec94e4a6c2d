"""Two-person conversations assembled from real recorded clips (Debian's packages), for the conversation studies.

Each conversation alternates the clips of two speakers (a turn is one to three
clips), with pauses of 0.3-0.8 s between turns, at 16 kHz. The reference turns
come with it. Used by ``bench_diarization.py`` and ``conversation_separation.py``.
"""

from __future__ import annotations

import itertools

import numpy as np

from voxanon.audio.io import load_audio, resample
from voxanon.data.debian_clips import find_clips
from voxanon.data.rttm import Turn

SR = 16000


def speaker_clips(min_seconds: float = 15.0) -> dict[str, list[np.ndarray]]:
    """Every Debian speaker with at least ``min_seconds`` of clips: their clips at 16 kHz, level-matched."""
    clips: dict[str, list[np.ndarray]] = {}
    for clip in find_clips():
        wav, sr = load_audio(clip.path)
        wav = resample(wav, sr, SR)
        clips.setdefault(clip.speaker, []).append(0.1 * wav / max(float(np.sqrt(np.mean(wav ** 2))), 1e-6))
    return {s: c for s, c in clips.items() if sum(len(w) for w in c) / SR >= min_seconds}


def conversation(name: str, a: list[np.ndarray], b: list[np.ndarray], seed: int,
                 seconds: float = 30.0) -> tuple[np.ndarray, list[Turn]]:
    """About ``seconds`` of speakers A and B taking turns, and the reference turns (``A``, ``B``)."""
    rng = np.random.default_rng(seed)
    pieces, turns, t, k = [], [], 0, 0
    while t < seconds * SR:
        who, pool = ("A", a) if k % 2 == 0 else ("B", b)
        speech = np.concatenate([pool[i] for i in rng.choice(len(pool), size=rng.integers(1, 4))])
        turns.append(Turn(name, round(t / SR, 3), round(len(speech) / SR, 3), who))
        pause = np.zeros(int(rng.uniform(0.3, 0.8) * SR), dtype=np.float32)
        pieces += [speech, pause]
        t += len(speech) + len(pause)
        k += 1
    return np.concatenate(pieces).astype(np.float32), turns


def conversations(n: int, seconds: float = 30.0) -> list[tuple[str, np.ndarray, list[Turn], tuple[str, str]]]:
    """``n`` conversations over the pairs of Debian speakers in turn: (name, waveform, turns, (A, B))."""
    clips = speaker_clips()
    pairs = list(itertools.combinations(sorted(clips), 2))
    out = []
    for i in range(n):
        sa, sb = pairs[i % len(pairs)]
        name = f"conv{i:02d}-{sa}-{sb}"
        wav, turns = conversation(name, clips[sa], clips[sb], seed=i, seconds=seconds)
        out.append((name, wav, turns, (sa, sb)))
    return out


def frame_error(reference: list[Turn], hypothesis: list[Turn], seconds: float, step: float = 0.01) -> float:
    """Share of reference speech frames whose hypothesis speaker is wrong (best one-to-one label mapping) or
    missing, plus hypothesis speech where the reference has none: a frame-level DER without collar."""
    n = int(np.ceil(seconds / step))

    def frames(turns: list[Turn]) -> tuple[np.ndarray, list[str]]:
        names = sorted({t.speaker for t in turns})
        out = np.full(n, -1)
        for t in turns:
            out[int(t.start / step):int(t.end / step)] = names.index(t.speaker)
        return out, names

    ref, ref_names = frames(reference)
    hyp, hyp_names = frames(hypothesis)
    best = 0
    for perm in itertools.permutations(range(max(len(hyp_names), len(ref_names))), len(ref_names)):
        best = max(best, sum(int(np.sum((ref == r) & (hyp == h))) for r, h in enumerate(perm)))
    speech = int(np.sum(ref >= 0))
    false_alarm = int(np.sum((ref < 0) & (hyp >= 0)))
    return (speech - best + false_alarm) / max(speech, 1)
