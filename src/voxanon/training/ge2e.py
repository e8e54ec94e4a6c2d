"""Recipe of rung (b) of the attacker ladder: the pretrained GE2E encoder fine-tuned on (anonymized) speech.

Each utterance is preprocessed as at scoring (the caller's preprocessing, then the
encoder's own volume normalisation and silence trimming) and turned into
log-mel frames once. A step draws ``N`` speakers and ``M`` utterances of each,
one random 1.6 s partial per utterance (shorter ones tiled), and minimises

* ``loss="ge2e"``: the generalised end-to-end softmax loss (Wan et al., 2018):
  scaled cosine (``w cos + b``, ``w`` kept positive) of each embedding to every
  speaker centroid, the own centroid excluding the embedding itself; or
* ``loss="aam"``: additive angular margin softmax over the training speakers
  (margin 0.2, scale 30, as the ECAPA attacker).

Adam with a small learning rate, on :class:`~voxanon.training.trainer.Trainer`;
after every epoch the caller's validation EER (the ladder: dev trials,
:mod:`voxanon.evaluation.attacker_training`) is measured and the best epoch
kept as ``OUT/best.pt`` in resemblyzer's format (``ge2e:OUT/best.pt``).
``OUT/last.pt`` holds everything needed to resume, rewritten atomically.
"""

from __future__ import annotations

import math
import os
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
from voxanon.models.speaker.ge2e import GE2EEncoder
from voxanon.progress import Progress
from voxanon.training.asv import AAMSoftmax
from voxanon.training.trainer import Budget, Trainer

#: frames of one partial (1.6 s at 10 ms), as the pretrained model was trained and is used
PARTIAL_FRAMES = 160


@dataclass(frozen=True)
class FinetuneSettings:
    """Fine-tuning settings; ``speakers_per_batch`` is clipped to the number of training speakers."""

    epochs: int = 10
    speakers_per_batch: int = 16
    utterances_per_speaker: int = 4
    #: optimizer steps per epoch; default: every utterance drawn about twice
    steps_per_epoch: int | None = None
    lr: float = 1e-5
    loss: str = "ge2e"

    def __post_init__(self) -> None:
        if self.loss not in ("ge2e", "aam"):
            raise ConfigError(f"loss must be 'ge2e' or 'aam', not {self.loss!r}")
        if self.utterances_per_speaker < 2:
            raise ConfigError("utterances_per_speaker must be at least 2 (GE2E centroids exclude the utterance)")


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


def utterance_mels(data: DataDir, encoder: GE2EEncoder, preprocess: Callable[[np.ndarray], np.ndarray],
                   quiet: bool = False) -> dict[str, np.ndarray]:
    """Log-mel frames of every utterance, after ``preprocess`` and the encoder's own preprocessing (as at scoring)."""
    progress = Progress(len(data.wav_scp), "GE2E features", quiet=quiet)
    mels = {}
    for utt in sorted(data.wav_scp):
        try:
            wav, sr = load_audio(data.wav_scp[utt])
        except AudioError as exc:
            raise AudioError(f"{data.path}: utterance {utt!r}: {exc}") from exc
        wav = encoder.preprocess(resample(preprocess(wav), sr, encoder.sample_rate))
        mels[utt] = encoder.mel(wav).astype(np.float32)
        progress.update(audio_seconds=len(wav) / encoder.sample_rate)
    progress.close()
    return mels


def _partial(mel: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if len(mel) < PARTIAL_FRAMES:
        mel = np.tile(mel, (math.ceil(PARTIAL_FRAMES / len(mel)), 1))
    start = rng.integers(0, len(mel) - PARTIAL_FRAMES + 1)
    return mel[start:start + PARTIAL_FRAMES]


@dataclass
class Ge2eEpoch:
    """One epoch of the recipe: ``steps`` batches of ``n`` random speakers x ``m`` random utterances (one partial
    each), the GE2E or AAM loss, gradient clipping at 3."""

    model: nn.Module
    loss_fn: nn.Module
    optimizer: torch.optim.Optimizer
    rng: np.random.Generator
    mels: dict[str, np.ndarray]
    spk_utts: list[list[str]]
    n: int
    m: int
    steps: int
    settings: FinetuneSettings
    device: str
    quiet: bool

    def __call__(self, epoch: int) -> dict:
        """Train epoch ``epoch``; its mean loss."""
        n, m, rng, device = self.n, self.m, self.rng, self.device
        self.model.train()
        total = 0.0
        progress = Progress(self.steps, f"epoch {epoch}/{self.settings.epochs}", quiet=self.quiet)
        for _ in range(self.steps):
            chosen = rng.choice(len(self.spk_utts), n, replace=False)
            batch = [_partial(self.mels[u], rng) for k in chosen
                     for u in rng.choice(self.spk_utts[k], m, replace=len(self.spk_utts[k]) < m)]
            emb = self.model(torch.from_numpy(np.stack(batch)).to(device))
            if self.settings.loss == "ge2e":
                loss = self.loss_fn(emb.reshape(n, m, -1))
            else:
                loss = self.loss_fn(emb, torch.from_numpy(np.repeat(chosen, m)).to(device))
            self.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 3.0)
            self.optimizer.step()
            total += loss.item()
            progress.update()
        progress.close()
        return {"loss": total / self.steps}


def finetune_ge2e(train: DataDir, settings: FinetuneSettings, out_dir: str | os.PathLike, *,
                  validate: Callable[[GE2EEncoder], float], preprocess: Callable[[np.ndarray], np.ndarray],
                  seed: int = 0, device: str = "cpu", quiet: bool = False) -> tuple[Path, list[dict]]:
    """Fine-tune the pretrained GE2E on ``train`` (or resume); returns ``OUT/best.pt`` and the log.

    ``validate(encoder)`` gives the EER (%) that selects the best epoch; ``preprocess`` is applied to every
    waveform first (as at scoring). The log has one entry per epoch (``epoch``, ``loss``, ``val_eer``),
    preceded by epoch 0: the pretrained model's EER, which is kept as ``best.pt`` when no epoch beats it.

    Raises
    ------
    DataError
        Fewer than two training speakers.
    CheckpointError
        ``last.pt`` cannot be read or was made with other data or settings.
    """
    speakers = sorted(train.spk2utt)
    if len(speakers) < 2:
        raise DataError(f"{train.path}: fine-tuning needs at least two speakers, found {len(speakers)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    encoder = GE2EEncoder(device=device)
    model = encoder._model
    n = min(settings.speakers_per_batch, len(speakers))
    m = settings.utterances_per_speaker
    steps = settings.steps_per_epoch or max(1, math.ceil(2 * len(train.utt2spk) / (n * m)))
    loss_fn = (GE2ELoss() if settings.loss == "ge2e"
               else AAMSoftmax(encoder.dim, len(speakers), margin=0.2, scale=30.0)).to(device)
    optimizer = torch.optim.Adam(list(model.parameters()) + list(loss_fn.parameters()), lr=settings.lr)
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    identity = {"settings": {k: v for k, v in asdict(settings).items() if k != "epochs"}, "speakers": speakers,
                "seed": seed}
    trainer = Trainer(Budget(epochs=settings.epochs), state={"model": model, "loss": loss_fn, "optimizer": optimizer},
                      rngs={"batches": rng}, checkpoint=out / "last.pt", identity=identity,
                      columns=("epoch", "loss", "val_eer"))

    def keep(epoch: int, eer: float) -> None:
        save_atomic({"model_state": model.state_dict(), "epoch": epoch, "val_eer": eer}, out / "best.pt")

    trainer.resume()
    trainer.baseline(lambda epoch: validate(encoder), keep, loss=None)
    if not trainer.resumed and not quiet:
        print(f"pretrained GE2E: dev EER {trainer.best:.2f} %")
    mels = utterance_mels(train, encoder, preprocess, quiet=quiet) if trainer.epoch < settings.epochs else {}
    def report(record: dict) -> None:
        if not quiet:
            print(f"epoch {record['epoch']}: loss {record['loss']:.3f}, dev EER {record['val_eer']:.2f} % "
                  f"(best {trainer.best:.2f} %)")

    train_epoch = Ge2eEpoch(model, loss_fn, optimizer, rng, mels, [train.spk2utt[s] for s in speakers], n, m, steps,
                            settings, device, quiet)
    history = trainer.run(train_epoch, lambda epoch: validate(encoder), keep, report)
    return out / "best.pt", history
