"""``voxanon`` command line: thin argparse front end over the jobs.

The commands are verbs, one module ``voxanon.cli.<group>`` per group, each
exposing ``register(commands)`` and listed in :data:`COMMAND_MODULES`:
``data`` (prepare data sets), ``train`` (every model voxanon trains),
``anonymize``, ``evaluate``, ``benchmark``, and the utilities (``list``,
``perf``). A spelling that moved (:data:`MOVED`) prints one line naming its
new command and exits 2.

Start-up stays fast (``voxanon --help`` and ``--version`` import no numpy,
scipy, matplotlib or torch): handlers import their jobs inside their bodies
(a group module may point to a handler in ``voxanon.cli.handlers`` with
:func:`lazy`, imported only when the command runs), and a command whose
options need constants from a heavy module adds those options with
:meth:`CommandParser.defer`, which runs only when that command is parsed or
its help is shown.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass

from voxanon.errors import EXIT_USAGE

#: the command modules, in the order ``voxanon --help`` lists their commands
COMMAND_MODULES: tuple[str, ...] = ("data", "train", "anonymize", "evaluate", "benchmark", "utilities", "live")

#: old spelling -> the command it became
MOVED: dict[str, str] = {
    "attacker train": "train attacker",
    "ser train": "train ser",
    "ser learnability": "evaluate learnability ser",
    "evaluate learnability-asr": "evaluate learnability asr",
}
#: the old top-level groups whose every command moved
GONE_GROUPS = ("attacker", "ser")


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
    """Where a command module adds its commands: ``top``, the sub-parsers of ``voxanon``."""

    top: argparse._SubParsersAction


def group(commands: Commands, name: str, help_text: str, metavar: str) -> argparse._SubParsersAction:
    """A top-level command ``name`` whose sub-commands (shown as ``metavar``) are added to what this returns."""
    return commands.top.add_parser(name, help=help_text).add_subparsers(dest=f"{name}_command", metavar=metavar)


def lazy(target: str) -> Callable[[argparse.Namespace], int]:
    """The handler ``module:function`` of ``voxanon.cli.handlers``, imported when the command runs, not before."""
    module, _, name = target.partition(":")

    def handler(args: argparse.Namespace) -> int:
        return getattr(importlib.import_module(f"voxanon.cli.handlers.{module}"), name)(args)

    return handler


def build_parser() -> argparse.ArgumentParser:
    """The full ``voxanon`` parser with every command module registered."""
    parser = CommandParser(prog="voxanon", description="Voice anonymization and its evaluation.")
    from voxanon import __version__

    parser.add_argument("--version", action="version", version=f"voxanon {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    commands = Commands(top=parser.add_subparsers(dest="command", metavar="COMMAND"))
    for name in COMMAND_MODULES:
        importlib.import_module(f"voxanon.cli.{name}").register(commands)
    return parser


def moved_command(argv: list[str]) -> str | None:
    """The line naming the new command when ``argv`` starts with an old spelling (:data:`MOVED`), else None.

    A group that is gone (``attacker``, ``ser``) with no or another sub-command names every command it became.
    """
    words = [a for a in argv if not a.startswith("-")][:2]
    old = " ".join(words)
    if old in MOVED:
        return f"voxanon: '{old}' is now 'voxanon {MOVED[old]}'"
    if words and words[0] in GONE_GROUPS:
        return "voxanon: " + "; ".join(f"'{o}' is now 'voxanon {n}'" for o, n in MOVED.items()
                                       if o.split()[0] == words[0])
    return None


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``voxanon`` command; returns the exit status (see :mod:`voxanon.errors`)."""
    from voxanon.errors import EXIT_CRASH, EXIT_INTERRUPTED, VoxanonError

    moved = moved_command(sys.argv[1:] if argv is None else argv)
    if moved:
        print(moved, file=sys.stderr)
        return EXIT_USAGE
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
