"""Shared fixtures: a small Kaldi data directory, a plain audio folder, and toy anonymizers.

The toy anonymizers are importable as ``conftest:ToyGain`` etc. by subprocesses
whose ``PYTHONPATH`` contains this folder (see :data:`TESTS_DIR`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from voxanon.anonymizers.base import Anonymizer, param

TESTS_DIR = Path(__file__).parent

#: speaker -> (gender, F0 in Hz) of the fixture data directory
SPEAKERS = {"spk1": ("f", 210.0), "spk2": ("m", 110.0), "spk3": ("f", 190.0)}


@dataclass(frozen=True)
class ToyConfig:
    delay: float = param(0.0, "seconds to sleep per utterance (to make runs slow enough to interrupt)")


class ToyGain(Anonymizer):
    """Test anonymizer: a random gain in [0.3, 0.9] with a random sign, from the rng."""

    name = "toy-gain"
    Config = ToyConfig

    def anonymize(self, wav, sr, rng):
        time.sleep(self.config.delay)
        return wav * (rng.uniform(0.3, 0.9) * rng.choice([-1.0, 1.0])), sr


class ToyGain8k(ToyGain):
    """ToyGain that wants 8 kHz input."""

    name = "toy-gain-8k"
    sample_rate = 8000


class ToyRaises(ToyGain):
    """Test anonymizer that always fails."""

    name = "toy-raises"

    def anonymize(self, wav, sr, rng):
        raise RuntimeError("toy failure")


def write_utterance(path: Path, seconds: float = 0.3, sr: int = 16000, f0: float = 120.0, seed: int = 0) -> Path:
    """Write a speech-like 16-bit WAV (format from the suffix: .wav, .flac, .ogg)."""
    from voxanon.audio.synthetic import speech_like  # scipy.signal: slow to import in CLI worker processes

    path.parent.mkdir(parents=True, exist_ok=True)
    wav = speech_like(seconds, sr, f0=f0, seed=seed)
    subtype = "VORBIS" if path.suffix == ".ogg" else "PCM_16"
    sf.write(path, wav, sr, subtype=subtype)
    return path


def make_data_dir(root: Path, utts_per_speaker: int = 2, seconds: float = 0.3) -> Path:
    """A valid data directory ``root/data`` (audio in ``root/audio``) with every file but trials/utt2emo/spk2fold."""
    data = root / "data"
    data.mkdir(parents=True)
    wav_scp, utt2spk, text, utt2dur = [], [], [], []
    for s, (spk, (gender, f0)) in enumerate(SPEAKERS.items()):
        for i in range(utts_per_speaker):
            utt = f"{spk}-utt{i:03d}"
            path = write_utterance(root / "audio" / f"{utt}.wav", seconds, f0=f0, seed=100 * s + i)
            wav_scp.append(f"{utt} {path}")
            utt2spk.append(f"{utt} {spk}")
            text.append(f"{utt} HELLO WORLD {i}")
            utt2dur.append(f"{utt} {seconds}")
    spk2utt = [f"{spk} " + " ".join(f"{spk}-utt{i:03d}" for i in range(utts_per_speaker)) for spk in SPEAKERS]
    files = {"wav.scp": wav_scp, "utt2spk": utt2spk, "text": text, "utt2dur": utt2dur, "spk2utt": spk2utt,
             "spk2gender": [f"{spk} {g}" for spk, (g, _) in SPEAKERS.items()]}
    for name, lines in files.items():
        (data / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A data directory of 3 speakers (2 f, 1 m) x 2 utterances of 0.3 s, 16 kHz."""
    return make_data_dir(tmp_path / "corpus")


@pytest.fixture
def audio_folder(tmp_path: Path) -> Path:
    """A plain folder: a.wav (16 kHz), sub/b.flac (22.05 kHz), sub/deeper/c.ogg (16 kHz)."""
    root = tmp_path / "folder"
    write_utterance(root / "a.wav", seed=1)
    write_utterance(root / "sub" / "b.flac", sr=22050, seed=2)
    write_utterance(root / "sub" / "deeper" / "c.ogg", seed=3)
    return root


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path, with ``root`` itself in the bytes replaced by ROOT."""
    return {str(p.relative_to(root)): p.read_bytes().replace(str(root).encode(), b"ROOT")
            for p in sorted(root.rglob("*")) if p.is_file()}


def read_pcm(path: Path) -> np.ndarray:
    """The int16 samples of a WAV file."""
    return sf.read(path, dtype="int16")[0]


def run_cli_killed(args: list[str], out: Path, kill_after: int) -> None:
    """Start ``voxanon anonymize`` and SIGKILL its whole process group once ``kill_after`` wavs exist."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS_DIR), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "voxanon", "anonymize", *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while len(list(out.glob("wav/*.wav"))) < kill_after:
        assert proc.poll() is None, f"run ended before it could be killed: {proc.stderr.read().decode()}"
        assert time.monotonic() < deadline, "run made no progress"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
