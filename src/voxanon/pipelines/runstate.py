"""State of an anonymization output folder: settings record, lock, stale files, failures.

An output folder belongs to voxanon once it holds ``voxanon_run.json`` (the
settings that produced it). A run refuses a non-empty folder without that
file, and a folder made with other settings unless ``force`` is given; then
every previous output (``*.wav`` files at any depth, the data-directory files
and ``failures.tsv``) is deleted *before* the new settings are recorded, so a
run killed half-way through never leaves old outputs under new settings.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from voxanon.errors import RunError  # noqa: F401  (re-exported)
from voxanon.atomic import write_text
from voxanon.data.kaldi import FILES

RUN_FILE = "voxanon_run.json"
FAILURES_FILE = "failures.tsv"
LOCK_FILE = ".voxanon.lock"


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
def output_lock(output_path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the output folder (released even when the process is killed).

    Raises
    ------
    RunError
        The folder is not empty and not a voxanon output (nothing is written to it then),
        or another run holds the lock.
    """
    if output_path.is_dir() and not (output_path / RUN_FILE).is_file() \
            and any(p.name != LOCK_FILE for p in output_path.iterdir()):
        raise RunError(f"{output_path} is not empty and is not a voxanon output folder (no {RUN_FILE}); "
                       "choose a new or empty folder")
    output_path.mkdir(parents=True, exist_ok=True)
    with open(output_path / LOCK_FILE, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunError(f"another voxanon run is writing to {output_path}") from None
        yield


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
    for name in (*FILES, FAILURES_FILE):
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


def write_failures(output_path: Path, failures: list[tuple[str, str, str]]) -> Path | None:
    """Write ``failures.tsv`` (utterance, source, reason), or remove it when nothing failed."""
    path = output_path / FAILURES_FILE
    if not failures:
        path.unlink(missing_ok=True)
        return None
    rows = ["utterance\tsource\treason"] + ["\t".join(" ".join(f.split()) for f in row) for row in failures]
    write_text(path, "\n".join(rows) + "\n")
    return path
