"""Test audio and data directories: speech-like utterances, a small Kaldi data directory, file trees."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

#: the real recorded clips shipped with the tests (LibriVox, public domain; see fixtures/ATTRIBUTION)
FIXTURES = Path(__file__).parents[1] / "fixtures"
LIBRIVOX = FIXTURES / "librivox"

#: speaker -> (gender, F0 in Hz) of the fixture data directory
SPEAKERS = {"spk1": ("f", 210.0), "spk2": ("m", 110.0), "spk3": ("f", 190.0)}


def write_utterance(path: Path, seconds: float = 0.3, sr: int = 16000, f0: float = 120.0, seed: int = 0) -> Path:
    """Write a speech-like 16-bit WAV (format from the suffix: .wav, .flac, .ogg)."""
    from voxanon.audio.synthetic import (
        speech_like,  # scipy.signal: slow to import in CLI worker processes
    )

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


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path, with ``root`` itself in the bytes replaced by ROOT."""
    return {str(p.relative_to(root)): p.read_bytes().replace(str(root).encode(), b"ROOT")
            for p in sorted(root.rglob("*")) if p.is_file()}


def read_pcm(path: Path) -> np.ndarray:
    """The int16 samples of a WAV file."""
    return sf.read(path, dtype="int16")[0]
