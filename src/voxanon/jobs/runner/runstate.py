"""State of an anonymization output folder: settings record, lock, output record, failures, warnings.

An output folder belongs to voxanon once it holds ``voxanon_run.json`` (the
settings that produced it). A run refuses a non-empty folder without that
file, and a folder made with other settings unless ``force`` is given; then
every previous output (``*.wav`` files at any depth, the data-directory files,
``failures.tsv``, ``warnings.tsv`` and the output record) is deleted *before*
the new settings are recorded, so a run killed half-way through never leaves
old outputs under new settings.

The output record ``voxanon_done.jsonl`` has one JSON line per finished output,
appended as it finishes: the utterance, its source and the source's stamp
(:func:`input_stamp`: size and modification time of a file, or the pipe
command itself), the output's duration and its warnings. A rerun keeps an output only when
its record matches the source as it is now; it redoes outputs whose input
changed and outputs without a record (a run killed between the write and the
record). The settings they were made with are those of ``voxanon_run.json``.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from voxanon.atomic import write_text
from voxanon.data.kaldi import FILES
from voxanon.errors import RunError  # noqa: F401  (re-exported)

RUN_FILE = "voxanon_run.json"
FAILURES_FILE = "failures.tsv"
WARNINGS_FILE = "warnings.tsv"
DONE_FILE = "voxanon_done.jsonl"
LOCK_FILE = ".voxanon.lock"
#: the fields of an output record, in the order :func:`record_line` takes them
RECORD_FIELDS = ("utt", "source", "stamp", "seconds", "warnings")
#: what the per-utterance RNG is keyed by
LEVELS = ("utterance", "speaker")
#: every file of an output folder besides the wavs that the runner writes
OWN_FILES = (*FILES, FAILURES_FILE, WARNINGS_FILE, DONE_FILE)


def _within(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def check_paths(input_path: Path, output_path: Path) -> None:
    """Refuse an output folder that is, contains, or lies inside the input."""
    src, dst = input_path.resolve(), output_path.resolve()
    if _within(dst, src):
        raise RunError(f"output {output_path} is inside the input {input_path}; voxanon never writes into its input")
    if _within(src, dst):
        raise RunError(f"input {input_path} is inside the output {output_path}; choose an output folder elsewhere")


def check_sources(sources: list[str], output_path: Path) -> None:
    """Refuse plain-file sources that lie inside the output folder (they could be overwritten or deleted)."""
    dst = output_path.resolve()
    for source in sources:
        if not source.rstrip().endswith("|") and _within(Path(os.path.realpath(source)), dst):
            raise RunError(f"input audio {source} lies inside the output folder {output_path}")


@contextmanager
def output_lock(output_path: Path) -> Iterator[int]:
    """Hold an exclusive lock on the output folder; yields the lock's file descriptor.

    The lock is released when the last process holding a copy of that
    descriptor ends (local workers inherit it), even when killed.

    Raises
    ------
    RunError
        The folder cannot be created or written, is not empty and not a voxanon
        output (nothing is written to it then), or another run holds the lock.
    """
    if output_path.is_dir() and not (output_path / RUN_FILE).is_file() \
            and any(p.name != LOCK_FILE for p in output_path.iterdir()):
        raise RunError(f"{output_path} is not empty and is not a voxanon output folder (no {RUN_FILE}); "
                       "choose a new or empty folder")
    make_folders([output_path])
    try:
        fh = open(output_path / LOCK_FILE, "a")
    except OSError as exc:
        raise RunError(f"cannot write to the output folder {output_path}: {exc.strerror}") from None
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunError(f"another voxanon run is writing to {output_path} (or its workers are still ending)") \
                from None
        yield fh.fileno()


def make_folders(folders: Iterable[Path]) -> None:
    """Create ``folders`` (with parents); RunError naming the one in the way or not writable."""
    for folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise RunError(f"cannot create the output folder {folder}: a file of that name is in the way") from None
        except NotADirectoryError:
            raise RunError(f"cannot create the output folder {folder}: a file is in the way in its path") from None
        except OSError as exc:
            raise RunError(f"cannot create the output folder {folder}: {exc.strerror}") from None


def check_writable(output_path: Path, folders: Iterable[Path]) -> None:
    """Before any work: the folders exist and take a small write, and no output file name is taken by a folder.

    Raises
    ------
    RunError
        Naming the folder or file and why (read-only, permission, disk full, in the way).
    """
    for name in OWN_FILES:
        if (output_path / name).exists() and not (output_path / name).is_file():
            raise RunError(f"{output_path / name} is in the way: it is not a file; move it away")
    for folder in {output_path, *folders}:
        try:
            with tempfile.TemporaryFile(dir=folder) as fh:
                fh.write(b"\0" * 4096)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise RunError(f"cannot write to the output folder {folder}: {exc.strerror}") from None


def input_stamp(source: str) -> str:
    """What an output is made from, as it is now: ``size:mtime_ns`` of a file, ``pipe`` for a command, or ``missing``."""
    text = source.strip()
    if text.endswith("|"):
        return "pipe"
    try:
        st = os.stat(text)
    except OSError:
        return "missing"
    return f"{st.st_size}:{st.st_mtime_ns}"


def read_records(output_path: Path) -> dict[str, dict[str, Any]]:
    """Utterance -> its latest output record (lines cut short by a kill are ignored)."""
    records: dict[str, dict[str, Any]] = {}
    try:
        lines = (output_path / DONE_FILE).read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return records
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.keys() >= set(RECORD_FIELDS):
            records[record["utt"]] = record
    return records


def open_records(output_path: Path) -> TextIO:
    """The output record, open for appending (a last line cut short by a kill is ended first)."""
    path = output_path / DONE_FILE
    torn = False
    if path.is_file() and path.stat().st_size:
        with open(path, "rb") as old:
            old.seek(-1, os.SEEK_END)
            torn = old.read(1) != b"\n"
    fh = open(path, "a", encoding="utf-8")
    if torn:
        fh.write("\n")
    return fh


def record_line(utt: str, source: str, stamp: str, seconds: float, warnings: Iterable[str]) -> str:
    """One line of the output record: what the output was made from, its duration and its warnings."""
    return json.dumps({"utt": utt, "source": source, "stamp": stamp, "seconds": seconds, "warnings": list(warnings)},
                      ensure_ascii=False) + "\n"


def matches(record: dict[str, Any] | None, source: str, stamp: str) -> bool:
    """Whether an output record says the output was made from ``source`` as it is now."""
    return record is not None and record.get("source") == source and record.get("stamp") == stamp \
        and stamp != "missing"


def _normalise(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings as they read back from JSON (tuples become lists)."""
    return json.loads(json.dumps(settings))


def _remove_outputs(output_path: Path) -> None:
    """Delete every previous output: wavs, temporaries, data-directory files, failures list."""
    for dirpath, _, filenames in os.walk(output_path, topdown=False):
        for name in filenames:
            if name.endswith((".wav", ".tmp")):
                os.unlink(os.path.join(dirpath, name))
        if dirpath != str(output_path) and not os.listdir(dirpath):
            os.rmdir(dirpath)
    for name in OWN_FILES:
        (output_path / name).unlink(missing_ok=True)


def remove_temporaries(output_path: Path) -> None:
    """Delete leftover ``.<name>.<random>.tmp`` files of killed writes."""
    for dirpath, _, filenames in os.walk(output_path):
        for name in filenames:
            if name.startswith(".") and name.endswith(".tmp"):
                os.unlink(os.path.join(dirpath, name))


def prepare_output(output_path: Path, settings: dict[str, Any], *, force: bool) -> None:
    """Make ``output_path`` ready for a run with ``settings`` (call while holding :func:`output_lock`).

    Raises
    ------
    RunError
        The folder was made with other settings and ``force`` is false.
    """
    settings = _normalise(settings)
    run_file = output_path / RUN_FILE
    if run_file.is_file():
        try:
            previous = json.loads(run_file.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise RunError(f"{run_file}: unreadable ({exc}); delete the output folder or choose another") from None
        if previous == settings:
            remove_temporaries(output_path)
            return
        if not force:
            changed = sorted(k for k in settings.keys() | previous.keys() if settings.get(k) != previous.get(k))
            raise RunError(
                f"{output_path} holds outputs made with other settings (differ in: {', '.join(changed)}); "
                "use another output folder, or --force to delete those outputs and start over")
        _remove_outputs(output_path)
    write_text(run_file, json.dumps(settings, indent=2, sort_keys=True) + "\n")


def tsv(header: str, rows: Iterable[tuple[str, ...]]) -> str | None:
    """A TSV table (fields with whitespace runs collapsed to one space), or None when there are no rows."""
    lines = ["\t".join(" ".join(f.split()) for f in row) for row in rows]
    return "\n".join([header, *lines]) + "\n" if lines else None
