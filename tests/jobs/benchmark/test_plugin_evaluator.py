"""A plug-in evaluator, defined and registered in this file only, with a setting of its own: a tiny benchmark
shows its results in results.json, summary.csv, its own table's CSV, the printed table and the report, and its
setting comes from the profile or from ``--set`` on the command line."""

from __future__ import annotations

import csv
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tests.jobs.benchmark.test_conditions import _corpus
from voxanon.audio.io import load_audio
from voxanon.cli import build_parser
from voxanon.data import layout
from voxanon.data.kaldi import read_data_dir
from voxanon.errors import ConfigError
from voxanon.evaluation import evaluator
from voxanon.evaluation.evaluator import Column, Evaluator, Table, option, register
from voxanon.evaluation.results import RESULT_KINDS
from voxanon.jobs.benchmark.profiles import PROFILES


@dataclass(frozen=True)
class PeakOptions:
    """The level (dB full scale) above which an utterance counts as too loud."""

    ceiling_db: float = option(-1.0)


@dataclass(frozen=True)
class PeakSettings:
    split: str
    ceiling_db: float


@dataclass(frozen=True)
class PeakResult:
    """The loudest sample (dBFS) of a split's female trials and how many utterances go above the ceiling."""

    peak_db: float
    over_ceiling: int
    ceiling_db: float


def _peaks_db(data_dir: Path) -> list[float]:
    data = read_data_dir(data_dir)
    return [float(20 * np.log10(np.max(np.abs(load_audio(data.wav_scp[u])[0])))) for u in data.utts]


class PeakEvaluator(Evaluator):
    """Peak levels of a system's output: a real, small measurement with one setting."""

    kind = "peak"
    Settings = PeakSettings
    Options = PeakOptions

    @classmethod
    def plan(cls, run, options: PeakOptions):
        return [cls(PeakSettings(run.splits[-1], options.ceiling_db))]

    def inputs(self, data):
        return {"trials": data.sets[layout.trials(self.settings.split, "f")]}

    def run(self, data, env):
        peaks = _peaks_db(self.inputs(data)["trials"])
        return PeakResult(max(peaks), sum(p > self.settings.ceiling_db for p in peaks), self.settings.ceiling_db)

    @classmethod
    def columns(cls, results):
        return [Column("peak_db", lambda record, results: (r := record.get(cls.kind)) and r.peak_db,
                       header="peak dBFS", cli="peak dBFS", digits=1),
                Column("over_ceiling", lambda record, results: (r := record.get(cls.kind)) and r.over_ceiling,
                       header="utterances over the ceiling", cli="over ceiling")]

    @classmethod
    def section(cls, results, page):
        rows = [[page.fmt(name), page.fmt(r.peak_db, 1), page.fmt(r.over_ceiling), page.fmt(r.ceiling_db, 1)]
                for name, s in results.systems.items() if (r := s.get(cls.kind))]
        return ("Peak levels", page.table(["system", "peak dBFS", "over the ceiling", "ceiling dBFS"], rows)
                ) if rows else None

    @classmethod
    def tables(cls, results):
        rows = [{"system": name, "over_ceiling": r.over_ceiling, "ceiling_db": r.ceiling_db}
                for name, s in results.systems.items() if (r := s.get(cls.kind))]
        return [Table("peak", rows, "Over the ceiling", lambda rows, page: page.table(
            ["system", "utterances over"], [[page.fmt(r["system"]), page.fmt(r["over_ceiling"])] for r in rows]))]


@pytest.fixture
def peak_registered(monkeypatch):
    """The peak evaluator registered beside the built-in ones, which apply to nothing here (no model runs)."""
    for cls in evaluator.evaluator_classes():
        monkeypatch.setattr(cls, "applies", lambda self, data: False)
    monkeypatch.setattr(evaluator, "EVALUATORS", dict(evaluator.EVALUATORS))
    register("peak", f"{__name__}:PeakEvaluator")
    monkeypatch.setitem(RESULT_KINDS, "peak", (PeakResult, 0))
    loud = dataclasses.replace(PROFILES["quick"], name="loud", settings={"peak.ceiling_db": -30.0})
    monkeypatch.setitem(PROFILES, "loud", loud)


def _benchmark(corpus: Path, out: Path, *options: str) -> int:
    args = build_parser().parse_args(["benchmark", "--data", str(corpus), "--out", str(out), "--system", "original",
                                      "--system", "mcadams", "--jobs", "1", "--quiet", *options])
    return args.handler(args)


def test_a_plugin_evaluator_and_its_setting_reach_every_output(tmp_path, peak_registered, capsys):
    corpus, out = _corpus(tmp_path / "corpus"), tmp_path / "out"
    trials = layout.trials("test", "f")

    assert _benchmark(corpus, out, "--profile", "loud") == 0  # the setting from the profile
    res = json.loads((out / "results.json").read_text())
    assert res["profile"]["settings"] == {"peak.ceiling_db": -30.0}
    peaks = {name: _peaks_db(Path(paths[trials])) for name, paths in res["paths"].items()}
    for name, system in res["systems"].items():
        assert system["peak"] == {"peak_db": max(peaks[name]), "over_ceiling": sum(p > -30 for p in peaks[name]),
                                  "ceiling_db": -30.0}
    capsys.readouterr()

    assert _benchmark(corpus, out, "--profile", "loud", "--set", "peak.ceiling_db=-9.5") == 0  # the command line
    res = json.loads((out / "results.json").read_text())
    assert res["profile"]["settings"] == {"peak.ceiling_db": -9.5}
    over = {name: sum(p > -9.5 for p in peaks[name]) for name in peaks}
    assert {name: s["peak"]["over_ceiling"] for name, s in res["systems"].items()} == over
    assert all(s["peak"]["ceiling_db"] == -9.5 for s in res["systems"].values())

    with (out / "summary.csv").open() as fh:
        rows = {r["system"]: r for r in csv.DictReader(fh)}
    for name in peaks:
        assert float(rows[name]["peak_db"]) == max(peaks[name]) and int(rows[name]["over_ceiling"]) == over[name]

    with (out / "peak.csv").open() as fh:
        assert {r["system"]: int(r["over_ceiling"]) for r in csv.DictReader(fh)} == over
    assert not (out / "privacy.csv").exists()      # the built-in privacy evaluator ran nothing: no rows, no file

    printed = capsys.readouterr().out.splitlines()
    header = next(line for line in printed if line.startswith("system"))
    assert "peak dBFS" in header and "over ceiling" in header
    row = next(line for line in printed if line.startswith("mcadams "))
    assert f"{max(peaks['mcadams']):.2f}" in row.split()

    page = (out / "report.html").read_text()
    assert "<th>peak dBFS</th>" in page and "<th>utterances over the ceiling</th>" in page
    assert "<h2 id='peak-levels'>Peak levels</h2>" in page
    assert f"<td>{max(peaks['mcadams']):.1f}</td><td>{over['mcadams']}</td><td>-9.5</td>" in page
    assert "<h2 id='over-the-ceiling'>Over the ceiling</h2>" in page and f"<td>{over['mcadams']}</td>" in page
    assert page.index("Over the ceiling</h2>") > page.index("Figures</h2>")      # the tables follow the figures


def test_a_setting_the_evaluator_does_not_have_is_refused_before_any_work(tmp_path, peak_registered):
    with pytest.raises(ConfigError, match="evaluator peak has no setting 'ceiling'; its settings: ceiling_db"):
        _benchmark(tmp_path / "corpus", tmp_path / "out", "--set", "peak.ceiling=-3")
    with pytest.raises(ConfigError, match="peak.ceiling_db: expected float, got 'loud'"):
        _benchmark(tmp_path / "corpus", tmp_path / "out", "--set", "peak.ceiling_db=loud")
    assert not (tmp_path / "out").exists()
