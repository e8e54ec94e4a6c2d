"""The one training loop every recipe runs on: budget, resume, RNG state, checkpoints, log and best-by-validation.

A recipe builds its model, optimizer(s), scheduler and batches and hands the
trainer (:class:`Trainer`) what has state (anything with ``state_dict`` /
``load_state_dict``) and its numpy generators; it gives :meth:`Trainer.run` a
function that trains one epoch and returns that epoch's log record, and
optionally a validation function whose score (lower is better) selects the
best epoch. The trainer owns everything around those calls:

* the budget: a number of epochs and/or a wall-time limit in minutes (time
  spent in earlier sessions counts; the epoch that passes the limit finishes);
* the checkpoint: after every epoch, written atomically, holding every state
  dict, the python/numpy/torch RNG states, the epoch, the training seconds,
  the best score and the history, plus an ``identity`` (data and settings) that
  a resumed run must share;
* resuming: a rerun finds the checkpoint, restores all of it and continues
  with the next epoch, so an interrupted run ends with the same weights as an
  uninterrupted one; a checkpoint that cannot be read is a :class:`CheckpointError`,
  one of another identity is an error or a fresh start (``on_mismatch``);
* the log (``history``; with ``log`` also a JSON-lines file, one record per
  epoch in the recipe's ``columns``);
* the best epoch by validation (``on_best`` is called when a score beats every
  earlier one).

The trainer draws no random number itself: a recipe's results are the same
as with a hand-written loop making the same calls in the same order.

The step-driven generator recipes (acoustic, asrbn, ltf) report every few
steps rather than per epoch, validate and checkpoint every so many seconds and
spend a budget of steps or minutes: they run on :class:`StepTrainer` (same
duties, step-driven) in a :class:`Run` (output folder, device, checkpoint).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from voxanon.atomic import write_text
from voxanon.errors import ConfigError, ModelError
from voxanon.models.checkpoint import load_checkpoint, save_atomic
from voxanon.models.model_files import looks_like

FORMAT = "voxanon-training/1"
#: what to do with a checkpoint that cannot be resumed from
RESUME_HINT = "delete it to start over, or use another output directory"


class CheckpointError(ModelError):
    """A training checkpoint that cannot be read, or was made with other data or settings."""


class Stateful(Protocol):
    """Anything a checkpoint holds: a module, an optimizer, a scheduler."""

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> Any: ...


def resolve_device(name: str) -> str:
    """``cpu``, ``cuda`` (ConfigError when CUDA is unavailable) or ``auto``."""
    if name not in ("cpu", "cuda", "auto"):
        raise ConfigError(f"--device {name!r}: use cpu, cuda or auto")
    available = torch.cuda.is_available()
    if name == "cuda" and not available:
        raise ConfigError(f"--device cuda: CUDA is not available to this torch ({torch.__version__}); "
                          "use --device cpu or auto")
    return "cuda" if name == "auto" and available else ("cpu" if name == "auto" else name)


def rng_state(generators: dict[str, np.random.Generator]) -> dict:
    """The python, torch (CPU and, when initialised, CUDA) and named numpy generators' states."""
    state = {"python": random.getstate(), "torch": torch.get_rng_state(),
             "numpy": {name: g.bit_generator.state for name, g in generators.items()}}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict, generators: dict[str, np.random.Generator]) -> None:
    """Put back the states :func:`rng_state` returned."""
    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
    for name, g in generators.items():
        g.bit_generator.state = state["numpy"][name]


class TrainLog:
    """A JSON-lines training log, one record per line; on resume, records past ``resume_at`` are dropped.

    ``key`` names the counter the records are ordered by (``step`` or ``epoch``).
    """

    def __init__(self, path: Path, resume_at: int | None, key: str = "step") -> None:
        self.path = path
        kept = []
        if resume_at is not None and path.exists():
            kept = [ln for ln in path.read_text(encoding="utf-8").splitlines()
                    if ln.strip() and json.loads(ln)[key] <= resume_at]
        write_text(path, "".join(ln + "\n" for ln in kept))
        self.records = [json.loads(ln) for ln in kept]

    def add(self, record: dict) -> None:
        """Append ``record``."""
        self.records.append(record)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")


@dataclasses.dataclass(frozen=True)
class Budget:
    """How long to train: ``epochs`` and/or ``minutes`` of training time (at least one)."""

    epochs: int | None = None
    minutes: float | None = None

    def __post_init__(self) -> None:
        if self.epochs is None and self.minutes is None:
            raise ConfigError("give a number of epochs (--epochs) or a time budget (--minutes)")

    def stop(self, epoch: int, seconds: float) -> str | None:
        """Why training stops before epoch ``epoch + 1`` after ``seconds`` of training (None: it goes on)."""
        if self.epochs is not None and epoch >= self.epochs:
            return "epochs"
        if self.minutes is not None and seconds >= self.minutes * 60:
            return "minutes"
        return None


class Trainer:
    """The epoch loop of a recipe (see the module docstring).

    Parameters
    ----------
    budget : Budget
    state : dict
        Name -> object with a state dict (model, classifier, optimizer, scheduler ...), saved and restored.
    rngs : dict, optional
        Name -> numpy generator the recipe draws from, saved and restored with the python and torch RNGs.
    checkpoint : path, optional
        The resumable state, rewritten atomically after every epoch; None: not resumable.
    identity : dict, optional
        What a resumed run must share with the checkpoint's (data, settings; not the budget).
    on_mismatch : ``error`` or ``restart``
        A checkpoint of another identity raises :class:`CheckpointError`, or is ignored (training starts over).
    log : path, optional
        JSON-lines log, one record per epoch.
    columns : tuple of str, optional
        The record's keys, in order (the trainer fills ``epoch``, ``seconds`` and the validation ``metric``; a
        key an epoch did not produce is left out of its record); default: ``epoch``, the epoch function's keys,
        then ``metric`` when validated.
    metric : str
        The validation score's key in the record.
    """

    def __init__(self, budget: Budget, *, state: dict[str, Stateful], rngs: dict[str, np.random.Generator] | None = None,
                 checkpoint: str | os.PathLike | None = None, identity: dict | None = None,
                 on_mismatch: str = "error", log: str | os.PathLike | None = None,
                 columns: tuple[str, ...] | None = None, metric: str = "val_eer") -> None:
        if on_mismatch not in ("error", "restart"):
            raise ValueError(f"on_mismatch must be 'error' or 'restart', not {on_mismatch!r}")
        self.budget, self.state, self.rngs = budget, state, dict(rngs or {})
        self.checkpoint = Path(checkpoint) if checkpoint is not None else None
        self.identity, self.on_mismatch = identity or {}, on_mismatch
        self.log_path = Path(log) if log is not None else None
        self.columns, self.metric = columns, metric
        self.epoch, self.seconds, self.best = 0, 0.0, None
        self.history: list[dict] = []
        self.resumed = False
        self.stopped_by: str | None = None

    def resume(self) -> bool:
        """Restore everything from the checkpoint when there is one of this identity; True when resumed."""
        if self.checkpoint is None or not self.checkpoint.is_file():
            return False
        hint = RESUME_HINT
        ckpt = load_checkpoint(self.checkpoint, "training checkpoint", CheckpointError,
                               expected=f"a {FORMAT} checkpoint", todo=hint)
        if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
            raise CheckpointError(f"{self.checkpoint}: cannot resume (it is {looks_like(ckpt)}, not a {FORMAT} "
                                  f"checkpoint); {hint}")
        if ckpt["identity"] != self.identity:
            if self.on_mismatch == "restart":
                return False
            raise CheckpointError(f"{self.checkpoint}: cannot resume (it was made with other data or settings); {hint}")
        try:
            for name, obj in self.state.items():
                obj.load_state_dict(ckpt["states"][name])
            restore_rng(ckpt["rng"], self.rngs)
        except (KeyError, RuntimeError, ValueError, TypeError) as exc:
            raise CheckpointError(f"{self.checkpoint}: cannot resume ({type(exc).__name__}: {exc}); {hint}") from exc
        self.epoch, self.seconds, self.best = int(ckpt["epoch"]), float(ckpt["seconds"]), ckpt["best"]
        self.history = list(ckpt["history"])
        self.resumed = True
        return True

    def save(self) -> None:
        """Write the checkpoint (atomically)."""
        if self.checkpoint is not None:
            save_atomic({"format": FORMAT, "identity": self.identity, "epoch": self.epoch, "seconds": self.seconds,
                         "best": self.best, "history": self.history,
                         "states": {name: obj.state_dict() for name, obj in self.state.items()},
                         "rng": rng_state(self.rngs)}, self.checkpoint)

    def select(self, epoch: int, score: float, on_best: Callable[[int, float], None] | None) -> bool:
        """Keep ``score`` as the best when it is lower than every earlier one (calling ``on_best``)."""
        if self.best is not None and not score < self.best:
            return False
        self.best = score
        if on_best is not None:
            on_best(epoch, score)
        return True

    def _record(self, epoch: int, values: dict, score: float | None) -> dict:
        merged = {"epoch": epoch, **values, "seconds": round(self.seconds, 1)}
        if score is not None:
            merged[self.metric] = score
        keys = self.columns or ("epoch", *values, *((self.metric,) if score is not None else ()))
        return {k: merged[k] for k in keys if k in merged}

    def baseline(self, validate: Callable[[int], float], on_best: Callable[[int, float], None] | None = None,
                 **values) -> None:
        """Epoch 0 of a fine-tuning run: the starting model's score (best unless an epoch beats it); not on resume."""
        if not self.resumed:
            score = validate(0)
            self.history.append(self._record(0, values, score))
            self.select(0, score, on_best)

    def run(self, train_epoch: Callable[[int], dict], validate: Callable[[int], float] | None = None,
            on_best: Callable[[int, float], None] | None = None,
            after_epoch: Callable[[dict], None] | None = None) -> list[dict]:
        """Train epoch after epoch until the budget is spent; returns the history.

        ``train_epoch(epoch)`` (1-based) returns the record's values; ``validate(epoch)`` its score (None: this
        epoch is not a candidate for the best);
        ``after_epoch(record)`` runs after the checkpoint (e.g. to print).
        """
        log = (TrainLog(self.log_path, self.epoch if self.resumed else None, key="epoch")
               if self.log_path is not None else None)
        while (stop := self.budget.stop(self.epoch, self.seconds)) is None:
            epoch = self.epoch + 1
            t0 = time.monotonic()
            values = train_epoch(epoch)
            self.seconds += time.monotonic() - t0
            score = validate(epoch) if validate is not None else None
            record = self._record(epoch, values, score)
            self.history.append(record)
            if score is not None:
                self.select(epoch, score, on_best)
            self.epoch = epoch
            self.save()
            if log is not None:
                log.add(record)
            if after_epoch is not None:
                after_epoch(record)
        self.stopped_by = stop
        return self.history


@dataclasses.dataclass
class Run:
    """A step-driven run's output folder, device and the checkpoint it resumes (``None``: a fresh start)."""

    out: Path
    device: str
    resumed: dict | None

    @classmethod
    def start(cls, out_dir: str, settings, device: str, threads: int) -> Run:
        """Check the budget (``settings.minutes`` / ``settings.epochs``) and device, set the torch threads and
        seed, create ``out_dir`` and read its ``checkpoint.pt``."""
        if settings.minutes is None and settings.epochs is None:
            raise ConfigError("give a time budget (--minutes) or a number of epochs (--epochs)")
        device = resolve_device(device)
        if threads > 0:
            torch.set_num_threads(threads)
        torch.manual_seed(settings.seed)      # a fresh network's initial weights follow the seed
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        ckpt = out / "checkpoint.pt"
        return cls(out, device, load_checkpoint(ckpt, "training checkpoint", CheckpointError,
                                                          todo=RESUME_HINT) if ckpt.exists() else None)


class StepTrainer:
    """The step-driven loop of the generator recipes (acoustic, asrbn, ltf), on a :class:`Run`.

    The budget is ``total_steps`` or ``minutes`` of training (time of earlier sessions included); every
    ``log_every`` steps (and at the end) the step's terms, averaged since the last record, go to
    ``OUT/train_log.jsonl`` with the learning rate and seconds, plus the validation score (key ``valid_key``)
    when ``valid_every_s`` seconds have passed since the last one (and at the end); ``OUT/checkpoint.pt``
    (the recipe's ``payload()`` plus optimizer, step, seconds, numpy ``rng`` and torch RNG states) is written
    atomically every ``checkpoint_every_s`` seconds and at the end. Constructing it resumes from ``run.resumed``.
    """

    def __init__(self, run: Run, optimizer: torch.optim.Optimizer, rng: np.random.Generator, *,
                 total_steps: int | None, minutes: float | None, log_every: int, valid_every_s: float,
                 checkpoint_every_s: float, valid_key: str) -> None:
        self.run_, self.optimizer, self.rng = run, optimizer, rng
        self.total_steps, self.budget = total_steps, minutes * 60.0 if minutes is not None else None
        self.log_every, self.valid_every_s, self.checkpoint_every_s = log_every, valid_every_s, checkpoint_every_s
        self.valid_key = valid_key
        self.step, self.seconds = 0, 0.0
        resumed = run.resumed
        if resumed is not None:
            optimizer.load_state_dict(resumed["optimizer"])
            self.step, self.seconds = int(resumed["step"]), float(resumed["seconds"])
            rng.bit_generator.state = resumed["rng"]
            if "torch_rng" in resumed:            # checkpoints of older versions lack it
                torch.set_rng_state(resumed["torch_rng"])
        self.log = TrainLog(run.out / "train_log.jsonl", self.step if resumed is not None else None)

    def progress(self) -> float:
        """The part of the budget spent (1.0: done)."""
        return self.step / self.total_steps if self.total_steps is not None else self.seconds / self.budget

    def save(self, payload: dict) -> None:
        """Write ``OUT/checkpoint.pt``: ``payload`` and the loop's state."""
        save_atomic({**payload, "optimizer": self.optimizer.state_dict(), "step": self.step, "seconds": self.seconds,
                     "rng": self.rng.bit_generator.state, "torch_rng": torch.get_rng_state()},
                    self.run_.out / "checkpoint.pt")

    def run(self, train_step: Callable[[], tuple[float, dict[str, float]]], payload: Callable[[], dict], *,
            validate: Callable[[], float] | None = None, extra: Callable[[], dict] | None = None,
            describe: Callable[[dict], str] | None = None) -> list[dict]:
        """Step until the budget is spent; returns the log's records.

        ``train_step()`` makes one optimizer step and returns its learning rate and loss terms; ``extra()`` adds
        to a record (after the averaged terms); ``describe(record)`` is the record's progress line (None: silent).
        """
        session, last_valid, last_ckpt = time.monotonic() - self.seconds, -math.inf, self.seconds
        sums: dict[str, float] = {}
        n = 0
        while self.progress() < 1.0:
            lr, terms = train_step()
            self.step += 1
            for k, v in terms.items():
                sums[k] = sums.get(k, 0.0) + v
            n += 1
            self.seconds = time.monotonic() - session
            done = self.progress() >= 1.0
            if self.step % self.log_every == 0 or done:
                record = {"step": self.step, **{k: round(v / n, 5) for k, v in sums.items()},
                          **(extra() if extra is not None else {}), "lr": lr, "seconds": round(self.seconds, 1)}
                sums, n = {}, 0
                if validate is not None and (self.seconds - last_valid >= self.valid_every_s or done):
                    record[self.valid_key] = round(validate(), 5)
                    last_valid = self.seconds
                    self.seconds = time.monotonic() - session
                self.log.add(record)
                if describe is not None:
                    print(describe(record) + f" | {self.seconds / 60:.1f} min | {100 * min(self.progress(), 1.0):.0f} %",
                          file=sys.stderr, flush=True)
            if self.seconds - last_ckpt >= self.checkpoint_every_s or done:
                self.save(payload())
                last_ckpt = self.seconds
        return self.log.records
