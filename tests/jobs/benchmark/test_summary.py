"""The benchmark summary, computed once from the columns the registered evaluators declare.

The fixtures are the results.json of the quick main job run with the code before evaluators
declared their columns (DET points, training histories and trial lists trimmed), with the summary.csv and the
printed table that code wrote beside them: the declared columns must reproduce them byte for byte.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tests.helpers.benchmark_results import benchmark_results, ranked
from voxanon.jobs.benchmark.records import RTF, load_results, summarize
from voxanon.jobs.report.write import _write_csv, summary_table

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "benchmark_runs"


@pytest.mark.parametrize("profile", ["quick"])
def test_summary_rows_of_a_results_json_are_the_summary_csv_written_beside_it(profile, tmp_path):
    results = load_results(FIXTURES / f"{profile}_results.json")
    _write_csv(tmp_path / "summary.csv", summary_table(summarize(results), results.ranking))
    assert (tmp_path / "summary.csv").read_bytes() == (FIXTURES / f"{profile}_summary.csv").read_bytes()


def test_the_printed_table_of_the_quick_job_is_unchanged(tmp_path, monkeypatch, capsys):
    from voxanon.cli import benchmark as cli_benchmark
    from voxanon.jobs.benchmark import run as pipeline

    results = load_results(FIXTURES / "quick_results.json")
    fake = type("B", (), {"run": lambda self: results, "summary": summarize(results)})
    monkeypatch.setattr(pipeline, "Benchmark", lambda **kwargs: fake())
    args = argparse.Namespace(quick=True, profile="quick", systems=None, out=str(tmp_path), data=None, seed=0,
                              jobs=1, asr="whisper-tiny", encoder="ge2e", quiet=True, add_evaluators=None,
                              conditions=None, condition_on=None, language=None,
                              accented=None)
    cli_benchmark.run(args)
    printed = capsys.readouterr().out
    assert (FIXTURES / "quick_table.txt").read_text() in printed


def test_summary_columns_follow_registration_with_the_run_time_factor_before_the_optional_ones():
    summary = summarize(ranked(benchmark_results()))
    names = [c.name for c in summary.columns]
    assert names[:2] == ["attacker", "eer"]  # the privacy headline leads
    assert names.index("wer") < names.index("uar") < names.index("dnsmos") < names.index("rtf")
    assert names.index("rtf") < names.index("c_eer") < names.index("uar_learn") < names.index("wer_learn")
    assert summary.columns[names.index("rtf")] is RTF
    assert [c.name for c in summary.shown("cli")] == ["attacker", "eer", "eer_semi", "eer_lazy", "wer", "uar"]
    # columns omitted where missing: no content attack or learnability ran here
    assert not {"c_eer", "uar_learn"} & {c.name for c in summary.shown("header")}
