"""``voxanon perf``: per-target RTF and memory in fresh processes, time budget, runner scaling, table and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.audio import write_utterance
from voxanon.audio.io import load_audio, resample
from voxanon.cli import main
from voxanon.jobs.perf import cpu_rtf, input_signal, measure, measure_in_subprocess


@pytest.mark.slow
def test_quick_perf_writes_a_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "perf.json"
    assert main(["perf", "--quick", "--quiet", "--methods", "mcadams", "f0_scale", "--no-ray",
                 "--out", str(out)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[1].split()[:3] == ["target", "device", "load"] and "1 s" in table[1] and "2 s" in table[1]
    rows = {line.split()[0]: line.split() for line in table[2:4]}
    assert set(rows) == {"mcadams", "f0_scale"}
    assert all(float(cell) > 0 for row in rows.values() for cell in row[2:-1])  # load s, RTFs, peak RSS
    assert all(float(row[-1]) >= 0 for row in rows.values())  # RSS growth
    report = json.loads(out.read_text())
    assert report["hardware"]["cpu_model"] and report["hardware"]["usable_cpus"] >= 1
    for result in report["results"]:
        assert result["error"] is None and result["device"] == "cpu"
        assert [row["seconds"] for row in result["rows"]] == [1.0, 2.0]
        assert all(row["rtf_median"] > 0 and row["peak_rss_mb"] > row["rss_growth_mb"] >= 0 for row in result["rows"])
    runs = report["scaling"]["runs"]
    assert [(r["backend"], r["workers"], r["failed"]) for r in runs] == [("local", 1, 0), ("local", 2, 0)]
    assert runs[0]["ratio_vs_1_job"] == 1.0 and runs[1]["audio_s"] == pytest.approx(4.0)
    assert any(line.split()[:3] == ["local", "2", "workers:"] for line in table)


def test_budget_skips_longer_durations() -> None:
    result = measure("mcadams", [2.0, 0.5, 1.0], repeats=1, device="cpu", budget_s=0.0)
    assert [row["seconds"] for row in result["rows"]] == [0.5]
    assert result["skipped_durations"] == [1.0, 2.0]


def test_unavailable_targets_become_errors() -> None:
    unknown = measure_in_subprocess("no-such-method", [1.0], 1, "cpu", 5.0)
    assert "unknown anonymizer 'no-such-method'" in unknown["error"]
    assert "no device setting" in measure_in_subprocess("mcadams", [1.0], 1, "cuda", 5.0)["error"]


def test_a_recording_repeated_to_each_duration_can_replace_speech_like_input(tmp_path: Path) -> None:
    speech = write_utterance(tmp_path / "s.wav", 0.3)  # 16 kHz
    wav = input_signal(1.0, 8000, 0, str(speech))
    first = resample(load_audio(speech)[0], 16000, 8000)
    assert len(wav) == 8000 and np.array_equal(wav[: len(first)], first)
    assert np.array_equal(wav[len(first): 2 * len(first)], first)  # repeated
    result = measure_in_subprocess("mcadams", [1.0], 1, "cpu", 5.0, speech=str(speech))
    assert result["error"] is None and result["rows"][0]["seconds"] == 1.0


def test_cpu_rtf_is_the_median_cpu_time_per_audio_second_after_a_warm_up(monkeypatch) -> None:
    clock = iter([0.0, 2.0, 10.0, 11.0, 20.0, 26.0])  # three timed calls: 2, 1 and 6 CPU seconds
    monkeypatch.setattr("voxanon.jobs.perf.time.process_time", lambda: next(clock))
    calls = []
    assert cpu_rtf(lambda: calls.append(1), 4.0, 3) == 0.5  # median 2 s over 4 s of audio
    assert len(calls) == 4
