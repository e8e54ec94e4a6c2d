"""Who spoke when in one recording: voice activity, sliding-window speaker embeddings, clustering, turns.

Steps
    1. Voice activity: WebRTC's VAD on 30 ms frames at 16 kHz; pauses shorter
       than ``fill_gap`` are filled, speech runs shorter than ``min_speech``
       dropped.
    2. Embeddings: inside each speech region, windows of ``window`` seconds
       every ``hop`` seconds (a region shorter than a window is one window),
       each embedded by the speaker encoder (GE2E by default).
    3. Clustering: average-linkage agglomerative clustering of the windows on
       cosine distance, cut at ``threshold`` (which estimates the number of
       speakers), or into ``num_speakers`` clusters when it is known. Clusters
       with fewer than ``min_cluster`` windows join the nearest larger one.
    4. Turns: each speech frame takes the label of the window whose centre is
       nearest within its region; runs of one label are turns, and runs shorter
       than ``min_turn`` join the neighbour before them (or after, at the start).

Speakers are named ``spk0``, ``spk1``, ... in order of first appearance. The
defaults were calibrated on real recorded voices (see
``experiments/bench_diarization.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from voxanon.audio.io import resample, to_pcm16
from voxanon.data.rttm import Turn
from voxanon.models.speaker import SpeakerEncoder

#: the rate the VAD and the windows work at
SAMPLE_RATE = 16000
#: the default speaker encoder of the windows (:func:`voxanon.models.speaker.load_encoder` spec): GE2E, which found
#: the speakers of real conversations more often than the d-vector did (``experiments/bench_diarization.py``)
ENCODER = "ge2e"
#: windows embedded per encoder call
EMBED_BATCH = 256
#: WebRTC VAD frame (seconds): one of the three lengths it accepts
VAD_FRAME = 0.03


@dataclass(frozen=True)
class DiarizerSettings:
    """Settings of :func:`diarize` (seconds, except ``vad_mode``, ``threshold`` and ``min_cluster``)."""

    vad_mode: int = 2
    fill_gap: float = 0.3
    min_speech: float = 0.2
    window: float = 1.5
    hop: float = 0.5
    threshold: float = 0.35
    min_cluster: int = 3
    min_turn: float = 0.5


def speech_regions(wav: np.ndarray, settings: DiarizerSettings = DiarizerSettings()) -> list[tuple[int, int]]:
    """``(start, stop)`` sample ranges of speech in a 16 kHz waveform (steps 1 of the module notes)."""
    import webrtcvad

    vad = webrtcvad.Vad(settings.vad_mode)
    step = round(VAD_FRAME * SAMPLE_RATE)
    pcm = to_pcm16(wav)
    flags = [vad.is_speech(pcm[i:i + step].tobytes(), SAMPLE_RATE) for i in range(0, len(pcm) - step + 1, step)]
    runs: list[list[int]] = []
    for k, speech in enumerate(flags):
        if not speech:
            continue
        if runs and (k - runs[-1][1]) * VAD_FRAME <= settings.fill_gap:
            runs[-1][1] = k + 1
        else:
            runs.append([k, k + 1])
    return [(a * step, min(b * step, len(wav))) for a, b in runs if (b - a) * VAD_FRAME >= settings.min_speech]


def _windows(regions: list[tuple[int, int]], settings: DiarizerSettings) -> list[tuple[int, int, int]]:
    """``(region index, start, stop)`` of every embedding window (step 2)."""
    width, hop = round(settings.window * SAMPLE_RATE), round(settings.hop * SAMPLE_RATE)
    out = []
    for r, (a, b) in enumerate(regions):
        if b - a <= width:
            out.append((r, a, b))
            continue
        starts = list(range(a, b - width + 1, hop))
        if starts[-1] + width < b:
            starts.append(b - width)
        out.extend((r, s, s + width) for s in starts)
    return out


def cluster(embeddings: np.ndarray, *, num_speakers: int | None = None,
            settings: DiarizerSettings = DiarizerSettings()) -> np.ndarray:
    """Cluster label (0, 1, ...) of each embedding row (step 3 of the module notes)."""
    from scipy.cluster.hierarchy import fcluster, linkage

    n = len(embeddings)
    if n == 0:
        return np.zeros(0, dtype=int)
    if n == 1 or num_speakers == 1:
        return np.zeros(n, dtype=int)
    unit = embeddings / np.maximum(np.linalg.norm(embeddings, axis=1, keepdims=True), 1e-12)
    tree = linkage(unit, method="average", metric="cosine")
    if num_speakers is not None:
        labels = fcluster(tree, t=min(num_speakers, n), criterion="maxclust") - 1
    else:
        labels = fcluster(tree, t=settings.threshold, criterion="distance") - 1
        sizes = np.bincount(labels)
        big = np.flatnonzero(sizes >= min(settings.min_cluster, sizes.max()))
        centroids = np.stack([unit[labels == c].mean(axis=0) for c in big])
        small = ~np.isin(labels, big)
        labels[small] = big[np.argmax(unit[small] @ centroids.T, axis=1)]
    _, labels = np.unique(labels, return_inverse=True)
    return labels


def _frame_labels(regions: list[tuple[int, int]], windows: list[tuple[int, int, int]], labels: np.ndarray,
                  frame: int) -> list[tuple[int, int, int]]:
    """``(start, stop, label)`` runs over the speech regions, each frame labelled by its nearest window (step 4)."""
    runs: list[list[int]] = []
    centres = np.array([(a + b) / 2 for _, a, b in windows])
    region_of = np.array([r for r, _, _ in windows])
    for r, (a, b) in enumerate(regions):
        mine = np.flatnonzero(region_of == r)
        if mine.size == 0:
            continue
        for start in range(a, b, frame):
            stop = min(start + frame, b)
            label = int(labels[mine[np.argmin(np.abs(centres[mine] - (start + stop) / 2))]])
            if runs and runs[-1][1] == start and runs[-1][2] == label:
                runs[-1][1] = stop
            else:
                runs.append([start, stop, label])
    return [tuple(run) for run in runs]


def _merge_short(runs: list[tuple[int, int, int]], min_samples: int) -> list[tuple[int, int, int]]:
    """Runs shorter than ``min_samples`` take the label of the touching run before them (or after them)."""
    runs = [list(r) for r in runs]
    changed = True
    while changed and len(runs) > 1:
        changed = False
        for k, (a, b, label) in enumerate(runs):
            if b - a >= min_samples:
                continue
            before = runs[k - 1] if k > 0 and runs[k - 1][1] == a else None
            after = runs[k + 1] if k + 1 < len(runs) and runs[k + 1][0] == b else None
            neighbour = before or after
            if neighbour is not None and neighbour[2] != label:
                runs[k][2] = neighbour[2]
                changed = True
        merged: list[list[int]] = []
        for run in runs:
            if merged and merged[-1][1] == run[0] and merged[-1][2] == run[2]:
                merged[-1][1] = run[1]
            else:
                merged.append(run)
        runs = merged
    return [tuple(r) for r in runs]


def diarize(wav: np.ndarray, sr: int, *, recording: str, num_speakers: int | None = None,
            encoder: SpeakerEncoder | None = None, settings: DiarizerSettings = DiarizerSettings()) -> list[Turn]:
    """Speaker turns of a mono recording, sorted by start (see the module notes).

    Parameters
    ----------
    wav, sr : mono float32 waveform and its rate
    recording : the recording id the turns carry
    num_speakers : the number of speakers when known (None: estimated by the clustering threshold)
    encoder : speaker encoder of the windows (default: :data:`ENCODER`)
    settings : VAD, window and clustering settings

    Returns
    -------
    list of Turn
        Speakers ``spk0, spk1, ...`` in order of first appearance; no turns when no speech is found.
    """
    if num_speakers is not None and num_speakers < 1:
        raise ValueError(f"num_speakers must be at least 1, got {num_speakers}")
    wav = resample(np.asarray(wav, dtype=np.float32), sr, SAMPLE_RATE)
    regions = speech_regions(wav, settings)
    if not regions:
        return []
    windows = _windows(regions, settings)
    if encoder is None:
        from voxanon.models.speaker import load_encoder

        encoder = load_encoder(ENCODER)
    embeddings = np.concatenate([encoder.embed([wav[a:b] for _, a, b in windows[i:i + EMBED_BATCH]], SAMPLE_RATE)
                                 for i in range(0, len(windows), EMBED_BATCH)])  # bounded memory for long recordings
    labels = cluster(embeddings, num_speakers=num_speakers, settings=settings)
    runs = _merge_short(_frame_labels(regions, windows, labels, round(0.01 * SAMPLE_RATE)),
                        round(settings.min_turn * SAMPLE_RATE))
    names: dict[int, str] = {}
    turns = []
    for a, b, label in runs:
        speaker = names.setdefault(label, f"spk{len(names)}")
        turns.append(Turn(recording, round(a / SAMPLE_RATE, 3), round((b - a) / SAMPLE_RATE, 3), speaker))
    return sorted(turns)
