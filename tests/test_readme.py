"""Every fenced block of README.md and docs/extending.md is run, or checked, by a rule of this file.

How each block is handled (:data:`RULES`; a block that no rule or more than one rule
covers fails :func:`test_every_block_has_exactly_one_rule`):

- ``setup``: the two set-up lines that open the README. Not run here (CI runs them
  on a fresh machine); they must be the first two blocks, exactly as CI expects, and
  the main job's command line must parse with voxanon's own parser.
- ``output``: ``text`` blocks show what a command prints; nothing to run, but the main job's
  table must have the columns ``voxanon benchmark`` prints.
- ``toml``: parsed, and an entry-point table must name the group ``voxanon.anonymizers``
  with ``module:Class`` values.
- ``bash`` and ``python``: run as written, each block in its own empty folder that holds
  only ``tests/fixtures`` (linked), ``voxanon`` on PATH (this interpreter's
  ``python -m voxanon``) and this checkout's ``src`` on PYTHONPATH; bash with ``-eu -o
  pipefail``. Blocks that build a corpus, load Whisper or run for more than ~10 s are
  marked slow (:data:`SLOW_MARKERS`).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import voxanon
from voxanon.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: the documents whose fenced blocks are tested
DOCUMENTS = (README, ROOT / "docs" / "extending.md")
SRC = Path(voxanon.__file__).resolve().parents[1]

SETUP_BLOCKS = ("bash tools/setup.sh && voxanon benchmark --out runs/benchmark",
                "bash tools/setup.sh && python3 -m pytest -q")
#: a runnable block that contains one of these is marked slow (corpus build, Whisper, evaluation)
SLOW_MARKERS = ("voxanon data synth", "evaluate_wer", "evaluate privacy", "evaluate utility")


@dataclass(frozen=True)
class Block:
    """One fenced block: its document, its language tag, its text and the line of its opening fence."""

    doc: str
    lang: str
    text: str
    line: int

    @property
    def id(self) -> str:
        return f"{self.doc}-line{self.line}-{self.lang}"


def document_blocks(path: Path) -> list[Block]:
    """Every fenced block of the document ``path``, in order."""
    text = path.read_text(encoding="utf-8")
    return [Block(path.stem, m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1)
            for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, flags=re.M | re.S)]


BLOCKS = [block for path in DOCUMENTS for block in document_blocks(path)]
README_BLOCKS = document_blocks(README)


@dataclass(frozen=True)
class Rule:
    """How blocks that ``covers`` are tested."""

    name: str
    covers: Callable[[Block], bool]


RULES = (
    Rule("setup", lambda b: b.lang == "bash" and b.text.strip() in SETUP_BLOCKS),
    Rule("output", lambda b: b.lang == "text"),
    Rule("toml", lambda b: b.lang == "toml"),
    Rule("run", lambda b: b.lang in ("bash", "python") and b.text.strip() not in SETUP_BLOCKS),
)


def _rules_of(block: Block) -> list[str]:
    return [r.name for r in RULES if r.covers(block)]


def test_every_block_has_exactly_one_rule():
    assert README_BLOCKS, "README.md has no fenced blocks"
    uncovered = [(b.id, _rules_of(b)) for b in BLOCKS if len(_rules_of(b)) != 1]
    assert not uncovered, f"blocks without exactly one test rule (add one to tests/test_readme.py): {uncovered}"


def test_readme_opens_with_the_two_setup_commands():
    assert [b.text.strip() for b in README_BLOCKS[:2]] == list(SETUP_BLOCKS)
    assert all(b.lang == "bash" for b in README_BLOCKS[:2])


def _parse(argv: list[str]) -> None:
    """Parse ``argv`` with voxanon's parser (as the ``voxanon`` command would), without running it."""
    args = build_parser().parse_args(argv)
    assert getattr(args, "handler", None) is not None, f"{argv} names no runnable command"


def test_main_job_command_parses():
    command = shlex.split(SETUP_BLOCKS[0].split("&&")[1])
    assert command[0] == "voxanon"
    _parse(command[1:])


def test_toml_blocks_declare_anonymizer_entry_points():
    tomls = [b for b in BLOCKS if b.lang == "toml"]
    for block in tomls:
        table = tomllib.loads(block.text)["project"]["entry-points"]["voxanon.anonymizers"]
        assert table and all(re.fullmatch(r"[\w.]+:\w+", v) for v in table.values()), table


def test_main_job_table_has_the_columns_the_benchmark_prints():
    from voxanon.jobs.benchmark.records import load_results, summarize

    results = load_results(ROOT / "tests" / "fixtures" / "benchmark_runs" / "quick_results.json")
    printed = ["system", *(c.cli for c in summarize(results).shown("cli")), "category"]
    tables = [b for b in BLOCKS if b.lang == "text" and b.text.startswith("system ")]
    assert tables, "README.md shows no output of voxanon benchmark"
    for block in tables:
        assert re.split(r"\s{2,}", block.text.splitlines()[0].strip()) == printed


def _workspace(tmp_path: Path) -> dict[str, str]:
    """An empty folder with tests/fixtures, and the environment that runs this checkout's voxanon."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "fixtures").symlink_to(ROOT / "tests" / "fixtures")
    bin_dir = tmp_path / ".bin"
    bin_dir.mkdir()
    shim = bin_dir / "voxanon"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m voxanon "$@"\n')
    shim.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])))
    return env


def _runnable() -> list:
    params = []
    for block in BLOCKS:
        if _rules_of(block) != ["run"]:
            continue
        slow = any(marker in block.text for marker in SLOW_MARKERS)
        params.append(pytest.param(block, id=block.id, marks=[pytest.mark.slow] if slow else []))
    return params


@pytest.mark.parametrize("block", _runnable())
def test_block_runs(block: Block, tmp_path: Path):
    env = _workspace(tmp_path)
    if block.lang == "bash":
        argv = ["bash", "-eu", "-o", "pipefail", "-c", block.text]
    else:
        script = tmp_path / "block.py"
        script.write_text(block.text, encoding="utf-8")
        argv = [sys.executable, str(script)]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200)
    # a failure in a worker process need not change the exit status, but it prints a traceback
    assert done.returncode == 0 and "Traceback" not in done.stderr, \
        f"{block.doc} block at line {block.line} failed:\n{done.stdout}\n{done.stderr}"
