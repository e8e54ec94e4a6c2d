"""Audio input/output: load anything soundfile reads, write 16-bit PCM WAV atomically.

Multi-channel input is mixed down to mono by averaging the channels (the
anonymizers and the evaluation models are all single-channel), unless the
caller asks for the channels (one speaker per channel in conversation mode). Samples are
float32 in [-1, 1].
"""

from __future__ import annotations

import io
import os
import stat
import subprocess

import numpy as np
import soundfile as sf
import soxr

from voxanon.atomic import atomic_open
from voxanon.errors import DataError


class AudioError(DataError):
    """An audio source that cannot be used; the message names it and says why."""


def _read_pipe(command: str) -> bytes:
    """Run a Kaldi-style pipe command (``... |``) and return its stdout."""
    try:
        proc = subprocess.run(command, shell=True, capture_output=True, timeout=600)
    except subprocess.TimeoutExpired as exc:
        raise AudioError(f"pipe command timed out: {command!r}") from exc
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip()[-300:]
        raise AudioError(f"pipe command failed (exit {proc.returncode}): {command!r}: {err}")
    if not proc.stdout:
        raise AudioError(f"pipe command produced no audio: {command!r}")
    return proc.stdout


def _decode_pipe_output(command: str) -> tuple[np.ndarray, int]:
    """Decode a pipe command's stdout as audio; AudioError showing the command (and the text) when it is not."""
    out = _read_pipe(command)
    try:
        return sf.read(io.BytesIO(out), dtype="float32", always_2d=True)
    except Exception as exc:  # soundfile raises several types for data it cannot decode
        head = out[:60].decode("utf-8", errors="replace")
        kind = "text" if head.isprintable() or "\n" in head else "data"
        raise AudioError(f"pipe command {command.strip()!r} printed {kind} that is not audio "
                         f"(starts with {head!r}): {str(exc).split(': ', 1)[-1]}") from None


def load_audio(source: str | os.PathLike, *, allow_silent: bool = True, mono: bool = True) -> tuple[np.ndarray, int]:
    """Load an audio file or a ``wav.scp`` pipe entry as mono float32 (``mono=False``: ``(frames, channels)``).

    Parameters
    ----------
    source : str or path
        A file path, or a command ending in ``|`` whose stdout is audio.
    allow_silent : bool
        Accept an all-zero signal (True by default: silence is valid audio).

    Returns
    -------
    (waveform, sample_rate)

    Raises
    ------
    AudioError
        Unreadable, empty, or containing NaN/inf samples.
    """
    text = str(source).strip()
    try:
        if text.endswith("|"):
            data, sr = _decode_pipe_output(text[:-1])
        else:
            if not os.path.exists(text):
                raise AudioError(f"audio file not found: {text}")
            if not stat.S_ISREG(os.stat(text).st_mode):  # a FIFO or device would block or never end
                raise AudioError(f"not a regular file (a FIFO, device or folder): {text}; "
                                 "give an audio file, or a command ending in '|' in wav.scp")
            data, sr = sf.read(text, dtype="float32", always_2d=True)
    except AudioError:
        raise
    except Exception as exc:  # soundfile raises several types for corrupt files
        raise AudioError(f"cannot read audio {text!r}: {exc}") from exc
    if data.shape[0] == 0:
        raise AudioError(f"audio is empty (0 samples): {text}")
    wav = data.mean(axis=1) if data.shape[1] > 1 else data[:, 0]
    check_waveform(wav, text)
    if not allow_silent and not np.any(wav):
        raise AudioError(f"audio is silent (all zeros): {text}")
    return np.ascontiguousarray(wav if mono else data, dtype=np.float32), int(sr)


def wav_truncation(path: str | os.PathLike) -> tuple[int, int] | None:
    """``(frames the header declares, frames the file holds)`` for a truncated WAV file, else None.

    Readers (soundfile too) silently return the frames present; runners call this
    to report the damage. Non-WAV files, pipes and intact WAVs give None.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
            size = os.fstat(fh.fileno()).st_size
    except OSError:
        return None
    if len(head) < 12 or head[:4] not in (b"RIFF", b"RIFX") or head[8:12] != b"WAVE":
        return None
    order = "little" if head[:4] == b"RIFF" else "big"
    pos, block_align = 12, 0
    while pos + 8 <= len(head):
        chunk, length = head[pos : pos + 4], int.from_bytes(head[pos + 4 : pos + 8], order)
        if chunk == b"fmt " and pos + 20 <= len(head):
            block_align = int.from_bytes(head[pos + 20 : pos + 22], order)
        if chunk == b"data":
            if not block_align or length in (0, 0xFFFFFFFF):  # unknown frame size, or a streamed header
                return None
            expected, present = length // block_align, max(0, size - pos - 8) // block_align
            return (expected, present) if present < expected else None
        pos += 8 + length + (length & 1)
    return None


def check_waveform(wav: np.ndarray, name: str = "waveform") -> None:
    """Raise AudioError unless ``wav`` is a non-empty 1-D array of finite samples."""
    if wav.ndim != 1:
        raise AudioError(f"{name}: expected mono 1-D audio, got shape {wav.shape}")
    if wav.size == 0:
        raise AudioError(f"{name}: audio is empty (0 samples)")
    if not np.all(np.isfinite(wav)):
        bad = int(np.count_nonzero(~np.isfinite(wav)))
        raise AudioError(f"{name}: {bad} NaN/inf samples")


def resample(wav: np.ndarray, sr_in: int, sr_out: int) -> np.ndarray:
    """Resample with soxr (high quality); a no-op when the rates match."""
    if sr_in == sr_out:
        return wav
    return soxr.resample(wav, sr_in, sr_out, quality="HQ").astype(np.float32, copy=False)


def fit_length(wav: np.ndarray, n_samples: int) -> np.ndarray:
    """Float32 copy cut or zero-padded at the end to exactly ``n_samples``."""
    out = np.zeros(n_samples, dtype=np.float32)
    out[: min(n_samples, len(wav))] = wav[:n_samples]
    return out


#: samples converted at a time by :func:`to_pcm16` and :func:`write_wav` (no full-length float temporaries)
PCM_BLOCK = 1 << 20


def to_pcm16(wav: np.ndarray) -> np.ndarray:
    """Clip to [-1, 1] and quantise to int16 (round to nearest), block by block."""
    wav = np.ascontiguousarray(wav)
    out = np.empty(wav.shape, dtype=np.int16)
    flat_in, flat_out = wav.reshape(-1), out.reshape(-1)
    for start in range(0, flat_in.size, PCM_BLOCK):
        block = flat_in[start : start + PCM_BLOCK]
        flat_out[start : start + PCM_BLOCK] = np.round(np.clip(block, -1.0, 1.0) * 32767.0)
    return out


def write_wav(path: str | os.PathLike, wav: np.ndarray, sr: int) -> None:
    """Write 16-bit PCM WAV atomically: a temporary file in the same folder, then rename.

    ``wav`` is mono ``(n,)`` or multi-channel ``(n, channels)``.

    A process killed at any moment leaves either no file or the complete file
    (plus, at worst, a temporary ``.<name>.<random>.tmp`` that readers must ignore).
    """
    wav = np.asarray(wav)
    for channel in (wav.T if wav.ndim == 2 else [wav]):
        check_waveform(channel, str(path))
    encoded = io.BytesIO()  # encode in memory: a write error (disk full) then raises here, not in a cffi callback
    channels = wav.shape[1] if wav.ndim == 2 else 1
    with sf.SoundFile(encoded, "w", sr, channels, subtype="PCM_16", format="WAV") as fh:
        for start in range(0, len(wav), PCM_BLOCK):
            fh.write(to_pcm16(wav[start : start + PCM_BLOCK]))
    with atomic_open(path) as fh:
        fh.write(encoded.getbuffer())


def duration(source: str | os.PathLike) -> float:
    """Duration in seconds, read from the header when possible."""
    text = str(source).strip()
    if text.endswith("|"):
        wav, sr = load_audio(text)
        return len(wav) / sr
    try:
        return sf.info(text).duration
    except Exception as exc:
        raise AudioError(f"cannot read audio {text!r}: {exc}") from exc
