"""The VoicePrivacy Challenge kits' ``data/`` folder: set names of the 2024 and 2026 editions and their anonymized copies.

Both kits (``Voice-Privacy-Challenge-2024``, ``-2026`` track 1) keep Kaldi data
directories side by side in ``data/``:

* ``libri_{dev,test}_enrolls`` (enrollment), ``libri_{dev,test}_trials_{f,m}``
  (2024 trial lists, one per gender) and, in 2026, ``libri_{dev,test}_trials_mixed``
  (the only lists the 2026 protocol scores);
* ``IEMOCAP_{dev,test}`` (emotion sets with ``utt2emo`` and ``spk2fold``);
* ``train-clean-360`` (the semi-informed attacker's training set).

An anonymized copy of set ``X`` is ``X<suffix>`` beside it: the kits' configs
append ``anon_data_suffix`` (``_mcadams``: ``libri_dev_enrolls_mcadams``,
``train-clean-360_mcadams``), and ``voxanon anonymize`` with the same suffix
writes that name. The trial list of an anonymized trial set is always read from
the original set's ``trials`` (the kits do the same).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from voxanon.data.layout import SPLITS, TRAIN_360
from voxanon.errors import ConfigError, DataError

#: editions of the challenge protocol
EDITIONS = ("2024", "2026")
#: the trial lists each edition scores (suffix of ``libri_<split>_``)
TRIAL_LISTS = {"2024": ("trials_f", "trials_m"), "2026": ("trials_mixed",)}
ENROLLS = "enrolls"


def libri_set(split: str, part: str) -> str:
    """A kit LibriSpeech set name (``libri_dev_trials_mixed``)."""
    return f"libri_{split}_{part}"


def iemocap_set(split: str) -> str:
    """A kit IEMOCAP set name (``IEMOCAP_test``)."""
    return f"IEMOCAP_{split}"


def trial_gender(list_name: str) -> str:
    """The kits' ``gender`` column of a trial list (``trials_f`` -> ``f``, ``trials_mixed`` -> ``mixed``)."""
    return list_name.split("_", 1)[1]


@dataclass(frozen=True)
class TrialPair:
    """One (enrollment set, trial set) pair the protocol scores."""

    split: str
    enrolls: str
    trials: str

    @property
    def gender(self) -> str:
        """The ``gender`` column of the kit's results (``f``, ``m``, ``mixed``)."""
        return trial_gender(self.trials[len(libri_set(self.split, "")):])


@dataclass(frozen=True)
class KitLayout:
    """The sets of one kit ``data/`` folder that one edition's protocol uses."""

    root: Path
    edition: str
    suffix: str
    pairs: tuple[TrialPair, ...]
    iemocap: tuple[str, ...]
    train: bool

    @property
    def splits(self) -> list[str]:
        """LibriSpeech splits with enrollment and trial sets, in kit order."""
        return list(dict.fromkeys(p.split for p in self.pairs))

    def path(self, name: str, anonymized: bool = False) -> Path:
        """Folder of set ``name`` or of its anonymized copy ``<name><suffix>``."""
        if anonymized and not self.suffix:
            raise ConfigError(f"{self.root}: no anonymized data suffix given; name it (e.g. --suffix _mcadams)")
        return self.root / (f"{name}{self.suffix}" if anonymized else name)

    def trial_lists(self, split: str) -> list[str]:
        """Trial set names of ``split`` (the sets the ASR is scored on)."""
        return [p.trials for p in self.pairs if p.split == split]


def _has(root: Path, name: str) -> bool:
    return (root / name / "wav.scp").is_file()


def detect_edition(root: str | os.PathLike) -> str:
    """``2026`` when ``root`` holds the mixed trial lists of a split, else ``2024``."""
    root = Path(root)
    return "2026" if any(_has(root, libri_set(s, "trials_mixed")) for s in SPLITS) else "2024"


def find_kit_layout(root: str | os.PathLike, edition: str | None = None, suffix: str = "") -> KitLayout:
    """The kit sets under ``root`` (a kit's ``data/``) for ``edition`` (detected when None).

    A split is used when its enrollment set and all of the edition's trial lists
    exist; with a ``suffix`` every used set must have its anonymized copy.
    IEMOCAP sets and ``train-clean-360`` are optional. Raises DataError naming
    what is missing.
    """
    root = Path(root).resolve()
    if not root.is_dir():
        raise DataError(f"{root}: no such folder; give the kit's data/ folder")
    edition = edition or detect_edition(root)
    if edition not in EDITIONS:
        raise ConfigError(f"unknown VPC edition {edition!r}; choose from {', '.join(EDITIONS)}")
    pairs = []
    for split in SPLITS:
        names = [libri_set(split, ENROLLS), *(libri_set(split, t) for t in TRIAL_LISTS[edition])]
        if all(_has(root, n) for n in names):
            pairs += [TrialPair(split, names[0], t) for t in names[1:]]
    if not pairs:
        lists = ", ".join(libri_set("test", t) for t in (ENROLLS, *TRIAL_LISTS[edition]))
        raise DataError(f"{root}: no {edition} enrollment/trial sets (expected e.g. {lists}, each with wav.scp)")
    iemocap = tuple(s for s in SPLITS if _has(root, iemocap_set(s)))
    layout = KitLayout(root, edition, suffix, tuple(pairs), iemocap, _has(root, TRAIN_360))
    if suffix:
        needed = {n for p in pairs for n in (p.enrolls, p.trials)} | {iemocap_set(s) for s in iemocap}
        missing = sorted(n + suffix for n in needed if not _has(root, n + suffix))
        if missing:
            raise DataError(f"{root}: anonymized set(s) {', '.join(missing)} missing (no wav.scp); anonymize "
                            f"them with suffix {suffix!r} first, or fix --suffix")
    return layout
