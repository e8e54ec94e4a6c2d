import numpy as np
import pytest
from hypothesis import given

from tests.helpers.metrics_reference import bosaris_rocch2eer
from tests.helpers.score_strategies import score_pairs
from voxanon.metrics import rocch, rocch_eer


def test_hand_computed_hull_and_eer():
    # sorted labels n n t n t -> PAV blocks {1,2}: 0, {3,4}: 1/2, {5}: 1
    pfa, pmiss = rocch([3, 5], [1, 2, 4])
    np.testing.assert_allclose(pfa, [1, 1 / 3, 0, 0])
    np.testing.assert_allclose(pmiss, [0, 0, 1 / 2, 1])
    # segment (1/3, 0)-(0, 1/2): pmiss = 1/2 - 3/2 pfa crosses pfa = pmiss at 0.2
    assert rocch_eer([3, 5], [1, 2, 4]) == pytest.approx(20.0)


def test_tied_target_and_nontarget_pooled():
    # one tied pair: the hull is the chance diagonal
    assert rocch_eer([1.0], [1.0]) == pytest.approx(50.0)


@given(score_pairs)
def test_matches_bosaris_segment_maximum(pair):
    pfa, pmiss = rocch(*pair)
    assert rocch_eer(*pair) == pytest.approx(bosaris_rocch2eer(pfa, pmiss), abs=1e-9)


@given(score_pairs)
def test_hull_is_monotone_and_convex(pair):
    pfa, pmiss = rocch(*pair)
    assert (np.diff(pfa) <= 0).all() and (np.diff(pmiss) >= 0).all()
    # slopes dpmiss/dpfa become steeper (more negative) along the hull
    keep = np.diff(pfa) < 0
    slopes = (np.diff(pmiss)[keep]) / (np.diff(pfa)[keep])
    assert (np.diff(slopes) <= 1e-12).all()
