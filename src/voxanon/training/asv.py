"""Recipe of the semi-informed attacker: an ECAPA-TDNN from scratch on a (anonymized) data directory.

As the VPC 2024 attacker: random fixed-length chunks (3 s), additive angular
margin softmax (margin 0.2, scale 30), Adam with a triangular cyclic learning
rate, an utterance-level train/validation split (90/10 within each speaker),
validation EER after every epoch and the best model kept.

Log-mel features of every utterance are computed once and held in memory
(float16), so an epoch costs only the network; this suits corpora up to a few
tens of hours (about 29 MB per hour of audio).

The loop runs on :class:`~voxanon.training.trainer.Trainer`: ``OUT/last.pt``
(model, classifier, optimizer, scheduler, epoch, RNG states, history) is
rewritten atomically after each epoch, so an interrupted run resumes where it
stopped; ``OUT/best.pt`` is a plain ECAPA checkpoint usable as
``ecapa:OUT/best.pt``. The attacker ladder's dev-trial selection is
:mod:`voxanon.evaluation.attacker_training`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from voxanon.audio.io import AudioError, load_audio, resample
from voxanon.data.kaldi import DataDir, DataError
from voxanon.metrics import compute_eer
from voxanon.models.fbank import Fbank
from voxanon.models.speaker.ecapa import (
    EcapaConfig,
    EcapaTdnn,
    save_ecapa,
)
from voxanon.progress import Progress
from voxanon.training.trainer import Budget, Recipe, Trainer, TrainResult


@dataclass(frozen=True)
class AsvSettings:
    """Training settings; ``model`` is the ECAPA architecture.

    The defaults are the small attacker; :meth:`vpc` is the VPC 2024 recipe.
    The cyclic learning rate rises from ``lr_min`` to ``lr_max`` in
    ``step_size`` optimizer steps when that is set, else in half of
    ``cycle_epochs`` epochs.
    """

    model: EcapaConfig = field(default_factory=EcapaConfig)
    epochs: int = 10
    batch_size: int = 32
    chunk_seconds: float = 3.0
    chunks_per_utt: int = 2
    margin: float = 0.2
    scale: float = 30.0
    lr_min: float = 1e-5
    lr_max: float = 2e-3
    cycle_epochs: float = 2.0
    step_size: int | None = None
    weight_decay: float = 2e-5
    val_fraction: float = 0.1
    seed: int = 0

    @classmethod
    def vpc(cls, **overrides) -> AsvSettings:
        """The VPC 2024 semi-informed attacker recipe (``train_ecapa_tdnn_small.yaml``).

        ECAPA 512/1536 (:meth:`EcapaConfig.vpc`), batch 256, 3 s chunks, AAM softmax
        (margin 0.2, scale 30), Adam with weight decay 2e-6, triangular cyclic LR from
        1e-8 to 1e-2 with a half cycle of 65 000 steps, 10 epochs. On train-clean-360
        (about 104 000 utterances, 400 steps per epoch) the LR only climbs to about
        6e-4 in those 10 epochs; on a corpus of a few hundred utterances (one step per
        epoch) it stays near 1e-8 and nothing is learnt, so pass ``step_size`` (or
        ``cycle_epochs``) scaled to the corpus and say so with the numbers.
        """
        base = dict(model=EcapaConfig.vpc(), epochs=10, batch_size=256, lr_min=1e-8, lr_max=1e-2,
                    step_size=65000, weight_decay=2e-6)
        return cls(**{**base, **overrides})


class AAMSoftmax(nn.Module):
    """Additive angular margin softmax loss: ``s * cos(theta + m)`` for the true class."""

    def __init__(self, dim: int, n_classes: int, margin: float, scale: float):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_classes, dim))
        nn.init.xavier_normal_(self.weight)
        self.margin, self.scale = margin, scale

    def forward(self, emb: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        cos = F.linear(F.normalize(emb), F.normalize(self.weight)).clamp(-1 + 1e-7, 1 - 1e-7)
        target = torch.cos(torch.acos(cos) + self.margin)
        # beyond pi - m, cos(theta + m) stops decreasing: use a linear penalty instead (as ArcFace)
        target = torch.where(cos > math.cos(math.pi - self.margin), target,
                             cos - math.sin(math.pi - self.margin) * self.margin)
        onehot = F.one_hot(labels, cos.shape[1]).bool()
        return F.cross_entropy(self.scale * torch.where(onehot, target, cos), labels)


def split_utterances(data: DataDir, val_fraction: float, seed: int) -> tuple[list[str], list[str]]:
    """Per-speaker utterance split; every speaker keeps at least one training utterance."""
    rng = np.random.default_rng(seed)
    train, val = [], []
    for spk, utts in data.spk2utt.items():
        utts = list(rng.permutation(utts))
        n_val = min(int(round(len(utts) * val_fraction)), len(utts) - 1)
        val += utts[:n_val]
        train += utts[n_val:]
    return sorted(train), sorted(val)


def compute_features(data: DataDir, utts: list[str], fbank: Fbank, preprocess: Callable[[np.ndarray], np.ndarray],
                     quiet: bool = False) -> dict[str, np.ndarray]:
    """Log-mel features (float16, frames × mels) of each utterance, after ``preprocess`` (as at scoring)."""
    progress = Progress(len(utts), "features", quiet=quiet)
    feats = {}
    for utt in utts:
        try:
            wav, sr = load_audio(data.wav_scp[utt])
        except AudioError as exc:
            raise AudioError(f"{data.path}: utterance {utt!r}: {exc}") from exc
        wav = resample(preprocess(wav), sr, fbank.cfg.sample_rate)
        with torch.inference_mode():
            f, _ = fbank(torch.from_numpy(wav)[None])
        feats[utt] = f[0].numpy().astype(np.float16)
        progress.update(audio_seconds=len(wav) / fbank.cfg.sample_rate)
    progress.close()
    return feats


def sample_chunks(feats: list[np.ndarray], n_frames: int, rng: np.random.Generator,
                  remove_mean: bool = True) -> np.ndarray:
    """One random ``n_frames`` chunk per matrix (frames first; shorter ones are tiled), chunk-mean removed.

    ``remove_mean=False`` keeps the chunks as they are (waveform chunks, shaped ``(n, 1)``).
    """
    out = np.empty((len(feats), n_frames, feats[0].shape[1]), dtype=np.float32)
    for i, f in enumerate(feats):
        if len(f) < n_frames:
            f = np.tile(f, (math.ceil(n_frames / len(f)), 1))
        start = rng.integers(0, len(f) - n_frames + 1)
        out[i] = f[start:start + n_frames]
    return out - out.mean(axis=1, keepdims=True) if remove_mean else out


@torch.inference_mode()
def _embed(model: EcapaTdnn, feats: list[np.ndarray], device: str) -> np.ndarray:
    """Unit-length embeddings of whole utterances, 16 at a time."""
    embs = []
    for start in range(0, len(feats), 16):
        part = feats[start:start + 16]
        lengths = torch.tensor([len(f) for f in part])
        batch = torch.zeros(len(part), int(lengths.max()), part[0].shape[1])
        for i, f in enumerate(part):
            batch[i, :len(f)] = torch.from_numpy(f.astype(np.float32))
        embs.append(F.normalize(model(batch.to(device), lengths.to(device))).cpu().numpy())
    return np.concatenate(embs)


def validation_eer(model: EcapaTdnn, feats: list[np.ndarray], labels: list[str], ref_feats: list[np.ndarray],
                   ref_labels: list[str], device: str) -> float:
    """EER (%) of validation utterances against every speaker's model (mean of its reference embeddings).

    Scoring against speaker models, as the VPC trials do, gives target trials even
    when each speaker holds a single validation utterance.
    """
    model.eval()
    val, ref = _embed(model, feats, device), _embed(model, ref_feats, device)
    speakers = sorted(set(ref_labels))
    ref_lab = np.asarray(ref_labels)
    models = np.stack([ref[ref_lab == s].mean(axis=0) for s in speakers])
    scores = val @ (models / np.linalg.norm(models, axis=1, keepdims=True)).T
    same = np.asarray(labels)[:, None] == np.asarray(speakers)[None, :]
    return float(compute_eer(scores[same], scores[~same]).eer)


#: training utterances per speaker that form its model in the validation trials
VAL_REFERENCE_UTTS = 3


@dataclass
class AsvRecipe(Recipe):
    """Every training utterance ``chunks_per_utt`` times per epoch in shuffled batches of random chunks, AAM softmax,
    Adam with the cyclic learning rate stepped after every batch; validation: ``score(epoch)``."""

    model: EcapaTdnn
    loss_fn: AAMSoftmax
    optimizer: torch.optim.Optimizer
    rng: np.random.Generator
    feats: list[np.ndarray]
    labels: np.ndarray
    settings: AsvSettings
    n_chunk: int
    steps_per_epoch: int
    device: str
    score: Callable[[int], float]
    scheduler: torch.optim.lr_scheduler.CyclicLR

    def steps(self, epoch: int) -> int:
        return self.steps_per_epoch

    def batches(self, epoch: int):
        batch_size = self.settings.batch_size
        self.model.train()
        order = self.rng.permutation(np.tile(np.arange(len(self.feats)), self.settings.chunks_per_utt))
        for step in range(self.steps_per_epoch):
            idx = order[step * batch_size:(step + 1) * batch_size]
            x = torch.from_numpy(sample_chunks([self.feats[i] for i in idx], self.n_chunk, self.rng)).to(self.device)
            yield x, torch.from_numpy(self.labels[idx]).to(self.device)

    def loss(self, batch) -> tuple[torch.Tensor, float]:
        x, y = batch
        return self.loss_fn(self.model(x), y), 1

    def end_epoch(self, epoch: int, loss: float) -> dict:
        return {"loss": loss, "lr": self.scheduler.get_last_lr()[0]}

    def validate(self, epoch: int) -> float:
        return self.score(epoch)


def _references(data: DataDir, speakers: list[str], in_train: set[str],
                feats: dict[str, np.ndarray]) -> tuple[list[np.ndarray], list[str]]:
    """Features and speakers of the first :data:`VAL_REFERENCE_UTTS` training utterances of each speaker."""
    utts = [u for spk in speakers for u in [v for v in data.spk2utt[spk] if v in in_train][:VAL_REFERENCE_UTTS]]
    return [feats[u] for u in utts], [data.utt2spk[u] for u in utts]


def _resumable(settings: AsvSettings) -> dict:
    """Settings a resumed run must share with the interrupted one (the epoch count may grow)."""
    return {k: v for k, v in asdict(settings).items() if k != "epochs"}


def train_asv(data: DataDir, out: str | os.PathLike, settings: AsvSettings = AsvSettings(), *,
              preprocess: Callable[[np.ndarray], np.ndarray],
              validate: Callable[[EcapaTdnn, int], float] | None = None, device: str = "cpu",
              quiet: bool = False) -> TrainResult:
    """Train (or resume) the attacker ECAPA on ``data`` into ``out``: ``best.pt`` (the epoch with the lowest
    validation EER, :attr:`TrainResult.model`), ``train_log.jsonl`` and the resumable ``last.pt``.

    ``preprocess`` is applied to every waveform before its features (as at scoring). ``validate(model, epoch)``
    gives the epoch's validation EER (e.g. on dev trials, as the VPC selects); without it, the EER of the
    held-out training utterances (:func:`validation_eer`).

    Raises
    ------
    DataError
        Fewer than two speakers, or neither ``validate`` nor held-out validation utterances (too few per speaker).
    CheckpointError
        ``last.pt`` cannot be read or was made with other data or settings.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    speakers = sorted(data.spk2utt)
    if len(speakers) < 2:
        raise DataError(f"{data.path}: the training set has {len(speakers)} speaker(s) "
                        f"({', '.join(speakers) or 'none'}); speaker training needs at least two")
    train_utts, val_utts = split_utterances(data, settings.val_fraction, settings.seed)
    if not val_utts and validate is None:  # with a validation function, the held-out utterances are not used
        raise DataError(f"{data.path}: no validation utterances for an EER; give dev trials, "
                        "or speakers need more utterances each, or raise val_fraction")
    torch.manual_seed(settings.seed)
    fbank = Fbank()
    n_chunk = int(settings.chunk_seconds * fbank.cfg.sample_rate) // fbank.cfg.hop_length + 1
    feats = compute_features(data, train_utts + val_utts, fbank, preprocess, quiet=quiet)
    short = [u for u in train_utts if len(feats[u]) < n_chunk]
    if short and not quiet:
        print(f"{len(short)} training utterance(s) shorter than {settings.chunk_seconds} s are tiled (repeated) "
              f"to the chunk length: {', '.join(short[:10])}{' ...' if len(short) > 10 else ''}")
    spk_index = {s: i for i, s in enumerate(speakers)}
    model = EcapaTdnn(settings.model).to(device)
    loss_fn = AAMSoftmax(settings.model.embedding_dim, len(speakers), settings.margin, settings.scale).to(device)
    params = list(model.parameters()) + list(loss_fn.parameters())
    optimizer = torch.optim.Adam(params, lr=settings.lr_min, weight_decay=settings.weight_decay)
    steps_per_epoch = math.ceil(len(train_utts) * settings.chunks_per_utt / settings.batch_size)
    scheduler = torch.optim.lr_scheduler.CyclicLR(
        optimizer, settings.lr_min, settings.lr_max,
        step_size_up=settings.step_size or max(1, int(settings.cycle_epochs * steps_per_epoch / 2)),
        cycle_momentum=False)
    rng = np.random.default_rng(settings.seed)
    trainer = Trainer(Budget(epochs=settings.epochs),
                      state={"model": model, "classifier": loss_fn, "optimizer": optimizer, "scheduler": scheduler},
                      rngs={"batches": rng}, checkpoint=out / "last.pt",
                      identity={"speakers": speakers, "val_utts": [str(u) for u in val_utts],
                                "train_config": _resumable(settings)},
                      log=out / "train_log.jsonl", columns=("epoch", "loss", "val_eer", "lr"), quiet=quiet)
    if trainer.resume() and not quiet:
        print(f"resuming after epoch {trainer.epoch} from {trainer.checkpoint}")
    train_feats = [feats[u] for u in train_utts]
    train_labels = np.array([spk_index[data.utt2spk[u]] for u in train_utts])
    val_feats, val_labels = [feats[u] for u in val_utts], [data.utt2spk[u] for u in val_utts]
    ref_feats, ref_labels = _references(data, speakers, set(train_utts), feats)

    def score(epoch: int) -> float:
        if validate is None:
            return validation_eer(model, val_feats, val_labels, ref_feats, ref_labels, device)
        model.eval()
        return validate(model, epoch)

    def report(record: dict) -> None:
        if not quiet:
            print(f"epoch {record['epoch']}: loss {record['loss']:.3f}, validation EER {record['val_eer']:.2f} % "
                  f"(best {trainer.best:.2f} %)")

    recipe = AsvRecipe(model, loss_fn, optimizer, rng, train_feats, train_labels, settings, n_chunk, steps_per_epoch,
                       device, score, scheduler)
    trainer.run(recipe,
                on_best=lambda epoch, eer: save_ecapa(out / "best.pt", model, epoch=epoch, val_eer=eer,
                                                      speakers=speakers),
                after_epoch=report)
    return trainer.result(out, out / "best.pt", {"speakers": len(speakers), "train_utts": len(train_utts),
                                                 "val_utts": len(val_utts), "short_utts_tiled": short,
                                                 "epoch": trainer.epoch})
