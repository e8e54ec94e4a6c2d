"""Training data and logs of the acoustic-model tests."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.audio import LIBRIVOX, write_utterance

CLIP = sorted((LIBRIVOX).glob("*.flac"))[0]


def train_dir(root: Path) -> Path:
    """2 speakers x 2 utterances of 0.5 s, plus a corrupt wav in wav.scp."""
    lines, spk = [], []
    for s, (name, f0) in enumerate((("a", 120.0), ("b", 210.0))):
        for i in range(2):
            utt = f"{name}-{i}"
            lines.append(f"{utt} {write_utterance(root / 'audio' / f'{utt}.wav', 0.5, f0=f0, seed=10 * s + i)}")
            spk.append(f"{utt} {name}")
    (root / "audio" / "bad.wav").write_bytes(b"RIFF this is not a wav")
    lines.append(f"a-bad {root / 'audio' / 'bad.wav'}")
    spk.append("a-bad a")
    data = root / "data"
    data.mkdir()
    (data / "wav.scp").write_text("\n".join(lines) + "\n")
    (data / "utt2spk").write_text("\n".join(spk) + "\n")
    return data


def train_log(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
