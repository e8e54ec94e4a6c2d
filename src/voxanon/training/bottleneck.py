"""``voxanon train bottleneck``: the content codes of VPC 2024 B5/B6, learnt inside a recogniser.

The network is :class:`~voxanon.models.asr.bottleneck.BottleneckCtc`. Its
inputs are the acoustic model's own training features
(:mod:`voxanon.training.acoustic_features`, the same cache, so the decoder
trained next with ``voxanon train asrbn --bottleneck`` extracts nothing again):
content of ``n_perturb`` voice-perturbed copies of each utterance (and, with
``clean_copy``, its clean content as one more training utterance), normalised
per utterance, at the vocoder's frame rate, with the utterance's transcript:
its characters (``targets="chars"``, CTC) or, aligned by pocketsphinx
(:mod:`voxanon.training.phone_targets`), each frame's phone (``"phones"``,
cross-entropy per frame; the error rate is then the share of frames whose phone
is wrong, ``val_fer``).

The first ``warmup_epochs`` train the projection and the head without
quantising (a recogniser on the projected frames); then the codebook starts as
k-means of the training frames through that projection, so its cells are
already shaped for recognition, and every later epoch trains CTC + the VQ
losses. Epochs draw shuffled batches and follow a cosine learning
rate over ``decay_epochs`` (the epoch's RNG is seeded from ``(seed, epoch)``
and the schedule does not depend on the budget, so a resumed or extended run
equals a straight one) and
re-seeds every codeword no frame chose at a random frame. After every epoch
the clean content of held-out utterances (``valid_dir``, or one utterance of
up to ``max_valid`` training speakers) is decoded greedily: from its codes
after the warm-up, when the character (or frame phone) error rate selects the
epoch written to ``model.pt`` (``val_cer``, ``val_fer``), unquantised during it
(``warmup_cer``, ``warmup_fer``, never selected); the log (``train_log.jsonl``)
holds the losses, these error rates and the codes' perplexity.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from voxanon.atomic import write_text
from voxanon.data.kaldi import read_data_dir
from voxanon.errors import DataError
from voxanon.models.acoustic.features import normalize_content
from voxanon.models.acoustic.inference import ModelSpecs
from voxanon.models.acoustic.vq import kmeans
from voxanon.models.asr.alignment import Segment, frame_labels
from voxanon.models.asr.bottleneck import BottleneckConfig, BottleneckCtc, model_file
from voxanon.models.asr.ctc import BLANK, frames_needed, greedy_decode, pad, text_to_ids
from voxanon.models.checkpoint import save_atomic
from voxanon.training.acoustic_features import (
    Extractor,
    UttFeatures,
    default_cache_dir,
    extract,
    list_utterances,
)
from voxanon.training.trainer import Budget, Recipe, Trainer, TrainResult, epoch_order, resolve_device

#: frames drawn for the initial k-means codebook
KMEANS_FRAMES = 20000
#: the loss and the validation error rate by targets
LOSS = {"chars": "ctc", "phones": "ce"}
ERROR = {"chars": "cer", "phones": "fer"}
#: padding of frame labels (ignored by the loss)
NO_LABEL = -100


@dataclass(frozen=True)
class BottleneckSettings:
    """Optimisation settings (the network's sizes are a :class:`BottleneckConfig`)."""

    epochs: int | None = 30
    minutes: float | None = None
    seed: int = 0
    batch_size: int = 8
    lr: float = 2e-3
    warmup_epochs: int = 2
    #: the cosine learning rate falls from ``lr`` to 0.1 x ``lr`` over this many epochs and stays there, whatever
    #: the budget: a run that is resumed or extended follows the one schedule
    decay_epochs: int = 30
    vq_weight: float = 1.0
    n_perturb: int = 1
    #: also train on each utterance's clean content (twice the frames with one perturbed copy)
    clean_copy: bool = False
    max_valid: int = 48


@dataclass
class Utterances:
    """Network-ready content (``(T, D)`` float32) and the targets of the utterances the head can learn from: CTC
    symbol ids, or a phone index per content frame."""

    content: list[np.ndarray]
    targets: list[list[int]] | list[np.ndarray]
    texts: list[str]

    @classmethod
    def of(cls, items: list[UttFeatures], texts: dict[str, str], subsample: int = 1) -> tuple[Utterances, list[str]]:
        """From extracted features (their first content copy) and transcripts by utterance id; also the ids left
        out (no transcript, no symbol, or fewer output frames, one per ``subsample``, than CTC needs)."""
        out, left_out = cls([], [], []), []
        for it in items:
            ids = text_to_ids(texts.get(it.utt, ""))
            if not ids or (len(it.content[0]) - 1) // subsample + 1 < frames_needed(ids):
                left_out.append(it.utt)
                continue
            out.content.append(normalize_content(it.content[0]))
            out.targets.append(ids)
            out.texts.append(texts[it.utt])
        return out, left_out

    @classmethod
    def aligned(cls, items: list[UttFeatures], alignments: dict[str, list[Segment]], texts: dict[str, str],
                frame_rate: float) -> Utterances:
        """From extracted features (their first content copy) and the phone segments of those aligned (the others
        are left out), labelled per content frame at ``frame_rate``."""
        out = cls([], [], [])
        for it in items:
            if it.utt in alignments:
                out.content.append(normalize_content(it.content[0]))
                out.targets.append(frame_labels(alignments[it.utt], len(it.content[0]), frame_rate))
                out.texts.append(texts[it.utt])
        return out

    def __len__(self) -> int:
        return len(self.content)


def read_todo(dirs: list[str]) -> tuple[list[tuple[str, str, str]], dict[str, str]]:
    """``(utt, speaker, entry)`` rows of the directories' utterances and their transcripts (DataError when a
    directory has no ``text`` or an utterance id repeats across directories)."""
    texts = {}
    for d in dirs:
        data = read_data_dir(d)
        if not data.text:
            raise DataError(f"{d}: no transcripts (a 'text' file): the bottleneck is trained to recognise them")
        for utt in data.wav_scp:
            if utt in texts:
                raise DataError(f"utterance id {utt!r} is in more than one data directory ({d})")
            texts[utt] = data.text.get(utt, "")
    return list_utterances(dirs), texts


@torch.no_grad()
def validate(net: BottleneckCtc, valid: Utterances, device: str, quantise: bool = True) -> dict:
    """Error rates (%) of the held-out utterances recognised from their codes (``quantise``; with the codes'
    perplexity) or from the unquantised projection (keys ``warmup_...``): greedy CER and WER for characters,
    the share of frames whose most likely phone is wrong (FER) for phones."""
    from voxanon.metrics.wer import wer

    net.eval()
    hyps, counts, wrong = [], torch.zeros(net.cfg.codebook_size), 0
    for content, target in zip(valid.content, valid.targets):
        log_probs, _, codes, _ = net(*pad([content], device), quantise=quantise)
        if net.cfg.targets == "phones":
            wrong += int((log_probs[0].argmax(-1).cpu() != torch.as_tensor(target)).sum())
        else:
            hyps.append(greedy_decode(log_probs[0].cpu()))
        if quantise:
            counts += torch.bincount(codes.flatten().cpu(), minlength=net.cfg.codebook_size)
    prefix = "val" if quantise else "warmup"
    if net.cfg.targets == "phones":
        scores = {f"{prefix}_fer": round(100 * wrong / sum(len(t) for t in valid.targets), 2)}
    else:
        scores = {f"{prefix}_cer": round(wer(valid.texts, hyps, unit="char").wer, 2),
                  f"{prefix}_wer": round(wer(valid.texts, hyps).wer, 2)}
    if not quantise:
        return scores
    p = counts / counts.sum()
    return scores | {"perplexity": round(float(torch.exp(-(p[p > 0] * p[p > 0].log()).sum())), 1)}


@dataclass
class BottleneckRecipe(Recipe):
    """Shuffled batches, CTC (+ ``vq_weight`` x VQ loss after the warm-up), Adam at a cosine learning rate, gradient
    clipping at 5; after each epoch the unused codewords are re-seeded at random frames of the epoch and the
    validation set scored. The first epoch after the warm-up starts the codebook (:func:`initial_codebook`)."""

    net: BottleneckCtc
    optimizer: torch.optim.Optimizer
    train: Utterances
    valid: Utterances
    settings: BottleneckSettings
    device: str

    def __post_init__(self) -> None:
        self.clip = (list(self.net.parameters()), 5.0)
        self.metric = f"val_{ERROR[self.net.cfg.targets]}"
        self.scores: dict[int, dict] = {}

    def lr(self, epoch: int) -> float:
        """The cosine learning rate of epoch ``epoch`` (1-based)."""
        s = self.settings
        return s.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(epoch - 1, s.decay_epochs) / s.decay_epochs)))

    def steps(self, epoch: int) -> int:
        return math.ceil(len(self.train) / self.settings.batch_size)

    def batches(self, epoch: int):
        s, net = self.settings, self.net
        self.gen, order = epoch_order(s.seed, epoch, len(self.train))
        for group in self.optimizer.param_groups:
            group["lr"] = self.lr(epoch)
        self.quantise = epoch > s.warmup_epochs
        if epoch == s.warmup_epochs + 1:
            with torch.no_grad():
                net.codebook.copy_(torch.from_numpy(initial_codebook(net, self.train, s.seed)).to(self.device))
        net.train()
        self.used = torch.zeros(net.cfg.codebook_size, dtype=torch.bool)
        self.totals = {LOSS[net.cfg.targets]: 0.0, "vq": 0.0}
        for b in range(self.steps(epoch)):
            yield order[b * s.batch_size:(b + 1) * s.batch_size]

    def loss(self, batch) -> tuple[torch.Tensor, float]:
        """The head's loss plus the weighted VQ loss (each also summed for the epoch's record)."""
        padded, lengths = pad([self.train.content[i] for i in batch], self.device)
        log_probs, out_len, codes, vq_loss = self.net(padded, lengths, quantise=self.quantise)
        head_loss = self.head_loss(log_probs, out_len, [self.train.targets[i] for i in batch])
        self.used[codes[codes >= 0].unique().cpu()] = True
        self.totals[LOSS[self.net.cfg.targets]] += head_loss.item() * len(batch)
        self.totals["vq"] += vq_loss.item() * len(batch)
        return head_loss + self.settings.vq_weight * vq_loss, len(batch)

    def end_epoch(self, epoch: int, loss: float) -> dict:
        """Re-seed the unused codewords and score the validation set; the record's values."""
        reseeded = self.reseed(~self.used, self.gen) if self.quantise else 0
        self.scores[epoch] = validate(self.net, self.valid, self.device, quantise=self.quantise)
        return ({k: round(v / len(self.train), 4) for k, v in self.totals.items()}
                | {"lr": round(self.lr(epoch), 6), "reseeded": reseeded}
                | {k: v for k, v in self.scores[epoch].items() if k != self.metric})

    def validate(self, epoch: int) -> float | None:
        """The validation error rate from the codes (None in the warm-up)."""
        return self.scores[epoch].get(self.metric)

    def head_loss(self, log_probs: torch.Tensor, out_len: torch.Tensor, targets: list) -> torch.Tensor:
        """CTC of the symbol ids, or the mean cross-entropy of the frames' phones (padding ignored)."""
        if self.net.cfg.targets == "phones":
            labels = torch.full(log_probs.shape[:2], NO_LABEL, dtype=torch.long)
            for i, t in enumerate(targets):
                labels[i, :len(t)] = torch.as_tensor(t)
            return nn.functional.nll_loss(log_probs.transpose(1, 2), labels.to(self.device), ignore_index=NO_LABEL)
        ctc = nn.CTCLoss(blank=BLANK, zero_infinity=True)
        return ctc(log_probs.transpose(0, 1), torch.cat([torch.tensor(t) for t in targets]).to(self.device), out_len,
                   torch.tensor([len(t) for t in targets], device=self.device))

    @torch.no_grad()
    def reseed(self, unused: torch.Tensor, gen: torch.Generator) -> int:
        """Move each unused codeword onto the projection of a random training frame; how many moved."""
        n = int(unused.sum())
        if n:
            utts = torch.randint(len(self.train), (n,), generator=gen).tolist()
            frames = [self.train.content[u][int(torch.randint(len(self.train.content[u]), (1,), generator=gen))]
                      for u in utts]
            z = self.net.project(torch.from_numpy(np.stack(frames)).to(self.device))
            self.net.codebook[unused.to(self.device)] = z
        return n


@torch.no_grad()
def initial_codebook(net: BottleneckCtc, train: Utterances, seed: int) -> np.ndarray:
    """k-means codewords of (at most :data:`KMEANS_FRAMES`) training frames through the current projection."""
    rng = np.random.default_rng([seed, net.cfg.codebook_size])
    frames = np.concatenate(train.content)
    if len(frames) > KMEANS_FRAMES:
        frames = frames[np.sort(rng.choice(len(frames), KMEANS_FRAMES, replace=False))]
    weight, bias = net.project.weight.detach().cpu(), net.project.bias.detach().cpu()
    return kmeans((torch.from_numpy(frames) @ weight.T + bias).numpy(), net.cfg.codebook_size, rng)


def train_bottleneck(data: list[str], out: str, settings: BottleneckSettings = BottleneckSettings(), *,
                     content: str = "whisper-tiny:3", valid_dir: str | None = None,
                     cfg: BottleneckConfig | None = None, device: str = "auto", threads: int = 0,
                     cache_dir: str | None = None, jobs: int = 0, command: str = "", quiet: bool = False
                     ) -> TrainResult:
    """Train on the data directories ``data`` (resuming from ``out/checkpoint.pt`` when present); write
    ``out/model.pt`` (the best epoch by validation CER, or FER for phones; none while every epoch was warm-up) and
    ``model.json`` (the summary).

    ``cfg`` gives the sizes and targets (its ``in_dim`` is taken from the content encoder); ``valid_dir`` the
    held-out utterances (default: one of each of up to ``settings.max_valid`` training speakers). Phone targets
    are aligned by ``jobs`` processes (0: all cores) and kept in ``out/alignments.json``.
    """
    from voxanon.training.asrbn import hold_out

    device = resolve_device(device)
    if threads > 0:
        torch.set_num_threads(threads)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    extractor = Extractor(ModelSpecs(content=content), cache_dir or default_cache_dir(), settings.seed)
    todo, texts = read_todo(data)
    if valid_dir:
        train_todo, (valid_todo, valid_texts) = todo, read_todo([valid_dir])
        texts = {**texts, **valid_texts}
    else:
        train_todo, valid_todo = hold_out(todo, settings.max_valid)
    train_items, skipped, train_secs = extract(train_todo, extractor, settings.n_perturb, quiet=quiet)
    if settings.clean_copy and settings.n_perturb:
        clean_items, _, clean_secs = extract(train_todo, extractor, 0, quiet=quiet)
        train_items, train_secs = train_items + clean_items, train_secs + clean_secs
    valid_items, valid_skipped, valid_secs = extract(valid_todo, extractor, 0, quiet=quiet)
    cfg = dataclasses.replace(cfg or BottleneckConfig(extractor.encoder.dim), in_dim=extractor.encoder.dim)
    if cfg.targets == "phones":
        from voxanon.training.phone_targets import align_utterances

        alignments, not_aligned = align_utterances(train_todo + valid_todo, texts, out / "alignments.json",
                                                   jobs=jobs, quiet=quiet)
        train, valid = (Utterances.aligned(items, alignments, texts, extractor.frame_rate)
                        for items in (train_items, valid_items))
        train_out, valid_out = not_aligned, []
    else:
        train, train_out = Utterances.of(train_items, texts, cfg.subsample)
        valid, valid_out = Utterances.of(valid_items, texts, cfg.subsample)
        train_out, valid_out = ([f"{u}: no transcript CTC can learn" for u in ids] for ids in (train_out, valid_out))
    if not len(train) or not len(valid):
        raise DataError(f"no usable {'training' if not len(train) else 'validation'} utterance with a transcript "
                        f"({len(skipped) + len(train_out)} training, {len(valid_skipped) + len(valid_out)} "
                        "validation utterances left out)")
    torch.manual_seed(settings.seed)
    net = BottleneckCtc(cfg).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=settings.lr)
    loss, metric = LOSS[cfg.targets], f"val_{ERROR[cfg.targets]}"
    identity = {"config": dataclasses.asdict(cfg), "settings": dataclasses.asdict(settings) | {"epochs": None,
                "minutes": None}, "content": extractor.encoder.name, "train": len(train), "valid": len(valid)}
    trainer = Trainer(Budget(epochs=settings.epochs, minutes=settings.minutes), state={"model": net, "optimiser": opt},
                      checkpoint=out / "checkpoint.pt", identity=identity, log=out / "train_log.jsonl",
                      columns=("epoch", loss, "vq", "lr", "reseeded", "warmup_cer", "warmup_wer",
                               "warmup_fer", "val_cer", "val_wer", "val_fer", "perplexity", "seconds"),
                      metric=metric)
    trainer.resume()
    if not quiet:
        n_params = sum(p.numel() for p in net.parameters())
        print(f"bottleneck {cfg.codebook_size} x {cfg.dim} on {extractor.encoder.name}: {len(train)} training, "
              f"{len(valid)} validation utterances, {n_params / 1e6:.2f} M parameters on {device}"
              + (f", resuming after epoch {trainer.epoch}" if trainer.epoch else ""), file=sys.stderr)
    meta = {"content": content, "command": command, "seed": settings.seed, "device": device,
            "config": dataclasses.asdict(cfg), "settings": dataclasses.asdict(settings),
            "data": {"train": [str(Path(d).resolve()) for d in data],
                     "valid": str(Path(valid_dir).resolve()) if valid_dir else "held-out training utterances",
                     "train_utterances": len(train), "valid_utterances": len(valid),
                     "train_speakers": len({it.speaker for it in train_items}),
                     "left_out": skipped + valid_skipped + train_out + valid_out},
            "feature_seconds": round(train_secs + valid_secs, 1)}
    recipe = BottleneckRecipe(net, opt, train, valid, settings, device)

    def save_best(epoch: int, score: float) -> None:
        save_atomic(model_file(net, content, meta | {"epoch": epoch, **recipe.scores[epoch]}), out / "model.pt")

    def report(record: dict) -> None:
        if not quiet:
            def rates(prefix: str) -> str:
                return " ".join(f"{k.upper()} {record[f'{prefix}_{k}']:.1f} %" for k in ("cer", "wer", "fer")
                                if f"{prefix}_{k}" in record)

            scored = (f"valid {rates('val')} from the codes | perplexity {record['perplexity']}"
                      if metric in record else f"warm-up, unquantised: valid {rates('warmup')}")
            print(f"epoch {record['epoch']} | {loss.upper()} {record[loss]:.3f} | VQ {record['vq']:.3f} | {scored} | "
                  f"{record['seconds'] / 60:.1f} min", file=sys.stderr, flush=True)

    history = trainer.run(recipe, on_best=save_best, after_epoch=report)
    summary = meta | {"epochs_run": trainer.epoch, "stopped_by": trainer.stopped_by,
                      "train_seconds": round(trainer.seconds, 1), f"best_{metric}": trainer.best, "history": history}
    write_text(out / "model.json", json.dumps(summary, indent=1) + "\n")
    return trainer.result(out, out / "model.pt" if trainer.best is not None else None, summary)
