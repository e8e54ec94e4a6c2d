"""DER and speaker-count error against hand-computed cases."""

import math

import numpy as np
import pytest

from voxanon.data.rttm import Turn
from voxanon.metrics.diarization import (
    DiarizationErrors,
    corpus_diarization_errors,
    diarization_errors,
    speaker_count_error,
    speech_of,
)


def turns(*spans, rec="r"):
    return [Turn(rec, start, end - start, spk) for spk, start, end in spans]


def test_a_relabelled_perfect_hypothesis_has_no_error():
    ref = turns(("A", 0, 4), ("B", 4.5, 9), ("A", 9, 12))
    hyp = turns(("x", 0, 4), ("y", 4.5, 9), ("x", 9, 12))
    e = diarization_errors(ref, hyp, collar=0)
    assert (e.missed, e.false_alarm, e.confusion) == (0, 0, 0)
    assert e.reference == pytest.approx(12 - 0.5)
    assert e.der == 0


def test_two_speakers_merged_into_one_confuse_half_the_speech():
    e = diarization_errors(turns(("A", 0, 10), ("B", 10, 20)), turns(("x", 0, 20)), collar=0)
    assert e.reference == pytest.approx(20)
    assert e.confusion == pytest.approx(10)
    assert e.missed == e.false_alarm == 0
    assert e.der == pytest.approx(50)


def test_missed_speech_and_false_alarm():
    ref = turns(("A", 0, 10))
    e = diarization_errors(ref, turns(("x", 0, 5), ("x", 11, 13)), collar=0)
    assert e.missed == pytest.approx(5)
    assert e.false_alarm == pytest.approx(2)
    assert e.confusion == pytest.approx(0)
    assert e.der == pytest.approx(70)


def test_overlap_is_scored_two_reference_speakers_one_hypothesis():
    # A 0-10 and B 5-15 overlap 5 s; one hypothesis speaker over 0-15:
    # reference 20 speaker-s, missed 5 (the overlap), confusion 15 - 10 (x maps to A or B, 10 s each)
    e = diarization_errors(turns(("A", 0, 10), ("B", 5, 15)), turns(("x", 0, 15)), collar=0)
    assert e.reference == pytest.approx(20)
    assert e.missed == pytest.approx(5)
    assert e.confusion == pytest.approx(5)
    assert e.der == pytest.approx(50)


def test_the_mapping_is_one_to_one_and_optimal():
    # greedy mapping of y (longest overlap with A) would leave B unmapped; the optimum maps x->A, y->B
    ref = turns(("A", 0, 10), ("B", 10, 16))
    hyp = turns(("x", 0, 4), ("y", 4, 16))
    e = diarization_errors(ref, hyp, collar=0)
    # x->A 4 s correct, y->B 6 s correct: confusion 16 - 10 = 6 (y->A would give 6 correct only)
    assert e.confusion == pytest.approx(6)


def test_the_collar_forgives_boundary_errors_around_reference_boundaries():
    ref = turns(("A", 0, 10))
    hyp = turns(("x", 0.2, 10.1))
    strict = diarization_errors(ref, hyp, collar=0)
    assert strict.missed == pytest.approx(0.2)
    assert strict.false_alarm == pytest.approx(0.1)
    forgiven = diarization_errors(ref, hyp)  # default 0.25 s
    assert forgiven.reference == pytest.approx(9.5)  # [0, 0.25] and [9.75, 10.25] not scored
    assert forgiven.der == 0


def test_empty_hypothesis_misses_everything_and_empty_reference_is_nan():
    e = diarization_errors(turns(("A", 1, 3)), [], collar=0)
    assert e.missed == pytest.approx(2) and e.der == pytest.approx(100)
    assert math.isnan(DiarizationErrors(0, 0, 0, 0).der)


def test_corpus_errors_sum_recordings_and_reject_unknown_ones():
    ref = {"a": turns(("A", 0, 10), rec="a"), "b": turns(("B", 0, 10), rec="b")}
    hyp = {"a": turns(("x", 0, 10), rec="a")}
    per = corpus_diarization_errors(ref, hyp, collar=0)
    total = per["a"] + per["b"]
    assert total.der == pytest.approx(50)
    with pytest.raises(ValueError, match="not in the reference"):
        corpus_diarization_errors(ref, {"c": []})
    with pytest.raises(ValueError, match="collar"):
        diarization_errors(ref["a"], hyp["a"], collar=-1)


def test_touching_turns_of_a_speaker_merge():
    assert speech_of(turns(("A", 0, 2), ("A", 2, 3), ("A", 4, 5))) == {"A": [(0, 3), (4, 5)]}


def test_speaker_count_error_is_signed():
    ref = turns(("A", 0, 1), ("B", 1, 2), ("C", 2, 3))
    assert speaker_count_error(ref, turns(("x", 0, 3))) == -2
    assert speaker_count_error(ref, turns(("x", 0, 1), ("y", 1, 2), ("z", 2, 3), ("w", 3, 4))) == 1


def test_der_matches_a_frame_level_count_on_random_turns():
    """Brute force at 1 ms frames with every permutation of the speaker mapping, collar 0."""
    from itertools import permutations

    rng = np.random.default_rng(3)

    def random_turns(prefix):
        starts = np.round(rng.uniform(0, 8, 5), 3)
        return turns(*[(f"{prefix}{rng.integers(3)}", s, s + np.round(rng.uniform(0.2, 2), 3)) for s in starts])

    def activity(ts, t):
        speakers = sorted({x.speaker for x in ts})
        return np.stack([np.any([(x.start <= t) & (t < x.end) for x in ts if x.speaker == s], axis=0)
                         for s in speakers], axis=1)

    t = np.arange(0, 12, 0.001) + 0.0005
    for _ in range(20):
        ref, hyp = random_turns("R"), random_turns("H")
        r, h = activity(ref, t), activity(hyp, t)
        n_r, n_h, k = r.sum(1), h.sum(1), min(r.shape[1], h.shape[1])
        best = max(sum((r[:, i] & h[:, j]).sum() for i, j in zip(rows, cols))
                   for cols in permutations(range(h.shape[1]), k) for rows in permutations(range(r.shape[1]), k))
        expected = (np.maximum(0, n_r - n_h).sum() + np.maximum(0, n_h - n_r).sum()
                    + np.minimum(n_r, n_h).sum() - best) / n_r.sum() * 100
        assert diarization_errors(ref, hyp, collar=0).der == pytest.approx(expected, abs=0.05)
