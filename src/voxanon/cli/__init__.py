"""``voxanon`` command line: thin argparse front end over the pipelines.

Each command family lives in its own module ``voxanon.cli.<name>`` exposing
``register(commands)``; the module is listed in :data:`COMMAND_MODULES`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import dataclass

COMMAND_MODULES: tuple[str, ...] = ("listing", "ser", "anonymize", "utility", "synth", "benchmark", "privacy", "perf")


@dataclass
class Commands:
    """Sub-parser collections a command module adds its commands to."""

    top: argparse._SubParsersAction
    data: argparse._SubParsersAction
    evaluate: argparse._SubParsersAction


def build_parser() -> argparse.ArgumentParser:
    """The full ``voxanon`` parser with every command module registered."""
    parser = argparse.ArgumentParser(prog="voxanon", description="Voice anonymization and its evaluation.")
    from voxanon import __version__

    parser.add_argument("--version", action="version", version=f"voxanon {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    top = parser.add_subparsers(dest="command", metavar="COMMAND")
    data = top.add_parser("data", help="prepare data sets").add_subparsers(dest="data_command", metavar="SET")
    evaluate = top.add_parser("evaluate", help="privacy and utility evaluation").add_subparsers(
        dest="evaluate_command", metavar="WHAT")
    commands = Commands(top=top, data=data, evaluate=evaluate)
    for name in COMMAND_MODULES:
        importlib.import_module(f"voxanon.cli.{name}").register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``voxanon`` command; returns the exit status (see :mod:`voxanon.errors`)."""
    from voxanon.errors import EXIT_CRASH, EXIT_INTERRUPTED, EXIT_USAGE, VoxanonError

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
