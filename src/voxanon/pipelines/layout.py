"""Where a benchmark finds its data sets: the offline synthetic corpus or the user's VPC data.

A :class:`Layout` names, per split (``dev``, ``test``), the enrollment
directory and the female/male trial directories, plus the attacker training
set and the emotion set. Two layouts are recognised:

* the offline corpus of ``voxanon data synth``: ``data/{dev,test}_enrolls``,
  ``data/{dev,test}_trials_{f,m}``, ``data/train``, ``data/emo``;
* VPC data directories (``voxanon data librispeech`` / ``voxanon data iemocap``):
  ``libri_{dev,test}_enrolls``, ``libri_{dev,test}_trials_{f,m}``,
  ``train-clean-360`` and, when present, an IEMOCAP directory ``iemocap_all``
  (or ``IEMOCAP``) with ``utt2emo`` and ``spk2fold``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from voxanon.data.kaldi import DataError

SPLITS = ("dev", "test")


@dataclass(frozen=True)
class Layout:
    """Paths of the sets one benchmark uses (``None`` where a set is absent)."""

    root: Path
    enrolls: dict[str, Path]
    trials: dict[str, tuple[Path, Path]]
    train: Path | None
    emo: Path | None
    synthetic: bool
    description: dict = field(default_factory=dict)

    @property
    def splits(self) -> list[str]:
        """Splits that have enrollment and trial sets."""
        return [s for s in SPLITS if s in self.enrolls]

    def sets(self, splits: list[str]) -> dict[str, Path]:
        """Every set a system must anonymize for ``splits``, by a short name."""
        out: dict[str, Path] = {}
        for s in splits:
            out[f"{s}_enrolls"] = self.enrolls[s]
            out[f"{s}_trials_f"], out[f"{s}_trials_m"] = self.trials[s]
        if self.train:
            out["train"] = self.train
        if self.emo:
            out["emo"] = self.emo
        return out


def _existing(path: Path) -> Path | None:
    return path if (path / "wav.scp").is_file() else None


def find_layout(root: str | Path) -> Layout:
    """Recognise the layout under ``root``; raise DataError saying what is missing."""
    root = Path(root).resolve()
    if (root / "corpus.json").is_file():
        data = root / "data"
        prefix = ""
        description = json.loads((root / "corpus.json").read_text(encoding="utf-8"))
        synthetic = bool(description.get("synthetic", True))
        train, emo = _existing(data / "train"), _existing(data / "emo")
    else:
        data = root
        prefix = "libri_"
        description = {"synthetic": False, "root": str(root)}
        synthetic = False
        train = _existing(root / "train-clean-360")
        emo = next((p for p in (_existing(root / "iemocap_all"), _existing(root / "IEMOCAP")) if p), None)
    enrolls, trials = {}, {}
    for split in SPLITS:
        enroll = _existing(data / f"{prefix}{split}_enrolls")
        tf, tm = _existing(data / f"{prefix}{split}_trials_f"), _existing(data / f"{prefix}{split}_trials_m")
        if enroll and tf and tm:
            enrolls[split], trials[split] = enroll, (tf, tm)
    if not enrolls:
        raise DataError(
            f"{root}: no enrollment/trial sets found: expected a `voxanon data synth` corpus (corpus.json, "
            f"data/test_enrolls, data/test_trials_f, data/test_trials_m) or VPC data directories "
            f"(libri_test_enrolls, libri_test_trials_f, libri_test_trials_m)")
    return Layout(root, enrolls, trials, train, emo, synthetic, description)
