"""Anonymize a corpus: a Kaldi data directory or a plain folder of audio files.

Layout
    A data directory ``X`` gives ``<output>/wav/<name>.wav`` plus the
    data-directory files: ``wav.scp`` rewritten with absolute paths,
    ``utt2dur`` measured on the outputs, the other files copied. Only
    utterances with an output are listed, so the output is always a valid data
    directory. A plain folder is mirrored as ``<output>/<relative path without
    extension>.wav``. ``<name>`` is the utterance id when it makes a safe file
    name; an id that does not (longer than file names may be, containing ``/``,
    starting with ``.``) becomes a readable prefix plus a hash of the id
    (:func:`output_name`); ``wav.scp`` keeps the id. Relative paths in
    ``wav.scp`` are taken from the current directory, as in Kaldi.
Randomness
    Each utterance gets ``utterance_rng(seed, utt)``; at ``level="speaker"`` the
    key is its speaker (from ``utt2spk``), so all of a speaker's utterances get
    the same generator. Outputs do not depend on worker count, backend or resumption.
Resumption
    Wavs are written atomically (temporary file + rename) and recorded in the
    output record (:mod:`voxanon.jobs.runner.runstate`) with what they were made
    from. A rerun keeps an output whose source is unchanged and redoes the
    rest: missing outputs, earlier failures, outputs whose input changed since
    (size, modification time or pipe command; the resume line says how many)
    and unrecorded ones. Leftover temporaries are deleted.
Metadata
    The data-directory files, ``failures.tsv``, ``warnings.tsv`` (clipping and
    truncated inputs per utterance, see :mod:`voxanon.jobs.runner.worker`) and
    the compacted output record are written at the end of every run as one
    step: all to temporaries, then renamed; if that fails (a full disk) the
    previous set stays.
Failures
    Before any work the output folders are created and test-written; a path
    that cannot be is an error naming it. One bad utterance is a failure listed
    in ``failures.tsv``; a full disk (or quota, or read-only file system) stops
    the run with a :class:`RunError` that says to free space and rerun, which
    then finishes to the same bytes as an uninterrupted run.
Backends
    The tasks run on a :class:`voxanon.jobs.runner.backend.Backend`: local
    processes by default, or Ray. ``jobs`` is the number of worker processes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from voxanon import __version__
from voxanon.anonymizers.base import Anonymizer
from voxanon.atomic import write_texts
from voxanon.data.folder import scan_audio_folder
from voxanon.data.kaldi import FILES, DataDir, data_dir_texts, read_data_dir
from voxanon.data.redaction import redact_reference
from voxanon.errors import ConfigError, DataError, ModelError
from voxanon.jobs.runner.backend import Backend, LocalBackend
from voxanon.jobs.runner.runstate import (
    DONE_FILE,
    FAILURES_FILE,
    LEVELS,
    RECORD_FIELDS,
    WARNINGS_FILE,
    RunError,
    check_paths,
    check_sources,
    check_writable,
    input_stamp,
    make_folders,
    matches,
    open_records,
    output_lock,
    prepare_output,
    read_records,
    record_line,
    tsv,
)
from voxanon.jobs.runner.worker import FATAL_WRITE_ERRNOS, Result, Task, report_path
from voxanon.progress import Progress

#: longest file-name stem (bytes) used as is: 255 less ".wav" and the temporary's ".<name>.<8 chars>.tmp"
MAX_STEM_BYTES = 200


@dataclass(frozen=True)
class RunSummary:
    """What a run did; ``rtf`` is wall seconds per second of audio processed (None if none).

    ``redone`` counts outputs made again because their input changed (or they had no record);
    ``warned`` counts outputs with a warning (listed in ``warnings.tsv``).
    """

    done: int
    skipped: int
    failed: int
    audio_seconds: float
    wall_seconds: float
    rtf: float | None
    output: Path
    redone: int = 0
    warned: int = 0


def output_dir_for(input_path: str | os.PathLike, output: str | os.PathLike, suffix: str | None) -> Path:
    """The output folder: ``output`` itself, or ``output/<input name><suffix>`` when a suffix is given."""
    output = Path(output)
    return output / f"{Path(input_path).resolve().name}{suffix}" if suffix else output


def output_name(name: str) -> str:
    """A safe file-name stem for ``name``: itself when it is one, else a readable prefix plus a hash.

    Unsafe: longer than :data:`MAX_STEM_BYTES` in UTF-8, containing ``/`` or a
    NUL, starting with ``.`` (hidden; also the runner's temporaries), or empty.
    """
    raw = name.encode("utf-8", errors="surrogateescape")
    if name and len(raw) <= MAX_STEM_BYTES and "/" not in name and "\0" not in name and not name.startswith("."):
        return name
    readable = raw[:100].decode("utf-8", errors="ignore").replace("/", "_").replace("\0", "_").lstrip(".")
    return f"{readable}-{hashlib.sha256(raw).hexdigest()[:16]}"


def _plan(input_path: Path, output_path: Path, level: str) -> tuple[list[Task], DataDir | None]:
    """Every task of the corpus (data directory or folder), and the data directory if any."""
    if (input_path / "wav.scp").is_file():
        if (input_path / "segments").exists():
            raise DataError(f"{input_path}/segments: segmented recordings are not supported; "
                           "extract the segments into files first")
        data = read_data_dir(input_path)
        if level == "speaker" and not data.utt2spk:
            raise DataError(f"{input_path}: --level speaker needs utt2spk")
        wav_dir = output_path / "wav"
        tasks = [Task(utt, source, wav_dir / f"{output_name(utt)}.wav",
                      data.utt2spk[utt] if level == "speaker" else utt)
                 for utt, source in data.wav_scp.items()]
        return tasks, data
    if level == "speaker":
        raise DataError(f"{input_path}: --level speaker needs a data directory with utt2spk, not a plain folder")
    files = scan_audio_folder(input_path)
    tasks = []
    for utt, path in files.items():
        folder, _, name = utt.rpartition("/")
        tasks.append(Task(utt, str(path), output_path / folder / f"{output_name(name)}.wav", utt))
    return tasks, None


def _resume(tasks: list[Task], output_path: Path) -> tuple[list[Task], dict[str, str], list[str]]:
    """(tasks to run, stamp of every task's source, utterances whose kept-looking output is redone).

    An output is kept only when its record matches its source now; other existing outputs are deleted first,
    so a redo that fails leaves no stale output behind.
    """
    records = read_records(output_path)
    stamps = {task.utt: input_stamp(task.source) for task in tasks}
    todo, redone = [], []
    for task in tasks:
        if not task.out.is_file():
            todo.append(task)
        elif not matches(records.get(task.utt), task.source, stamps[task.utt]):
            task.out.unlink()
            redone.append(task.utt)
            todo.append(task)
    return todo, stamps, redone


def _redacted(text: str, out: Path) -> str:
    """``text`` with the entities a content anonymizer replaced (its report beside ``out``) replaced too."""
    path = report_path(out)
    if not path.is_file():
        return text
    report = json.loads(path.read_text(encoding="utf-8"))
    if "transcript" not in report or "edits" not in report:
        return text
    return redact_reference(text, report["transcript"].split(), [tuple(e["words"]) for e in report["edits"]])


def _metadata(data: DataDir | None, tasks: list[Task], output_path: Path, records: dict[str, dict],
              failures: list[Result]) -> dict[Path, str | None]:
    """Every metadata file of the output folder (None: to delete), from the outputs now present and their records."""
    done = [task for task in tasks if task.out.is_file() and task.utt in records]
    files: dict[Path, str | None] = {}
    if data is not None:
        out = data.subset([task.utt for task in done])
        out.wav_scp = {task.utt: str(task.out.resolve()) for task in done}
        out.utt2dur = {task.utt: f"{records[task.utt]['seconds']:.4f}" for task in done}
        outs = {task.utt: task.out for task in done}
        out.text = {utt: _redacted(text, outs[utt]) for utt, text in out.text.items()}
        texts = data_dir_texts(out) if done else {}
        if not tasks:  # an empty set (a gender a corpus has no speakers of) gives an empty set
            texts["wav.scp"] = ""
        files.update({output_path / name: texts.get(name) for name in FILES})
    files[output_path / FAILURES_FILE] = tsv("utterance\tsource\treason",
                                             ((r.task.utt, r.task.source, r.error or "") for r in failures))
    files[output_path / WARNINGS_FILE] = tsv("utterance\tsource\twarning",
                                             ((t.utt, t.source, w) for t in done for w in records[t.utt]["warnings"]))
    files[output_path / DONE_FILE] = "".join(record_line(*(records[t.utt][k] for k in RECORD_FIELDS))
                                             for t in done) or None
    return files


def anonymize_corpus(
    input_path: str | os.PathLike,
    output_path: str | os.PathLike,
    anonymizer: Anonymizer,
    *,
    seed: int | str = 0,
    level: str = "utterance",
    jobs: int | None = None,
    force: bool = False,
    quiet: bool = False,
    backend: Backend | None = None,
    limiter: bool = True,
) -> RunSummary:
    """Anonymize every utterance of ``input_path`` into ``output_path`` (see the module notes).

    Parameters
    ----------
    input_path : data directory (has ``wav.scp``) or folder of audio files
    output_path : the output folder itself
    anonymizer : the method, already configured
    seed : global seed of the per-utterance RNGs
    level : ``"utterance"`` or ``"speaker"`` (RNG keyed by speaker; needs ``utt2spk``)
    jobs : worker processes (default: the backend's: all usable cores locally; 1 runs in this process)
    force : replace an output folder made with other settings
    quiet : no progress output
    backend : where the tasks run (default :class:`voxanon.jobs.runner.backend.LocalBackend`)
    limiter : limit output peaks above full scale instead of clipping them (a recorded setting)

    Returns
    -------
    RunSummary
        ``failed > 0`` means ``failures.tsv`` in the output folder lists them.

    Raises
    ------
    ConfigError, RunError, DataError
        Before anything is written: bad arguments, unsafe or unwritable paths, bad input, mismatched output.
    RunError
        The disk filled up (or the file system refused writes) during the run.
    """
    start = time.monotonic()
    input_path, output_path = Path(input_path), Path(output_path)
    if level not in LEVELS:
        raise ConfigError(f"level must be one of {LEVELS}, got {level!r}")
    if jobs is not None and jobs < 1:
        raise ConfigError(f"jobs must be at least 1, got {jobs}")
    if not input_path.exists():
        raise DataError(f"input {input_path} does not exist; give a data directory (with wav.scp) or a folder of audio")
    check_paths(input_path, output_path)
    tasks, data = _plan(input_path, output_path, level)
    if data is not None:
        check_sources(list(data.wav_scp.values()), output_path)
    settings = {**anonymizer.settings(), "class": f"{type(anonymizer).__module__}:{type(anonymizer).__qualname__}",
                "seed": seed, "level": level, "input": str(input_path.resolve()), "limiter": limiter,
                "voxanon": __version__}
    with output_lock(output_path) as lock_fd:
        try:
            make_folders(sorted({task.out.parent for task in tasks}))
            check_writable(output_path, {task.out.parent for task in tasks[:1]})
            prepare_output(output_path, settings, force=force)
            todo, stamps, redone = _resume(tasks, output_path)
            if not quiet and (len(todo) < len(tasks) or redone):
                print(_resume_line(len(tasks), len(todo), redone, output_path), file=sys.stderr)
            if todo:
                anonymizer.prepare(quiet=quiet)
            with open_records(output_path) as journal:
                failures, done, progress = _execute(
                    (backend or LocalBackend()).run(todo, anonymizer, seed, jobs=jobs, quiet=quiet,
                                                    limiter=limiter, lock_fd=lock_fd),
                    len(todo), stamps, journal, f"anonymize {anonymizer.name}", quiet)
            fatal = next((r for r in failures if r.fatal), None)
            records = read_records(output_path)
            try:
                write_texts(_metadata(data, tasks, output_path, records, [r for r in failures if not r.fatal]))
            except OSError:
                if fatal is None:
                    raise
            if fatal is not None and fatal.bad_model:
                raise ModelError(fatal.error)
            if fatal is not None:
                raise RunError(f"{fatal.error}; finished outputs are kept: free space (or fix the file system) "
                               "and rerun the same command to finish")
        except OSError as exc:  # the file system refused a write of the runner itself
            raise RunError(f"{exc.strerror or exc} while writing {exc.filename or output_path}; finished outputs "
                           "are kept: fix that (free space, permissions) and rerun the same command") from None
    wall = time.monotonic() - start
    audio = progress.audio_seconds
    warned = sum(bool(records[t.utt]["warnings"]) for t in tasks if t.utt in records)
    return RunSummary(done=done, skipped=len(tasks) - len(todo), failed=len(failures),
                      audio_seconds=audio, wall_seconds=wall, rtf=wall / audio if audio > 0 else None,
                      output=output_path, redone=len(redone), warned=warned)


def _resume_line(total: int, todo: int, redone: list[str], output_path: Path) -> str:
    """What a resumed run keeps and what it redoes (and why)."""
    kept = total - todo
    line = f"{kept} of {total} utterances already done in {output_path}, kept; {todo} to do"
    if redone:
        shown = ", ".join(redone[:5]) + (f", ... ({len(redone) - 5} more)" if len(redone) > 5 else "")
        line += f", of which {len(redone)} redone because their input changed since (or had no record): {shown}"
    return line


def _execute(results: Iterable[Result], total: int, stamps: dict[str, str], journal: TextIO, desc: str,
             quiet: bool) -> tuple[list[Result], int, Progress]:
    """Consume results: record each output as it finishes, report warnings, stop at the first fatal one.

    Returns (failures, outputs written and recorded, the progress counter).
    """
    failures: list[Result] = []
    done = 0
    progress = Progress(total, desc, quiet=quiet)
    shown = 0
    iterator = iter(results)
    try:
        for result in iterator:
            if result.error is None:
                try:
                    journal.write(record_line(result.task.utt, result.task.source, stamps[result.task.utt],
                                              result.out_seconds, result.warnings))
                    journal.flush()
                    done += 1
                except OSError as exc:
                    failures.append(result._replace(error=f"cannot record {result.task.out}: {exc.strerror}",
                                                    fatal=exc.errno in FATAL_WRITE_ERRNOS))
                for warning in result.warnings:
                    if not quiet and shown < 10:
                        print(f"warning: {result.task.utt}: {warning}", file=sys.stderr)
                    shown += 1
            else:
                failures.append(result)
            progress.update(audio_seconds=result.in_seconds, failed=result.error is not None)
            if failures and failures[-1].fatal:
                break
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            close()  # stops the backend's workers when we left early
    progress.close()
    if shown > 10 and not quiet:
        print(f"... {shown - 10} more warnings", file=sys.stderr)
    return failures, done, progress


def summary_line(summary: RunSummary) -> str:
    """One human-readable line describing a run."""
    rtf = f"RTF {summary.rtf:.4f}" if summary.rtf is not None else "RTF n/a"
    extra = f", redone {summary.redone}" if summary.redone else ""
    warned = f"; {summary.warned} with warnings (see {WARNINGS_FILE})" if summary.warned else ""
    return (f"done {summary.done}, skipped {summary.skipped}{extra}, failed {summary.failed}{warned}; "
            f"{summary.audio_seconds:.1f} s of audio in {summary.wall_seconds:.1f} s ({rtf}); output {summary.output}")
