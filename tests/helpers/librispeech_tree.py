"""A tiny LibriSpeech tree (SPEAKERS.TXT, dev/test/train-clean-360 chapters of short FLAC files)."""

from __future__ import annotations

import numpy as np
import soundfile as sf

#: speaker -> (sex, subset)
SPEAKERS = {"11": ("F", "dev-clean"), "12": ("F", "dev-clean"), "13": ("F", "dev-clean"),
            "21": ("M", "dev-clean"), "22": ("M", "dev-clean"), "23": ("M", "dev-clean"),
            "14": ("F", "test-clean"), "24": ("M", "test-clean"),
            "31": ("F", "train-clean-360"), "32": ("M", "train-clean-360")}


def make_tree(root, n_utt=4):
    """A ``LibriSpeech`` folder under ``root`` with ``n_utt`` utterances per speaker; returns ``root``."""
    lines = [";ID  |SEX| SUBSET | MINUTES | NAME"]
    for spk, (sex, subset) in SPEAKERS.items():
        lines.append(f"{spk:<5}| {sex} | {subset} | 1.00 | Reader {spk}")
        chapter = root / "LibriSpeech" / subset / spk / "100"
        chapter.mkdir(parents=True)
        trans = []
        for n in range(n_utt):
            utt = f"{spk}-100-{n:04d}"
            sf.write(chapter / f"{utt}.flac", (0.1 * np.sin(np.arange(800) * (n + 1) / 10)).astype(np.float32),
                     16000, subtype="PCM_16")
            trans.append(f"{utt} WORDS OF UTTERANCE {n}")
        (chapter / f"{spk}-100.trans.txt").write_text("\n".join(trans) + "\n")
    (root / "LibriSpeech" / "SPEAKERS.TXT").write_text("\n".join(lines) + "\n")
    return root
