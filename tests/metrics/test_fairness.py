import pytest

from voxanon.metrics import gender_fairness


def test_hand_computed():
    result = gender_fairness(10.0, 30.0)
    assert result.mean == 20.0
    assert result.mfdr == pytest.approx(100.0)  # 2 * 20 / 40 * 100


def test_symmetric_and_bounded():
    assert gender_fairness(5.0, 0.0).mfdr == 200.0
    assert gender_fairness(3.0, 7.0).mfdr == gender_fairness(7.0, 3.0).mfdr
    assert gender_fairness(0.0, 0.0).mfdr == 0.0
