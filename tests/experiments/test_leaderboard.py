"""experiments/leaderboard.py on results.json files written by the benchmark's own writer."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tests.helpers.benchmark_results import (
    benchmark_results,
    privacy_result,
    wer_result,
)
from tests.helpers.scripts import script_fixture
from voxanon.errors import DataError
from voxanon.jobs.benchmark.records import SystemRecord, save_results

leaderboard = script_fixture("leaderboard")


def _table(text):
    """Data rows of the markdown table, as lists of cells, by system."""
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return head, {cells[0]: cells for cells in ([c.strip() for c in line.strip("|").split("|")] for line in lines[1:])}


def _write(tmp_path, name, results):
    path = tmp_path / name / "results.json"
    path.parent.mkdir()
    save_results(path, results)
    return path


def test_one_run_sorted_by_strongest_attacker(tmp_path, leaderboard, capsys):
    path = _write(tmp_path, "run", benchmark_results())
    assert leaderboard.main([str(path)]) == 0
    head, rows = _table(capsys.readouterr().out)
    # a: semi-informed 42/40; c: 30/36; b: 31/33; original: OO 1/2 beats its semi-informed 8/2
    assert list(rows) == ["a", "c", "b", "original"]
    col = {h: i for i, h in enumerate(head)}
    assert rows["a"][col["strongest attacker"]] == "AA-semi" and rows["a"][col["EER %"]] == "41.0"
    assert rows["a"][col["EER 95 % interval"]] == "f [41.0, 43.0] · m [39.0, 41.0]"
    assert [rows[s][col["category"]] for s in rows] == ["40", "30", "30", "0"]
    assert rows["original"][col["strongest attacker"]] == "OO" and rows["original"][col["EER %"]] == "1.5"
    assert rows["c"][col["WER % a [95 %]"]] == "9.0 [8.0, 10.0]"
    assert rows["b"][col["UAR %"]] == "60.0"
    assert not any(h.startswith("real speech") for h in head)


def test_later_file_wins_and_systems_merge(tmp_path, leaderboard):
    first = benchmark_results()
    better_b = SystemRecord(method="b", params={}, key="k2", rtf=0.5, results={
        ("privacy", "AA-semi", "test"): privacy_result(45.0, 47.0), ("wer", "test"): wer_result(4.0)})
    new_d = SystemRecord(method="d", params={}, key="k3", results={("wer", "test"): wer_result(5.0)})
    second = dataclasses.replace(first, systems={"b": better_b, "d": new_d})
    board = leaderboard.merge([_write(tmp_path, "one", first), _write(tmp_path, "two", second)])
    by_name = {r.row.system: r.row for r in board.rows}
    assert [r.row.system for r in board.rows] == ["b", "a", "c", "original", "d"]  # d has no EER: last
    assert by_name["b"]["eer"] == 46.0 and by_name["b"]["wer"] == 4.0 and by_name["b"]["rtf"] == 0.5
    assert by_name["d"]["eer"] is None


def test_other_seed_or_corpus_is_refused(tmp_path, leaderboard):
    base = benchmark_results()
    other_seed = dataclasses.replace(base, settings=dataclasses.replace(base.settings, seed=1))
    other_corpus = dataclasses.replace(base, data=dataclasses.replace(base.data, description={"size": "default"}))
    one = _write(tmp_path, "one", base)
    with pytest.raises(DataError, match="seed differ"):
        leaderboard.merge([one, _write(tmp_path, "seed", other_seed)])
    with pytest.raises(DataError, match="corpus differ"):
        leaderboard.merge([one, _write(tmp_path, "corpus", other_corpus)])


def test_real_speech_columns(tmp_path, leaderboard):
    real = tmp_path / "real.json"
    real.write_text(json.dumps({"rows": {"original": {"wer_whisper-tiny": 3.25, "wer16k_pocketsphinx": 20.0},
                                         "a": {"wer_whisper-tiny": 7.0, "wer_pocketsphinx": 60.0,
                                               "wer16k_pocketsphinx": 40.5}}}))
    board = leaderboard.merge([_write(tmp_path, "run", benchmark_results())])
    head, rows = _table(leaderboard.render(board, leaderboard.load_real_speech(real)))
    col = {h: i for i, h in enumerate(head)}
    assert rows["a"][col["real speech WER % pocketsphinx (16 kHz part)"]] == "40.5"
    assert rows["original"][col["real speech WER % whisper-tiny"]] == "3.2"
    assert rows["b"][col["real speech WER % whisper-tiny"]] == "–"
    with pytest.raises(DataError, match="bench_real_speech"):
        leaderboard.load_real_speech(tmp_path / "missing.json")
