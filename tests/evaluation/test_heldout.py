"""The held-out speech the studies of the speaker-conditioned models read, and their results writer."""

from __future__ import annotations

import argparse
import json

import numpy as np

from tests.helpers.audio import make_data_dir
from voxanon.evaluation.heldout import add_heldout_args, heldout_groups, load_utterances, unit, write_results


def test_unit_scales_each_row_to_length_one():
    x = np.array([[3.0, 4.0], [0.0, 2.0]])
    np.testing.assert_allclose(unit(x), [[0.6, 0.8], [0.0, 1.0]])
    np.testing.assert_allclose(unit(np.array([1.0, 1.0])), [2 ** -0.5] * 2)


def test_utterances_evenly_spaced_or_of_the_named_speakers(tmp_path):
    data = make_data_dir(tmp_path, utts_per_speaker=3)
    every = load_utterances([data], None)
    assert [r["utt"] for r in every] == [f"spk{s}-utt{i:03d}" for s in (1, 2, 3) for i in range(3)]
    first = every[0]
    assert (first["spk"], first["gender"], first["text"], first["sr"]) == ("spk1", "f", "HELLO WORLD 0", 16000)
    assert first["wav"].shape == (int(0.3 * 16000),) and "entry" not in first
    assert [r["utt"] for r in load_utterances([data], 3)] == ["spk1-utt000", "spk2-utt001", "spk3-utt002"]
    assert {r["spk"] for r in load_utterances([data], None, {"spk2"})} == {"spk2"}


def test_groups_follow_the_options(tmp_path):
    make_data_dir(tmp_path / "corpus")  # corpus/data holds the test set
    real = make_data_dir(tmp_path / "real")
    ap = argparse.ArgumentParser()
    add_heldout_args(ap, 4)
    args = ap.parse_args(["--corpus", str(tmp_path / "corpus"), "--sets", ".", "--real-dir", str(real),
                          "--real-speakers", "spk3"])
    groups = heldout_groups(args)
    assert len(groups["kokoro"]) == 4
    assert [r["utt"] for r in groups["real"]] == ["spk3-utt000", "spk3-utt001"]
    args = ap.parse_args(["--corpus", str(tmp_path / "corpus"), "--sets", ".", "--n", "0"])
    assert heldout_groups(args) == {}


def test_results_written_and_printed_as_a_table(tmp_path, capsys):
    results = {"real": {"utterances": 2, "systems": {"a": {"wer": 3.5}, "b": {"wer": 4.0, "cos": 0.5}}}}
    out = tmp_path / "r.json"
    write_results(results, str(out), ["real"], "systems", "system", [("WER %", "wer"), ("cosine", "cos")])
    assert json.loads(out.read_text()) == results
    assert capsys.readouterr().out.splitlines() == [
        "| set | system | WER % | cosine |", "|---|---|---|---|",
        "| real (2) | a | 3.5 |  |", "| real (2) | b | 4.0 | 0.5 |"]
