import numpy as np
import pytest

from voxanon.metrics import mean_over_folds, uar


def test_hand_computed():
    result = uar(["a", "a", "b", "b", "b", "c"], ["a", "b", "b", "b", "a", "c"])
    assert result.per_class_recall == pytest.approx({"a": 50.0, "b": 200 / 3, "c": 100.0})
    assert result.uar == pytest.approx((50 + 200 / 3 + 100) / 3)
    assert result.labels == ("a", "b", "c")
    np.testing.assert_array_equal(result.confusion, [[1, 1, 0], [1, 2, 0], [0, 0, 1]])


def test_unweighted_unlike_accuracy():
    # 9 of 10 right overall, but the minority class is always missed
    result = uar(["n"] * 9 + ["s"], ["n"] * 10)
    assert result.uar == 50.0


def test_predicted_only_label_counts_with_recall_zero_as_sklearn_macro_recall():
    result = uar(["a", "b"], ["a", "x"], labels=["x", "b", "a", "unused"])
    assert result.labels == ("x", "b", "a", "unused")
    assert result.per_class_recall == {"x": 0.0, "b": 0.0, "a": 100.0}
    assert result.uar == pytest.approx(100 / 3)
    np.testing.assert_array_equal(result.confusion, [[0, 0, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0]])


@pytest.mark.parametrize("seed", range(5))
def test_matches_sklearn_macro_recall(seed):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(seed)
    y_true = list(rng.choice(["ang", "hap", "neu"], 40))
    y_pred = list(rng.choice(["ang", "hap", "neu", "sad"], 40))
    expected = 100 * sklearn_metrics.recall_score(y_true, y_pred, average="macro", zero_division=0)
    assert uar(y_true, y_pred).uar == pytest.approx(expected)


def test_invalid_inputs():
    with pytest.raises(ValueError):
        uar(["a"], ["a", "b"])
    with pytest.raises(ValueError):
        uar(["a", "z"], ["a", "a"], labels=["a"])


def test_mean_over_folds_accepts_numbers_and_results():
    folds = [uar(["a", "b"], ["a", "b"]), 50.0]
    summary = mean_over_folds(folds)
    assert summary.values == (100.0, 50.0)
    assert summary.mean == 75.0 and summary.std == 25.0
