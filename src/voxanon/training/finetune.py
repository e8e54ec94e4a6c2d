"""Recipe of rung (b) of the attacker ladder: a pretrained speaker encoder fine-tuned on (anonymized) speech.

The VPC 2026 attacker is a strong pretrained encoder fine-tuned on the system's
anonymized training speech. Two pretrained encoders trained on real people can
be fine-tuned here (:data:`FINETUNABLE`): resemblyzer's GE2E LSTM and the
VoiceFilter d-vector (its float port, :mod:`voxanon.models.speaker.dvector_net`).

Each utterance is preprocessed as at scoring (the caller's preprocessing, then
the encoder's own front end) and turned into log-mel frames once. A step draws
``N`` speakers and ``M`` utterances of each (every speaker of a batch has as
many utterances: speaker-balanced), one random partial per utterance of the
length the encoder was trained on (GE2E 1.6 s, d-vector 0.8 s; shorter
utterances tiled), and minimises

* ``loss="ge2e"``: the generalised end-to-end softmax loss (Wan et al., 2018):
  scaled cosine (``w cos + b``, ``w`` kept positive) of each embedding to every
  speaker centroid, the own centroid excluding the embedding itself; or
* ``loss="aam"``: additive angular margin softmax over the training speakers
  (margin 0.2, scale 30, as the ECAPA attacker).

Adam on :class:`~voxanon.training.trainer.Trainer`; after every epoch the
caller's validation EER (the ladder: dev trials,
:mod:`voxanon.evaluation.attacker_training`) is measured and the best epoch
kept as ``OUT/best.pt`` in the encoder's own checkpoint format
(``ge2e:OUT/best.pt``, ``dvector:OUT/best.pt``); epoch 0 is the pretrained
model, kept when no epoch beats it. ``OUT/last.pt`` holds everything needed to
resume, rewritten atomically. Why the defaults are what they are, and what a
fine-tuned encoder learns: docs/experiments/finetuned_attackers.md.
"""

from __future__ import annotations

import math
import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from voxanon.audio.io import AudioError, load_audio, resample
from voxanon.data.kaldi import DataDir, DataError
from voxanon.errors import ConfigError
from voxanon.models.checkpoint import save_atomic
from voxanon.models.speaker import SpeakerEncoder
from voxanon.progress import Progress
from voxanon.training.asv import AAMSoftmax
from voxanon.training.trainer import Budget, Recipe, Trainer, TrainResult


@dataclass(frozen=True)
class FinetuneSettings:
    """Fine-tuning settings; ``speakers_per_batch`` is clipped to the number of training speakers."""

    epochs: int = 10
    speakers_per_batch: int = 16
    utterances_per_speaker: int = 4
    #: optimizer steps per epoch; default: every utterance drawn about ``draws_per_epoch`` times
    steps_per_epoch: int | None = None
    draws_per_epoch: int = 2
    #: 1e-5 (the first default) left both encoders where they started on the corpus's few steps
    lr: float = 1e-3
    loss: str = "ge2e"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.loss not in ("ge2e", "aam"):
            raise ConfigError(f"loss must be 'ge2e' or 'aam', not {self.loss!r}")
        if self.utterances_per_speaker < 2:
            raise ConfigError("utterances_per_speaker must be at least 2 (GE2E centroids exclude the utterance)")
        if not self.lr > 0 or self.draws_per_epoch < 1:
            raise ConfigError(f"lr must be positive and draws_per_epoch at least 1, got {self.lr}, "
                              f"{self.draws_per_epoch}")


class FinetuneModel(ABC):
    """What the recipe needs of a pretrained encoder: its trainable network, its front end and its checkpoints."""

    #: the encoder spec prefix its checkpoints load with (``<kind>:<best.pt>``)
    kind: str
    #: frames of one training partial (the length the encoder was trained on)
    partial_frames: int
    module: nn.Module
    #: the live encoder (scores with the weights being trained): what validation embeds with
    encoder: SpeakerEncoder

    @abstractmethod
    def features(self, wav: np.ndarray, sr: int) -> np.ndarray:
        """``(frames, n_mels)`` float32 log-mels of one (already preprocessed) waveform, as the encoder scores it."""

    @abstractmethod
    def embed(self, partials: torch.Tensor) -> torch.Tensor:
        """Unit embeddings ``(batch, dim)`` of a ``(batch, partial_frames, n_mels)`` batch, with gradients."""

    @abstractmethod
    def save(self, path: Path, **meta) -> None:
        """Write the current weights in the format ``load_encoder("<kind>:path")`` reads."""


class Ge2eFinetune(FinetuneModel):
    """resemblyzer's GE2E: 1.6 s partials of its 40 log-mels, after its own volume normalisation and VAD trim."""

    kind = "ge2e"
    partial_frames = 160

    def __init__(self, device: str = "cpu") -> None:
        from voxanon.models.speaker.ge2e import GE2EEncoder

        self.encoder = GE2EEncoder(device=device)
        self.module = self.encoder._model

    def features(self, wav: np.ndarray, sr: int) -> np.ndarray:
        enc = self.encoder
        return enc.mel(enc.preprocess(resample(wav, sr, enc.sample_rate))).astype(np.float32)

    def embed(self, partials: torch.Tensor) -> torch.Tensor:
        return self.module(partials)

    def save(self, path: Path, **meta) -> None:
        save_atomic({"model_state": self.module.state_dict(), **meta}, path)


class DVectorFinetune(FinetuneModel):
    """The VoiceFilter d-vector's float port: 80-frame windows of its 40 log10-mels (no VAD, as at scoring)."""

    kind = "dvector"

    def __init__(self, device: str = "cpu") -> None:
        from voxanon.models.speaker.dvector_net import DVectorNet, TorchDVector

        self.module = DVectorNet.from_onnx()
        self.encoder = TorchDVector(self.module, name="dvector-training", device=device)
        self.partial_frames = self.module.cfg.window

    def features(self, wav: np.ndarray, sr: int) -> np.ndarray:
        from voxanon.models.speaker.dvector import log_mels

        cfg = self.module.cfg
        wav = resample(np.asarray(wav, dtype=np.float32), sr, cfg.sample_rate)
        return log_mels(np.resize(wav, max(len(wav), cfg.min_samples)), cfg)

    def embed(self, partials: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.module(partials), dim=-1)

    def save(self, path: Path, **meta) -> None:
        from voxanon.models.speaker.dvector_net import save_dvector

        save_dvector(path, self.module, **meta)


#: the pretrained encoders rung (b) can fine-tune, by encoder spec
FINETUNABLE: dict[str, type[FinetuneModel]] = {"ge2e": Ge2eFinetune, "dvector": DVectorFinetune}


def finetune_model(encoder: str, device: str = "cpu") -> FinetuneModel:
    """The trainable form of the pretrained ``encoder`` (a key of :data:`FINETUNABLE`)."""
    if encoder not in FINETUNABLE:
        raise ConfigError(f"cannot fine-tune encoder {encoder!r}; choose from {', '.join(FINETUNABLE)}")
    return FINETUNABLE[encoder](device=device)


class GE2ELoss(nn.Module):
    """Generalised end-to-end softmax loss over an ``(N, M, D)`` batch of unit embeddings."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.tensor(10.0))
        self.b = nn.Parameter(torch.tensor(-5.0))

    def forward(self, emb: torch.Tensor) -> torch.Tensor:
        n, m, _ = emb.shape
        sums = emb.sum(dim=1)                                            # (N, D)
        centroids = F.normalize(sums / m, dim=-1)
        own = F.normalize((sums[:, None, :] - emb) / (m - 1), dim=-1)    # (N, M, D), excluding itself
        cos = torch.einsum("nmd,kd->nmk", emb, centroids)
        eye = torch.eye(n, dtype=torch.bool, device=emb.device)[:, None, :].expand(n, m, n)
        cos = torch.where(eye, (emb * own).sum(-1, keepdim=True).expand(n, m, n), cos)
        logits = self.w.clamp(min=1e-6) * cos + self.b
        labels = torch.arange(n, device=emb.device).repeat_interleave(m)
        return F.cross_entropy(logits.reshape(n * m, n), labels)


def utterance_mels(data: DataDir, model: FinetuneModel, preprocess: Callable[[np.ndarray], np.ndarray],
                   quiet: bool = False) -> dict[str, np.ndarray]:
    """Log-mel frames of every utterance, after ``preprocess`` and the encoder's own front end (as at scoring)."""
    progress = Progress(len(data.wav_scp), f"{model.kind} features", quiet=quiet)
    mels = {}
    for utt in sorted(data.wav_scp):
        try:
            wav, sr = load_audio(data.wav_scp[utt])
        except AudioError as exc:
            raise AudioError(f"{data.path}: utterance {utt!r}: {exc}") from exc
        mels[utt] = model.features(preprocess(wav), sr)
        progress.update(audio_seconds=len(wav) / sr)
    progress.close()
    return mels


def _partial(mel: np.ndarray, frames: int, rng: np.random.Generator) -> np.ndarray:
    if len(mel) < frames:
        mel = np.tile(mel, (math.ceil(frames / len(mel)), 1))
    start = rng.integers(0, len(mel) - frames + 1)
    return mel[start:start + frames]


@dataclass
class FinetuneRecipe(Recipe):
    """``steps_per_epoch`` batches of ``n`` random speakers x ``m`` random utterances (one partial each), the GE2E or
    AAM loss, gradient clipping at 3; validation: ``score()``, the EER (%) of the live encoder."""

    model: FinetuneModel
    loss_fn: nn.Module
    optimizer: torch.optim.Optimizer
    rng: np.random.Generator
    mels: dict[str, np.ndarray]
    spk_utts: list[list[str]]
    n: int
    m: int
    steps_per_epoch: int
    settings: FinetuneSettings
    device: str
    score: Callable[[], float]

    def __post_init__(self) -> None:
        self.clip = (list(self.model.module.parameters()), 3.0)

    def steps(self, epoch: int) -> int:
        return self.steps_per_epoch

    def batches(self, epoch: int):
        n, m, rng, frames = self.n, self.m, self.rng, self.model.partial_frames
        self.model.module.train()
        for _ in range(self.steps_per_epoch):
            chosen = rng.choice(len(self.spk_utts), n, replace=False)
            batch = [_partial(self.mels[u], frames, rng) for k in chosen
                     for u in rng.choice(self.spk_utts[k], m, replace=len(self.spk_utts[k]) < m)]
            yield torch.from_numpy(np.stack(batch)).to(self.device), chosen

    def loss(self, batch) -> tuple[torch.Tensor, float]:
        partials, chosen = batch
        emb = self.model.embed(partials)
        if self.settings.loss == "ge2e":
            return self.loss_fn(emb.reshape(self.n, self.m, -1)), 1
        return self.loss_fn(emb, torch.from_numpy(np.repeat(chosen, self.m)).to(self.device)), 1

    def end_epoch(self, epoch: int, loss: float) -> dict:
        self.model.module.eval()
        return {"loss": loss}

    def validate(self, epoch: int) -> float:
        return self.score()


def train_finetune(data: DataDir, out: str | os.PathLike, settings: FinetuneSettings, *, encoder: str,
                   validate: Callable[[SpeakerEncoder], float], preprocess: Callable[[np.ndarray], np.ndarray],
                   device: str = "cpu", quiet: bool = False) -> TrainResult:
    """Fine-tune the pretrained ``encoder`` (``ge2e`` or ``dvector``) on ``data`` (or resume) into ``out``:
    ``best.pt`` (:attr:`TrainResult.model`, loadable as ``<encoder>:OUT/best.pt``), ``train_log.jsonl`` and the
    resumable ``last.pt``.

    ``validate(encoder)`` gives the EER (%) that selects the best epoch; ``preprocess`` is applied to every
    waveform first (as at scoring). The log has one record per epoch (``epoch``, ``loss``, ``val_eer``),
    preceded by epoch 0: the pretrained model's EER, which is kept as ``best.pt`` when no epoch beats it.

    Raises
    ------
    ConfigError
        An encoder that cannot be fine-tuned.
    DataError
        Fewer than two training speakers.
    CheckpointError
        ``last.pt`` cannot be read or was made with other data or settings.
    """
    speakers = sorted(data.spk2utt)
    if len(speakers) < 2:
        raise DataError(f"{data.path}: fine-tuning needs at least two speakers, found {len(speakers)}")
    model = finetune_model(encoder, device)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    n = min(settings.speakers_per_batch, len(speakers))
    m = settings.utterances_per_speaker
    steps = settings.steps_per_epoch or max(1, math.ceil(settings.draws_per_epoch * len(data.utt2spk) / (n * m)))
    dim = model.encoder.dim
    loss_fn = (GE2ELoss() if settings.loss == "ge2e"
               else AAMSoftmax(dim, len(speakers), margin=0.2, scale=30.0)).to(device)
    optimizer = torch.optim.Adam(list(model.module.parameters()) + list(loss_fn.parameters()), lr=settings.lr)
    rng = np.random.default_rng(settings.seed)
    torch.manual_seed(settings.seed)
    identity = {"settings": {k: v for k, v in asdict(settings).items() if k not in ("epochs", "seed")},
                "speakers": speakers, "seed": settings.seed, "encoder": encoder}
    trainer = Trainer(Budget(epochs=settings.epochs),
                      state={"model": model.module, "loss": loss_fn, "optimizer": optimizer},
                      rngs={"batches": rng}, checkpoint=out / "last.pt", identity=identity,
                      log=out / "train_log.jsonl", columns=("epoch", "loss", "val_eer"), quiet=quiet)

    def keep(epoch: int, eer: float) -> None:
        model.save(out / "best.pt", epoch=epoch, val_eer=eer)

    trainer.resume()
    model.module.eval()
    trainer.baseline(lambda epoch: validate(model.encoder), keep, loss=None)
    if not trainer.resumed and not quiet:
        print(f"pretrained {encoder}: dev EER {trainer.best:.2f} %")
    mels = utterance_mels(data, model, preprocess, quiet=quiet) if trainer.epoch < settings.epochs else {}

    def report(record: dict) -> None:
        if not quiet:
            print(f"epoch {record['epoch']}: loss {record['loss']:.3f}, dev EER {record['val_eer']:.2f} % "
                  f"(best {trainer.best:.2f} %)")

    recipe = FinetuneRecipe(model, loss_fn, optimizer, rng, mels, [data.spk2utt[s] for s in speakers], n, m, steps,
                            settings, device, lambda: validate(model.encoder))
    trainer.run(recipe, keep, report)
    return trainer.result(out, out / "best.pt", {"encoder": encoder, "speakers": len(speakers),
                                                 "steps_per_epoch": steps, "epoch": trainer.epoch})
