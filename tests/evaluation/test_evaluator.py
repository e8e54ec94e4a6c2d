"""The evaluator contract: a new evaluator's columns and report section reach the outputs through its registration."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.benchmark_results import benchmark_results, ranked
from voxanon.evaluation import evaluator
from voxanon.evaluation.evaluator import (
    Column,
    Env,
    Evaluator,
    RunSettings,
    SystemData,
    register,
)
from voxanon.jobs.benchmark.records import summarize
from voxanon.jobs.report.write import write_outputs


@dataclass(frozen=True)
class LoudnessSettings:
    split: str


@dataclass(frozen=True)
class LoudnessResult:
    lufs: float


class LoudnessEvaluator(Evaluator):
    """A toy evaluation a third party could add: one number per system, one column, one report section."""

    kind = "loudness"
    Settings = LoudnessSettings

    @classmethod
    def plan(cls, run: RunSettings, options) -> list[Evaluator]:
        return [cls(LoudnessSettings(run.splits[-1]))]

    def inputs(self, data: SystemData) -> dict[str, Path]:
        return {}

    def run(self, data: SystemData, env: Env) -> LoudnessResult:
        return LoudnessResult(-23.0)

    @classmethod
    def columns(cls, results) -> list[Column]:
        return [Column("lufs", lambda record, results: (r := record.get(cls.kind)) and r.lufs, header="LUFS",
                       cli="LUFS", digits=1)]

    @classmethod
    def section(cls, results, page) -> tuple[str, str] | None:
        rows = [[name, page.fmt(r.lufs, 1)] for name, s in results.systems.items() if (r := s.get(cls.kind))]
        return ("Loudness", page.table(["system", "integrated loudness (LUFS)"], rows)) if rows else None


def test_a_registered_evaluator_shows_in_summary_csv_the_tables_and_the_report(tmp_path, monkeypatch):
    monkeypatch.setattr(evaluator, "EVALUATORS", dict(evaluator.EVALUATORS))
    register("loudness", f"{__name__}:LoudnessEvaluator")
    results = benchmark_results()
    systems = {n: dataclasses.replace(r, results={**r.results, ("loudness",): LoudnessResult(-20.0 - i)})
               for i, (n, r) in enumerate(results.systems.items())}
    results = ranked(dataclasses.replace(results, systems=systems))

    summary = summarize(results)
    assert [r["lufs"] for r in summary.rows] == [-20.0, -21.0, -22.0, -23.0]
    assert "LUFS" in [c.cli for c in summary.shown("cli")]
    write_outputs(tmp_path, results, summary=summary)
    header, first = (tmp_path / "summary.csv").read_text().splitlines()[:2]
    assert header.split(",").index("lufs") < header.split(",").index("rtf")  # a default evaluator: before RTF
    assert first.split(",")[header.split(",").index("lufs")] == "-20.0"
    page = (tmp_path / "report.html").read_text()
    assert "<th>LUFS</th>" in page and "<td>-21.0</td>" in page
    assert "<h2 id='loudness'>Loudness</h2>" in page and "integrated loudness (LUFS)" in page


def test_without_the_registration_nothing_of_it_shows(tmp_path):
    results = ranked(benchmark_results())
    write_outputs(tmp_path, results)
    assert "lufs" not in (tmp_path / "summary.csv").read_text()
    assert "Loudness" not in (tmp_path / "report.html").read_text()
