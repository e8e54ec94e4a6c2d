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
from voxanon.metrics.ranking import PRIVACY_VS_UAR, PRIVACY_VS_WER, UAR, UAR_VS_WER, WER


def row(name, eer, wer, uar) -> SystemResult:
    return SystemResult(name, eer, {"wer": wer, "uar": uar})


@pytest.fixture(scope="module")
def vpc() -> tuple[dict[str, SystemResult], dict[str, tuple[float, float]]]:
    """The VPC 2024 test results: rows by system, and each system's (female, male) EER."""
    path = FIXTURES / "vpc2024_test_results.csv"
    with path.open() as handle:
        rows = csv.DictReader(line for line in handle if not line.startswith("#"))
        results = [
            (SystemResult(r["system"], float(r["eer"]), {"wer": float(r["wer"]), "uar": float(r["uar"])}),
             float(r["eer_f"]), float(r["eer_m"]))
            for r in rows
        ]
    return {r.name: r for r, _, _ in results}, {r.name: (f, m) for r, f, m in results}


@pytest.fixture(scope="module")
def table(vpc) -> dict[str, SystemResult]:
    return vpc[0]


@pytest.fixture(scope="module")
def systems(table) -> list[SystemResult]:
    return [r for name, r in table.items() if name != "orig"]


def names(rows) -> set[str]:
    return {r.name for r in rows}


def test_fixture_average_is_mean_of_genders(vpc):
    table, genders = vpc
    for name, r in table.items():
        assert r.eer == pytest.approx(sum(genders[name]) / 2, abs=0.006)


@pytest.mark.parametrize("eer, category", [(9.99, 0), (10.0, 10), (27.3, 20), (39.99, 30), (40.0, 40), (49.5, 40)])
def test_privacy_category_thresholds(eer, category):
    assert privacy_category(eer) == category


def test_only_six_systems_reach_40_percent(systems):
    assert {r.name for r in systems if privacy_category(r.eer) == 40} == {
        "T10-2", "T8-5", "T25-1", "T12-5", "T30-2", "T8-1"
    }


def test_original_data_gender_gap(vpc):
    assert gender_fairness(*vpc[1]["orig"]).mfdr == pytest.approx(182, abs=0.5)


def test_ranks_within_top_category(systems):
    top = [s for s in rank_systems(systems) if s.category == 40]
    assert [s.system.name for s in top] == ["T8-5", "T10-2", "T8-1", "T12-5", "T25-1", "T30-2"]
    assert {s.system.name: s.ranks["uar"] for s in top} == {
        "T10-2": 1, "T25-1": 2, "T8-5": 3, "T12-5": 4, "T8-1": 5, "T30-2": 6
    }


def test_rank_ties_share_the_best_rank():
    rows = [row(n, 35.0, w, u) for n, w, u in [("a", 3.0, 50.0), ("b", 3.0, 50.0), ("c", 4.0, 40.0)]]
    assert [(s.system.name, s.ranks["wer"], s.ranks["uar"]) for s in rank_systems(rows)] == [
        ("a", 1, 1), ("b", 1, 1), ("c", 3, 3)]


def test_ranks_follow_the_measures_given():
    rows = [row(n, 35.0, w, u) for n, w, u in [("a", 3.0, 40.0), ("b", 4.0, 50.0)]]
    by_uar = rank_systems(rows, [UAR])
    assert [(s.system.name, s.ranks) for s in by_uar] == [("b", {"uar": 1}), ("a", {"uar": 2})]
    assert [s.system.name for s in rank_systems(rows, [WER])] == ["a", "b"]


def test_categories_ordered_from_most_private(systems):
    categories = [s.category for s in rank_systems(systems)]
    assert categories == sorted(categories, reverse=True)
    assert set(categories) == {40, 30, 20, 10, 0}


def test_relative_changes_against_original(table):
    (b1,) = relative_changes([table["B1"]], table["orig"])
    assert b1.changes["eer"] == pytest.approx(100 * (6.08 - 4.59) / 4.59)
    assert b1.changes["wer"] == pytest.approx(100 * (2.91 - 1.85) / 1.85)
    assert b1.changes["uar"] == pytest.approx(100 * (42.80 - 71.10) / 71.10)


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
    rows = [row(n, e, 0, u) for n, e, u in [("a", 1, 1), ("b", 1, 1), ("c", 0, 1)]]
    assert names(pareto_front(rows, "eer", "uar")) == {"a", "b"}


def test_performance_matrix_hand_computed():
    rows = [
        row("good", 40.0, 2.0, 60.0),
        row("mixed", 25.0, 2.0, 30.0),
        row("bad", 10.0, 4.0, 30.0),
    ]
    scores = performance_matrix(rows)
    assert [s.name for s in scores] == ["good", "mixed", "bad"]
    mixed = scores[1]
    assert mixed.scores == {"eer": 0.5, "wer": 1.0, "uar": 0.0}
    assert mixed.combined == pytest.approx(0.5)
    assert (scores[0].combined, scores[2].combined) == (1.0, 0.0)


def test_performance_matrix_on_vpc_table(systems):
    scores = performance_matrix(systems)
    assert [s.rank for s in scores] == sorted(s.rank for s in scores)
    assert all(0.0 <= v <= 1.0 for s in scores for v in (*s.scores.values(), s.combined))
    # T10-1: best UAR, second-best WER, EER 36.9 % -> (0.719 + 0.974 + 1) / 3
    assert [s.name for s in scores[:3]] == ["T10-1", "T10-2", "T9"]
    assert scores[0].combined == pytest.approx(0.8977, abs=1e-4)


def test_a_change_relative_to_an_original_at_zero_is_nan():
    """A small corpus can give the original an EER or WER of 0: no relative change, and no crash."""
    import math

    original = row("original", 0.0, 10.0, 50.0)
    change = relative_changes([row("a", 15.0, 12.0, 40.0)], original)[0]
    assert math.isnan(change.changes["eer"]) and change.changes["wer"] == pytest.approx(20.0)
    assert change.changes["uar"] == pytest.approx(-20.0)
