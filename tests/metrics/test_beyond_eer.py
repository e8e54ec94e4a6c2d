import dataclasses
import json

import numpy as np
import pytest

from voxanon.metrics import (
    ScoreMatrix,
    ScoreMatrixError,
    beyond_eer,
    held_out_split,
    isolation_thresholds,
    rank1_linkability,
    rank_disclosure,
    singling_out,
    speaker_eer_spread,
    tpr_at_fpr,
)


def _system(n_speakers: int, per_speaker: int, shift: float, seed: int) -> ScoreMatrix:
    true = np.repeat(np.arange(n_speakers), per_speaker)
    scores = np.random.default_rng(seed).normal(size=(true.size, n_speakers))
    scores[np.arange(true.size), true] += shift
    return ScoreMatrix(scores, true, speakers=[f"spk{j}" for j in range(n_speakers)])


def test_fields_agree_with_the_individual_metrics_and_dump_to_json():
    evaluated, calibration = held_out_split(_system(40, 24, 2.0, seed=0))
    result = beyond_eer(evaluated, calibration)
    isolation = singling_out(evaluated, isolation_thresholds(calibration))
    disclosure = rank_disclosure(evaluated)
    target, nontarget = evaluated.mated_scores(), evaluated.nonmated_scores()
    spread = speaker_eer_spread({evaluated.speaker_name(j): evaluated.speaker_trials(j) for j in range(40)})
    assert result.rank1_linkability == rank1_linkability(evaluated)
    assert result.rank1_linkability_chance == pytest.approx(2.5)
    assert (result.singling_out, result.singling_out_correct) == (isolation.rate, isolation.correct_rate)
    assert result.singling_out_chance == pytest.approx(100 * (39 / 40) ** 39)
    assert result.disclosure_mean_bits == disclosure.mean_bits
    assert result.disclosure_worst_bits == disclosure.worst_bits
    assert result.disclosure_worst_speaker == f"spk{disclosure.worst_speaker}"
    assert result.tpr_at_fpr_1 == tpr_at_fpr(target, nontarget, 1.0)
    assert result.tpr_at_fpr_0_1 == tpr_at_fpr(target, nontarget, 0.1)
    assert (result.speaker_eer_mean, result.speaker_eer_worst_decile) == (spread.mean, spread.worst_decile)
    assert (result.n_trials, result.calibration_trials, result.n_nontarget) == (480, 480, 480 * 39)
    assert (result.disclosure_speakers, result.speaker_eer_speakers, result.singling_out_records) == (40, 40, 40)
    json.dumps(dataclasses.asdict(result), allow_nan=False)


def test_undefined_values_are_none():
    evaluated, calibration = held_out_split(_system(3, 4, 1.0, seed=1))  # 6 trials x 2 others: 12 non-targets
    result = beyond_eer(evaluated, calibration)
    assert result.tpr_at_fpr_1 is None and result.tpr_at_fpr_0_1 is None
    assert result.speaker_eer_mean is None and result.speaker_eer_speakers == 0
    assert result.disclosure_worst_bits is None and result.disclosure_worst_speaker is None
    json.dumps(dataclasses.asdict(result), allow_nan=False)


def test_a_stronger_system_discloses_more_on_every_metric():
    weak = beyond_eer(*held_out_split(_system(50, 20, 0.5, seed=2)))
    strong = beyond_eer(*held_out_split(_system(50, 20, 3.0, seed=2)))
    assert strong.rank1_linkability > weak.rank1_linkability
    assert strong.singling_out_correct > weak.singling_out_correct
    assert strong.disclosure_mean_bits > weak.disclosure_mean_bits
    assert strong.tpr_at_fpr_1 > weak.tpr_at_fpr_1
    assert strong.speaker_eer_mean < weak.speaker_eer_mean


def test_calibration_must_score_the_same_models():
    evaluated = _system(4, 4, 1.0, seed=3)
    with pytest.raises(ScoreMatrixError, match="same models"):
        beyond_eer(evaluated, _system(5, 4, 1.0, seed=4))
    renamed = ScoreMatrix(evaluated.scores, evaluated.true_index, speakers=list("abcd"))
    with pytest.raises(ScoreMatrixError, match="same models"):
        beyond_eer(evaluated, renamed)
