"""``voxanon train acoustic`` and ``voxanon train f3va``: train (or fine-tune) a speaker-conditioned acoustic model.

The network is the config's kind (:mod:`voxanon.models.acoustic.networks`):
``conv`` (``train acoustic``, L1 loss) or the F3-VA DiT flow-matching backbone
(``train f3va``, CFM loss; its mel statistics and content codebook are fitted
on the training data first). Training pairs: content of a voice-perturbed copy of each utterance (so the
content carries little of the voice) + its pitch + the embedding of *another*
utterance of the same speaker (so the embedding carries only identity) ->
the clean utterance's log-mels, on random segments. Validation: L1 of the mels
the model generates (``dit``: 16 Euler steps from seed-0 noise) from the clean
content of held-out speakers, embedding = the mean of the speaker's other
utterances. The run is resumable: ``OUT/checkpoint.pt`` is written atomically
about every minute and a rerun of the same command continues from it (its
time budget counts the time already trained). ``OUT/train_log.jsonl`` holds
one line per report (step, train loss (``train_l1`` or ``train_cfm``), valid L1 when measured, seconds);
``OUT/model.pt`` (fp16) and ``OUT/model.json`` are written at the end.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from pathlib import Path

import numpy as np
import torch

from voxanon.atomic import write_text
from voxanon.errors import ConfigError, DataError, RunError
from voxanon.models.acoustic.dit import DiTConfig, DiTNet
from voxanon.models.acoustic.features import network_content
from voxanon.models.acoustic.inference import AcousticModel, ModelSpecs, model_file
from voxanon.models.acoustic.model import AcousticConfig
from voxanon.models.acoustic.networks import build_net, config_from_dict
from voxanon.models.acoustic.vq import kmeans
from voxanon.models.checkpoint import save_atomic
from voxanon.training.acoustic_features import Extractor, UttFeatures, extract_dirs
from voxanon.training.trainer import Budget, Recipe, Run, Schedule, Trainer, TrainResult

#: content frames drawn for a k-means codebook
KMEANS_FRAMES = 20000
#: training utterances on which a DiT's prior spread is measured
PRIOR_UTTERANCES = 300


@dataclasses.dataclass(frozen=True)
class AcousticSettings:
    """Optimisation settings (the network's sizes are an :class:`AcousticConfig`)."""

    minutes: float | None = 45.0
    epochs: float | None = None
    seed: int = 0
    batch_size: int = 16
    segment_frames: int = 192
    lr: float = 2e-3
    warmup_steps: int = 200
    n_perturb: int = 1
    log_every: int = 25
    valid_every_s: float = 180.0
    checkpoint_every_s: float = 60.0
    max_valid: int = 48


def as_batch(a, device: str | torch.device = "cpu") -> torch.Tensor:
    """``a`` as a tensor with a leading batch axis: int64 for integer input (speaker indices), float32 otherwise."""
    a = np.asarray(a)
    return torch.as_tensor(a if a.dtype.kind in "iu" else a.astype(np.float32), device=device)[None]


class Batches:
    """Random training segments: perturbed content, pitch, speaker input, clean mel.

    The speaker input is another utterance's embedding of the same speaker, or with ``speaker_ids``
    (a model with a speaker table) the utterance's speaker index.
    """

    def __init__(self, items: list[UttFeatures], cfg: AcousticConfig, segment: int, rng: np.random.Generator,
                 speaker_ids: list[int] | None = None):
        self.items, self.segment, self.rng, self.speaker_ids = items, segment, rng, speaker_ids
        self.content = [[network_content(c, cfg.content_norm) for c in it.content] for it in items]
        by_spk: dict[str, list[int]] = {}
        for i, it in enumerate(items):
            by_spk.setdefault(it.speaker, []).append(i)
        self.others = [[j for j in by_spk[it.speaker] if j != i] or [i] for i, it in enumerate(items)]
        self.frames = sum(it.n_frames for it in items)

    def speaker(self, i: int):
        if self.speaker_ids is not None:
            return self.speaker_ids[i]
        return self.items[self.others[i][int(self.rng.integers(len(self.others[i])))]].embedding

    def sample(self, batch_size: int) -> tuple[torch.Tensor, ...]:
        rng = self.rng
        idx = rng.integers(len(self.items), size=batch_size)
        n = min(self.segment, min(self.items[i].n_frames for i in idx))
        cs, ps, es, ms = [], [], [], []
        for i in idx:
            it = self.items[i]
            start = int(rng.integers(it.n_frames - n + 1))
            cs.append(self.content[i][int(rng.integers(len(self.content[i])))][start:start + n])
            ps.append(it.pitch[start:start + n])
            es.append(self.speaker(i))
            ms.append(it.mel[start:start + n])
        return tuple(as_batch(np.stack(a))[0] for a in (cs, ps, es, ms))


def speaker_means(items: list[UttFeatures]) -> list[np.ndarray]:
    """For each utterance, the unit-norm mean embedding of its speaker's *other* utterances (its own if alone)."""
    by_spk: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        by_spk.setdefault(it.speaker, []).append(i)
    out = []
    for i, it in enumerate(items):
        others = [items[j].embedding for j in by_spk[it.speaker] if j != i] or [it.embedding]
        mean = np.mean(others, axis=0)
        out.append((mean / (np.linalg.norm(mean) + 1e-8)).astype(np.float32))
    return out


@torch.no_grad()
def valid_l1(net, items: list[UttFeatures], speakers: list, device: str) -> float:
    """Mean L1 over all frames of the mels ``net`` generates for whole held-out utterances (``speakers``: each
    one's speaker input)."""
    net.eval()
    total = frames = 0.0
    for it, spk in zip(items, speakers):
        content = network_content(it.content[0], net.cfg.content_norm)
        pred = net.generate(as_batch(content, device), as_batch(it.pitch, device), as_batch(spk, device))[0]
        total += float((pred - as_batch(it.mel, device)[0]).abs().sum()) / net.cfg.n_mels
        frames += it.n_frames
    net.train()
    return total / max(frames, 1)


def load_init(init: str) -> AcousticModel:
    """The model to fine-tune from: ``default`` (or another shipped name) or a ``model.pt``."""
    from voxanon.models.acoustic import shipped_path

    return AcousticModel.from_file(shipped_path(init))


def _initial_net(init: str | None, cfg, specs: ModelSpecs) -> tuple:
    """A fresh network of ``cfg``, or (fine-tuning) the network and specs of ``init`` (a shipped name or a model
    file), which must be of ``cfg``'s kind."""
    if not init:
        return build_net(cfg), specs
    model = load_init(init)
    if type(model.config) is not type(cfg):
        raise ConfigError(f"--init {init} is a {model.kind} model; this command trains {build_net(cfg).kind} models")
    return model.net.train(), ModelSpecs(model.content_spec, model.speaker_spec, model.vocoder_spec)


def check_dims(cfg, extractor: Extractor) -> None:
    """ConfigError unless the network's input sizes are those of the extractor's encoders."""
    if (cfg.content_dim, cfg.speaker_dim) != (extractor.encoder.dim, extractor.speaker.dim):
        raise ConfigError(f"the model takes {cfg.content_dim}-d content and {cfg.speaker_dim}-d speaker embeddings, "
                          f"but {extractor.encoder.name} gives {extractor.encoder.dim}-d and "
                          f"{extractor.speaker.name} {extractor.speaker.dim}-d")


def resumed_net(run: Run, kind: str = "conv") -> tuple:
    """The network and specs of the run's checkpoint; RunError unless it holds a network of ``kind``."""
    run.require(("config", "model", "specs"), "an acoustic model")
    saved = run.resumed.get("kind", "conv")
    if saved != kind:
        raise RunError(f"{run.checkpoint} holds a {saved} model, not a {kind} one; give another --out")
    net = build_net(config_from_dict(kind, run.resumed["config"]))
    run.load_into(net, "model")
    return net, ModelSpecs(**run.resumed["specs"])


@dataclasses.dataclass
class AcousticRecipe(Recipe):
    """The network's loss on random segments, gradient clipping at 1, a warm-up then cosine learning rate;
    validation: the L1 of the validation utterances (none without them)."""

    net: torch.nn.Module
    specs: ModelSpecs
    optimizer: torch.optim.Optimizer
    source: Batches
    valid: tuple[list[UttFeatures], list]
    settings: AcousticSettings
    device: str
    extra: dict

    def __post_init__(self) -> None:
        self.clip = ([p for p in self.net.parameters() if p.requires_grad], 1.0)
        self.train_key = f"train_{self.net.loss_name}"

    def batches(self, epoch: int):
        while True:
            yield tuple(t.to(self.device) for t in self.source.sample(self.settings.batch_size))

    def loss(self, batch) -> tuple[torch.Tensor, float]:
        return self.net.loss(*batch), 1

    def learning_rate(self, step: int, progress: float) -> float:
        s = self.settings
        return s.lr * min(1.0, (step + 1) / s.warmup_steps) * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * progress)))

    def terms(self, loss: float) -> dict[str, float]:
        return {self.train_key: loss}

    def validate(self, epoch: int) -> float | None:
        items, speakers = self.valid
        return valid_l1(self.net, items, speakers, self.device) if items else None

    def payload(self) -> dict:
        net = self.net
        return {"model": net.state_dict(), "kind": net.kind, "config": dataclasses.asdict(net.cfg),
                "specs": dataclasses.asdict(self.specs), **self.extra}

    def describe(self, record: dict) -> str:
        return (f"step {record['step']} | train {self.net.loss_name.upper()} {record[self.train_key]:.4f}"
                + (f" | valid L1 {record['valid_l1']:.4f}" if "valid_l1" in record else ""))


def fit(net, specs: ModelSpecs, batches: Batches, valid: tuple[list[UttFeatures], list], run: Run,
        settings: AcousticSettings, quiet: bool = False, extra: dict | None = None) -> tuple[dict, Trainer]:
    """Train ``net`` (:class:`AcousticRecipe`) on the step-driven :class:`Trainer` (budget in minutes or epochs,
    resumable from ``run.resumed``; checkpoints hold ``extra`` too). Returns the loop's part of the summary and the
    trainer."""
    valid_items = valid[0]
    device = run.device
    torch.manual_seed(settings.seed)
    net = net.to(device).train()
    trainable = [p for p in net.parameters() if p.requires_grad]      # a DiT's conv prior stays frozen
    opt = torch.optim.AdamW(trainable, lr=settings.lr, weight_decay=1e-4)
    total_steps = (math.ceil(settings.epochs * batches.frames / (settings.batch_size * settings.segment_frames))
                   if settings.epochs is not None else None)
    trainer = Trainer(Budget(steps=total_steps, minutes=settings.minutes), state={"optimizer": opt},
                      rngs={"batches": batches.rng}, checkpoint=run.out / "checkpoint.pt",
                      log=run.out / "train_log.jsonl", metric="valid_l1", quiet=quiet,
                      schedule=Schedule(settings.log_every, settings.valid_every_s, settings.checkpoint_every_s))
    trainer.restore(run.resumed)
    n_params = sum(p.numel() for p in trainable)
    recipe = AcousticRecipe(net, specs, opt, batches, valid, settings, device, extra or {})
    train_key = recipe.train_key
    items = batches.items
    if not quiet:
        print(f"{'resuming at step ' + str(trainer.step) if run.resumed else 'training'}: {len(items)} utterances "
              f"({batches.frames} frames, {len({it.speaker for it in items})} speakers), "
              f"{len(valid_items)} valid, {n_params / 1e6:.2f} M trained parameters on {device}", file=sys.stderr,
              flush=True)
    records = trainer.run(recipe)
    return {"steps": trainer.step, "train_seconds": round(trainer.seconds, 1), "parameters": n_params,
            f"final_{train_key}": next((r[train_key] for r in reversed(records)), None),
            "final_valid_l1": next((r["valid_l1"] for r in reversed(records) if "valid_l1" in r), None)}, trainer


def fit_codebook(items: list[UttFeatures], size: int, normalize: bool, seed: int) -> np.ndarray:
    """k-means codebook of ``size`` rows over (at most :data:`KMEANS_FRAMES`) network-ready content frames."""
    rng = np.random.default_rng([seed, size])
    frames = np.concatenate([network_content(it.content[0], normalize) for it in items])
    if len(frames) > KMEANS_FRAMES:
        frames = frames[np.sort(rng.choice(len(frames), KMEANS_FRAMES, replace=False))]
    return kmeans(frames, size, rng)


@torch.no_grad()
def prior_spread(net: DiTNet, items: list[UttFeatures], seed: int) -> np.ndarray:
    """Per-bin RMS (standardised units) of the training mels around the frozen prior's prediction, on at most
    :data:`PRIOR_UTTERANCES` utterances (their training content; speaker input: the speaker's other utterances)."""
    rng = np.random.default_rng([seed, 1])
    pick = np.sort(rng.choice(len(items), min(len(items), PRIOR_UTTERANCES), replace=False))
    speakers = speaker_means(items)
    sq, frames = np.zeros(net.cfg.n_mels), 0
    for i in pick:
        it = items[i]
        content = network_content(it.content[0], net.cfg.content_norm)
        mu = net.prior_mean(as_batch(content), as_batch(it.pitch), as_batch(speakers[i]))[0]
        x1 = (as_batch(it.mel)[0] - net.mel_mean) / net.mel_std
        sq += ((x1 - mu) ** 2).sum(0).double().numpy()
        frames += it.n_frames
    return np.sqrt(sq / max(frames, 1))


def prepare_dit(net: DiTNet, items: list[UttFeatures], seed: int) -> None:
    """Fit a fresh DiT backbone's data-dependent parts: the per-bin mel statistics, the content codebook and,
    with a prior, the spread of the data around the prior's prediction."""
    mels = np.concatenate([it.mel for it in items]).astype(np.float32)
    net.set_mel_stats(mels.mean(0), mels.std(0))
    if net.vq is not None:
        net.vq.set_codebook(fit_codebook(items, net.cfg.codebook_size, net.cfg.content_norm, seed))
    if net.prior is not None:
        net.set_prior_std(prior_spread(net, items, seed))


def with_prior(cfg, prior: str, specs: ModelSpecs):
    """``cfg`` (a DiT's) with the frozen conv model ``prior`` (a shipped name or a model file) as its flow's
    data-dependent prior, and that model; ConfigError unless it is a conv model of the same specs and sizes."""
    if not isinstance(cfg, DiTConfig):
        raise ConfigError("--prior belongs to the f3va backbone (voxanon train f3va)")
    model = load_init(prior)
    if model.kind != "conv" or model.n_speakers:
        raise ConfigError(f"--prior {prior}: need a conv acoustic model that takes speaker embeddings "
                          f"(voxanon train acoustic), got a {model.kind} one"
                          + (" with a speaker table" if model.n_speakers else ""))
    theirs = ModelSpecs(model.content_spec, model.speaker_spec, model.vocoder_spec)
    if theirs != specs:
        raise ConfigError(f"--prior {prior} was trained with {theirs}, this backbone with {specs}")
    try:
        return dataclasses.replace(cfg, prior=json.dumps(dataclasses.asdict(model.config))), model
    except ValueError as exc:
        raise ConfigError(f"--prior {prior}: {exc}") from None


def finish(net, specs: ModelSpecs, run: Run, trainer: Trainer, summary: dict) -> TrainResult:
    """Write ``model.pt`` (fp16, ``summary`` as its meta) and ``model.json``; return the run's result."""
    save_atomic(model_file(net.cpu(), specs, meta=summary), run.out / "model.pt")
    write_text(run.out / "model.json", json.dumps(summary, indent=1) + "\n")
    return trainer.result(run.out, run.out / "model.pt", summary)


def data_summary(train_dirs: list[str], valid_dir: str | None, train_items: list[UttFeatures],
                 valid_items: list[UttFeatures], skipped: list[str], frames: int) -> dict:
    """The ``data`` part of a training summary."""
    return {"train": [str(Path(d).resolve()) for d in train_dirs],
            "valid": str(Path(valid_dir).resolve()) if valid_dir else None, "train_utterances": len(train_items),
            "train_frames": frames, "train_speakers": len({it.speaker for it in train_items}),
            "valid_utterances": len(valid_items), "skipped": skipped}


def train_acoustic(data: list[str], out: str, settings: AcousticSettings = AcousticSettings(), *,
                   valid_dir: str | None = None, cfg: AcousticConfig = AcousticConfig(),
                   specs: ModelSpecs = ModelSpecs(), device: str = "auto", init: str | None = None,
                   threads: int = 0, cache_dir: str | None = None, command: str = "", quiet: bool = False,
                   prior: str | None = None) -> TrainResult:
    """Train on the data directories ``data`` (resuming from ``out/checkpoint.pt`` when present) and write
    ``out/model.pt`` + ``model.json`` (the summary, :attr:`TrainResult.summary`).

    ``prior`` (a DiT started fresh): the conv model whose prediction the flow starts from (:func:`with_prior`).
    """
    from voxanon.training.acoustic_features import default_cache_dir

    run = Run.start(out, settings, device, threads)
    if run.resumed is not None:
        net, specs = resumed_net(run, build_net(cfg).kind)
    else:
        net, specs = _initial_net(init, cfg, specs)
    cfg = net.cfg
    extractor = Extractor(specs, cache_dir or default_cache_dir(), settings.seed)
    fresh = run.resumed is None and not init
    if fresh:
        cfg = dataclasses.replace(cfg, content_dim=extractor.encoder.dim, speaker_dim=extractor.speaker.dim)
        prior_model = None
        if prior:
            cfg, prior_model = with_prior(cfg, prior, specs)
        net = build_net(cfg)
        if prior_model is not None:
            net.prior.load_state_dict(prior_model.net.state_dict())
    check_dims(cfg, extractor)
    train_items, skipped, train_secs = extract_dirs(data, extractor, settings.n_perturb, quiet=quiet)
    valid_items, valid_skipped, valid_secs = (extract_dirs([valid_dir], extractor, 0, limit=settings.max_valid,
                                                                           quiet=quiet) if valid_dir
                                              else ([], [], 0.0))
    if not train_items:
        raise DataError(f"no usable training utterance in {', '.join(data)} ({len(skipped)} skipped)")
    if fresh and isinstance(net, DiTNet):
        prepare_dit(net, train_items, settings.seed)
    batches = Batches(train_items, cfg, settings.segment_frames, np.random.default_rng(settings.seed))
    loop, trainer = fit(net, specs, batches, (valid_items, speaker_means(valid_items)), run, settings, quiet)
    return finish(net, specs, run, trainer, {
        "config": dataclasses.asdict(cfg), "specs": dataclasses.asdict(specs), "settings": dataclasses.asdict(settings),
        "command": command, "seed": settings.seed, "device": run.device, "init": init, "prior": prior,
        "data": data_summary(data, valid_dir, train_items, valid_items, skipped + valid_skipped, batches.frames),
        "feature_seconds": round(train_secs + valid_secs, 1), **loop})
