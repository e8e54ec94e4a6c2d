import numpy as np
import pytest
from hypothesis import given

from tests.helpers.metrics_reference import speechbrain_eer
from tests.helpers.score_strategies import score_pairs
from voxanon.metrics import compute_eer


def test_hand_computed_case():
    # thresholds 1..5: |FAR-FRR| = 2/3, 1/3, 1/6, 1/2, 1  -> t = 3,
    # FRR = 1/2 (target 3 <= 3), FAR = 1/3 (non-target 4 > 3)
    result = compute_eer([3, 5], [1, 2, 4])
    assert result.eer == pytest.approx(100 * (1 / 2 + 1 / 3) / 2)
    assert result.threshold == 3


def test_first_minimum_wins_on_ties():
    # t = 1: FAR = 1/2, FRR = 1/2; t = 2: FAR = 0, FRR = 1/2 ... first |gap| = 0 kept
    result = compute_eer([1, 3], [0, 2])
    assert (result.eer, result.threshold) == (50.0, 1.0)


def test_exact_tie_of_gap_with_different_eers_keeps_lowest_threshold():
    # targets [1, 3], non-targets [0, 2, 2, 4]: t=1: FRR 1/2, FAR 3/4 (gap 1/4, EER 62.5);
    # t=2: FRR 1/2, FAR 1/4 (gap 1/4, EER 37.5). The lower threshold wins, in any input order.
    for target, nontarget in (([1, 3], [0, 2, 2, 4]), ([3, 1], [4, 2, 0, 2])):
        result = compute_eer(target, nontarget)
        assert (result.eer, result.threshold) == (62.5, 1.0)
    assert speechbrain_eer(np.array([1.0, 3.0]), np.array([0.0, 2.0, 2.0, 4.0])) == (62.5, 1.0)


@given(score_pairs)
def test_matches_literal_speechbrain_sweep(pair):
    target, nontarget = pair
    eer, threshold = speechbrain_eer(target, nontarget)
    result = compute_eer(target, nontarget)
    assert result.eer == pytest.approx(eer, abs=1e-12)
    assert result.threshold == threshold


@given(score_pairs)
def test_invariant_to_strictly_increasing_transform(pair):
    target, nontarget = pair
    result = compute_eer(target, nontarget)
    transformed = compute_eer(np.exp(target / 7), np.exp(nontarget / 7))
    assert transformed.eer == result.eer
    assert transformed.threshold == pytest.approx(np.exp(result.threshold / 7))


@given(score_pairs)
def test_bounded_by_0_and_100(pair):
    assert 0.0 <= compute_eer(*pair).eer <= 100.0


@given(score_pairs)
def test_separated_scores_give_0_and_inverted_give_100(pair):
    target, nontarget = pair
    shifted = target - target.min() + nontarget.max() + 1
    assert compute_eer(shifted, nontarget).eer == 0.0
    assert compute_eer(nontarget, shifted).eer == 100.0


@pytest.mark.parametrize("bad", [[], [np.nan], [[1.0, 2.0]], [np.inf]])
def test_rejects_invalid_scores(bad):
    with pytest.raises(ValueError):
        compute_eer(bad, [0.0])
