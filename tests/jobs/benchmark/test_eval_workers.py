"""The benchmark's evaluation workers: units of shared work, one thread per worker, failures that stay local."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.speaker_corpus import TINY_ECAPA, make_corpus, trial_dirs
from voxanon.evaluation.evaluator import Env, Evaluator, RunSettings, SystemData, plan
from voxanon.jobs.benchmark.eval_workers import Unit, run_units, units


@dataclass(frozen=True)
class ProbeSettings:
    tag: str
    group: str = ""
    action: str = "ok"  # ok | raise | die
    seconds: float = 0.0  # how long it works


@dataclass(frozen=True)
class ProbeResult:
    tag: str
    pid: int
    torch_threads: int
    omp: str | None
    seen: tuple[str, ...]  # tags of this system's earlier probes, read from the shared cache folder


class _Probe(Evaluator):
    """An evaluator the tests hand to the workers directly (no plan, no inputs)."""

    kind = "probe"

    @classmethod
    def plan(cls, run, options):
        return []

    def inputs(self, data):
        return {}


class ProbeEvaluator(_Probe):
    """Writes its tag into the run's cache folder and reports where and how it ran."""

    Settings = ProbeSettings

    @property
    def name(self):
        return f"probe {self.settings.tag}"

    @property
    def group(self):
        return self.settings.group or self.name

    def run(self, data, env):
        import torch

        if self.settings.action == "raise":
            raise ValueError(f"probe {self.settings.tag} refuses")
        if self.settings.action == "die":
            os._exit(3)
        time.sleep(self.settings.seconds)
        folder = env.cache_dir / data.label
        seen = tuple(sorted(p.name for p in folder.iterdir())) if folder.is_dir() else ()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / self.settings.tag).write_text("done")
        return ProbeResult(self.settings.tag, os.getpid(), torch.get_num_threads(), os.environ.get("OMP_NUM_THREADS"),
                           seen)


def _system(label: str) -> SystemData:
    return SystemData(label, True, {}, {})


def _probe(tag: str, group: str = "", action: str = "ok", seconds: float = 0.0) -> ProbeEvaluator:
    return ProbeEvaluator(ProbeSettings(tag, group, action, seconds))


def test_units_group_shared_work_of_one_system_in_plan_order():
    run = RunSettings(splits=("dev", "test"), n_boot=10, seed=0, asr="whisper-tiny", wer_normalization="spoken",
                      pretrained="ge2e")
    evaluators = plan(run, ["privacy", "ladder", "wer"], {"wer_splits": ("test",), "rungs": ("AA-backend", "AA-semi"),
                                                          "attacker_epochs": 1, "finetune_epochs": 0})
    a, b = _system("a"), _system("b")
    got = [(u.data.label, [e.name for e in u.evaluators])
           for u in units([(ev, s) for ev in evaluators for s in (a, b)])]
    assert got == [
        ("a", ["privacy OO dev", "privacy OA dev", "privacy AA-lazy dev"]),
        ("b", ["privacy OO dev", "privacy OA dev", "privacy AA-lazy dev"]),
        ("a", ["privacy OO test", "privacy OA test", "privacy AA-lazy test"]),
        ("b", ["privacy OO test", "privacy OA test", "privacy AA-lazy test"]),
        ("a", ["privacy AA-backend dev", "privacy AA-backend test"]),  # one training serves both splits
        ("b", ["privacy AA-backend dev", "privacy AA-backend test"]),
        ("a", ["privacy AA-semi dev", "privacy AA-semi test"]),
        ("b", ["privacy AA-semi dev", "privacy AA-semi test"]),
        ("a", ["wer test"]), ("b", ["wer test"])]


def _outcomes(results):
    return {(unit.data.label, ev.settings.tag): outcome
            for unit, outcomes in results for ev, outcome in zip(unit.evaluators, outcomes)}


def test_workers_run_units_in_parallel_processes_with_one_thread_each(tmp_path: Path):
    todo = [Unit(_system(s), (_probe("train", "g", seconds=0.5), _probe("attack", "g"))) for s in "abcd"]
    got = _outcomes(run_units(todo, Env(tmp_path, quiet=True), jobs=2))
    assert len(got) == 8 and all(error is None for _, error in got.values())
    pids = {result["pid"] for result, _ in got.values()}
    assert len(pids) == 2 and os.getpid() not in pids
    assert {(r["torch_threads"], r["omp"]) for r, _ in got.values()} == {(1, "1")}
    for s in "abcd":  # a unit runs in order, in one worker
        train, attack = got[s, "train"][0], got[s, "attack"][0]
        assert train["pid"] == attack["pid"] and train["seen"] == [] and attack["seen"] == ["train"]


def test_one_job_runs_in_this_process_on_one_torch_thread(tmp_path: Path):
    import torch

    torch.set_num_threads(2)
    got = _outcomes(run_units([Unit(_system("a"), (_probe("x"),))], Env(tmp_path, quiet=True), jobs=1))
    assert got["a", "x"][0]["pid"] == os.getpid() and got["a", "x"][0]["torch_threads"] == 1
    assert torch.get_num_threads() == 2  # restored


def test_an_error_fails_its_evaluation_only(tmp_path: Path):
    todo = [Unit(_system("a"), (_probe("bad", "g", "raise"), _probe("next", "g"))), Unit(_system("b"), (_probe("x"),))]
    got = _outcomes(run_units(todo, Env(tmp_path, quiet=True), jobs=2))
    assert got["a", "bad"] == (None, "ValueError: probe bad refuses")
    assert got["a", "next"][1] is None and got["b", "x"][1] is None


def test_a_dead_worker_fails_only_its_own_unit(tmp_path: Path):
    todo = [Unit(_system("b"), (_probe("crash", "g", "die"), _probe("after", "g"))),
            *[Unit(_system(s), (_probe("beside", seconds=0.3 * (s == "c")),)) for s in "cdef"]]
    got = _outcomes(run_units(todo, Env(tmp_path, quiet=True), jobs=2))
    assert len(got) == 6
    for tag in ("crash", "after"):  # the unit that killed its worker, alone on the retry as well
        assert got["b", tag] == (None, "worker process died (out of memory or a crash in native code)")
    for s in "cdef":  # beside it when it died (c), or after: run again, or on the new pool
        assert got[s, "beside"][1] is None and got[s, "beside"][0]["tag"] == "beside"


@dataclass(frozen=True)
class TrainSettings:
    root: str


class TrainProbe(_Probe):
    """Trains a tiny ECAPA attacker (selected on dev trials) and returns its log."""

    Settings = TrainSettings

    def run(self, data, env):

        from voxanon.data.kaldi import read_data_dir
        from voxanon.evaluation.attacker_training import train_ecapa
        from voxanon.training.asv import AsvSettings

        root = Path(self.settings.root)
        cfg = AsvSettings(model=TINY_ECAPA, epochs=2, batch_size=8, chunk_seconds=0.5, val_fraction=0.25)
        _, log = train_ecapa(read_data_dir(root / "train"), root / "enroll", [root / "trials"], cfg,
                             env.cache_dir / data.label, seed=3, quiet=True)
        return {"history": log}


def test_a_trained_attacker_does_not_depend_on_the_jobs(tmp_path: Path):
    import torch

    from voxanon.data.kaldi import write_data_dir

    write_data_dir(make_corpus(tmp_path / "wavs", n_spk=4, n_utt=4, dur=0.6), tmp_path / "train")
    trial_dirs(tmp_path, make_corpus(tmp_path / "dev", n_spk=4, n_utt=4, dur=0.6))
    probe = TrainProbe(TrainSettings(str(tmp_path)))
    torch.set_num_threads(2)
    histories = {}
    for jobs in (1, 2):
        todo = [Unit(_system(f"{jobs}-{i}"), (probe,)) for i in range(jobs)]
        for unit, [(result, error)] in run_units(todo, Env(tmp_path / "cache", quiet=True), jobs=jobs):
            assert error is None
            histories[unit.data.label] = result["history"]
    assert histories["1-0"] == histories["2-0"] == histories["2-1"]
    assert len(histories["1-0"]) == 2
