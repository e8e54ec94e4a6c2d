"""IEMOCAP preparation on a small fabricated tree in the release's layout."""

from __future__ import annotations

import json

import pytest

from voxanon.audio.io import write_wav
from voxanon.audio.synthetic import speech_like
from voxanon.cli import main
from voxanon.data.iemocap import prepare_iemocap, read_labels, speaker_of
from voxanon.data.kaldi import DataError, read_data_dir

HEADER = "% [START_TIME - END_TIME] TURN_NAME EMOTION [V, A, D]\n\n"


def _label_block(start: float, utt: str, label: str) -> str:
    return (f"[{start:.4f} - {start + 1.5:.4f}]\t{utt}\t{label}\t[2.5000, 2.5000, 2.5000]\n"
            f"C-E1:\tNeutral;\t()\nC-E2:\tNeutral;\t()\nA-E1:\tval 3; act 2; dom  2;\t()\n\n")


def make_tree(root, *, sessions=(1, 2, 3, 4, 5), missing_label_dialog=None, extra=None):
    """Two dialogs per session, turns by both actors; returns {utt: raw label}."""
    labels = {}
    for s in sessions:
        for d, dialog in enumerate((f"Ses0{s}F_impro01", f"Ses0{s}M_script01_1")):
            rows = []
            for i, (letter, label) in enumerate([("F", "neu"), ("M", "sad"), ("F", "exc"), ("M", "ang"),
                                                 ("F", "hap"), ("M", "fru"), ("F", "xxx"), ("M", "neu")]):
                utt = f"{dialog}_{letter}{i:03d}"
                write_wav(root / f"Session{s}" / "sentences" / "wav" / dialog / f"{utt}.wav",
                          speech_like(0.3, seed=s * 100 + d * 10 + i), 16000)
                rows.append(_label_block(2.0 * i, utt, label))
                labels[utt] = label
            if dialog != missing_label_dialog:
                path = root / f"Session{s}" / "dialog" / "EmoEvaluation" / f"{dialog}.txt"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(HEADER + "".join(rows) + (extra or ""), encoding="utf-8")
    return labels


def test_speaker_convention():
    assert speaker_of("Ses01F_impro01_F000") == ("Ses01F", "f", 1)
    assert speaker_of("Ses01F_impro01_M013") == ("Ses01M", "m", 1)
    assert speaker_of("Ses05M_script01_1b_F003") == ("Ses05F", "f", 5)
    with pytest.raises(DataError, match="not an IEMOCAP utterance id"):
        speaker_of("Ses06F_impro01_F000")


def test_read_labels_summary_lines_only(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text(HEADER + _label_block(0.0, "Ses01F_impro01_F000", "neu")
                    + _label_block(3.0, "Ses01F_impro01_M001", "Fru"), encoding="utf-8")
    assert read_labels(path) == {"Ses01F_impro01_F000": "neu", "Ses01F_impro01_M001": "fru"}


def test_prepare_folds_classes_and_report(tmp_path):
    labels = make_tree(tmp_path / "IEMOCAP", missing_label_dialog="Ses03M_script01_1")
    # an unreadable wav (garbage bytes) is listed and skipped
    bad = tmp_path / "IEMOCAP/Session2/sentences/wav/Ses02F_impro01/Ses02F_impro01_M003.wav"
    bad.write_bytes(b"not a wav file")
    report = prepare_iemocap(tmp_path / "IEMOCAP", tmp_path / "out")

    full = read_data_dir(tmp_path / "out" / "IEMOCAP_all")
    dev = read_data_dir(tmp_path / "out" / "IEMOCAP_dev")
    test = read_data_dir(tmp_path / "out" / "IEMOCAP_test")
    assert set(full.utt2emo.values()) == {"neu", "sad", "ang", "hap"}
    for utt, emo in full.utt2emo.items():
        assert emo == {"exc": "hap"}.get(labels[utt], labels[utt])
    assert not any(labels[u] in ("fru", "xxx") for u in full.utts)
    assert report.excluded_labels == {"fru": 9, "xxx": 9}  # 10 dialogs, one unlabelled
    assert report.missing_label_files == [
        str(tmp_path / "IEMOCAP/Session3/dialog/EmoEvaluation/Ses03M_script01_1.txt")]
    assert not any(u.startswith("Ses03M_script01_1") for u in full.utts)
    assert len(report.bad_audio) == 1 and "Ses02F_impro01_M003" in report.bad_audio[0]
    assert "Ses02F_impro01_M003" not in full.wav_scp

    # speakers: session + letter before the index; fold = session
    assert full.spk2fold == {f"Ses0{s}{g}": str(s) for s in range(1, 6) for g in "FM"}
    assert full.utt2spk["Ses01M_script01_1_F002"] == "Ses01F"
    assert full.spk2gender["Ses04M"] == "m"
    # dev: the female speaker of each session, test: the male one; disjoint
    assert set(dev.utt2spk.values()) == {f"Ses0{s}F" for s in range(1, 6)}
    assert set(test.utt2spk.values()) == {f"Ses0{s}M" for s in range(1, 6)}
    assert sorted(dev.utts + test.utts) == sorted(full.utts)
    saved = json.loads((tmp_path / "out" / "prep_report.json").read_text())
    assert saved["excluded_labels"] == {"fru": 9, "xxx": 9}


def test_missing_session_is_an_error(tmp_path, capsys):
    make_tree(tmp_path / "IEMOCAP", sessions=(1, 2, 3, 5))
    with pytest.raises(DataError, match="Session4.*fold 4 would have no speakers"):
        prepare_iemocap(tmp_path / "IEMOCAP", tmp_path / "out")
    assert main(["data", "iemocap", str(tmp_path / "IEMOCAP"), str(tmp_path / "out")]) == 3
    assert "fold 4 would have no speakers" in capsys.readouterr().err


def test_cli_data_iemocap(tmp_path, capsys):
    make_tree(tmp_path / "IEMOCAP")
    assert main(["data", "iemocap", str(tmp_path / "IEMOCAP"), str(tmp_path / "out"), "--dev-gender", "m"]) == 0
    dev = read_data_dir(tmp_path / "out" / "IEMOCAP_dev")
    assert set(dev.spk2gender.values()) == {"m"}
    assert "excluded (not one of the 4 classes): fru 10, xxx 10" in capsys.readouterr().out


@pytest.mark.parametrize("subfolder", ["", "IEMOCAP"])
def test_benchmark_data_finds_what_the_data_commands_write(tmp_path, subfolder):
    """`voxanon data librispeech` + `voxanon data iemocap` output is the layout `voxanon benchmark --data` reads."""
    from tests.helpers.librispeech_tree import make_tree as make_librispeech
    from voxanon.jobs.benchmark.profiles import PROFILES
    from voxanon.jobs.benchmark.run import Benchmark

    root = tmp_path / "vpc"
    assert main(["data", "librispeech", str(make_librispeech(tmp_path / "ls")), str(root),
                 "--enroll-fraction", "0.67", "--enroll-utts", "2"]) == 0
    make_tree(tmp_path / "IEMOCAP")
    assert main(["data", "iemocap", str(tmp_path / "IEMOCAP"), str(root / subfolder)]) == 0
    layout = Benchmark(tmp_path / "out", PROFILES["default"], [], data_root=root)._layout()
    assert layout.emo == root / subfolder / "IEMOCAP_all"
    assert layout.train == root / "train-clean-360" and layout.splits == ["dev", "test"]
    assert set(layout.sets(layout.splits)) >= {"emo", "train", "test_enrolls", "dev_trials_m"}
