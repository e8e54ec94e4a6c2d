import csv

import pytest

from tests.helpers.audio import FIXTURES
from voxanon.metrics import (
    SystemResult,
    gender_fairness,
    pareto_front,
    performance_matrix,
    privacy_category,
    rank_systems,
    relative_changes,
)
from voxanon.metrics.ranking import PRIVACY_VS_UAR, PRIVACY_VS_WER, UAR_VS_WER


@pytest.fixture(scope="module")
def table() -> dict[str, SystemResult]:
    path = FIXTURES / "vpc2024_test_results.csv"
    with path.open() as handle:
        rows = csv.DictReader(line for line in handle if not line.startswith("#"))
        results = [
            SystemResult(r["system"], float(r["eer_f"]), float(r["eer_m"]), float(r["eer"]), float(r["wer"]), float(r["uar"]))
            for r in rows
        ]
    return {r.name: r for r in results}


@pytest.fixture(scope="module")
def systems(table) -> list[SystemResult]:
    return [r for name, r in table.items() if name != "orig"]


def names(rows) -> set[str]:
    return {r.name for r in rows}


def test_fixture_average_is_mean_of_genders(table):
    for row in table.values():
        assert row.eer == pytest.approx((row.eer_f + row.eer_m) / 2, abs=0.006)


@pytest.mark.parametrize("eer, category", [(9.99, 0), (10.0, 10), (27.3, 20), (39.99, 30), (40.0, 40), (49.5, 40)])
def test_privacy_category_thresholds(eer, category):
    assert privacy_category(eer) == category


def test_only_six_systems_reach_40_percent(systems):
    assert {r.name for r in systems if privacy_category(r.eer) == 40} == {
        "T10-2", "T8-5", "T25-1", "T12-5", "T30-2", "T8-1"
    }


def test_original_data_gender_gap(table):
    orig = table["orig"]
    assert gender_fairness(orig.eer_f, orig.eer_m).mfdr == pytest.approx(182, abs=0.5)


def test_ranks_within_top_category(systems):
    top = [s for s in rank_systems(systems) if s.category == 40]
    assert [s.system.name for s in top] == ["T8-5", "T10-2", "T8-1", "T12-5", "T25-1", "T30-2"]
    assert {s.system.name: s.uar_rank for s in top} == {
        "T10-2": 1, "T25-1": 2, "T8-5": 3, "T12-5": 4, "T8-1": 5, "T30-2": 6
    }


def test_rank_ties_share_the_best_rank():
    rows = [SystemResult(n, 0, 0, 35.0, w, u) for n, w, u in [("a", 3.0, 50.0), ("b", 3.0, 50.0), ("c", 4.0, 40.0)]]
    assert [(s.system.name, s.wer_rank, s.uar_rank) for s in rank_systems(rows)] == [("a", 1, 1), ("b", 1, 1), ("c", 3, 3)]


def test_categories_ordered_from_most_private(systems):
    categories = [s.category for s in rank_systems(systems)]
    assert categories == sorted(categories, reverse=True)
    assert set(categories) == {40, 30, 20, 10, 0}


def test_relative_changes_against_original(table):
    (b1,) = relative_changes([table["B1"]], table["orig"])
    assert b1.d_eer == pytest.approx(100 * (6.08 - 4.59) / 4.59)
    assert b1.d_wer == pytest.approx(100 * (2.91 - 1.85) / 1.85)
    assert b1.d_uar == pytest.approx(100 * (42.80 - 71.10) / 71.10)


def test_uar_vs_wer_front_among_anonymized_systems(systems, table):
    # The paper's statement holds when original data is left out: with it, the
    # original row (best WER and best UAR) dominates every system.
    assert names(pareto_front(systems, *UAR_VS_WER)) == {"T9", "T10-1"}
    assert names(pareto_front([table["orig"], *systems], *UAR_VS_WER)) == {"orig"}


def test_privacy_fronts(systems):
    # checked by hand: e.g. T30-2 is dominated by T8-1 (more EER, more UAR),
    # T10-2 by T8-5 on privacy vs WER (41.28 % / 3.20 against 40.36 % / 3.22)
    assert names(pareto_front(systems, *PRIVACY_VS_UAR)) == {"T8-1", "T12-5", "T25-1", "T10-2", "T10-1"}
    assert names(pareto_front(systems, *PRIVACY_VS_WER)) == {"T8-1", "T8-5", "T10-1", "T9"}


def test_pareto_front_keeps_equal_points():
    rows = [SystemResult(n, 0, 0, e, 0, u) for n, e, u in [("a", 1, 1), ("b", 1, 1), ("c", 0, 1)]]
    assert names(pareto_front(rows, "eer", "uar")) == {"a", "b"}


def test_performance_matrix_hand_computed():
    rows = [
        SystemResult("good", 0, 0, 40.0, 2.0, 60.0),
        SystemResult("mixed", 0, 0, 25.0, 2.0, 30.0),
        SystemResult("bad", 0, 0, 10.0, 4.0, 30.0),
    ]
    scores = performance_matrix(rows)
    assert [s.name for s in scores] == ["good", "mixed", "bad"]
    mixed = scores[1]
    assert (mixed.privacy, mixed.content, mixed.emotion) == (0.5, 1.0, 0.0)
    assert mixed.combined == pytest.approx(0.5)
    assert (scores[0].combined, scores[2].combined) == (1.0, 0.0)


def test_performance_matrix_on_vpc_table(systems):
    scores = performance_matrix(systems)
    assert [s.rank for s in scores] == sorted(s.rank for s in scores)
    assert all(0.0 <= v <= 1.0 for s in scores for v in (s.privacy, s.content, s.emotion, s.combined))
    # T10-1: best UAR, second-best WER, EER 36.9 % -> (0.719 + 0.974 + 1) / 3
    assert [s.name for s in scores[:3]] == ["T10-1", "T10-2", "T9"]
    assert scores[0].combined == pytest.approx(0.8977, abs=1e-4)


def test_a_change_relative_to_an_original_at_zero_is_nan():
    """A small corpus can give the original an EER or WER of 0: no relative change, and no crash."""
    import math

    original = SystemResult("original", 0.0, 0.0, 0.0, 10.0, 50.0)
    change = relative_changes([SystemResult("a", 10.0, 20.0, 15.0, 12.0, 40.0)], original)[0]
    assert math.isnan(change.d_eer) and change.d_wer == pytest.approx(20.0) and change.d_uar == pytest.approx(-20.0)
