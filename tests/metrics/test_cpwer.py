"""cpWER: best speaker pairing of concatenated words, checked by hand and against every permutation."""

from itertools import permutations

import jiwer
import numpy as np
import pytest

from voxanon.metrics.cpwer import CpWERResult, cpwer, speaker_texts


def test_speakers_are_paired_for_the_fewest_errors():
    r = cpwer({"A": "a b c", "B": "d e"}, {"1": "d e", "2": "a b x"})
    assert (r.errors, r.n_reference_words) == (1, 5)
    assert r.cpwer == pytest.approx(20)
    assert set(r.pairing) == {("A", "2"), ("B", "1")}


def test_a_merged_speaker_leaves_the_other_one_deleted():
    # A with "a b c d e": 2 insertions, B with nothing: 2 deletions (the other way round costs 6)
    r = cpwer({"A": "a b c", "B": "d e"}, {"1": "a b c d e"})
    assert r.errors == 4 and r.cpwer == pytest.approx(80)
    assert set(r.pairing) == {("A", "1"), ("B", "")}


def test_an_extra_hypothesis_speaker_counts_as_insertions():
    r = cpwer({"A": "a b c", "B": "d e"}, {"1": "a b c", "2": "d e", "3": "f g"})
    assert r.errors == 2 and ("", "3") in r.pairing


def test_normalisation_applies_to_both_sides_and_results_add_up():
    r = cpwer({"A": "Hello, world."}, {"x": "hello world"})
    assert r.errors == 0
    total = r + CpWERResult(3, 6)
    assert total.cpwer == pytest.approx(3 / 8 * 100)


def test_no_reference_words_is_an_error():
    with pytest.raises(ValueError):
        cpwer({"A": ""}, {"x": "a"})


def test_turns_are_concatenated_in_time_order():
    assert speaker_texts([("B", 2.0, "c"), ("A", 1.0, "b"), ("A", 0.0, "a")]) == {"A": "a b", "B": "c"}


def test_cpwer_equals_the_minimum_over_all_permutations():
    rng = np.random.default_rng(0)
    words = list("abcdefg")
    for _ in range(25):
        ref = {f"R{i}": " ".join(rng.choice(words, rng.integers(1, 6))) for i in range(rng.integers(1, 4))}
        hyp = {f"H{i}": " ".join(rng.choice(words, rng.integers(0, 6))) for i in range(rng.integers(1, 4))}
        n = max(len(ref), len(hyp))
        refs = [*ref.values(), *[""] * (n - len(ref))]
        hyps = [*hyp.values(), *[""] * (n - len(hyp))]

        def errors(a, b):
            if not a.split():
                return len(b.split())
            o = jiwer.process_words(a, b)
            return o.substitutions + o.deletions + o.insertions

        best = min(sum(errors(refs[i], hyps[p[i]]) for i in range(n)) for p in permutations(range(n)))
        assert cpwer(ref, hyp, normalization="none").errors == best
