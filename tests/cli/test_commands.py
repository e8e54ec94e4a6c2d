"""The command tree: the top-level commands are verbs (plus the utilities), and old spellings name their new command."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from voxanon.cli import MOVED, build_parser, main
from voxanon.errors import EXIT_USAGE


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_top_level_commands_are_the_verbs_and_the_utilities() -> None:
    assert list(_subcommands(build_parser())) == ["data", "train", "anonymize", "evaluate", "benchmark", "list",
                                                  "perf", "stream", "serve"]


def test_each_group_holds_its_commands() -> None:
    top = _subcommands(build_parser())
    assert list(_subcommands(top["data"])) == ["synth", "conversations", "pii", "librispeech", "iemocap", "games",
                                               "speaker-pool"]
    assert list(_subcommands(top["train"])) == ["acoustic", "asrbn", "bottleneck", "f3va", "ltf", "speaker-flow",
                                                "attacker", "ser"]
    evaluate = _subcommands(top["evaluate"])
    assert list(evaluate) == ["privacy", "utility", "content-privacy", "conversations", "vpc", "learnability"]
    assert list(_subcommands(evaluate["learnability"])) == ["ser", "asr"]


def test_building_the_parser_imports_no_handler_module() -> None:
    code = ("import sys; from voxanon.cli import build_parser; build_parser().format_help(); "
            "print(sorted(m for m in sys.modules if m.startswith('voxanon.cli.handlers')))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


@pytest.mark.parametrize("old, new", [
    ("attacker train", "train attacker"),
    ("ser train", "train ser"),
    ("ser learnability", "evaluate learnability ser"),
    ("evaluate learnability-asr", "evaluate learnability asr"),
])
@pytest.mark.parametrize("tail", [[], ["data", "out", "--epochs", "3"], ["--help"]])
def test_old_spelling_exits_2_naming_its_new_command(old, new, tail, capsys: pytest.CaptureFixture) -> None:
    assert main([*old.split(), *tail]) == EXIT_USAGE
    out, err = capsys.readouterr()
    assert out == "" and err == f"voxanon: '{old}' is now 'voxanon {new}'\n"


def test_every_moved_command_exists() -> None:
    for new in MOVED.values():
        with pytest.raises(SystemExit) as exit_info:
            build_parser().parse_args([*new.split(), "--help"])
        assert exit_info.value.code == 0


def test_a_gone_group_alone_names_every_command_it_became(capsys: pytest.CaptureFixture) -> None:
    assert main(["--debug", "ser"]) == EXIT_USAGE
    assert capsys.readouterr().err == ("voxanon: 'ser train' is now 'voxanon train ser'; "
                                       "'ser learnability' is now 'voxanon evaluate learnability ser'\n")


def test_a_data_directory_named_like_an_old_group_is_no_old_spelling(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "utility", "ser", "--help"])
    assert exit_info.value.code == 0 and "is now" not in capsys.readouterr().err
