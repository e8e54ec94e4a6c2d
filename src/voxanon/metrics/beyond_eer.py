"""All privacy metrics beyond the EER for one system and attacker, in one JSON-ready record."""

from dataclasses import dataclass

import numpy as np

from voxanon.metrics._ranks import true_ranks
from voxanon.metrics.identification import rank1_from_ranks
from voxanon.metrics.operating_points import tpr_at_fpr
from voxanon.metrics.rank_disclosure import disclosure_from_ranks
from voxanon.metrics.score_matrix import ScoreMatrix, ScoreMatrixError
from voxanon.metrics.singling_out import isolation_thresholds, singling_out
from voxanon.metrics.speaker_eer import speaker_eer_spread


@dataclass(frozen=True)
class BeyondEERResult:
    """Rank-based and low-FPR privacy metrics; rates in percent, disclosure in bits.

    Every field is an int, float, str or None (None where a value is
    undefined, e.g. TPR at 0.1 % FPR from fewer than 1000 non-target scores),
    so ``json.dumps(dataclasses.asdict(result))`` needs no conversion.

    Attributes
    ----------
    n_trials, n_speakers : int
        Evaluated trials and enrolled speakers N.
    calibration_trials : int
        Held-out trials that calibrated the singling-out thresholds.
    rank1_linkability, rank1_linkability_chance : float
        :func:`~voxanon.metrics.rank1_linkability` and its chance level 100 / N.
    singling_out, singling_out_chance : float
        pi_sing of :func:`~voxanon.metrics.singling_out` and its chance level.
    singling_out_correct, singling_out_correct_chance : float
        The variant where the isolated record must be the predicate's own speaker.
    singling_out_records : int
        Speakers with trials (records and evaluated predicates).
    disclosure_mean_bits, disclosure_max_bits : float
        Pooled similarity rank disclosure and its maximum log2 N (chance 0).
    disclosure_worst_bits : float or None
        Largest per-speaker disclosure (None when no speaker has enough trials).
    disclosure_worst_speaker : str or None
        The speaker with the largest disclosure.
    disclosure_speakers : int
        Speakers with enough trials for a per-speaker disclosure.
    tpr_at_fpr_1, tpr_at_fpr_0_1 : float or None
        TPR at 1 % and 0.1 % FPR over all mated and non-mated scores.
    n_nontarget : int
        Non-mated scores behind the TPRs.
    speaker_eer_mean, speaker_eer_worst_decile : float or None
        Mean per-speaker EER and mean of the lowest-EER tenth of speakers.
    speaker_eer_speakers : int
        Speakers with enough trials for their own EER.
    """

    n_trials: int
    n_speakers: int
    calibration_trials: int
    rank1_linkability: float
    rank1_linkability_chance: float
    singling_out: float
    singling_out_chance: float
    singling_out_correct: float
    singling_out_correct_chance: float
    singling_out_records: int
    disclosure_mean_bits: float
    disclosure_max_bits: float
    disclosure_worst_bits: float | None
    disclosure_worst_speaker: str | None
    disclosure_speakers: int
    tpr_at_fpr_1: float | None
    tpr_at_fpr_0_1: float | None
    n_nontarget: int
    speaker_eer_mean: float | None
    speaker_eer_worst_decile: float | None
    speaker_eer_speakers: int


def _defined(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def beyond_eer(matrix: ScoreMatrix, calibration: ScoreMatrix) -> BeyondEERResult:
    """Compute rank-1 linkability, singling out, rank disclosure, TPR at low FPR and per-speaker EERs.

    Parameters
    ----------
    matrix : ScoreMatrix
        Evaluated trials scored against every enrolled model.
    calibration : ScoreMatrix
        Held-out trials of the same speakers against the same models (same
        columns), disjoint from ``matrix``: they only calibrate the
        singling-out thresholds (see :func:`~voxanon.metrics.held_out_split`).

    Returns
    -------
    BeyondEERResult
        All five metrics with their chance levels and trial counts.
    """
    if calibration.n_speakers != matrix.n_speakers or (
            matrix.speakers and calibration.speakers and matrix.speakers != calibration.speakers):
        raise ScoreMatrixError(f"beyond_eer: the calibration matrix has {calibration.n_speakers} enrolled "
                               f"speakers against the evaluated matrix's {matrix.n_speakers}, or other ids; "
                               "score both against the same models in the same order")
    ranks = true_ranks(matrix)
    n = matrix.n_speakers
    records = len(np.unique(matrix.true_index))
    isolation = singling_out(matrix, isolation_thresholds(calibration, n_records=records))
    disclosure = disclosure_from_ranks(ranks, matrix)
    target, nontarget = matrix.mated_scores(), matrix.nonmated_scores()
    spread = speaker_eer_spread({matrix.speaker_name(j): matrix.speaker_trials(j) for j in range(n)})
    worst = disclosure.worst_speaker
    return BeyondEERResult(
        n_trials=matrix.n_trials,
        n_speakers=n,
        calibration_trials=calibration.n_trials,
        rank1_linkability=rank1_from_ranks(ranks),
        rank1_linkability_chance=100.0 / n,
        singling_out=isolation.rate,
        singling_out_chance=isolation.chance,
        singling_out_correct=isolation.correct_rate,
        singling_out_correct_chance=isolation.correct_chance,
        singling_out_records=isolation.n_records,
        disclosure_mean_bits=disclosure.mean_bits,
        disclosure_max_bits=disclosure.max_bits,
        disclosure_worst_bits=_defined(disclosure.worst_bits),
        disclosure_worst_speaker=None if worst is None else matrix.speaker_name(worst),
        disclosure_speakers=disclosure.n_evaluated,
        tpr_at_fpr_1=_defined(tpr_at_fpr(target, nontarget, 1.0)),
        tpr_at_fpr_0_1=_defined(tpr_at_fpr(target, nontarget, 0.1)),
        n_nontarget=int(nontarget.size),
        speaker_eer_mean=_defined(spread.mean),
        speaker_eer_worst_decile=_defined(spread.worst_decile),
        speaker_eer_speakers=spread.n_evaluated,
    )
