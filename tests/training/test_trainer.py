"""The training layer's one loop: exact resume after a kill, budgets, best-by-validation, checkpoints, logs."""

import json

import numpy as np
import pytest
import torch
from torch import nn

from voxanon.errors import ConfigError, ModelError
from voxanon.training.trainer import (
    Budget,
    CheckpointError,
    Recipe,
    Run,
    Schedule,
    Trainer,
    TrainLog,
)

torch.set_num_threads(1)
COLUMNS = ("epoch", "loss", "val")


class Killed(Exception):
    """Stands for the process dying in the middle of an epoch."""


def _recipe(out, epochs, *, kill_at=None, minutes=None, scores=None, identity=None, on_mismatch="error"):
    """A small real recipe: an MLP with dropout (torch RNG) on numpy-drawn batches (numpy RNG), Adam and a
    step LR schedule; ``kill_at``: the epoch that dies half-way. Returns the trainer, the model and the best calls."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    rng = np.random.default_rng(1)
    x = np.random.default_rng(2).standard_normal((64, 4)).astype(np.float32)
    y = x @ np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    trainer = Trainer(Budget(epochs=epochs, minutes=minutes), state={"model": model, "opt": opt, "sched": sched},
                      rngs={"batches": rng}, checkpoint=out / "last.pt", identity=identity or {"data": 64},
                      on_mismatch=on_mismatch, log=out / "log.jsonl", columns=COLUMNS, metric="val")
    trainer.resume()
    best = []
    recipe = _Mlp(model, opt, sched, rng, x, y, kill_at, scores)
    return trainer, model, best, lambda: trainer.run(recipe, lambda e, s: best.append((e, s)))


class _Mlp(Recipe):
    """Four batches of 16 per epoch, squared error; the LR schedule steps once per epoch."""

    scheduler_every = "epoch"

    def __init__(self, model, opt, sched, rng, x, y, kill_at, scores):
        self.model, self.optimizer, self.scheduler, self.rng = model, opt, sched, rng
        self.x, self.y, self.kill_at, self.scores = x, y, kill_at, scores

    def steps(self, epoch):
        return 4

    def batches(self, epoch):
        self.model.train()
        for step in range(4):
            if epoch == self.kill_at and step == 2:
                raise Killed
            idx = self.rng.integers(len(self.x), size=16)
            yield torch.from_numpy(self.x[idx]), torch.from_numpy(self.y[idx])

    def loss(self, batch):
        x, y = batch
        return ((self.model(x)[:, 0] - y) ** 2).mean(), 1

    def validate(self, epoch):
        if self.scores is not None:
            return self.scores[epoch - 1]
        self.model.eval()
        with torch.no_grad():
            return float(((self.model(torch.from_numpy(self.x))[:, 0] - torch.from_numpy(self.y)) ** 2).mean())


def test_resume_after_a_kill_gives_the_same_weights_bit_for_bit(tmp_path):
    straight, model_a, _, run = _recipe(tmp_path / "a", 6)
    history = run()
    _, _, _, run = _recipe(tmp_path / "b", 6, kill_at=4)
    with pytest.raises(Killed):
        run()
    saved = torch.load(tmp_path / "b" / "last.pt", weights_only=True)
    assert saved["epoch"] == 3 and len(saved["history"]) == 3
    resumed, model_b, _, run = _recipe(tmp_path / "b", 6)
    assert resumed.resumed and resumed.epoch == 3
    assert run() == history and resumed.best == straight.best
    for key, value in model_a.state_dict().items():
        assert torch.equal(value, model_b.state_dict()[key]), key
    a, b = (torch.load(tmp_path / d / "last.pt", weights_only=True)["states"]["opt"] for d in "ab")
    assert all(torch.equal(a["state"][k]["exp_avg"], b["state"][k]["exp_avg"]) for k in a["state"])
    lines = [json.loads(ln) for ln in (tmp_path / "b" / "log.jsonl").read_text().splitlines()]
    assert lines == history and list(lines[0]) == list(COLUMNS)


def test_a_longer_budget_continues_a_finished_run(tmp_path):
    _, model_a, _, run = _recipe(tmp_path / "a", 5)
    history = run()
    _recipe(tmp_path / "b", 2)[3]()
    trainer, model_b, _, run = _recipe(tmp_path / "b", 5)
    assert run() == history and trainer.stopped_by == "epochs"
    assert all(torch.equal(v, model_b.state_dict()[k]) for k, v in model_a.state_dict().items())


def test_budgets_stop_training(tmp_path):
    trainer, _, _, run = _recipe(tmp_path / "e", 3)
    assert len(run()) == 3 and trainer.stopped_by == "epochs"
    trainer, _, _, run = _recipe(tmp_path / "m", None, minutes=1e-9)
    assert len(run()) == 1 and trainer.stopped_by == "minutes"  # the epoch that passes the limit finishes
    assert Budget(epochs=2).stop(2, 0.0) == "epochs" and Budget(minutes=1.0).stop(9, 59.0) is None
    with pytest.raises(ConfigError, match="epochs"):
        Budget()


def test_best_by_validation_keeps_the_lowest_score(tmp_path):
    trainer, _, best, run = _recipe(tmp_path / "v", 5, scores=[3.0, 1.0, 2.0, 1.0, 0.5])
    history = run()
    assert best == [(1, 3.0), (2, 1.0), (5, 0.5)]  # a tie does not replace the earlier epoch
    assert trainer.best == 0.5 and [r["val"] for r in history] == [3.0, 1.0, 2.0, 1.0, 0.5]


def test_baseline_is_epoch_zero_and_kept_unless_beaten(tmp_path):
    trainer, _, best, run = _recipe(tmp_path / "z", 2, scores=[5.0, 4.0])
    trainer.baseline(lambda epoch: 4.5, lambda e, s: best.append((e, s)), loss=None)
    history = run()
    assert history[0] == {"epoch": 0, "loss": None, "val": 4.5} and best == [(0, 4.5), (2, 4.0)]


def test_corrupt_checkpoint_is_a_model_error_naming_the_file(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "last.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="last.pt cannot be read") as err:
        _recipe(tmp_path / "c", 2)
    assert isinstance(err.value, ModelError)
    torch.save({"something": "else"}, tmp_path / "c" / "last.pt")
    with pytest.raises(CheckpointError, match="not a voxanon-training/1 checkpoint"):
        _recipe(tmp_path / "c", 2)


def test_checkpoint_of_other_settings_is_refused_or_restarted(tmp_path):
    _recipe(tmp_path / "o", 2)[3]()
    with pytest.raises(CheckpointError, match="other data or settings.*delete it"):
        _recipe(tmp_path / "o", 3, identity={"data": 65})
    trainer, _, _, run = _recipe(tmp_path / "o", 3, identity={"data": 65}, on_mismatch="restart")
    assert not trainer.resumed and [r["epoch"] for r in run()] == [1, 2, 3]
    assert len((tmp_path / "o" / "log.jsonl").read_text().splitlines()) == 3


def test_train_log_drops_records_past_the_resumed_counter(tmp_path):
    log = TrainLog(tmp_path / "log.jsonl", None)
    for step in (10, 20, 30):
        log.add({"step": step, "loss": 1.0})
    again = TrainLog(tmp_path / "log.jsonl", 20)
    assert [r["step"] for r in again.records] == [10, 20]
    assert len((tmp_path / "log.jsonl").read_text().splitlines()) == 2


class _StepMlp(Recipe):
    """A step-driven recipe (as acoustic and ltf): an MLP on numpy-drawn batches at a fixed learning rate."""

    def __init__(self, model, opt, rng):
        self.model, self.optimizer, self.rng = model, opt, rng

    def batches(self, epoch):
        while True:
            yield torch.from_numpy(self.rng.standard_normal((8, 4)).astype(np.float32))

    def loss(self, batch):
        return (self.model(batch)[:, 0] - batch.sum(1)).pow(2).mean(), 1

    def learning_rate(self, step, progress):
        return 1e-2

    def terms(self, loss):
        return {"train": loss}

    def validate(self, step):
        return 0.5

    def payload(self):
        return {"model": self.model.state_dict()}


def _step_recipe(out, total_steps, *, log_every=2):
    """A step-driven run of :class:`_StepMlp`, checkpoint payload = its weights."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Linear(8, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(3)
    out.mkdir(parents=True, exist_ok=True)
    ckpt = out / "checkpoint.pt"
    run = Run(out, "cpu", torch.load(ckpt, weights_only=True) if ckpt.exists() else None)
    if run.resumed is not None:
        model.load_state_dict(run.resumed["model"])
    trainer = Trainer(Budget(steps=total_steps), state={"optimizer": opt}, rngs={"batches": rng}, checkpoint=ckpt,
                      log=out / "train_log.jsonl", metric="valid", schedule=Schedule(log_every, 0.0, 1e9))
    trainer.restore(run.resumed)
    records = trainer.run(_StepMlp(model, opt, rng))
    return trainer, model, records


def test_a_step_driven_trainer_logs_every_n_steps_and_resumes_exactly(tmp_path):
    trainer, model_a, records = _step_recipe(tmp_path / "a", 5)
    assert trainer.step == 5 and [r["step"] for r in records] == [2, 4, 5]
    assert list(records[0]) == ["step", "train", "lr", "seconds", "valid"]
    _step_recipe(tmp_path / "b", 3)             # stops at 3 (a checkpoint at the end), then a larger budget
    _, model_b, again = _step_recipe(tmp_path / "b", 5)
    assert [r["step"] for r in again] == [2, 3, 4, 5]
    assert all(torch.equal(v, model_b.state_dict()[k]) for k, v in model_a.state_dict().items())
    assert again[-1]["train"] == records[-1]["train"]   # step 5 alone in both (the mean restarts at a record)
