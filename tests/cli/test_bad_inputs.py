"""Fault catalogue, anonymizers and inputs (docs/reliability.md, "Anonymizers and inputs").

Each test pins one bad input or setting to one clear error (or to the safe
behaviour that replaces it); the docs table names the test of every case.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from voxanon.anonymizers.registry import build
from voxanon.audio.io import AudioError, load_audio, wav_truncation, write_wav
from voxanon.cli import main
from voxanon.data.kaldi import (
    DataDir,
    Trial,
    check_trial_labels,
    read_data_dir,
    read_text_file,
    write_data_dir,
)
from voxanon.data.librispeech import prepare_librispeech
from voxanon.errors import ConfigError, DataError

HEAVY = ("numpy", "scipy", "matplotlib", "torch", "soundfile", "soxr", "pyworld", "voxanon.metrics")


def test_building_the_parser_imports_nothing_heavy() -> None:
    code = (
        "import json, sys\n"
        "from voxanon.cli import build_parser\n"
        "build_parser().format_help()\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in %r or m.startswith(%r))))"
        % (HEAVY, "voxanon.metrics")
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


def test_deferred_options_still_parse_and_show(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(["anonymize", "--help"])
    assert "--level {utterance,speaker}" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["benchmark", "--profile", "nope"])
    assert "invalid choice: 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "method, params, message",
    [
        ("mcadams", {"alpha_max": "inf"}, r"alpha_max must be a finite number in \(0, 2\]"),
        ("mcadams", {"lp_order": "1000"}, r"lp_order must be a finite number in \[1, 100\]"),
        ("mcadams", {"shift": "1e-9"}, r"shift must be a finite number in \[0.001, 0.1\]"),
        ("world", {"frame_period": "nan"}, r"frame_period must be a finite number in \[1, 50\], got nan"),
        ("world", {"f0_ceil": "inf"}, r"f0_ceil must be a finite number in \[40, 2000\]"),
        ("world", {"warp_range": "0.9"}, r"parameter warp_range: expected a list .* valid values: \[0.5, 2\]"),
        ("world", {"warp_range": "[1.2, 0.9]"}, r"warp_range must be a pair \[lo, hi\] with lo <= hi"),
        ("f0_noise", {"std_hz": "-1"}, r"std_hz must be a finite number in \[0, 200\]"),
        ("chain", {"steps": '[{"method": "world", "params": {"f0_floor": 0}}]'}, r"steps\[0\] \(world\): f0_floor"),
    ],
)
def test_parameters_are_validated_by_meaning(method: str, params: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build(method, params)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["evaluate", "privacy", "--enroll", "e", "--trials", "t", "--n-boot", "0"], "--n-boot: must be >= 1, got 0"),
        (["evaluate", "utility", "d", "--n-boot", "0"], "--n-boot: must be >= 1, got 0"),
        (["data", "librispeech", "r", "o", "--enroll-utts", "0"], "--enroll-utts: must be >= 1, got 0"),
        (["data", "librispeech", "r", "o", "--enroll-fraction", "-1"], r"--enroll-fraction: must be in \(0, 1\]"),
        (["data", "librispeech", "r", "o", "--enroll-fraction", "0"], r"--enroll-fraction: must be in \(0, 1\]"),
        (["data", "librispeech", "r", "o", "--enroll-fraction", "2"], r"--enroll-fraction: must be in \(0, 1\]"),
    ],
)
def test_options_are_validated_at_parse_time_in_one_line(argv, message, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert len(err.strip().splitlines()) == 1
    assert re.search(message, err)


def test_list_shows_parameter_ranges(capsys: pytest.CaptureFixture) -> None:
    assert main(["list"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if "--param lp_order=" in line]
    assert lines and lines[0].endswith("LPC order (valid: [1, 100])")


# --- item 9: inputs, one clear DataError line each -------------------------------------------------------------


def _data_dir(path: Path, wav_scp: bytes = b"u1 /x/u1.wav\nu2 /x/u2.wav\n") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "wav.scp").write_bytes(wav_scp)
    (path / "utt2spk").write_text("u1 s1\nu2 s2\n")
    return path


def test_missing_data_dir_is_named(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"nope: no such folder; give a data directory"):
        read_data_dir(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(DataError, match=r"file: not a folder"):
        read_data_dir(tmp_path / "file")


def test_unreadable_data_file_is_one_line(tmp_path: Path) -> None:
    d = _data_dir(tmp_path / "d")
    (d / "text").mkdir()  # a folder where a file should be: reading it fails with an OSError
    with pytest.raises(DataError, match=r"text: cannot read"):
        read_text_file(d / "text")


def test_bom_in_wav_scp_names_wav_scp(tmp_path: Path) -> None:
    d = _data_dir(tmp_path / "d", b"\xef\xbb\xbfu1 /x/u1.wav\nu2 /x/u2.wav\n")
    with pytest.raises(DataError, match=r"d/wav\.scp:1: starts with a UTF-8 byte-order mark"):
        read_data_dir(d)


def test_latin1_librispeech_transcript_is_named(tmp_path: Path) -> None:
    from tests.helpers.librispeech_tree import make_tree

    root = make_tree(tmp_path / "ls")
    trans = root / "LibriSpeech" / "dev-clean" / "11" / "100" / "11-100.trans.txt"
    trans.write_bytes(trans.read_bytes().replace(b"WORDS OF UTTERANCE 2", b"CAF\xc9 2"))
    with pytest.raises(DataError, match=r"11-100\.trans\.txt:3: not valid UTF-8 \(byte 0xc9\)"):
        prepare_librispeech(root, tmp_path / "out")


def test_pipe_that_prints_text_shows_the_command() -> None:
    with pytest.raises(AudioError, match=r"pipe command 'echo not audio' printed text that is not audio") as info:
        load_audio("echo not audio |")
    assert "BytesIO" not in str(info.value)


def test_id_with_a_space_is_refused_when_writing_and_explained_when_reading(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"utterance id 'a b' contains whitespace; ids cannot contain spaces"):
        write_data_dir(DataDir(wav_scp={"a b": "/x/a b.wav"}), tmp_path / "out")
    d = _data_dir(tmp_path / "d")
    (d / "utt2spk").write_text("u1 s1\nu 2 s2\n")
    with pytest.raises(DataError, match=r"utt2spk:2: .*ids cannot contain spaces"):
        read_data_dir(d)


@pytest.mark.parametrize("label, have", [("target", "target"), ("nontarget", "non-target")])
def test_one_sided_trials_name_the_trial_dir_and_gender(tmp_path: Path, label: str, have: str) -> None:
    trials = DataDir(path=tmp_path / "trials_f", trials=[Trial("s1", "u1", label == "target"),
                                                          Trial("s1", "u2", label == "target")])
    with pytest.raises(DataError, match=rf"trials_f/trials: gender f has only {have} trials"):
        check_trial_labels(trials, {"s1": "f"})
    check_trial_labels(DataDir(trials=[Trial("s1", "u1", True), Trial("s1", "u2", False)]), {"s1": "f"})


def test_truncated_wav_reports_expected_and_present_frames(tmp_path: Path) -> None:
    path = tmp_path / "a.wav"
    write_wav(path, np.full(16000, 0.1, dtype=np.float32), 16000)
    assert wav_truncation(path) is None
    path.write_bytes(path.read_bytes()[: 44 + 2 * 6000 + 1])
    assert wav_truncation(path) == (16000, 6000)
    assert wav_truncation(tmp_path / "missing.wav") is None


# --- item 11: LibriSpeech under a root with spaces and non-ASCII characters ---------------------------------------


def test_librispeech_pipes_survive_spaces_and_unicode(tmp_path: Path) -> None:
    from tests.helpers.librispeech_tree import make_tree

    root = make_tree(tmp_path / "my corpora" / "Libri Spëech ü'$x")
    prepare_librispeech(root, tmp_path / "out", enroll_fraction=0.67, enroll_utts=2)
    data = read_data_dir(tmp_path / "out" / "libri_dev_trials_f")
    for entry in list(data.wav_scp.values())[:2]:
        wav, sr = load_audio(entry)
        assert sr == 16000 and len(wav) == 800
