"""Data set names and layouts: the VPC / IEMOCAP directory names, the benchmark's short set names, and where a
benchmark finds its sets (the offline synthetic corpus or the user's VPC data).

Writers (``voxanon data librispeech``, ``voxanon data iemocap``, ``voxanon data
synth``) and readers (:func:`find_layout`) all build names here, so a directory
written by one is found by the other.

A :class:`Layout` names, per split (``dev``, ``test``), the enrollment
directory and the female/male trial directories, plus the attacker training
set and the emotion set. Two layouts are recognised (names below, the ones the data commands write):

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

from voxanon.data.kaldi import GENDERS, DataError

#: evaluation splits, in report order (the last one is the primary split)
SPLITS = ("dev", "test")
#: languages a Kokoro corpus can be built in: those with sentences (Asterisk's prompt texts in es, fr and it,
#: :func:`voxanon.data.debian_clips.prompt_sentences`; sentences written for voxanon in zh and ja,
#: :func:`voxanon.data.sentences.load_written_sentences`)
CORPUS_LANGUAGES = ("en", "es", "fr", "it", "zh", "ja")

#: prefix of the VPC LibriSpeech data directories
LIBRI_PREFIX = "libri_"
#: the VPC attacker training set (LibriSpeech subset and data directory name)
TRAIN_360 = "train-clean-360"
#: IEMOCAP data directories written by ``voxanon data iemocap``
IEMOCAP_ALL, IEMOCAP_DEV, IEMOCAP_TEST = "IEMOCAP_all", "IEMOCAP_dev", "IEMOCAP_test"

#: the synthetic corpus: its description file and the folder of its data directories
CORPUS_FILE, SYNTH_DATA = "corpus.json", "data"
#: the synthetic corpus's training and emotion data directories (under ``<corpus>/data``)
SYNTH_TRAIN, SYNTH_EMO = "train", "emo"
#: a synthetic corpus's real recordings (``data/real`` with a ``REAL`` marker)
REAL = "real"
#: a language corpus's real read sentences in its language (``data/real_speech``): anonymized by every system
#: and recognised, the real-speech check of its WER / CER
REAL_SPEECH = "real_speech"
#: the benchmark's short names of the attacker training and emotion sets
TRAIN, EMO = "train", "emo"


def enrolls(split: str) -> str:
    """Short name of a split's enrollment set (``test_enrolls``)."""
    return f"{split}_enrolls"


def trials(split: str, gender: str) -> str:
    """Short name of a split's trial set of one gender (``test_trials_f``)."""
    return f"{split}_trials_{gender}"


def split_sets(split: str) -> tuple[str, ...]:
    """Enrollment and trial set names of ``split``: ``(enrolls, trials_f, trials_m)``."""
    return (enrolls(split), *(trials(split, g) for g in GENDERS))


def libri(name: str) -> str:
    """The VPC directory name of a short set name (``libri_test_enrolls``)."""
    return f"{LIBRI_PREFIX}{name}"


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
    #: real recordings of voices outside every other set (a synthetic corpus's ``data/real``), never anonymized
    real: Path | None = None
    #: real read sentences in the corpus's language (a language corpus's ``data/real_speech``)
    real_speech: Path | None = None

    @property
    def splits(self) -> list[str]:
        """Splits that have enrollment and trial sets."""
        return [s for s in SPLITS if s in self.enrolls]

    def sets(self, splits: list[str]) -> dict[str, Path]:
        """Every set a system must anonymize for ``splits``, by its short name (:mod:`voxanon.data.layout`)."""
        out: dict[str, Path] = {}
        for s in splits:
            enroll, trial_f, trial_m = split_sets(s)
            out[enroll] = self.enrolls[s]
            out[trial_f], out[trial_m] = self.trials[s]
        if self.train:
            out[TRAIN] = self.train
        if self.emo:
            out[EMO] = self.emo
        if self.real_speech:
            out[REAL_SPEECH] = self.real_speech
        return out


def _existing(path: Path) -> Path | None:
    return path if (path / "wav.scp").is_file() else None


def _real(path: Path) -> Path | None:
    """A data directory of real recordings: it exists and carries the corpus builder's ``REAL`` marker."""
    return _existing(path) if (path / "REAL").is_file() else None


def find_layout(root: str | Path) -> Layout:
    """Recognise the layout under ``root``; raise DataError saying what is missing."""
    root = Path(root).resolve()
    if (root / CORPUS_FILE).is_file():
        data = root / SYNTH_DATA
        prefix = ""
        description = json.loads((root / CORPUS_FILE).read_text(encoding="utf-8"))
        synthetic = bool(description.get("synthetic", True))
        train, emo = _existing(data / SYNTH_TRAIN), _existing(data / SYNTH_EMO)
    else:
        data = root
        prefix = LIBRI_PREFIX
        description = {"synthetic": False, "root": str(root)}
        synthetic = False
        train = _existing(root / TRAIN_360)
        emo = _existing(root / IEMOCAP_ALL) or _existing(root / "IEMOCAP" / IEMOCAP_ALL)
    enrolls, trials = {}, {}
    for split in SPLITS:
        enroll, trial_f, trial_m = (_existing(data / f"{prefix}{n}") for n in split_sets(split))
        if enroll and trial_f and trial_m:
            enrolls[split], trials[split] = enroll, (trial_f, trial_m)
    if not enrolls:
        raise DataError(
            f"{root}: no enrollment/trial sets found: expected a `voxanon data synth` corpus ({CORPUS_FILE}, "
            f"data/test_enrolls, data/test_trials_f, data/test_trials_m) or VPC data directories "
            f"(libri_test_enrolls, libri_test_trials_f, libri_test_trials_m)")
    return Layout(root, enrolls, trials, train, emo, synthetic, description, _real(data / REAL),
                  _real(data / REAL_SPEECH))
