"""One error base for voxanon and the exit codes the CLI maps it to.

Every error voxanon raises on purpose is a :class:`VoxanonError`; its message
names the file, line, utterance or setting at fault and says what to do. The
command line prints that message as one line (a traceback only with
``--debug``) and exits with the class's code:

====  =====================================================================
code  meaning
====  =====================================================================
0     success
1     crash: an unexpected error (a bug)
2     usage: bad command line, parameter or configuration
3     data: missing, unreadable or inconsistent input data
4     model: a model or checkpoint that is missing, corrupt or unusable
5     partial: the command finished but some items failed (the list is written)
6     refused: the run cannot start or go on for an operational reason (output folder in use or
      made with other settings, unsafe or unwritable output path, disk full); nothing is lost
130   interrupted (Ctrl-C); finished outputs are kept, rerun to resume
====  =====================================================================
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_CRASH = 1
EXIT_USAGE = 2
EXIT_DATA = 3
EXIT_MODEL = 4
EXIT_PARTIAL = 5
EXIT_REFUSED = 6
EXIT_INTERRUPTED = 130


class VoxanonError(Exception):
    """Base of every error voxanon raises on purpose."""

    exit_code = EXIT_CRASH


class ConfigError(VoxanonError, ValueError):
    """A bad parameter, option or configuration; the message names it and its valid range."""

    exit_code = EXIT_USAGE


class DataError(VoxanonError):
    """Input data that is missing, unreadable, malformed or inconsistent."""

    exit_code = EXIT_DATA


class ModelError(VoxanonError):
    """A model, checkpoint or engine that is missing, corrupt or cannot be used."""

    exit_code = EXIT_MODEL


class RunError(VoxanonError):
    """A run refused for an operational reason: unsafe paths, an output folder in use or made with other
    settings, an unwritable output, a full disk, an unreachable cluster."""

    exit_code = EXIT_REFUSED
