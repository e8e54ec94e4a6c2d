"""Render one planned utterance: synthesize, warp the vocal tract, trim, level, write."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from voxanon.audio.io import AudioError, resample, write_wav
from voxanon.pipelines.synth.kokoro_speakers import ENGINE as KOKORO
from voxanon.pipelines.synth.sets import SAMPLE_RATE, UttJob
from voxanon.models.tts import cli_engines as tts
from voxanon.models.tts import load_tts
from voxanon.models.tts.prosody import shift_pitch

#: active-speech RMS of every utterance before its style's volume factor (about -26 dBFS)
REFERENCE_RMS = 0.05
#: silence kept before and after the speech, seconds
MARGIN_S = 0.15
_FRAME_S = 0.01
#: frames quieter than this (dB below the loudest frame) count as silence
_SILENCE_DB = 40.0
#: frames within this many dB of the loudest one define the speech level
_ACTIVE_DB = 30.0


def warp(wav: np.ndarray, sr: int, factor: float, sr_out: int = SAMPLE_RATE) -> np.ndarray:
    """Vocal-tract-length warp: play ``wav`` ``factor`` times faster (formants, F0, tempo x factor)."""
    return resample(wav, sr * factor, sr_out)


def _frame_db(wav: np.ndarray, sr: int) -> np.ndarray:
    n = max(1, int(_FRAME_S * sr))
    frames = wav[: len(wav) // n * n].reshape(-1, n) if len(wav) >= n else wav[None, :]
    return 10 * np.log10(np.mean(frames.astype(np.float64) ** 2, axis=1) + 1e-12)


def trim(wav: np.ndarray, sr: int, margin_s: float = MARGIN_S) -> np.ndarray:
    """Cut leading and trailing silence, keeping ``margin_s`` seconds on each side."""
    db = _frame_db(wav, sr)
    loud = np.flatnonzero(db > db.max() - _SILENCE_DB)
    n = max(1, int(_FRAME_S * sr))
    start = max(0, loud[0] * n - int(margin_s * sr))
    end = min(len(wav), (loud[-1] + 1) * n + int(margin_s * sr))
    return wav[start:end]


def set_level(wav: np.ndarray, sr: int, rms: float) -> np.ndarray:
    """Scale so that the active-speech RMS is ``rms``; scaled down further if a peak would clip."""
    db = _frame_db(wav, sr)
    active = db[db > db.max() - _ACTIVE_DB]
    current = np.sqrt(np.mean(10 ** (active / 10)))
    out = wav * (rms / current)
    peak = np.max(np.abs(out))
    return (out * (0.98 / peak) if peak > 0.98 else out).astype(np.float32)


def _speak(job: UttJob) -> tuple[np.ndarray, int]:
    """The job's text in its voice and prosody, at the engine's rate (one ONNX thread per worker)."""
    if job.engine != KOKORO:
        return tts.synthesize(job.engine, job.voice, job.text, rate=job.rate, pitch=job.pitch,
                              pitch_range=job.pitch_range)
    wav, sr = load_tts(f"kokoro:{job.voice}", threads=1).synthesize(job.text, rate=job.rate)
    if job.pitch != 1.0 or job.pitch_range != 1.0:
        wav = shift_pitch(wav, sr, job.pitch, job.pitch_range)
    return wav, sr


def render(job: UttJob, root: str) -> float:
    """Write ``root/job.relpath`` unless it exists already; return its duration in seconds."""
    path = Path(root) / job.relpath
    if path.exists():
        return sf.info(str(path)).duration
    try:
        wav, sr = _speak(job)
    except AudioError as exc:
        raise type(exc)(f"utterance {job.utt}: {exc}") from exc
    wav = set_level(trim(warp(wav, sr, job.warp), SAMPLE_RATE), SAMPLE_RATE, REFERENCE_RMS * job.volume)
    write_wav(path, wav, SAMPLE_RATE)
    return len(wav) / SAMPLE_RATE
