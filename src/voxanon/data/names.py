"""Data set names, defined once: the VPC / IEMOCAP directory names and the benchmark's short set names.

Writers (``voxanon data librispeech``, ``voxanon data iemocap``, ``voxanon data
synth``) and readers (the benchmark's layout discovery) all build names here,
so a directory written by one is found by the other.
"""

from __future__ import annotations

#: evaluation splits, in report order (the last one is the primary split)
SPLITS = ("dev", "test")
#: genders of trial lists (as in spk2gender)
GENDERS = ("f", "m")

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
