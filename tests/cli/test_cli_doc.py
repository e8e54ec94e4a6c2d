"""docs/cli.md lists exactly the commands the parser has, the moved spellings and every exit status."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from voxanon.cli import MOVED, build_parser

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
TEXT = DOC.read_text(encoding="utf-8")


def _section(start: str) -> str:
    """The text from the heading ``start`` to the next heading of the same or a higher level."""
    i = TEXT.index(start) + len(start)
    end = re.search(r"^#{1,%d} " % start.count("#"), TEXT[i:], flags=re.M)
    return TEXT[i: i + end.start()] if end else TEXT[i:]


def _leaves(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every runnable command of ``parser`` as its words (``("evaluate", "learnability", "ser")``)."""
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not groups:
        return {words}
    return {leaf for name, sub in groups[0].choices.items() for leaf in _leaves(sub, (*words, name))}


def _command_words(span: str) -> tuple[str, ...]:
    """The command of a code span ``voxanon evaluate privacy --enroll E``: its words up to the first argument."""
    words = []
    for word in span.split()[1:]:
        if not re.fullmatch(r"[a-z][a-z0-9-]*", word):
            break
        words.append(word)
    return tuple(words)


def test_the_tables_list_exactly_the_parsers_commands() -> None:
    tables = TEXT[: TEXT.index("## Moved commands")]
    documented = [_command_words(span) for span in re.findall(r"^\| `(voxanon [^`]+)` \|", tables, flags=re.M)]
    assert set(documented) == _leaves(build_parser())


def test_moved_commands_table_is_the_clis() -> None:
    rows = re.findall(r"^\| `voxanon ([^`]+)` \| `voxanon ([^`]+)` \|$", _section("## Moved commands"), flags=re.M)
    assert dict(rows) == MOVED


def test_exit_status_table_has_every_code() -> None:
    import voxanon.errors

    documented = {int(c) for c in re.findall(r"^\| (\d+) \|", _section("## Exit status"), flags=re.M)}
    codes = {v for k, v in vars(voxanon.errors).items() if k.startswith("EXIT_")}
    assert codes <= documented, f"exit codes of voxanon.errors missing from docs/cli.md: {sorted(codes - documented)}"
