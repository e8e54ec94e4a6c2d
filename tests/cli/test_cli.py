"""``voxanon anonymize`` on the command line, including SIGKILL at a random moment and resuming."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import soundfile as sf

from tests.helpers.audio import make_data_dir
from tests.helpers.processes import REPO_ROOT, run_cli_killed
from tests.helpers.toys import ToyGain
from voxanon.anonymizers.registry import available
from voxanon.cli import main
from voxanon.jobs.runner.anonymize import anonymize_corpus

TOY = "tests.helpers.toys:ToyGain"


def cli(*args: str) -> int:
    return main(["anonymize", *args])


def test_help_documents_the_output_rule(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        cli("--help")
    text = capsys.readouterr().out
    assert "OUTPUT/<name of INPUT>S" in text and "--force" in text and "package.module:Class" in text


def test_suffix_config_and_params(data_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "p.json").write_text(json.dumps({"delay": 0.5}))
    assert cli("--method", TOY, "--config", str(tmp_path / "p.json"), "--param", "delay=0", "--suffix", "_toy",
               "--jobs", "1", "--seed", "7", "--quiet", str(data_dir), str(tmp_path)) == 0
    out = tmp_path / "data_toy"
    settings = json.loads((out / "voxanon_run.json").read_text())
    assert settings["params"] == {"delay": 0.0} and settings["seed"] == 7
    assert len(list((out / "wav").glob("*.wav"))) == 6


def test_summary_on_stderr(data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert cli("--method", TOY, "--jobs", "1", str(data_dir), str(tmp_path / "o")) == 0
    assert cli("--method", TOY, "--jobs", "1", str(data_dir), str(tmp_path / "o")) == 0
    err = capsys.readouterr().err
    assert "done 6, skipped 0, failed 0" in err and "6 of 6 utterances already done" in err
    assert "done 0, skipped 6, failed 0" in err


@pytest.mark.parametrize("args, message", [
    (["--method", "no-such-method"], "unknown anonymizer 'no-such-method'"),
    (["--method", TOY, "--param", "speed=2"], r"unknown parameter\(s\) speed"),
    (["--method", TOY, "--param", "delay"], "expected NAME=VALUE"),
    (["--method", TOY, "--param", "delay=soon"], "parameter delay: expected float"),
    (["--method", TOY, "--config", "/no/such.json"], "--config /no/such.json"),
    (["--method", TOY, "--jobs", "0"], "jobs must be at least 1"),
])
def test_usage_errors_exit_2(data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture, args, message) -> None:
    assert cli(*args, str(data_dir), str(tmp_path / "o")) == 2
    err = capsys.readouterr().err
    assert err.startswith("voxanon anonymize: error: ") and message.replace("\\", "") in err.replace("\\", "")
    assert not (tmp_path / "o").exists()


def test_refusals_exit_6(data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert cli("--method", TOY, "--quiet", str(data_dir), str(data_dir / "x")) == 6
    assert cli("--method", TOY, "--quiet", "--jobs", "1", str(data_dir), str(tmp_path / "o")) == 0
    assert cli("--method", TOY, "--quiet", "--jobs", "1", "--seed", "3", str(data_dir), str(tmp_path / "o")) == 6
    assert "differ in: seed" in capsys.readouterr().err
    assert cli("--method", TOY, "--quiet", "--jobs", "1", "--seed", "3", "--force",
               str(data_dir), str(tmp_path / "o")) == 0


def test_failures_exit_5(data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with open(data_dir / "wav.scp", "a") as fh:
        fh.write(f"zz-missing {tmp_path / 'missing.wav'}\n")
    for name in ("utt2spk", "spk2utt", "spk2gender", "text", "utt2dur"):
        (data_dir / name).unlink()
    assert cli("--method", TOY, "--quiet", "--jobs", "1", str(data_dir), str(tmp_path / "o")) == 5
    assert "1 utterance(s) failed, see" in capsys.readouterr().err
    assert (tmp_path / "o" / "failures.tsv").read_text().splitlines()[1].startswith("zz-missing\t")


@pytest.mark.slow
def test_sigkill_then_resume_gives_the_uninterrupted_bytes(tmp_path: Path) -> None:
    data = make_data_dir(tmp_path / "corpus", utts_per_speaker=14)  # 42 utterances
    reference = tmp_path / "reference"
    anonymize_corpus(data, reference, ToyGain(), jobs=1, quiet=True)
    out = tmp_path / "anon"
    args = ["--method", TOY, "--param", "delay=0.04", "--jobs", "2", "--quiet", str(data), str(out)]
    run_cli_killed(args, out, kill_after=6)
    for wav in out.glob("wav/*.wav"):  # whatever exists under a final name is complete and correct
        assert wav.read_bytes() == (reference / "wav" / wav.name).read_bytes()
        assert sf.info(wav).frames == 4800
    assert len(list(out.glob("wav/*.wav"))) < 42
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    rerun = subprocess.run([sys.executable, "-m", "voxanon", "anonymize", *args], env=env, capture_output=True)
    assert rerun.returncode == 0, rerun.stderr.decode()
    assert sorted(p.name for p in out.rglob("*") if p.is_file()) == sorted(
        p.name for p in reference.rglob("*") if p.is_file())  # no temporaries left
    for wav in reference.glob("wav/*.wav"):
        assert (out / "wav" / wav.name).read_bytes() == wav.read_bytes()
    for name in ("utt2spk", "spk2utt", "spk2gender", "text", "utt2dur"):
        assert (out / name).read_bytes() == (reference / name).read_bytes()
    assert (out / "wav.scp").read_text() == (reference / "wav.scp").read_text().replace(str(reference), str(out))


@pytest.mark.skipif("mcadams" not in available(), reason="mcadams anonymizer not installed")
def test_registered_method_by_name(data_dir: Path, tmp_path: Path) -> None:
    assert cli("--method", "mcadams", "--jobs", "1", "--quiet", str(data_dir), str(tmp_path / "o")) == 0
    for wav in (tmp_path / "o" / "wav").glob("*.wav"):
        assert sf.info(wav).duration == pytest.approx(0.3, abs=0.01)
    assert json.loads((tmp_path / "o" / "voxanon_run.json").read_text())["method"] == "mcadams"
