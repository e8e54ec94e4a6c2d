import numpy as np
import pytest

from voxanon.errors import ConfigError
from voxanon.metrics import ScoreMatrix, compute_eer, speaker_eer_spread


def test_constructed_eers_mean_and_worst_decile():
    # Speaker i: 10 targets at i + 0.5 against non-targets 0..19. At threshold i, FRR = 0 and
    # FAR = (19 - i) / 20; at i + 0.5, FRR = 1 and FAR the same; the smaller |FAR - FRR| wins
    # (the lower threshold on a tie, i = 9): EER = (19 - i) / 40 for i >= 9, (39 - i) / 40 below.
    nontarget = np.arange(20.0)
    trials = {f"s{i}": (np.full(10, i + 0.5), nontarget) for i in range(20)}
    expected = {f"s{i}": 100 * ((19 - i) if i >= 9 else (39 - i)) / 40 for i in range(20)}
    result = speaker_eer_spread(trials)
    assert result.eers == pytest.approx(expected)
    assert result.eers == {s: compute_eer(t, n).eer for s, (t, n) in trials.items()}
    assert result.mean == pytest.approx(np.mean(list(expected.values())))
    assert result.worst_decile == pytest.approx((0.0 + 2.5) / 2)  # speakers 19 and 18: 2 of 20
    assert (result.n_evaluated, result.n_speakers) == (20, 20)


def test_worst_decile_rounds_up_and_speakers_without_enough_trials_are_skipped():
    separated = (np.ones(10), np.zeros(10))
    inverted = (np.zeros(10), np.ones(10))
    trials = {"a": separated, "b": inverted, "c": inverted, "few": (np.ones(9), np.zeros(10)),
              "none": (np.ones(10), np.zeros(3))}
    result = speaker_eer_spread(trials)
    assert result.eers == {"a": 0.0, "b": 100.0, "c": 100.0}
    assert result.worst_decile == 0.0  # ceil(3 / 10) = 1 speaker: the most identifiable
    assert result.mean == pytest.approx(200 / 3)
    assert (result.n_evaluated, result.n_speakers) == (3, 5)
    assert speaker_eer_spread(trials, min_target=1, min_nontarget=1).n_evaluated == 5


def test_from_a_score_matrix():
    rng = np.random.default_rng(0)
    true = np.repeat(np.arange(30), 12)
    scores = rng.normal(size=(true.size, 30))
    scores[np.arange(true.size), true] += np.repeat(np.linspace(0, 6, 30), 12)  # speaker 29 easiest
    matrix = ScoreMatrix(scores, true)
    result = speaker_eer_spread({matrix.speaker_name(j): matrix.speaker_trials(j) for j in range(30)})
    assert result.eers["speaker 29"] < 5.0
    assert result.eers["speaker 0"] > 40.0
    assert result.worst_decile == pytest.approx(np.mean(sorted(result.eers.values())[:3]))
    assert result.worst_decile < result.mean


def test_no_speaker_evaluated_gives_nan():
    result = speaker_eer_spread({"a": ([1.0], [0.0])})
    assert np.isnan(result.mean) and np.isnan(result.worst_decile) and result.n_evaluated == 0


def test_minimum_must_be_positive():
    with pytest.raises(ConfigError, match="at least 1"):
        speaker_eer_spread({}, min_target=0)
