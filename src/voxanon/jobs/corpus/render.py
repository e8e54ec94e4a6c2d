"""Render one planned utterance: synthesize, warp the vocal tract, trim, level, write."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from voxanon.audio.io import AudioError, resample, write_wav
from voxanon.audio.level import set_level, trim
from voxanon.jobs.corpus.kokoro_speakers import ENGINE as KOKORO
from voxanon.jobs.corpus.sets import SAMPLE_RATE, UttJob
from voxanon.models.tts import cli_engines as tts
from voxanon.models.tts import load_tts
from voxanon.models.tts.prosody import shift_pitch

#: active-speech RMS of every utterance before its style's volume factor (about -26 dBFS)
REFERENCE_RMS = 0.05


def warp(wav: np.ndarray, sr: int, factor: float, sr_out: int = SAMPLE_RATE) -> np.ndarray:
    """Vocal-tract-length warp: play ``wav`` ``factor`` times faster (formants, F0, tempo x factor)."""
    return resample(wav, sr * factor, sr_out)


def _speak(job: UttJob) -> tuple[np.ndarray, int]:
    """The job's text in its voice and prosody, at the engine's rate (one ONNX thread per worker)."""
    if job.engine != KOKORO:
        return tts.synthesize(job.engine, job.voice, job.text, rate=job.rate, pitch=job.pitch,
                              pitch_range=job.pitch_range)
    language = "" if job.language == "en" else f"@{job.language}"
    wav, sr = load_tts(f"kokoro:{job.voice}{language}", threads=1).synthesize(job.text, rate=job.rate)
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
