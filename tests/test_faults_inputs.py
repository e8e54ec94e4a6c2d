"""Fault catalogue, anonymizers and inputs (docs/reliability.md, "Anonymizers and inputs").

Each test pins one bad input or setting to one clear error (or to the safe
behaviour that replaces it); the docs table names the test of every case.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from voxanon.anonymizers.registry import build
from voxanon.cli import main
from voxanon.errors import ConfigError

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
