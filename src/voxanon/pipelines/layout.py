"""Where a benchmark finds its data sets: the offline synthetic corpus or the user's VPC data.

A :class:`Layout` names, per split (``dev``, ``test``), the enrollment
directory and the female/male trial directories, plus the attacker training
set and the emotion set. Two layouts are recognised (names from
:mod:`voxanon.data.names`, the ones the data commands write):

* the offline corpus of ``voxanon data synth``: ``data/{dev,test}_enrolls``,
  ``data/{dev,test}_trials_{f,m}``, ``data/train``, ``data/emo``;
* VPC data directories (``voxanon data librispeech`` / ``voxanon data iemocap``):
  ``libri_{dev,test}_enrolls``, ``libri_{dev,test}_trials_{f,m}``,
  ``train-clean-360`` and, when present, ``IEMOCAP_all`` (with ``utt2emo`` and
  ``spk2fold``), in the root or in the root's ``IEMOCAP`` folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from voxanon.data import names
from voxanon.data.kaldi import DataError

SPLITS = names.SPLITS


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
        """Every set a system must anonymize for ``splits``, by its short name (:mod:`voxanon.data.names`)."""
        out: dict[str, Path] = {}
        for s in splits:
            enroll, trial_f, trial_m = names.split_sets(s)
            out[enroll] = self.enrolls[s]
            out[trial_f], out[trial_m] = self.trials[s]
        if self.train:
            out[names.TRAIN] = self.train
        if self.emo:
            out[names.EMO] = self.emo
        return out


def _existing(path: Path) -> Path | None:
    return path if (path / "wav.scp").is_file() else None


def find_layout(root: str | Path) -> Layout:
    """Recognise the layout under ``root``; raise DataError saying what is missing."""
    root = Path(root).resolve()
    if (root / names.CORPUS_FILE).is_file():
        data = root / names.SYNTH_DATA
        prefix = ""
        description = json.loads((root / names.CORPUS_FILE).read_text(encoding="utf-8"))
        synthetic = bool(description.get("synthetic", True))
        train, emo = _existing(data / names.SYNTH_TRAIN), _existing(data / names.SYNTH_EMO)
    else:
        data = root
        prefix = names.LIBRI_PREFIX
        description = {"synthetic": False, "root": str(root)}
        synthetic = False
        train = _existing(root / names.TRAIN_360)
        emo = _existing(root / names.IEMOCAP_ALL) or _existing(root / "IEMOCAP" / names.IEMOCAP_ALL)
    enrolls, trials = {}, {}
    for split in SPLITS:
        enroll, trial_f, trial_m = (_existing(data / f"{prefix}{n}") for n in names.split_sets(split))
        if enroll and trial_f and trial_m:
            enrolls[split], trials[split] = enroll, (trial_f, trial_m)
    if not enrolls:
        raise DataError(
            f"{root}: no enrollment/trial sets found: expected a `voxanon data synth` corpus ({names.CORPUS_FILE}, "
            f"data/test_enrolls, data/test_trials_f, data/test_trials_m) or VPC data directories "
            f"(libri_test_enrolls, libri_test_trials_f, libri_test_trials_m)")
    return Layout(root, enrolls, trials, train, emo, synthetic, description)
