"""Dev-set EER for selecting attacker checkpoints: the VPC summary number (mean of the per-gender EERs)."""

from __future__ import annotations

import numpy as np

from voxanon.data.kaldi import DataDir, read_data_dir
from voxanon.evaluation.privacy import TrialScores, score_trials
from voxanon.metrics import compute_eer
from voxanon.models.speaker import SpeakerEncoder


def as_data_dir(x) -> DataDir:
    """A :class:`DataDir` as is, or read from a path."""
    return x if isinstance(x, DataDir) else read_data_dir(x)


def mean_gender_eer(trials: TrialScores) -> float:
    """EER (%) per gender of the enrolled speaker, averaged (the VPC's summary number)."""
    eers = [compute_eer(trials.score[sel & trials.target], trials.score[sel & ~trials.target]).eer
            for sel in (trials.gender == g for g in np.unique(trials.gender))]
    return float(np.mean(eers))


def dev_eer(encoder: SpeakerEncoder, enroll, trial_dirs: list) -> float:
    """Mean per-gender EER (%) of ``encoder`` with cosine scoring on dev trial lists (nothing cached)."""
    trials = score_trials(as_data_dir(enroll), [as_data_dir(t) for t in trial_dirs], encoder, quiet=True)
    return mean_gender_eer(trials)
