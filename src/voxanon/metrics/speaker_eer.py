"""Spread of the EER over enrolled speakers: who stays identifiable behind a good average."""

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from voxanon.errors import ConfigError
from voxanon.metrics.eer import compute_eer

#: fewest target and non-target trials for a speaker's EER (resolution 5 points or finer)
MIN_TRIALS = 10

#: the worst group is one speaker in this many (rounded up): a decile
WORST_GROUP = 10


@dataclass(frozen=True)
class SpeakerEERSpread:
    """Per-speaker EERs (percent) and their summary.

    Attributes
    ----------
    eers : dict of str to float
        EER of each evaluated speaker, in the order given.
    mean : float
        Mean of ``eers``; NaN when no speaker was evaluated.
    worst_decile : float
        Mean EER of the ceil(n / 10) of the n evaluated speakers with the
        *lowest* EER: those an attacker identifies best.
    n_evaluated : int
        Speakers with at least the minimum target and non-target trials.
    n_speakers : int
        Speakers given.
    """

    eers: dict[str, float]
    mean: float
    worst_decile: float
    n_evaluated: int
    n_speakers: int


def speaker_eer_spread(trials_by_speaker: Mapping[str, tuple], *, min_target: int = MIN_TRIALS,
                       min_nontarget: int = MIN_TRIALS) -> SpeakerEERSpread:
    """EER of each enrolled speaker's model, with mean and worst decile.

    Each speaker's EER is :func:`voxanon.metrics.compute_eer` of its target
    trials against the non-target trials scored against its model. Speakers
    with fewer than ``min_target`` target or ``min_nontarget`` non-target
    trials are skipped (counted in ``n_speakers`` only).

    Parameters
    ----------
    trials_by_speaker : mapping of str to (target_scores, nontarget_scores)
        Per enrolled speaker, the scores against its model, e.g.
        ``{matrix.speaker_name(j): matrix.speaker_trials(j) for j in ...}``
        from a :class:`~voxanon.metrics.ScoreMatrix`, or grouped from a
        trial list by enrolled speaker.
    min_target, min_nontarget : int
        Fewest trials of each kind for a speaker to be evaluated (at least 1).

    Returns
    -------
    SpeakerEERSpread
        Per-speaker EERs, their mean and worst decile (percent).
    """
    if min(min_target, min_nontarget) < 1:
        raise ConfigError(f"speaker_eer_spread: min_target ({min_target}) and min_nontarget "
                          f"({min_nontarget}) must be at least 1")
    eers = {}
    for speaker, (target, nontarget) in trials_by_speaker.items():
        if np.size(target) >= min_target and np.size(nontarget) >= min_nontarget:
            eers[speaker] = compute_eer(target, nontarget).eer
    values = np.sort(np.fromiter(eers.values(), dtype=np.float64, count=len(eers)))
    if values.size == 0:
        mean = worst = float("nan")
    else:
        mean = float(values.mean())
        worst = float(values[: -(-values.size // WORST_GROUP)].mean())  # ceil(n / 10) >= 1
    return SpeakerEERSpread(eers=eers, mean=mean, worst_decile=worst, n_evaluated=len(eers),
                            n_speakers=len(trials_by_speaker))
