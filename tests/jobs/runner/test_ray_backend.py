"""Ray backend: same bytes as the local runner, recovery from a killed worker, resumption across backends."""

from __future__ import annotations

import importlib.util
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.audio import make_data_dir
from tests.helpers.processes import (
    processes_with_files_under,
    run_cli_killed,
    subprocess_env,
    wait_until_gone,
)
from tests.helpers.toys import ToyGain
from voxanon.jobs.runner.anonymize import anonymize_corpus
from voxanon.jobs.runner.ray_backend import RayBackend, worker_table
from voxanon.jobs.runner.runstate import RunError

needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason='Ray is not installed (pip install "voxanon[ray]")')
TOY = "tests.helpers.toys:ToyGain"
N_UTTS = 12


def test_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch, data_dir: Path, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` raise ImportError
    with pytest.raises(RunError, match=r'pip install "voxanon\[ray\]"'):
        anonymize_corpus(data_dir, tmp_path / "out", ToyGain(), backend=RayBackend(), quiet=True)


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        RayBackend(batch_size=0)
    with pytest.raises(ValueError, match="num_gpus"):
        RayBackend(num_gpus=-1)


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local Ray instance with 2 CPUs whose workers can import the test toys (``tests.helpers.toys``); yields its address."""
    ray = pytest.importorskip("ray", reason='Ray is not installed (pip install "voxanon[ray]")')
    with pytest.MonkeyPatch.context() as env:  # Ray's worker processes inherit it, also for other drivers' jobs
        env.setenv("PYTHONPATH", subprocess_env()["PYTHONPATH"])
        ray.init(num_cpus=2, include_dashboard=False, object_store_memory=200 * 1024**2,
                 logging_level=logging.WARNING)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A data directory of 12 utterances and its anonymization by the local runner in one process."""
    root = tmp_path_factory.mktemp("ray")
    data = make_data_dir(root / "corpus", utts_per_speaker=N_UTTS // 3)
    reference = root / "reference"
    anonymize_corpus(data, reference, ToyGain(), jobs=1, quiet=True)
    return data, reference


def assert_same_output(out: Path, reference: Path) -> None:
    """Same wav bytes and data files (wav.scp aside: it holds absolute paths); no temporaries left."""
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(reference).as_posix() for p in reference.rglob("*") if p.is_file())
    for wav in reference.glob("wav/*.wav"):
        assert (out / "wav" / wav.name).read_bytes() == wav.read_bytes(), wav.name
    for name in ("utt2spk", "spk2utt", "spk2gender", "text", "utt2dur"):
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name


@needs_ray
@pytest.mark.slow
@pytest.mark.parametrize(("jobs", "batch_size"), [(2, 4), (1, 5)])
def test_same_bytes_as_the_local_runner(cluster: str, corpus: tuple[Path, Path], tmp_path: Path,
                                        jobs: int, batch_size: int) -> None:
    data, reference = corpus
    backend = RayBackend(batch_size=batch_size)
    summary = anonymize_corpus(data, tmp_path / "out", ToyGain(), jobs=jobs, backend=backend, quiet=True)
    assert (summary.done, summary.failed) == (N_UTTS, 0)
    assert_same_output(tmp_path / "out", reference)
    assert len(backend.stats) == jobs
    assert sum(s.utterances for s in backend.stats) == N_UTTS
    assert sum(s.audio_seconds for s in backend.stats) == pytest.approx(N_UTTS * 0.3)
    assert worker_table(backend.stats, summary.wall_seconds).splitlines()[-1].split()[3:5] == [str(N_UTTS), "0"]


def kill_a_worker_once_output_appears(backend: RayBackend, out: Path) -> list[int]:
    """Start a thread that SIGKILLs the first actor's process when the first wav exists; returns its pid list."""
    import ray

    killed: list[int] = []

    def kill() -> None:
        deadline = time.monotonic() + 60
        while not list(out.glob("wav/*.wav")) and time.monotonic() < deadline:
            time.sleep(0.01)
        pid = ray.get(backend.actors[0].pid.remote())
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    threading.Thread(target=kill, daemon=True).start()
    return killed


@needs_ray
@pytest.mark.slow
def test_a_killed_worker_is_restarted_and_its_batches_retried(cluster: str, corpus: tuple[Path, Path],
                                                               tmp_path: Path) -> None:
    data, reference = corpus
    out = tmp_path / "out"
    backend = RayBackend(batch_size=2)  # 3 batches of 0.4 s per worker: the kill lands while work remains
    killed = kill_a_worker_once_output_appears(backend, out)
    summary = anonymize_corpus(data, out, ToyGain(delay=0.2), jobs=2, backend=backend, quiet=True)
    assert killed and (summary.done, summary.failed) == (N_UTTS, 0)
    assert len({s.worker for s in backend.stats}) == 3  # two workers, one of them restarted in a new process
    assert_same_output(out, reference)


@needs_ray
@pytest.mark.slow
def test_a_worker_lost_for_good_fails_its_batches_only(cluster: str, corpus: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    data, reference = corpus
    out = tmp_path / "out"
    backend = RayBackend(batch_size=2, max_retries=0)
    killed = kill_a_worker_once_output_appears(backend, out)
    first = anonymize_corpus(data, out, ToyGain(delay=0.2), jobs=2, backend=backend, quiet=True)
    assert killed and 0 < first.failed < N_UTTS and first.done == N_UTTS - first.failed
    reasons = [line.split("\t")[2] for line in (out / "failures.tsv").read_text().splitlines()[1:]]
    assert len(reasons) == first.failed and all(r.startswith("Ray worker lost after 0 restarts") for r in reasons)
    rerun = anonymize_corpus(data, out, ToyGain(delay=0.2), jobs=1, quiet=True)
    assert (rerun.done, rerun.skipped, rerun.failed) == (first.failed, first.done, 0)
    assert_same_output(out, reference)


@needs_ray
@pytest.mark.slow
def test_killed_ray_driver_then_local_resume(cluster: str, corpus: tuple[Path, Path], tmp_path: Path) -> None:
    data, reference = corpus
    out = tmp_path / "out"
    run_cli_killed(["--method", TOY, "--param", "delay=0.1", "--backend", "ray", "--address", cluster,
                    "--jobs", "2", "--batch-size", "2", "--quiet", str(data), str(out)], out, kill_after=2)
    assert 0 < len(list(out.glob("wav/*.wav"))) < N_UTTS
    summary = anonymize_corpus(data, out, ToyGain(delay=0.1), jobs=1, quiet=True)
    # outputs the killed driver had not recorded yet are redone (same bytes), the recorded ones kept
    assert summary.skipped + summary.done == N_UTTS and summary.failed == 0
    assert_same_output(out, reference)


def _batch_worker_pids() -> set[int]:
    """Processes of Ray actors running :class:`~voxanon.jobs.runner.ray_backend.BatchWorker` (Ray titles them)."""
    found = set()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if cmdline.read_bytes().startswith(b"ray::BatchWorker"):
                found.add(int(cmdline.parent.name))
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return found


@needs_ray
@pytest.mark.slow
def test_actors_stop_writing_when_the_driver_is_killed(cluster: str, corpus: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    data, _ = corpus
    out = tmp_path / "out"
    env = subprocess_env()
    idle_actors = _batch_worker_pids()  # of earlier runs on the same cluster
    driver = subprocess.Popen([sys.executable, "-m", "voxanon", "anonymize", "--method", TOY, "--param", "delay=0.3",
                               "--backend", "ray", "--address", cluster, "--jobs", "2", "--batch-size", "3",
                               "--quiet", str(data), str(out)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while not list(out.glob("wav/*.wav")):
        assert driver.poll() is None and time.monotonic() < deadline, "run ended or made no progress"
        time.sleep(0.02)
    actors = _batch_worker_pids() - idle_actors
    assert actors, "no actor of the run found"
    os.kill(driver.pid, signal.SIGKILL)  # the driver only: its actors run under the cluster's raylet
    driver.wait()
    wait_until_gone(actors, 10, "actors of the killed driver")  # their lifeline polls every 0.5 s
    assert not processes_with_files_under(out)
    assert len(list(out.glob("wav/*"))) < N_UTTS


@needs_ray
@pytest.mark.slow
def test_killed_local_run_then_ray_resume(cluster: str, corpus: tuple[Path, Path], tmp_path: Path) -> None:
    data, reference = corpus
    out = tmp_path / "out"
    run_cli_killed(["--method", TOY, "--param", "delay=0.1", "--jobs", "1", "--quiet", str(data), str(out)],
                   out, kill_after=2)
    assert 0 < len(list(out.glob("wav/*.wav"))) < N_UTTS
    summary = anonymize_corpus(data, out, ToyGain(delay=0.1), jobs=2, backend=RayBackend(batch_size=2), quiet=True)
    assert summary.skipped > 0 and summary.failed == 0
    assert_same_output(out, reference)
