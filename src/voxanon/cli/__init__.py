"""``voxanon`` command line: thin argparse front end over the jobs.

Each command family lives in its own module ``voxanon.cli.<name>`` exposing
``register(commands)``; the module is listed in :data:`COMMAND_MODULES`.

Start-up stays fast (``voxanon --help`` and ``--version`` import no numpy,
scipy, matplotlib or torch): command modules import their jobs inside
their handlers, and a command whose options need constants from a heavy module
adds those options with :meth:`CommandParser.defer`, which runs only when that
command is parsed or its help is shown.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass

from voxanon.errors import EXIT_USAGE

COMMAND_MODULES: tuple[str, ...] = ("listing", "ser", "anonymize", "utility", "synth", "benchmark", "privacy", "content",
                                    "perf", "pseudo", "acoustic", "learnability", "ltf", "vpc",
                                    "live")


class CommandParser(argparse.ArgumentParser):
    """An ArgumentParser that can add some of its arguments on first use (sub-parsers are of this class too)."""

    _deferred: list[Callable[[argparse.ArgumentParser], None]] | None = None

    def defer(self, add_arguments: Callable[[argparse.ArgumentParser], None]) -> None:
        """Call ``add_arguments(self)`` just before this parser parses or prints help, not when it is built."""
        self._deferred = [*(self._deferred or []), add_arguments]

    def _complete(self) -> None:
        while self._deferred:
            self._deferred.pop(0)(self)

    def parse_known_args(self, args=None, namespace=None):  # noqa: D102 (argparse's)
        self._complete()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:  # noqa: D102
        self._complete()
        return super().format_usage()

    def format_help(self) -> str:  # noqa: D102
        self._complete()
        return super().format_help()

    def error(self, message: str):
        """A usage error as one line (exit status 2), pointing to the command's help."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


@dataclass
class Commands:
    """Sub-parser collections a command module adds its commands to."""

    top: argparse._SubParsersAction
    data: argparse._SubParsersAction
    evaluate: argparse._SubParsersAction
    train: argparse._SubParsersAction


def build_parser() -> argparse.ArgumentParser:
    """The full ``voxanon`` parser with every command module registered."""
    parser = CommandParser(prog="voxanon", description="Voice anonymization and its evaluation.")
    from voxanon import __version__

    parser.add_argument("--version", action="version", version=f"voxanon {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    top = parser.add_subparsers(dest="command", metavar="COMMAND")
    data = top.add_parser("data", help="prepare data sets").add_subparsers(dest="data_command", metavar="SET")
    evaluate = top.add_parser("evaluate", help="privacy and utility evaluation").add_subparsers(
        dest="evaluate_command", metavar="WHAT")
    train = top.add_parser("train", help="train the models that anonymizers use").add_subparsers(
        dest="train_command", metavar="MODEL")
    commands = Commands(top=top, data=data, evaluate=evaluate, train=train)
    for name in COMMAND_MODULES:
        importlib.import_module(f"voxanon.cli.{name}").register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``voxanon`` command; returns the exit status (see :mod:`voxanon.errors`)."""
    from voxanon.errors import EXIT_CRASH, EXIT_INTERRUPTED, VoxanonError

    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        print("interrupted; finished outputs are kept, rerun the same command to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    except VoxanonError as exc:
        if args.debug:
            raise
        print(f"voxanon {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except Exception as exc:  # a bug: one line naming it, the traceback with --debug
        if args.debug:
            raise
        print(f"voxanon {args.command}: internal error: {type(exc).__name__}: {exc} "
              "(rerun with --debug for the traceback)", file=sys.stderr)
        return EXIT_CRASH
