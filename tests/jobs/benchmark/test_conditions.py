"""Recording conditions in the benchmark: degraded sets per condition and place, results per condition in
results.json, conditions.csv and the report, errors named by condition, and the stage cache (a rerun
recomputes nothing; a new condition computes only its own stages)."""

from __future__ import annotations

import argparse
import csv
import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.benchmark_results import (
    benchmark_results,
    fake_benchmark,
    privacy_result,
    wer_result,
)
from voxanon.audio.io import load_audio, write_wav
from voxanon.audio.synthetic import speech_like
from voxanon.cli import benchmark as cli_benchmark
from voxanon.data import layout
from voxanon.data.kaldi import DataDir, Trial, read_data_dir, write_data_dir
from voxanon.dsp.conditions import speech_active_snr
from voxanon.errors import ConfigError
from voxanon.evaluation import evaluator as registry
from voxanon.evaluation.evaluator import Column, Evaluator
from voxanon.evaluation.results import RESULT_KINDS
from voxanon.jobs.benchmark.conditions import Channel, parse_conditions, parse_places
from voxanon.jobs.benchmark.profiles import PROFILES
from voxanon.jobs.benchmark.records import (
    ConditionRun,
    SystemRecord,
    load_results,
    rank,
    summarize,
)
from voxanon.jobs.benchmark.run import Benchmark, System


@dataclass(frozen=True)
class LevelSettings:
    split: str


@dataclass(frozen=True)
class LevelResult:
    """Mean level (dB full scale) of a split's trials and of its enrollment set."""

    trials_db: float
    enroll_db: float


def _level_db(data_dir: Path) -> float:
    data = read_data_dir(data_dir)
    power = [np.mean(np.square(load_audio(data.wav_scp[u])[0].astype(np.float64))) for u in data.utts]
    return float(10 * np.log10(np.mean(power)))


class LevelEvaluator(Evaluator):
    """A real, small measurement: the level of what an attacker would enroll on and score (a system's trials,
    its anonymized enrollment)."""

    kind = "level"
    Settings = LevelSettings
    under_conditions = True

    @classmethod
    def plan(cls, run, options):
        return [cls(LevelSettings(s)) for s in run.splits]

    @property
    def slot(self):
        return (self.settings.split,)

    @classmethod
    def columns(cls, results):
        split = results.settings.primary.split
        return [Column("trials_db", lambda record, results: getattr(record.get("level", split), "trials_db", None),
                       header="trials dB"),
                Column("enroll_db", lambda record, results: getattr(record.get("level", split), "enroll_db", None))]

    def inputs(self, data):
        enroll, trial_f, _ = layout.split_sets(self.settings.split)
        return {"trials": data.sets[trial_f], "enroll": data.original[enroll]}

    def run(self, data, env):
        ins = self.inputs(data)
        return LevelResult(_level_db(ins["trials"]), _level_db(ins["enroll"]))


def _corpus(root: Path) -> Path:
    """A synthetic-corpus layout with a test split: 2 speakers per gender, 2 enrollment and 2 trial utterances."""
    data = root / "data"
    for name in layout.split_sets("test"):
        gender = name[-1] if name.endswith(("_f", "_m")) else None
        d = DataDir()
        for g in layout.GENDERS if gender is None else (gender,):
            for s in range(2):
                spk = f"{g}{s}"
                d.spk2gender[spk] = g
                for u in range(2):
                    utt = f"{spk}-{name}-{u}"
                    wav = root / "audio" / f"{utt}.wav"
                    f0 = (200 if g == "f" else 110) + 20 * s
                    write_wav(wav, 0.3 * speech_like(0.6, f0=f0, seed=7 * s + u), 16000)
                    d.wav_scp[utt], d.utt2spk[utt], d.text[utt] = str(wav), spk, "hello there"
        if gender is not None:
            d.trials = [Trial(spk, u, d.utt2spk[u] == spk) for spk in sorted(set(d.utt2spk.values()))
                        for u in d.wav_scp]
        write_data_dir(d, data / name)
    (root / "corpus.json").write_text(json.dumps({"synthetic": True}))
    return root


@pytest.fixture
def level_only(monkeypatch):
    """The benchmark with the level evaluator only (the registered ones keep their columns, empty, but apply to
    nothing); the level evaluator is the one run under a condition that applies."""
    for cls in registry.evaluator_classes():
        monkeypatch.setattr(cls, "applies", lambda self, data: False)
    monkeypatch.setitem(registry.EVALUATORS, "level", f"{__name__}:LevelEvaluator")
    monkeypatch.setitem(RESULT_KINDS, "level", (LevelResult, 1))


def _bench(tmp_path: Path, conditions: tuple[str, ...], places=("input", "output")) -> Benchmark:
    profile = replace(PROFILES["quick"], rungs=(), listen_utts=2, conditions=conditions, condition_places=places)
    return Benchmark(tmp_path / "out", profile, [System("original"), System("mcadams", "mcadams")],
                     data_root=tmp_path / "corpus", seed=3, jobs=1, quiet=True)


def test_each_condition_and_place_gets_every_systems_results(tmp_path, level_only):
    _corpus(tmp_path / "corpus")
    bench = _bench(tmp_path, ("noise5",))
    results = bench.run()
    assert results.errors == {}
    clean = {name: s.get("level", "test") for name, s in results.systems.items()}
    runs = {(r.name, r.applied_to): r for r in results.conditions}
    assert set(runs) == {("noise5", "input"), ("noise5", "output")}
    for run in runs.values():
        assert set(run.systems) == {"original", "mcadams"} and run.description.startswith("pink noise at 5 dB")
        for name, record in run.systems.items():
            assert record.failed_utterances == 0
            level = record.get("level", "test").trials_db
            if name == "original":  # noise at 5 dB SNR adds 1.2 dB
                assert abs(level - clean[name].trials_db - 1.19) < 0.3
            else:  # McAdams' output peaks near full scale: with noise it is scaled down, so its level moves less
                assert level != clean[name].trials_db
    # the original row is the degraded corpus under both places, computed once
    assert runs["noise5", "input"].systems["original"] == runs["noise5", "output"].systems["original"]
    # input: the attacker enrolls on the degraded corpus; output: on the clean original speech
    assert runs["noise5", "input"].systems["mcadams"].get("level", "test").enroll_db > clean["mcadams"].enroll_db
    assert runs["noise5", "output"].systems["mcadams"].get("level", "test").enroll_db == clean["mcadams"].enroll_db
    # output: the clean anonymized trials through the condition, at the asked SNR
    trials = layout.trials("test", "f")
    before, after = read_data_dir(results.paths["mcadams"][trials]), read_data_dir(runs["noise5", "output"].paths[
        "mcadams"][trials])
    utt = before.utts[0]
    assert abs(speech_active_snr(load_audio(before.wav_scp[utt])[0], load_audio(after.wav_scp[utt])[0], 16000)
               - 5) < 0.5
    # input: mcadams anonymized the degraded corpus in a folder of its own
    assert "/noise5/" in runs["noise5", "input"].paths["mcadams"][trials]

    out = tmp_path / "out"
    saved = load_results(out / "results.json")
    assert [(r.name, r.applied_to) for r in saved.conditions] == [(r.name, r.applied_to) for r in results.conditions]
    assert saved.conditions[0].systems["mcadams"].get("level", "test") == runs["noise5", "input"].systems[
        "mcadams"].get("level", "test")
    with (out / "conditions.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert {(r["system"], r["condition"], r["applied_to"]) for r in rows} == {
        (s, "noise5", p) for s in ("original", "mcadams") for p in ("input", "output")}
    assert {"trials_db", "enroll_db", "d_eer", "d_wer"} <= set(rows[0])
    report = (out / "report.html").read_text()
    assert "Recording conditions" in report and "noise5 (output)" in report


def test_a_rerun_reuses_every_stage_and_a_new_condition_computes_only_its_own(tmp_path, level_only):
    _corpus(tmp_path / "corpus")
    _bench(tmp_path, ("telephone",), ("output",)).run()
    again = _bench(tmp_path, ("telephone",), ("output",))
    again.run()
    assert again.recomputed == []
    more = _bench(tmp_path, ("telephone", "reverb300"), ("output",))
    results = more.run()
    assert sorted(more.recomputed) == ["level-mcadams-test@reverb300-output", "level-original-test@reverb300"]
    assert [(r.name, r.applied_to) for r in results.conditions] == [("telephone", "output"),
                                                                    ("reverb300", "output")]


def test_a_failing_system_under_a_condition_is_named_with_it(tmp_path, level_only, monkeypatch):
    _corpus(tmp_path / "corpus")
    bench = _bench(tmp_path, ("noise10",), ("input",))
    original_anonymize = Benchmark._anonymize

    def failing(self, system, sets, tag=None):
        if tag is not None:
            raise RuntimeError("broken on degraded input")
        return original_anonymize(self, system, sets, tag)

    monkeypatch.setattr(Benchmark, "_anonymize", failing)
    results = bench.run()
    assert results.errors == {"mcadams [noise10-input]": ["anonymize: RuntimeError: broken on degraded input"]}
    [run] = results.conditions
    assert set(run.systems) == {"original"}  # the others finished


def test_condition_options_are_checked_before_any_work(tmp_path):
    assert [c.name for c in parse_conditions("telephone, noise10,reverb,noise10")] == ["telephone", "noise10",
                                                                                       "reverb600"]
    assert parse_places("output,input") == ("input", "output")
    with pytest.raises(ConfigError, match="input, output or both"):
        parse_places("inputs")
    with pytest.raises(ConfigError, match="unknown recording condition"):
        _bench(tmp_path, ("telefone",))
    assert PROFILES["conditions"].conditions and not PROFILES["default"].conditions  # an option, not the default


def test_a_missing_room_simulator_is_said_before_any_work(tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyroomacoustics" else
                        real(name, *a))
    with pytest.raises(ConfigError, match=r"reverb600 needs pyroomacoustics.*voxanon\[conditions\]"):
        _bench(tmp_path, ("telephone", "reverb"))
    assert [c.name for c in parse_conditions("telephone,noise5")] == ["telephone", "noise5"]


def test_channel_is_the_condition_in_the_runner_shape():
    x = 0.98 * np.sign(np.sin(np.linspace(0, 60, 16000))).astype(np.float32)
    channel = Channel(condition="telephone")
    y, sr = channel.process(x, 16000, np.random.default_rng(0))
    assert sr == 16000 and len(y) == len(x) and np.max(np.abs(y)) <= 0.99 + 1e-6
    assert channel.report()["scaled_down_db"] < 0  # the scaling is said, next to the output
    assert Channel(condition="reverb300").process(x * 0.1, 16000, np.random.default_rng(0)) is not None
    assert set(Channel(condition="reverb300").settings()["params"]) == {"condition"}


def test_the_cli_passes_the_conditions_and_prints_them_beside_the_clean_numbers(tmp_path, monkeypatch, capsys):
    clean = benchmark_results()
    noisy = {name: SystemRecord(s.method, s.params, s.key, results={
        ("privacy", "AA-semi", "test"): privacy_result(20.0, 22.0), ("wer", "test"): wer_result(30.0)})
        for name, s in clean.systems.items()}
    results = replace(clean, conditions=[ConditionRun({"name": "noise10", "kind": "noise", "snr_db": 10.0},
                                                      "pink noise at 10 dB speech-active SNR", "output", noisy)])
    results = replace(results, ranking=rank(summarize(results)))
    profiles = fake_benchmark(monkeypatch, results)
    args = dict(quick=True, profile="quick", systems=None, out=str(tmp_path), data=None, seed=0, jobs=1, asr="x",
                encoder="ge2e", quiet=True, add_evaluators=None, language=None, accented=None)
    cli_benchmark.run(argparse.Namespace(**args, conditions="noise10,reverb", condition_on="output"))
    assert (profiles[0].conditions, profiles[0].condition_places) == (("noise10", "reverb600"), ("output",))
    printed = capsys.readouterr().out
    header = next(line for line in printed.splitlines() if line.startswith("system") and "noise10" in line)
    assert "EER % noise10 output" in header and "WER % noise10 output" in header
    row = next(line for line in printed.splitlines()[printed.splitlines().index(header):] if line.startswith("a "))
    assert row.split()[-2:] == ["21.00", "30.00"]  # strongest attacker's EER (mean of f and m) and WER under noise
    with pytest.raises(ConfigError, match="needs --conditions"):
        cli_benchmark.run(argparse.Namespace(**args, conditions=None, condition_on="input"))
    with pytest.raises(ConfigError, match="unknown recording condition"):
        cli_benchmark.run(argparse.Namespace(**args, conditions="hiss", condition_on=None))


def test_results_written_before_conditions_still_load():
    fixture = Path(__file__).parents[2] / "fixtures" / "benchmark_runs" / "quick_results.json"
    assert json.loads(fixture.read_text())["schema_version"] == 3
    assert load_results(fixture).conditions == []
