"""Fault catalogue of the corpus runner and the commands (see docs/reliability.md, "Runner and commands").

Each test is one hostile case: changed inputs, kills of the main process, a full
disk, unwritable paths, over-long ids, clipping, truncated and non-regular
inputs, and the exit codes scripts rely on.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.helpers.audio import make_data_dir, read_pcm, write_utterance
from tests.helpers.processes import (
    alive,
    processes_with_files_under,
    subprocess_env,
    wait_until_gone,
)
from tests.helpers.toys import ToyGain
from voxanon.anonymizers.base import Anonymizer, param
from voxanon.atomic import atomic_folder, write_texts
from voxanon.cli import main
from voxanon.data.kaldi import read_data_dir
from voxanon.errors import EXIT_DATA, EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, RunError
from voxanon.jobs.runner import worker
from voxanon.jobs.runner.anonymize import anonymize_corpus, output_name
from voxanon.jobs.runner.backend import LocalBackend
from voxanon.models.tts.cli_engines import engine_available

DATA_FILES = ("wav.scp", "utt2spk", "spk2utt", "spk2gender", "text", "utt2dur")


@dataclass(frozen=True)
class LoudConfig:
    gain: float = param(3.0, "gain applied to the input")


class ToyLoud(Anonymizer):
    """Test anonymizer: a fixed gain, which drives speech-like input above full scale."""

    name = "toy-loud"
    Config = LoudConfig

    def anonymize(self, wav, sr, rng):
        return wav * self.config.gain, sr


def tree(root: Path) -> dict[str, bytes]:
    """Relative path -> bytes of every wav and data file under ``root`` (wav.scp aside: absolute paths)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and (p.suffix == ".wav" or p.name in DATA_FILES[1:])}


def longest_full_scale_run(pcm: np.ndarray) -> int:
    """Length of the longest run of consecutive samples at 16-bit full scale (a flat top when clipped)."""
    full = np.concatenate([[0], (np.abs(pcm.astype(int)) >= 32767).astype(int), [0]])
    edges = np.flatnonzero(np.diff(full))
    return int(np.max(edges[1::2] - edges[::2])) if edges.size else 0


def voxanon(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the ``voxanon`` command line in a subprocess."""
    return subprocess.run([sys.executable, "-m", "voxanon", *args], env=subprocess_env(), capture_output=True, text=True,
                          timeout=timeout)


# --- item 2: resume redoes outputs whose input changed ---------------------------------------------------------

def test_changed_input_is_redone_and_said(data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "anon"
    anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    changed = data_dir.parent / "audio" / "spk2-utt001.wav"
    write_utterance(changed, seconds=0.5, seed=99)  # new content, new size
    summary = anonymize_corpus(data_dir, out, ToyGain(), jobs=1)
    assert (summary.done, summary.skipped, summary.redone) == (1, 5, 1)
    assert "1 redone because their input changed" in capsys.readouterr().err
    anonymize_corpus(data_dir, tmp_path / "fresh", ToyGain(), jobs=1, quiet=True)
    assert tree(out) == tree(tmp_path / "fresh")
    assert read_data_dir(out).utt2dur["spk2-utt001"] == "0.5000"


def test_same_size_rewrite_and_changed_pipe_are_redone(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "anon"
    anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    source = data_dir.parent / "audio" / "spk1-utt000.wav"
    write_utterance(source, seed=42)  # same size, other content
    os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 10**9))
    scp = (data_dir / "wav.scp").read_text()
    target = data_dir.parent / "audio" / "spk3-utt001.wav"
    (data_dir / "wav.scp").write_text(scp.replace(f"spk3-utt001 {target}", f"spk3-utt001 cat {target} |"))
    summary = anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    assert (summary.done, summary.skipped, summary.redone) == (2, 4, 2)
    anonymize_corpus(data_dir, tmp_path / "fresh", ToyGain(), jobs=1, quiet=True)
    assert tree(out) == tree(tmp_path / "fresh")


def test_output_without_record_is_redone(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "anon"
    anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    reference = tree(out)
    lines = (out / "voxanon_done.jsonl").read_text().splitlines()
    (out / "voxanon_done.jsonl").write_text("\n".join(lines[1:]) + "\n" + lines[0][:20])  # a kill mid-line
    summary = anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    assert (summary.done, summary.skipped) == (1, 5)
    assert tree(out) == reference
    assert len((out / "voxanon_done.jsonl").read_text().splitlines()) == 6


def test_input_gone_removes_its_stale_output(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "anon"
    anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    (data_dir.parent / "audio" / "spk1-utt001.wav").unlink()
    summary = anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    assert (summary.failed, summary.skipped) == (1, 5)
    assert not (out / "wav" / "spk1-utt001.wav").exists()
    assert "spk1-utt001" not in read_data_dir(out).wav_scp


# --- item 3: no orphaned workers -------------------------------------------------------------------------------

def _children(pid: int) -> set[int]:
    """Process ids of the children of ``pid`` (Linux /proc); none once it (or a thread of it) has exited."""
    found: set[int] = set()
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found.update(int(c) for c in (task / "children").read_text().split())
    except FileNotFoundError:  # a short-lived child (a TTS engine) ended between listing and reading
        pass
    return found


def _descendants(pid: int) -> set[int]:
    """Children of ``pid``, their children, and so on."""
    found, todo = set(), [pid]
    while todo:
        children = _children(todo.pop()) - found
        found |= children
        todo += children
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killing_the_main_process_ends_its_workers_and_keeps_the_lock(tmp_path: Path, sig: int) -> None:
    data = make_data_dir(tmp_path / "corpus", utts_per_speaker=6)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "voxanon", "anonymize", "--method", "tests.helpers.toys:ToyGain",
                             "--param", "delay=0.3", "--jobs", "2", "--quiet", str(data), str(out)],
                            env=subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not list(out.glob("wav/*.wav")):
            assert proc.poll() is None and time.monotonic() < deadline, "run ended or made no progress"
            time.sleep(0.02)
        workers = {c for c in _children(proc.pid) if "spawn" in Path(f"/proc/{c}/cmdline").read_text()
                   and "resource_tracker" not in Path(f"/proc/{c}/cmdline").read_text()}
        assert len(workers) == 2
        os.kill(proc.pid, sig)  # the main process only, not its group
        proc.wait()
        with open(out / ".voxanon.lock", "a") as lock:
            deadline = time.monotonic() + 10
            while True:  # once the lock is free, no worker may be alive
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    assert time.monotonic() < deadline, "lock still held 10 s after the kill"
                    time.sleep(0.01)
            assert not [pid for pid in workers if alive(pid)]
        assert not processes_with_files_under(out)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    summary = anonymize_corpus(data, out, ToyGain(delay=0.3), jobs=2, quiet=True)
    anonymize_corpus(data, tmp_path / "fresh", ToyGain(), jobs=1, quiet=True)
    assert summary.failed == 0 and tree(out) == tree(tmp_path / "fresh")


#: commands with worker processes of their own: arguments (``{out}``: a fresh folder) and when they are at work
OTHER_POOLS = {
    # the corpus builder's pool (also the first stage of `voxanon benchmark`): once a wav is written
    "data synth": (["data", "synth", "--engine", "formant", "--size", "small", "--jobs", "2", "--no-real", "{out}"],
                   lambda out, procs: list(out.rglob("*.wav"))),
    # the fresh process measuring an hour of input: once it runs
    "perf": (["perf", "--memory", "--methods", "world", "--no-scaling", "--out", "{out}/perf.json"],
             lambda out, procs: any("voxanon.jobs.perf" in _cmdline(p) for p in procs)),
}


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except FileNotFoundError:
        return ""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
@pytest.mark.skipif(not (engine_available("flite") and engine_available("espeak-ng")),
                    reason="needs the Debian packages flite and espeak-ng")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
@pytest.mark.parametrize("command", OTHER_POOLS)
def test_killing_a_command_ends_its_worker_processes(tmp_path: Path, command: str, sig: int) -> None:
    """Every other process voxanon starts dies with its main process; nothing writes afterwards."""
    args, at_work = OTHER_POOLS[command]
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "voxanon", *(a.format(out=out) for a in args), "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    started: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while not at_work(out, started):
            assert proc.poll() is None and time.monotonic() < deadline, "command ended or made no progress"
            time.sleep(0.02)
            started |= _descendants(proc.pid)  # workers, the resource tracker, a running TTS engine
        os.kill(proc.pid, sig)  # the main process only, not its group
        proc.wait()
        wait_until_gone(started, 5, "workers, resource tracker or TTS engine")
        assert not processes_with_files_under(out)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in started:  # orphans of a failed check
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_backends_are_public_and_jobs_is_a_worker_count(data_dir: Path, tmp_path: Path) -> None:
    local = anonymize_corpus(data_dir, tmp_path / "b", ToyGain(), jobs=2, backend=LocalBackend(), quiet=True)
    anonymize_corpus(data_dir, tmp_path / "a", ToyGain(), jobs=1, quiet=True)
    assert local.done == 6 and tree(tmp_path / "a") == tree(tmp_path / "b")
    ray_source = (Path(worker.__file__).parent / "ray_backend.py").read_text()
    assert "import _" not in ray_source and "anonymize import" not in ray_source


# --- item 4: disk full, unwritable and file-in-the-way outputs -------------------------------------------------

def test_disk_full_stops_with_one_error_and_a_rerun_completes(data_dir: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC injected at the write layer (the worker's write_wav) after two outputs."""
    out = tmp_path / "anon"
    anonymize_corpus(make_data_dir(tmp_path / "small", utts_per_speaker=1), tmp_path / "ref-small", ToyGain(),
                     jobs=1, quiet=True)
    real_write, writes = worker.write_wav, []

    def filling_disk(path, wav, sr):
        if len(writes) >= 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        writes.append(path)
        real_write(path, wav, sr)

    monkeypatch.setattr(worker, "write_wav", filling_disk)
    with pytest.raises(RunError, match=r"No space left on device.*free space.*rerun the same command"):
        anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    assert len(list(out.glob("wav/*.wav"))) == 2 and not (out / "failures.tsv").exists()
    assert len(read_data_dir(out).wav_scp) == 2  # a valid data directory of what is finished
    monkeypatch.setattr(worker, "write_wav", real_write)
    summary = anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    assert (summary.done, summary.skipped, summary.failed) == (4, 2, 0)
    anonymize_corpus(data_dir, tmp_path / "fresh", ToyGain(), jobs=1, quiet=True)
    assert tree(out) == tree(tmp_path / "fresh")


def test_metadata_is_one_transaction(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    for name in ("wav.scp", "utt2spk"):
        (folder / name).write_text(f"old {name}\n")
    (tmp_path / "blocker").write_text("a file where a folder should be")
    with pytest.raises(OSError):
        write_texts({folder / "wav.scp": "new\n", folder / "utt2spk": "new\n", tmp_path / "blocker" / "x": "new\n"})
    assert sorted(os.listdir(folder)) == ["utt2spk", "wav.scp"]  # no temporaries left
    assert (folder / "wav.scp").read_text() == "old wav.scp\n" and (folder / "utt2spk").read_text() == "old utt2spk\n"


def test_a_folder_appears_whole_or_not_at_all(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        with atomic_folder(tmp_path / "set") as tmp:
            (tmp / "keys.npy").write_bytes(b"partial")
            raise RuntimeError("killed while writing")
    assert os.listdir(tmp_path) == []  # neither the folder nor its temporary
    with atomic_folder(tmp_path / "set") as tmp:
        (tmp / "a").write_text("1")
    assert os.listdir(tmp_path) == ["set"] and (tmp_path / "set" / "a").read_text() == "1"

def _can_mount_tmpfs() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(not _can_mount_tmpfs(), reason="needs unshare and a user mount namespace for a small tmpfs")
def test_real_full_disk_then_rerun_after_freeing_space(tmp_path: Path) -> None:
    """A 96 KiB tmpfs fills up after a few outputs; the same run after remounting it bigger completes."""
    data = make_data_dir(tmp_path / "corpus", utts_per_speaker=4)  # 12 wavs of 9.6 kB
    disk, out = tmp_path / "disk", tmp_path / "disk" / "anon"
    disk.mkdir()
    command = f"{sys.executable} -m voxanon anonymize --method tests.helpers.toys:ToyGain --jobs 2 --quiet {data} {out}"
    script = (f"mount -t tmpfs -o size=96k tmpfs {disk}; {command} 2>{tmp_path}/err1; echo $? >{tmp_path}/rc1; "
              f"mount -o remount,size=4m {disk}; {command} 2>{tmp_path}/err2; echo $? >{tmp_path}/rc2; "
              f"cp -r {out} {tmp_path}/copy")
    subprocess.run(["unshare", "-rm", "sh", "-c", script], env=subprocess_env(), check=True, timeout=300)
    err1 = (tmp_path / "err1").read_text()
    assert (tmp_path / "rc1").read_text().strip() == "6"  # refused: disk full
    assert err1.count("\n") == 1 and "No space left on device" in err1 and "rerun the same command" in err1
    assert "Traceback" not in err1 and "Exception ignored" not in err1
    assert (tmp_path / "rc2").read_text().strip() == "0", (tmp_path / "err2").read_text()
    anonymize_corpus(data, tmp_path / "fresh", ToyGain(), jobs=1, quiet=True)
    assert tree(tmp_path / "copy") == tree(tmp_path / "fresh")


def test_unwritable_or_blocked_output_is_refused_before_work(data_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for out, why in ((tmp_path / "file", "a file of that name is in the way"),
                     (tmp_path / "file" / "o", "a file is in the way in its path")):
        with pytest.raises(RunError, match=why):
            anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    out = tmp_path / "o"
    anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    shutil.rmtree(out / "wav")
    (out / "wav").write_text("in the way")
    with pytest.raises(RunError, match=r"o/wav: a file of that name is in the way"):
        anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    (out / "wav").unlink()
    (out / "wav.scp").unlink()
    (out / "wav.scp").mkdir()
    with pytest.raises(RunError, match=r"wav.scp is in the way"):
        anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)


def test_blocked_output_is_one_line_from_the_command(data_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    result = voxanon("anonymize", "--method", "tests.helpers.toys:ToyGain", str(data_dir), str(tmp_path / "file" / "o"))
    assert result.returncode == 6 and result.stderr.count("\n") == 1 and "in the way" in result.stderr


# --- item 5: ids longer than a file name ------------------------------------------------------------------------

def test_long_and_slashed_ids_get_safe_file_names(data_dir: Path, tmp_path: Path) -> None:
    long_id, slashed = "spk1-" + "é" * 200, "spk1-a/b"
    source = data_dir.parent / "audio" / "spk1-utt000.wav"
    with open(data_dir / "wav.scp", "a") as fh:
        fh.write(f"{long_id} {source}\n{slashed} {source}\n")
    with open(data_dir / "utt2spk", "a") as fh:
        fh.write(f"{long_id} spk1\n{slashed} spk1\n")
    (data_dir / "spk2utt").unlink()
    out = tmp_path / "anon"
    assert anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True).done == 8
    scp = read_data_dir(out).wav_scp
    name = Path(scp[long_id]).name
    assert len(name.encode()) < 255 and name.startswith("spk1-éé") and name == f"{output_name(long_id)}.wav"
    assert Path(scp[slashed]).parent == (out / "wav").resolve() and Path(scp[slashed]).is_file()
    assert anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True).skipped == 8
    assert output_name("a" * 300) != output_name("a" * 299 + "b") and output_name("ok-id") == "ok-id"


# --- item 7: clipping, truncated and non-regular inputs ---------------------------------------------------------

def test_clipping_is_limited_and_reported_per_utterance(data_dir: Path, tmp_path: Path) -> None:
    out, clipped = tmp_path / "limited", tmp_path / "clipped"
    anonymize_corpus(data_dir, out, ToyLoud(), jobs=1, quiet=True)
    anonymize_corpus(data_dir, clipped, ToyLoud(), jobs=1, quiet=True, limiter=False)
    rows = [line.split("\t") for line in (out / "warnings.tsv").read_text().splitlines()]
    assert rows[0] == ["utterance", "source", "warning"] and len(rows) == 7
    assert all("clipping:" in r[2] and "samples above full scale, peak" in r[2] and "limiter applied" in r[2]
               for r in rows[1:])
    assert "clipped (limiter off)" in (clipped / "warnings.tsv").read_text()
    for utt, source in read_data_dir(data_dir).wav_scp.items():
        x = 3.0 * sf.read(source, dtype="float32")[0]
        limited, hard = read_pcm(out / "wav" / f"{utt}.wav"), read_pcm(clipped / "wav" / f"{utt}.wav")
        loud = np.abs(x) > 0.3
        gain = limited[loud] / (32767 * x[loud])  # a smooth gain, not a clip: between 1/peak and 1
        assert gain.min() > 1 / np.abs(x).max() - 0.01 and gain.max() < 1.001
        neighbours = np.diff(np.flatnonzero(loud)) == 1
        assert np.abs(np.diff(gain)[neighbours]).max() < 0.02
        assert longest_full_scale_run(limited) <= 2 < 3 <= longest_full_scale_run(hard)  # no flat tops
    anonymize_corpus(data_dir, out, ToyLoud(), jobs=1, quiet=True)  # resumed: the warnings stay
    assert len((out / "warnings.tsv").read_text().splitlines()) == 7


def test_no_clipping_no_change_and_no_warnings(data_dir: Path, tmp_path: Path) -> None:
    anonymize_corpus(data_dir, tmp_path / "on", ToyGain(), jobs=1, quiet=True)
    anonymize_corpus(data_dir, tmp_path / "off", ToyGain(), jobs=1, quiet=True, limiter=False)
    assert tree(tmp_path / "on") == tree(tmp_path / "off")
    assert not (tmp_path / "on" / "warnings.tsv").exists()


@pytest.mark.slow
def test_runner_memory_for_a_clipping_hour_stays_under_1_gb(tmp_path: Path) -> None:
    """The whole `voxanon anonymize` process on one hour at 16 kHz, every block of the output limited.

    Input and output arrays are 230 MB each; the limiter's float64 gain (3 GB), the clipping check's and the
    16-bit conversion's full-length temporaries are gone.
    """
    wav = tmp_path / "in" / "hour.wav"
    wav.parent.mkdir()
    noise = (0.3 * np.random.default_rng(0).standard_normal(3600 * 16000)).astype(np.float32)
    sf.write(wav, noise, 16000, subtype="PCM_16")
    del noise
    # VmHWM, not ru_maxrss: exec folds the parent's (pytest's) peak into the child's ru_maxrss
    script = ("import re, sys; from voxanon.cli import main; code = main(sys.argv[1:]); "
              "print(int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)) // 1024); "
              "sys.exit(code)")
    proc = subprocess.run([sys.executable, "-c", script, "anonymize", "--method", "tests.jobs.runner.test_faults:ToyLoud", "--jobs",
                           "1", "--quiet", str(wav.parent), str(tmp_path / "out")],
                          env=subprocess_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "clipping" in (tmp_path / "out" / "warnings.tsv").read_text()
    assert int(proc.stdout.split()[-1]) < 1024  # MB, the process's lifetime peak


def test_truncated_wav_is_reported(data_dir: Path, tmp_path: Path) -> None:
    source = data_dir.parent / "audio" / "spk2-utt000.wav"
    source.write_bytes(source.read_bytes()[:5000])
    anonymize_corpus(data_dir, tmp_path / "o", ToyGain(), jobs=1, quiet=True)
    rows = (tmp_path / "o" / "warnings.tsv").read_text().splitlines()
    assert len(rows) == 2 and rows[1].startswith("spk2-utt000\t") and "truncated WAV: header declares 9600" in rows[1]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_input_is_refused_not_waited_on(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    write_utterance(folder / "a.wav")
    os.mkfifo(folder / "b.wav")
    run = threading.Thread(target=anonymize_corpus, args=(folder, tmp_path / "o", ToyGain()),
                           kwargs={"jobs": 1, "quiet": True}, daemon=True)
    run.start()
    run.join(timeout=30)
    if run.is_alive():  # blocked opening the FIFO: release it, then fail
        os.close(os.open(folder / "b.wav", os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("the run waited on a FIFO")
    failures = (tmp_path / "o" / "failures.tsv").read_text()
    assert "b\t" in failures and "not a regular file" in failures
    assert (tmp_path / "o" / "a.wav").is_file()


# --- item 10: exit codes ----------------------------------------------------------------------------------------

def test_anonymize_exit_codes(data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    def run(*args: str) -> tuple[int, str]:
        code = main(["anonymize", *args])
        return code, capsys.readouterr().err

    assert run("--method", "tests.helpers.toys:ToyGain", "--jobs", "1", "--quiet", str(data_dir), str(tmp_path / "ok"))[0] \
        == EXIT_OK
    for args, code, says in (
            (["--method", "no-such-method"], EXIT_USAGE, "unknown anonymizer"),
            (["--method", "tests.helpers.toys:ToyGain", "--param", "delay=abc"], EXIT_USAGE, "parameter delay"),
            (["--method", "tests.helpers.toys:ToyGain", "--param", "nope=1"], EXIT_USAGE, "unknown parameter"),
            (["--method", "tests.helpers.toys:ToyGain", "--jobs", "0"], EXIT_USAGE, "jobs"),
            (["--method", "tests.helpers.toys:ToyGain", "--batch-size", "2"], EXIT_USAGE, "needs --backend ray")):
        result, err = run(*args, str(data_dir), str(tmp_path / "x"))
        assert result == code and says in err and err.count("\n") == 1, err
    result, err = run("--method", "tests.helpers.toys:ToyGain", str(tmp_path / "nothing"), str(tmp_path / "y"))
    assert result == EXIT_DATA and "does not exist" in err
    (data_dir.parent / "audio" / "spk1-utt000.wav").write_bytes(b"garbage")
    result, err = run("--method", "tests.helpers.toys:ToyGain", "--jobs", "1", "--quiet", str(data_dir), str(tmp_path / "p"))
    assert result == EXIT_PARTIAL and "1 utterance(s) failed" in err
    assert json.loads((tmp_path / "p" / "voxanon_run.json").read_text())["limiter"] is True
