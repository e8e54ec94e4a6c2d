"""experiments/bench_real_speech.py's parts that need no model: the set drawn from a data directory, the
leave-one-out cosine, the table, the output folder names and the refusal of a language without recorded speech."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.helpers.scripts import script_fixture
from voxanon.data.kaldi import DataDir, read_data_dir, write_data_dir

bench = script_fixture("bench_real_speech")


def test_set_from_a_data_directory(bench, tmp_path):
    utts = [f"s{i % 3}-u{i:02d}" for i in range(12)]
    source = DataDir(wav_scp={u: f"/audio/{u}.wav" for u in utts}, utt2spk={u: u[:2] for u in utts},
                     text={u: f"句子 {u}" for u in utts})
    write_data_dir(source, tmp_path / "source")

    data_dir = bench.build_set(tmp_path / "a", 5, language="zh", source=tmp_path / "source")
    chosen = read_data_dir(data_dir)
    assert len(chosen.wav_scp) == 5 and set(chosen.wav_scp) <= set(utts)
    assert all(chosen.text[u] == source.text[u] and chosen.wav_scp[u] == source.wav_scp[u] for u in chosen.wav_scp)
    again = read_data_dir(bench.build_set(tmp_path / "b", 5, language="zh", source=tmp_path / "source"))
    assert list(again.wav_scp) == list(chosen.wav_scp)  # the same fixed seed draws the same utterances
    assert len(read_data_dir(bench.build_set(tmp_path / "c", 50, source=tmp_path / "source")).wav_scp) == 12
    # an existing set is reused, whatever is asked
    assert read_data_dir(bench.build_set(tmp_path / "a", 2, source=tmp_path / "source")).wav_scp == chosen.wav_scp


def test_leave_one_out_cosine(bench):
    ref = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [3.0, 4.0]])
    emb = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 2.0], [1.0, 0.0]])
    cos = bench.leave_one_out_cosine(emb, ref, ["a", "a", "a", "b"])
    # row 0 against the mean of ref rows 1 and 2, each made unit length first
    other = ref[1] / 1 + ref[2] / np.sqrt(2)
    assert cos[0] == pytest.approx(other[0] / np.linalg.norm(other))
    assert cos[2] == pytest.approx(1 / np.sqrt(2))  # (0, 1) against the mean of (1, 0) and (0, 1)
    assert np.isnan(cos[3])  # speaker b has no other utterance


def test_table_heads_the_rate(bench):
    rows = {"original": {"wer_whisper-base:zh": 18.0, "cosine_to_source": None},
            "world": {"wer_whisper-base:zh": 16.8, "ratio_whisper-base:zh": [0.93, 0.56, 1.44],
                      "cosine_to_source": 0.648, "rtf": [0.045]}}
    table = bench.markdown_table(rows, ["whisper-base:zh"], "CER").splitlines()
    assert table[0] == ("| method | whisper-base:zh CER % | x original [95 % CI] | GE2E cosine to source | RTF |")
    assert table[2] == "| original | 18.0 | - | - | - |"
    assert table[3] == "| world | 16.8 | 0.93 [0.56, 1.44] | 0.648 | 0.045 |"


def test_language_without_recorded_speech_needs_data(bench, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(sys, "argv", ["bench_real_speech.py", str(tmp_path), "--methods", "world",
                                      "--language", "ja"])
    with pytest.raises(SystemExit) as exit_info:
        bench.main()
    assert exit_info.value.code == 2 and "give --data" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # refused before anything was written


def test_folder_name_is_one_folder_of_bounded_length(bench):
    assert bench.folder_name("b6 model=/runs/x/b6.pt-seed1-") == "b6_model=_runs_x_b6.pt-seed1-"
    assert bench.folder_name("b5-") == "b5-"
    long_a = bench.folder_name("b5 targets=" + ",".join(map(str, range(60))) + "-")
    long_b = bench.folder_name("b5 targets=" + ",".join(map(str, range(61))) + "-")
    assert len(long_a) <= 80 and "/" not in long_a and long_a != long_b  # cut, but the hash tells them apart
