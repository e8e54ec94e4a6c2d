"""``voxanon train ltf``: train the "Listen to the Features" generator on any data directories.

Loss (no reconstruction, no discriminator): random segments of ``segment``
samples go through the generator from the frozen encoder's features of the
whole utterance; the same frozen encoder encodes the generated segment and the
original one (each in a window of its own, :meth:`ContentEncoder.encode_segments`)
and ``L = lambda_c * L_c + lambda_s * L_s + lambda_vq * L_vq`` with L_c of
:func:`~voxanon.models.ltf.loss.content_loss`, L_s the cross-entropy of the
speaker predictor behind the gradient-reversal layer (only when
``lambda_s > 0``) and L_vq the FVQ's codebook + commitment loss. AdamW with
betas (0.8, 0.99); the learning rate decays by ``lr_decay`` once per epoch (one
epoch = as many segments as the training audio holds, at least one step), as
HiFi-GAN's ExponentialLR. One utterance of up to ``max_valid`` speakers is held
out; its middle segment gives the validation content loss.

With ``output="mel"`` (the CPU design, docs/ltf.md) no waveform enters the loop:
the generator emits HiFi-GAN log-mels at 100 frames/s and both sides reach the
frozen Whisper encoder through :class:`~voxanon.models.ltf.melmap.MelMap`
(fitted once on the training audio, kept in the checkpoint): the original as
its own HiFi-GAN log-mels, mapped the same way, so the loss is 0 exactly at the
real mels that the frozen universal HiFi-GAN vocodes at inference. The
projection's bias starts at the training audio's mean log-mel.

Checkpoints, resumption, the JSONL log and the time budget are those of
:mod:`voxanon.training.trainer` (:class:`Run`, :class:`TrainLog`; ``OUT/checkpoint.pt`` about every
minute; rerunning the same command continues at the same step).
``OUT/model.pt`` (fp16, generator only) and ``OUT/model.json`` are written at the end.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from voxanon.atomic import write_text
from voxanon.audio.io import load_audio, resample
from voxanon.errors import ConfigError, DataError, RunError, VoxanonError
from voxanon.models.checkpoint import save_atomic
from voxanon.models.content import load_content_encoder
from voxanon.models.ltf.fvq import usage
from voxanon.models.ltf.inference import model_file
from voxanon.models.ltf.loss import content_loss
from voxanon.models.ltf.melmap import MelMap, MelPair
from voxanon.models.ltf.model import LtfConfig, LtfNet, n_params
from voxanon.models.ltf.speaker import SpeakerPredictor
from voxanon.progress import Progress
from voxanon.training.acoustic_features import list_utterances
from voxanon.training.asrbn import hold_out
from voxanon.training.trainer import Budget, Recipe, Run, Schedule, Trainer, TrainResult

SAMPLE_RATE = 16000
INITS = ("universal", "scratch")
#: training utterances the mel map is fitted on
MAP_FIT_UTTERANCES = 300


@dataclasses.dataclass(frozen=True)
class LtfSettings:
    """Optimisation settings (the network's sizes are an :class:`LtfConfig`); defaults are the paper's where it
    gives them (betas, decay, segment, lambda ratio 1:0), else HiFi-GAN's (lr 2e-4)."""

    minutes: float | None = 40.0
    epochs: float | None = None
    seed: int = 0
    batch_size: int = 8
    segment: int = 16640
    lr: float = 2e-4
    lr_decay: float = 0.999
    lambda_c: float = 1.0
    lambda_s: float = 0.0
    lambda_vq: float = 1.0
    grl: bool = True
    init: str = "universal"
    log_every: int = 10
    valid_every_s: float = 300.0
    checkpoint_every_s: float = 60.0
    max_valid: int = 8


@dataclasses.dataclass
class Utterance:
    """A training utterance: 16 kHz audio (padded to whole content frames), its content features and, for
    mel-domain training, its ``(80, frames)`` HiFi-GAN log-mels at 100 frames/s."""

    utt: str
    speaker: str
    wav: np.ndarray
    content: np.ndarray
    mel: np.ndarray | None = None


class Judge:
    """What the frozen encoder hears of the original and of the generator's output, in the training domain:
    waveform segments (the paper's loop) or HiFi-GAN log-mels through a :class:`MelMap`."""

    def __init__(self, encoder, spf: int, mapping: MelMap | None = None) -> None:
        self.encoder, self.spf, self.mapping = encoder, spf, mapping

    def segment(self, it: Utterance, start: int, frames: int) -> np.ndarray:
        """The original's segment of ``frames`` content frames from ``start``: audio or log-mels."""
        if self.mapping is None:
            return it.wav[start * self.spf:(start + frames) * self.spf]
        per = self.spf // 160
        return it.mel[:, start * per:(start + frames) * per]

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The encoder's features of a batch of segments (or of generated output)."""
        if self.mapping is None:
            return self.encoder.encode_segments(x)
        return self.encoder.encode_logmels(self.mapping(x))


def prepare(todo: list[tuple[str, str, str]], encoder, spf: int, min_samples: int,
            quiet: bool) -> tuple[list[Utterance], list[str]]:
    """Load, resample and encode ``(utt, speaker, entry)`` rows; a bad utterance is skipped with its reason."""
    out, skipped = [], []
    progress = Progress(len(todo), "content features", quiet=quiet)
    for utt, speaker, entry in todo:
        failed = False
        try:
            wav, sr = load_audio(entry, allow_silent=False)
            wav = resample(wav, sr, SAMPLE_RATE)
            n = max(min_samples, math.ceil(len(wav) / spf) * spf)
            wav = np.pad(wav, (0, n - len(wav)))
            content = encoder.encode(wav, SAMPLE_RATE)
            if len(content) != n // spf:
                raise RunError(f"{encoder.name} gave {len(content)} frames for {n // spf}")
            out.append(Utterance(utt, speaker, wav, content))
        except (VoxanonError, ValueError, OSError) as exc:
            skipped.append(f"{utt} ({entry}): {exc}")
            print(f"skipping utterance {utt} ({entry}): {exc}", file=sys.stderr, flush=True)
            failed = True
        progress.update(failed=failed)
    progress.close()
    return out, skipped


def sample(items: list[Utterance], batch: int, frames: int, judge: Judge, rng: np.random.Generator,
           speakers: dict[str, int]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random aligned segments: content ``(B, frames, D)``, the original's (:meth:`Judge.segment`), speaker
    index ``(B,)``."""
    cs, ws, ss = [], [], []
    for i in rng.integers(len(items), size=batch):
        it = items[i]
        start = int(rng.integers(len(it.content) - frames + 1))
        cs.append(it.content[start:start + frames])
        ws.append(judge.segment(it, start, frames))
        ss.append(speakers[it.speaker])
    return torch.from_numpy(np.stack(cs)), torch.from_numpy(np.stack(ws)), torch.tensor(ss)


def middle_segments(items: list[Utterance], frames: int, judge: Judge) -> tuple[torch.Tensor, torch.Tensor]:
    """The middle segment of each utterance: content and the original's, as :func:`sample`."""
    starts = [(len(it.content) - frames) // 2 for it in items]
    return (torch.from_numpy(np.stack([it.content[s:s + frames] for it, s in zip(items, starts)])),
            torch.from_numpy(np.stack([judge.segment(it, s, frames) for it, s in zip(items, starts)])))


@torch.no_grad()
def valid_loss(net: LtfNet, judge: Judge, segments: tuple[torch.Tensor, torch.Tensor], device: str,
               batch: int) -> float:
    """Mean content loss of the generator's output on fixed held-out segments."""
    net.eval()
    content, original = segments
    total = 0.0
    for i in range(0, len(content), batch):
        out = net(content[i:i + batch].to(device))[0]
        a = original[i:i + batch].to(device)
        total += float(content_loss(judge.features(a), judge.features(out))) * len(a)
    net.train()
    return total / max(len(content), 1)


def add_mels(items: list[Utterance]) -> None:
    """Fill each utterance's HiFi-GAN log-mels at 100 frames/s (mel-domain training)."""
    pair = MelPair()
    for it in items:
        it.mel = pair(it.wav)[0].numpy()


def fit_map(items: list[Utterance]) -> MelMap:
    """The :class:`MelMap` fitted on up to :data:`MAP_FIT_UTTERANCES` training utterances (spread evenly)."""
    pair = MelPair()
    step = max(1, len(items) // MAP_FIT_UTTERANCES)
    return MelMap.fit([pair(it.wav) for it in items[::step][:MAP_FIT_UTTERANCES]])


def build(cfg: LtfConfig, settings: LtfSettings, n_speakers: int,
          items: list[Utterance]) -> tuple[LtfNet, SpeakerPredictor | None]:
    """A fresh generator (vocoder from the universal HiFi-GAN or random; in the mel domain, the projection's bias
    at the mean log-mel of ``items``) and, when ``lambda_s > 0``, a predictor."""
    from voxanon.models.vocoder.hifigan import universal_checkpoint

    if settings.init not in INITS:
        raise ConfigError(f"--init {settings.init!r}: use {' or '.join(INITS)}")
    if settings.init == "universal" and cfg.vocoder != "v1-16k":
        raise ConfigError(f"--init universal needs the V1 generator (--vocoder v1-16k), not {cfg.vocoder}")
    net = LtfNet(cfg)
    if cfg.output == "mel":
        with torch.no_grad():
            net.proj.bias.copy_(torch.from_numpy(np.concatenate([it.mel for it in items], 1).mean(1)))
    elif settings.init == "universal":
        net.init_vocoder(universal_checkpoint())
    spk = SpeakerPredictor(cfg.content_dim, n_speakers, grl=settings.grl) if settings.lambda_s > 0 else None
    return net, spk


def train_ltf(data: list[str], out: str, settings: LtfSettings = LtfSettings(), *,
              cfg: LtfConfig = LtfConfig(), device: str = "auto", threads: int = 0, command: str = "",
              quiet: bool = False) -> TrainResult:
    """Train on the data directories ``data`` (resuming from ``out/checkpoint.pt`` when present); write
    ``out/model.pt`` + ``model.json`` (the summary)."""
    run = Run.start(out, settings, device, threads)
    if run.resumed is not None:            # the checkpoint's settings; only the budget comes from the command
        run.require(("model", "speaker", "config", "settings", "speakers", "melmap"), "an LTF model")
        cfg = LtfConfig.from_dict(run.resumed["config"])
        settings = dataclasses.replace(LtfSettings(**run.resumed["settings"]), minutes=settings.minutes,
                                       epochs=settings.epochs)
    if settings.segment <= 0 or settings.batch_size <= 0:
        raise ConfigError("--segment and --batch-size must be positive")
    encoder = load_content_encoder(cfg.content)
    spf = round(encoder.sample_rate / encoder.frame_rate)
    if encoder.sample_rate != SAMPLE_RATE or spf % 160:
        raise ConfigError(f"{encoder.name}: frames of {spf} samples at {encoder.sample_rate} Hz; LTF needs 16 kHz "
                          "and a multiple of the vocoder's 160-sample hop")
    fitted = dataclasses.replace(cfg, content_dim=encoder.dim, upsample=spf // 160)
    if run.resumed is not None and fitted != cfg:
        raise RunError(f"{run.out}/checkpoint.pt does not fit encoder {encoder.name}")
    cfg = fitted
    if settings.segment % spf:
        raise ConfigError(f"--segment {settings.segment}: must be a multiple of {spf} samples (one content frame)")
    if cfg.output == "mel" and not hasattr(encoder, "encode_logmels"):
        raise ConfigError(f"--output mel trains through Whisper's log-mels; {encoder.name} is not a Whisper encoder "
                          "(use --content whisper-tiny:3, or --output waveform)")
    frames = settings.segment // spf
    train_todo, valid_todo = hold_out(list_utterances(data), settings.max_valid)
    start = time.monotonic()
    train_items, skipped = prepare(train_todo, encoder, spf, settings.segment, quiet)
    valid_items, valid_skipped = prepare(valid_todo, encoder, spf, settings.segment, quiet)
    if not train_items:
        raise DataError(f"no usable training utterance in {', '.join(data)} ({len(skipped)} skipped)")
    mapping = None
    if cfg.output == "mel":
        add_mels(train_items + valid_items)
        mapping = (MelMap.from_state(run.resumed["melmap"]) if run.resumed is not None else fit_map(train_items))
    feature_seconds = time.monotonic() - start
    speakers = sorted({it.speaker for it in train_items})
    index = {s: i for i, s in enumerate(speakers)}
    if run.resumed is not None:
        if speakers != run.resumed["speakers"]:
            raise RunError(f"{run.out}/checkpoint.pt was trained on other speakers than {', '.join(data)}; "
                           "give the same data directories or another --out")
        net, spk = LtfNet(cfg), (SpeakerPredictor(cfg.content_dim, len(speakers), grl=settings.grl)
                                 if settings.lambda_s > 0 else None)
        run.load_into(net, "model")
        if spk is not None:
            run.load_into(spk, "speaker")
    else:
        net, spk = build(cfg, settings, len(speakers), train_items)
    judge = Judge(encoder, spf, mapping)
    loop, trainer = fit(net, spk, judge, train_items, valid_items, index, frames, run, settings, quiet)
    summary = {"config": dataclasses.asdict(cfg), "settings": dataclasses.asdict(settings), "command": command,
               "melmap": mapping.state() if mapping is not None else None,
               "seed": settings.seed, "device": run.device, "speakers": speakers,
               "data": {"train": [str(Path(d).resolve()) for d in data],
                        "train_utterances": len(train_items), "train_speakers": len(speakers),
                        "train_seconds_audio": round(sum(len(it.wav) for it in train_items) / SAMPLE_RATE, 1),
                        "valid": "middle segment of one held-out utterance of each of valid_utterances speakers",
                        "valid_utterances": len(valid_items), "skipped": skipped + valid_skipped},
               "feature_seconds": round(feature_seconds, 1), **loop}
    save_atomic(model_file(net.cpu(), summary), run.out / "model.pt")
    write_text(run.out / "model.json", json.dumps(summary, indent=1) + "\n")
    return trainer.result(run.out, run.out / "model.pt", summary)


@dataclasses.dataclass
class LtfRecipe(Recipe):
    """Random aligned segments, the content loss through the frozen encoder, the FVQ loss and (with a predictor)
    the adversarial speaker loss, gradient clipping at 10; the learning rate decays once per epoch
    (``per_epoch`` steps); validation: the content loss of ``valid``'s segments. A log record adds the codebook
    usage since the last record."""

    net: LtfNet
    spk: SpeakerPredictor | None
    judge: Judge
    optimizer: torch.optim.Optimizer
    params: list
    items: list[Utterance]
    index: dict[str, int]
    frames: int
    rng: np.random.Generator
    settings: LtfSettings
    device: str
    per_epoch: int
    valid: tuple[torch.Tensor, torch.Tensor] | None

    def __post_init__(self) -> None:
        self.clip = (self.params, 10.0)
        self.codes_seen: list[torch.Tensor] = []
        self.last: dict[str, torch.Tensor] = {}

    def batches(self, epoch: int):
        while True:
            yield tuple(t.to(self.device) for t in sample(self.items, self.settings.batch_size, self.frames,
                                                          self.judge, self.rng, self.index))

    def loss(self, batch) -> tuple[torch.Tensor, float]:
        settings, judge, spk = self.settings, self.judge, self.spk
        content, original, who = batch
        out, codes, vq_loss, q = self.net(content)
        with torch.no_grad():
            target = judge.features(original)
        l_c = content_loss(target, judge.features(out))
        self.last = {"l_c": l_c, "l_vq": vq_loss}
        loss = settings.lambda_c * l_c + settings.lambda_vq * vq_loss
        if spk is not None:
            self.last["l_s"] = F.cross_entropy(spk(q), who)
            loss = loss + settings.lambda_s * self.last["l_s"]
        self.codes_seen.append(codes.detach().cpu())
        return loss, 1

    def learning_rate(self, step: int, progress: float) -> float:
        return self.settings.lr * self.settings.lr_decay ** (step // self.per_epoch)

    def terms(self, loss: float) -> dict[str, float]:
        return {"loss": loss, **{k: v.item() for k, v in self.last.items()}}

    def record_extra(self) -> dict:
        """Codebook usage and perplexity of the codes drawn since the last call."""
        used = usage(torch.cat([c.flatten() for c in self.codes_seen]), self.net.cfg.codebook_size)
        self.codes_seen.clear()
        return used

    def validate(self, epoch: int) -> float | None:
        if self.valid is None:
            return None
        return valid_loss(self.net, self.judge, self.valid, self.device, self.settings.batch_size)

    def payload(self) -> dict:
        spk, mapping = self.spk, self.judge.mapping
        return {"model": self.net.state_dict(), "speaker": spk.state_dict() if spk is not None else None,
                "config": dataclasses.asdict(self.net.cfg), "settings": dataclasses.asdict(self.settings),
                "speakers": sorted(self.index, key=self.index.get),
                "melmap": mapping.state() if mapping is not None else None}

    def describe(self, record: dict) -> str:
        return (f"step {record['step']} | L {record['loss']:.4f} | L_c {record['l_c']:.4f}"
                + (f" | L_s {record['l_s']:.3f}" if "l_s" in record else "")
                + f" | vq {record['l_vq']:.4f} | perplexity {record['perplexity']:.0f}"
                + (f" | valid L_c {record['valid_l_c']:.4f}" if "valid_l_c" in record else ""))


def fit(net: LtfNet, spk: SpeakerPredictor | None, judge: Judge, items: list[Utterance],
        valid_items: list[Utterance], index: dict[str, int], frames: int, run: Run, settings: LtfSettings,
        quiet: bool) -> tuple[dict, Trainer]:
    """Train ``net`` (:class:`LtfRecipe`) on the step-driven :class:`Trainer` (resumable from ``run.resumed``);
    returns the loop's part of the summary and the trainer."""
    device, encoder = run.device, judge.encoder
    rng = np.random.default_rng(settings.seed)
    torch.manual_seed(settings.seed)
    encoder.to(device)
    if judge.mapping is not None:
        judge.mapping.to(device)
    for p in encoder.model.parameters():
        p.requires_grad_(False)
    net = net.to(device).train()
    params = list(net.parameters()) + (list(spk.to(device).train().parameters()) if spk is not None else [])
    opt = torch.optim.AdamW(params, lr=settings.lr, betas=(0.8, 0.99))
    audio = sum(len(it.wav) for it in items)
    per_epoch = max(1, audio // (settings.batch_size * settings.segment))
    trainer = Trainer(Budget(steps=math.ceil(settings.epochs * per_epoch) if settings.epochs is not None else None,
                             minutes=settings.minutes),
                      state={"optimizer": opt}, rngs={"batches": rng}, checkpoint=run.out / "checkpoint.pt",
                      log=run.out / "train_log.jsonl", metric="valid_l_c", quiet=quiet,
                      schedule=Schedule(settings.log_every, settings.valid_every_s, settings.checkpoint_every_s))
    trainer.restore(run.resumed)
    valid = middle_segments(valid_items, frames, judge) if valid_items else None
    if not quiet:
        print(f"{'resuming at step ' + str(trainer.step) if run.resumed else 'training'}: {len(items)} utterances "
              f"({audio / SAMPLE_RATE:.0f} s, {len(index)} speakers, {per_epoch} steps per epoch), "
              f"{len(valid_items)} valid, generator {n_params(net) / 1e6:.2f} M parameters"
              + (f", speaker predictor {n_params(spk) / 1e6:.2f} M" if spk is not None else "")
              + f", output {net.cfg.output} on {device}",
              file=sys.stderr, flush=True)
    records = trainer.run(LtfRecipe(net, spk, judge, opt, params, items, index, frames, rng, settings, device,
                                    per_epoch, valid))
    last = next((r for r in reversed(records)), {})
    return {"steps": trainer.step, "steps_per_epoch": per_epoch, "train_seconds": round(trainer.seconds, 1),
            "parameters": n_params(net), "speaker_parameters": n_params(spk) if spk is not None else 0,
            "final_l_c": last.get("l_c"), "final_perplexity": last.get("perplexity"),
            "final_valid_l_c": next((r["valid_l_c"] for r in reversed(records) if "valid_l_c" in r), None)}, trainer
