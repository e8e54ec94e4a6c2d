"""The one training loop every recipe runs on: the batch loop, budget, resume, RNG state, checkpoints, log and
best-by-validation.

A recipe (:class:`Recipe`) is its data, its loss and its validation: it builds
its model, optimizer, scheduler and batches, and gives the trainer
(:class:`Trainer`) what has state (anything with ``state_dict`` /
``load_state_dict``) and its numpy generators. The trainer owns everything
else:

* the batch loop: for each batch of :meth:`Recipe.batches`, the recipe's
  :meth:`Recipe.loss`, then ``zero_grad``, ``backward``, the optional gradient
  clipping, the optimizer step and the scheduler step (after every step, or
  after every epoch), the epoch's mean loss and its progress line;
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
spend a budget of steps or minutes: the same trainer with a :class:`Schedule`,
in a :class:`Run` (output folder, device, checkpoint).

Every recipe has one entry point of one shape, ``train_<recipe>(data, out, settings, *, extras) ->
TrainResult``: ``data`` what it learns from (a data directory, a list of them, or the in-memory features or
points), ``out`` the run folder (model, log, checkpoint), ``settings`` its ``<Recipe>Settings``, keyword-only
extras after; the :class:`TrainResult` names the model file and the log and holds the history.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import random
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from voxanon.atomic import write_text
from voxanon.errors import ConfigError, ModelError
from voxanon.models.checkpoint import load_checkpoint, load_state_checked, save_atomic
from voxanon.models.model_files import looks_like, require_keys, short_reason
from voxanon.progress import Progress

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
    """How long to train: ``epochs`` (or, step-driven, ``steps``) and/or ``minutes`` of training time (at least
    one)."""

    epochs: int | None = None
    minutes: float | None = None
    steps: int | None = None

    def __post_init__(self) -> None:
        if self.epochs is None and self.minutes is None and self.steps is None:
            raise ConfigError("give a number of epochs (--epochs) or a time budget (--minutes)")

    def spent(self, step: int, seconds: float) -> float:
        """The part of a step-driven budget spent after ``step`` steps and ``seconds`` of training (1.0: done)."""
        return step / self.steps if self.steps is not None else seconds / (self.minutes * 60.0)

    def stop(self, epoch: int, seconds: float) -> str | None:
        """Why training stops before epoch ``epoch + 1`` after ``seconds`` of training (None: it goes on)."""
        if self.epochs is not None and epoch >= self.epochs:
            return "epochs"
        if self.minutes is not None and seconds >= self.minutes * 60:
            return "minutes"
        return None


@dataclasses.dataclass(frozen=True)
class Schedule:
    """A step-driven run's reporting: a log record every ``log_every`` steps, validation when ``valid_every_s``
    seconds have passed since the last one, a checkpoint every ``checkpoint_every_s`` seconds (and all three at
    the end)."""

    log_every: int
    valid_every_s: float
    checkpoint_every_s: float


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """What every ``train_<recipe>`` returns: where the run went and how it ended.

    ``out`` is the run folder; ``model`` the model file to load (the best epoch by validation where the recipe
    selects one, else the final model; None where the run wrote none, e.g. a bottleneck still in its warm-up);
    ``log`` the training log (JSON lines, one record per epoch or per ``log_every`` steps; the kit's text log
    for ``ecapa_ssl``); ``history`` its records; ``metric`` the validation score's key in them (lower is
    better; None: the run validated nothing); ``summary`` the recipe's own account of the run (what it writes
    to ``model.json`` or into the model file).
    """

    out: Path
    model: Path | None
    log: Path | None
    history: list[dict]
    metric: str | None
    summary: dict

    def scores(self) -> list[float]:
        """The validation scores of the history, in order."""
        return [r[self.metric] for r in self.history if self.metric is not None and r.get(self.metric) is not None]

    @property
    def best(self) -> float | None:
        """The lowest validation score (None: none)."""
        return min(self.scores(), default=None)

    @property
    def final(self) -> float | None:
        """The last validation score (None: none)."""
        return next(reversed(self.scores()), None)


class Recipe:
    """What a recipe gives the :class:`Trainer`: its optimizer, its batches, its loss and its validation.

    A subclass sets ``optimizer`` and, when it has them, ``scheduler`` (stepped after every optimizer step, or
    after every epoch when ``scheduler_every`` is ``"epoch"``) and ``clip`` (parameters, maximum gradient norm), and
    implements :meth:`steps`, :meth:`batches` and :meth:`loss`. A step-driven recipe (a trainer with a
    :class:`Schedule`) implements :meth:`batches` (``batches(0)`` yields without end), :meth:`loss`,
    :meth:`learning_rate`, :meth:`terms`, :meth:`payload` and :meth:`describe`.
    """

    optimizer: torch.optim.Optimizer
    scheduler: Any = None
    scheduler_every: str = "step"
    clip: tuple[list[torch.nn.Parameter], float] | None = None

    def steps(self, epoch: int) -> int:
        """How many batches epoch ``epoch`` has (for its progress line)."""
        raise NotImplementedError

    def batches(self, epoch: int) -> Iterable:
        """Epoch ``epoch``'s batches (1-based epochs); a generator sets up the epoch (train mode, seeds, learning
        rate) before its first batch and draws each batch when it is asked for it."""
        raise NotImplementedError

    def loss(self, batch) -> tuple[torch.Tensor, float]:
        """The loss of ``batch`` (to minimise) and its weight in the epoch's mean loss."""
        raise NotImplementedError

    def end_epoch(self, epoch: int, loss: float) -> dict:
        """The epoch's log values, given its mean loss (after its last step)."""
        return {"loss": loss}

    def validate(self, epoch: int) -> float | None:
        """The epoch's validation score, lower is better (None: no candidate for the best)."""
        return None

    def learning_rate(self, step: int, progress: float) -> float:
        """A step-driven recipe's learning rate for step ``step`` (0-based), ``progress`` of the budget spent."""
        raise NotImplementedError

    def terms(self, loss: float) -> dict[str, float]:
        """A step-driven recipe's log terms of the step just made, given its loss."""
        return {"loss": loss}

    def record_extra(self) -> dict:
        """What a step-driven log record adds after the averaged terms (e.g. code usage since the last record)."""
        return {}

    def payload(self) -> dict:
        """What a step-driven checkpoint holds beside the loop's state (the network, its config ...)."""
        raise NotImplementedError

    def describe(self, record: dict) -> str:
        """A step-driven log record as a progress line."""
        return f"step {record['step']}"


def epoch_order(seed: int, epoch: int, n: int) -> tuple[torch.Generator, list[int]]:
    """Epoch ``epoch``'s generator and its shuffled order of ``n`` items; the generator and the torch RNG (dropout)
    are seeded from ``(seed, epoch)``, so a resumed run draws what an uninterrupted one does."""
    epoch_seed = seed * 100_003 + epoch - 1
    torch.manual_seed(epoch_seed)
    gen = torch.Generator().manual_seed(epoch_seed)
    return gen, torch.randperm(n, generator=gen).tolist()


def optimizer_step(recipe: Recipe, batch) -> tuple[float, float]:
    """One step of ``recipe`` on ``batch``: its loss, ``zero_grad``, ``backward``, the clipping, the optimizer step
    and (per step) the scheduler step; returns the loss and its weight."""
    loss, n = recipe.loss(batch)
    recipe.optimizer.zero_grad()
    loss.backward()
    if recipe.clip is not None:
        torch.nn.utils.clip_grad_norm_(*recipe.clip)
    recipe.optimizer.step()
    if recipe.scheduler is not None and recipe.scheduler_every == "step":
        recipe.scheduler.step()
    return loss.item(), n


class Trainer:
    """The training loop of a recipe, epoch after epoch or, with a :class:`Schedule`, step after step (see the
    module docstring).

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
    desc : str
        What the progress line of an epoch starts with (e.g. ``"SER fold 1 "``).
    quiet : bool
        No progress line.
    schedule : Schedule, optional
        Step-driven (see :meth:`run_steps`): the budget counts ``steps`` (or minutes), the log has a record
        every few steps (keyed ``step``), validation and checkpoints follow the clock; ``checkpoint`` is then
        written in the step-driven form (the recipe's :meth:`Recipe.payload`, ``optimizer``, ``step``,
        ``seconds``, ``rng`` and ``torch_rng``) and restored with :meth:`restore`.
    """

    def __init__(self, budget: Budget, *, state: dict[str, Stateful],
                 rngs: dict[str, np.random.Generator] | None = None,
                 checkpoint: str | os.PathLike | None = None, identity: dict | None = None,
                 on_mismatch: str = "error", log: str | os.PathLike | None = None,
                 columns: tuple[str, ...] | None = None, metric: str = "val_eer", desc: str = "",
                 quiet: bool = True, schedule: Schedule | None = None) -> None:
        if on_mismatch not in ("error", "restart"):
            raise ValueError(f"on_mismatch must be 'error' or 'restart', not {on_mismatch!r}")
        self.budget, self.state, self.rngs = budget, state, dict(rngs or {})
        self.checkpoint = Path(checkpoint) if checkpoint is not None else None
        self.identity, self.on_mismatch = identity or {}, on_mismatch
        self.log_path = Path(log) if log is not None else None
        self.columns, self.metric = columns, metric
        self.desc, self.quiet, self.schedule = desc, quiet, schedule
        self.step = 0
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
                if isinstance(obj, torch.nn.Module):      # keys and shapes checked: one line, never PyTorch's list
                    load_state_checked(obj, ckpt["states"][name], f"{self.checkpoint}: cannot resume {name!r}",
                                       CheckpointError, hint)
                else:
                    obj.load_state_dict(ckpt["states"][name])
            restore_rng(ckpt["rng"], self.rngs)
        except (KeyError, RuntimeError, ValueError, TypeError) as exc:
            raise CheckpointError(f"{self.checkpoint}: cannot resume ({type(exc).__name__}: {short_reason(exc)}); "
                                  f"{hint}") from exc
        self.epoch, self.seconds, self.best = int(ckpt["epoch"]), float(ckpt["seconds"]), ckpt["best"]
        self.history = list(ckpt["history"])
        self.resumed = True
        return True

    def result(self, out: str | os.PathLike, model: str | os.PathLike | None, summary: dict,
               log: str | os.PathLike | None = None) -> TrainResult:
        """The run's :class:`TrainResult`: folder ``out``, ``model`` file, ``summary``, the log (default: this
        trainer's) and this trainer's history."""
        validated = any(self.metric in r for r in self.history)
        return TrainResult(Path(out), Path(model) if model is not None else None,
                           Path(log) if log is not None else self.log_path, self.history,
                           self.metric if validated else None, summary)

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

    def train_epoch(self, recipe: Recipe, epoch: int) -> dict:
        """Run epoch ``epoch`` of ``recipe``'s batch loop; its log values (:meth:`Recipe.end_epoch`)."""
        label = f"{self.desc}epoch {epoch}" + (f"/{self.budget.epochs}" if self.budget.epochs is not None else "")
        progress = Progress(recipe.steps(epoch), label, quiet=self.quiet)
        total, weight = 0.0, 0
        for batch in recipe.batches(epoch):
            loss, n = optimizer_step(recipe, batch)
            total += loss * n
            weight += n
            progress.desc = f"{label} loss {total / weight:.3f}"
            progress.update()
        progress.close()
        if recipe.scheduler is not None and recipe.scheduler_every == "epoch":
            recipe.scheduler.step()
        return recipe.end_epoch(epoch, total / weight)

    def run(self, recipe: Recipe, on_best: Callable[[int, float], None] | None = None,
            after_epoch: Callable[[dict], None] | None = None) -> list[dict]:
        """Train ``recipe`` epoch after epoch (step after step with a :class:`Schedule`: :meth:`run_steps`) until
        the budget is spent; returns the history.

        After each epoch, :meth:`Recipe.validate` gives its score; ``after_epoch(record)`` runs after the
        checkpoint (e.g. to print).
        """
        if self.schedule is not None:
            return self.run_steps(recipe)
        log = (TrainLog(self.log_path, self.epoch if self.resumed else None, key="epoch")
               if self.log_path is not None else None)
        if log is not None and not self.resumed:
            for record in self.history:          # a fresh run's epoch 0 (:meth:`baseline`)
                log.add(record)
        while (stop := self.budget.stop(self.epoch, self.seconds)) is None:
            epoch = self.epoch + 1
            t0 = time.monotonic()
            values = self.train_epoch(recipe, epoch)
            self.seconds += time.monotonic() - t0
            score = recipe.validate(epoch)
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

    def restore(self, resumed: dict | None) -> None:
        """Step-driven: put back the loop's state from ``resumed`` (a checkpoint already read, e.g.
        :attr:`Run.resumed`; None: a fresh start)."""
        if resumed is not None:
            try:
                self.state["optimizer"].load_state_dict(resumed["optimizer"])
            except (KeyError, ValueError, TypeError) as exc:
                raise CheckpointError(f"{self.checkpoint}: cannot resume the optimizer ({short_reason(exc)}); "
                                      f"{RESUME_HINT}") from exc
            self.step, self.seconds = int(resumed["step"]), float(resumed["seconds"])
            (rng,) = self.rngs.values()
            rng.bit_generator.state = resumed["rng"]
            if "torch_rng" in resumed:            # checkpoints of older versions lack it
                torch.set_rng_state(resumed["torch_rng"])
            self.resumed = True

    def progress(self) -> float:
        """Step-driven: the part of the budget spent (1.0: done)."""
        return self.budget.spent(self.step, self.seconds)

    def save_steps(self, payload: dict) -> None:
        """Step-driven: write the checkpoint, ``payload`` and the loop's state (atomically)."""
        (rng,) = self.rngs.values()
        save_atomic({**payload, "optimizer": self.state["optimizer"].state_dict(), "step": self.step,
                     "seconds": self.seconds, "rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state()},
                    self.checkpoint)

    def run_steps(self, recipe: Recipe) -> list[dict]:
        """Step until the budget is spent; returns the log's records.

        Each step sets the recipe's learning rate, then makes one :func:`optimizer_step` on its next batch; every
        ``log_every`` steps (and at the end) the steps' terms, averaged since the last record, go to the log with
        the recipe's :meth:`Recipe.record_extra`, the learning rate and seconds, plus the validation score (key
        ``metric``) when ``valid_every_s`` seconds have passed since the last one (and at the end); the
        checkpoint is written every ``checkpoint_every_s`` seconds and at the end.
        """
        schedule, log = self.schedule, TrainLog(self.log_path, self.step if self.resumed else None)
        session, last_valid, last_ckpt = time.monotonic() - self.seconds, -math.inf, self.seconds
        sums: dict[str, float] = {}
        n = 0
        batches = iter(recipe.batches(0))
        while self.progress() < 1.0:
            lr = recipe.learning_rate(self.step, self.progress())
            for group in recipe.optimizer.param_groups:
                group["lr"] = lr
            terms = recipe.terms(optimizer_step(recipe, next(batches))[0])
            self.step += 1
            for k, v in terms.items():
                sums[k] = sums.get(k, 0.0) + v
            n += 1
            self.seconds = time.monotonic() - session
            done = self.progress() >= 1.0
            if self.step % schedule.log_every == 0 or done:
                record = {"step": self.step, **{k: round(v / n, 5) for k, v in sums.items()},
                          **recipe.record_extra(), "lr": lr, "seconds": round(self.seconds, 1)}
                sums, n = {}, 0
                if self.seconds - last_valid >= schedule.valid_every_s or done:
                    score = recipe.validate(self.step)
                    if score is not None:
                        record[self.metric] = round(score, 5)
                        last_valid = self.seconds
                        self.seconds = time.monotonic() - session
                log.add(record)
                if not self.quiet:
                    share = 100 * min(self.progress(), 1.0)
                    print(recipe.describe(record) + f" | {self.seconds / 60:.1f} min | {share:.0f} %",
                          file=sys.stderr, flush=True)
            if self.seconds - last_ckpt >= schedule.checkpoint_every_s or done:
                self.save_steps(recipe.payload())
                last_ckpt = self.seconds
        self.history = log.records
        return log.records


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

    @property
    def checkpoint(self) -> Path:
        """The checkpoint file a run resumes from and writes."""
        return self.out / "checkpoint.pt"

    def require(self, keys: tuple[str, ...], model: str) -> None:
        """CheckpointError in one line unless :attr:`resumed` holds every one of ``keys`` and the loop's own (a
        checkpoint of another kind; ``model`` names the kind of model the run trains)."""
        keys = (*keys, "optimizer", "step", "seconds", "rng")      # what Trainer.save_steps adds to the payload
        require_keys(self.resumed, keys, "training checkpoint", self.checkpoint, CheckpointError,
                     expected=f"a training checkpoint of {model}", todo=RESUME_HINT)

    def load_into(self, module: torch.nn.Module, key: str) -> None:
        """The resumed checkpoint's state ``key`` into ``module``; CheckpointError in one line (the key and both
        shapes) when it does not fit."""
        load_state_checked(module, self.resumed[key], f"{self.checkpoint}: cannot resume {key!r}", CheckpointError,
                           RESUME_HINT)
