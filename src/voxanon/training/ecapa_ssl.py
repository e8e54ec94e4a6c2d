"""Fine-tuning the VPC 2026 ``ecapa_ssl`` attacker on anonymized speech: the kit's semi-informed attacker.

The 2026 kit (``configs/track1/eval_post.yaml``, ``evaluation/privacy/asv/train_asv_eval.py``,
``asv_train/train_speaker_embeddings_ssl_ft.py``, ``asv_train/libri_prepare.py``,
``asv_train/asv_dataset.py``, ``asv_train/hparams/train_ecapa_ssl_tdnn_small.yaml``) starts from the
pretrained ``exp/asv_ssl`` (``embedding_model.ckpt`` + ``WavLM-Large.pt``) and trains on the
anonymized ``train-clean-360<suffix>``:

* WavLM is frozen (run without gradients); the whole ``ECAPA_TDNN_test`` (layer weights included) and a
  new AAM-softmax speaker classifier (margin 0.2, scale 30) are trained;
* AdamW (learning rate 0.01, weight decay 0.01) under a triangular cyclic learning rate from 1e-8 to 0.01
  with a half cycle of 65 000 steps, batch 32 (``drop_last``), 2 epochs;
* each utterance gives one training example per 3 s of its length (its fixed 3 s chunks whose mean
  absolute amplitude reaches 5e-4; shorter utterances give none), and each example draws a *random* 3 s
  chunk of the utterance for the Fbank branch; in training, the batch's chunks go through frequency and
  time dropout (speechbrain's ``DropFreq`` and ``DropChunk`` with the recipe's settings,
  :mod:`voxanon.dsp.dropout`);
* the WavLM branch reads the whole utterance, standardises it, then takes a random 10 s crop of it, or pads
  it with zeros to 10 s, and runs WavLM on that without a padding mask;
* a validation share of the utterances (10 %) gives the validation loss (the same AAM loss) after each
  epoch; every epoch is kept as ``CKPT+<epoch>/`` and the evaluation uses the one with the lowest
  validation loss (``train_log.txt``).

:func:`train_ecapa_ssl` does the same on :class:`~voxanon.training.trainer.Trainer` and writes the
kit's output layout, which :func:`voxanon.models.speaker.ecapa_ssl.load_ecapa_ssl` reads:
``OUT/CKPT+<epoch>/embedding_model.ckpt`` (the ``ECAPA_TDNN_test`` state dict under the kit's key
names) with ``WavLM-Large.pt`` beside it (a hard link, else a copy), and ``OUT/train_log.txt`` (one
``epoch: N, lr: ... - train loss: ... - valid loss: ..., valid ErrorRate: ...`` line per epoch).
``OUT/last.pt`` holds everything needed to resume (ECAPA, classifier, optimizer, scheduler, RNG
states, history), so a rerun after an interruption continues with the next epoch;
``OUT/chunk_counts.json`` saves the rerun a pass over all the audio (the chunk counts), and
``OUT/finetune.json`` names the run's inputs and settings (and marks the folder as voxanon's).

Where this differs from the kit: the split holds out 10 % of *each speaker's* utterances (every
speaker keeps at least one for training; the kit splits the shuffled list of all utterances); the
validation chunks are drawn by a fixed generator, so every epoch is validated on the same chunks (the
kit redraws them); the learning rate is updated after each step (the kit sets step *k*'s rate before
it: one step of 65 000 apart); the frequency dropout's notch is a textbook band-stop filter, not
speechbrain's design; all audio is resampled to 16 kHz.

Memory: waveforms (64 kB per second) and the WavLM layer outputs of utterances no longer than the
crop (whose input is the same every epoch) are kept in memory up to ``cache_gb``, first come first
kept; the rest is read and computed again for every batch, so the full-size recipe streams. Keeping
changes only the speed, not what is drawn or computed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from voxanon.atomic import atomic_open, write_text
from voxanon.audio.io import AudioError, load_audio, resample
from voxanon.data.kaldi import DataDir
from voxanon.digest import file_digest
from voxanon.dsp.dropout import drop_chunks, drop_frequencies
from voxanon.errors import ConfigError, DataError
from voxanon.models.checkpoint import save_atomic
from voxanon.models.content.unilm import read_checkpoint
from voxanon.models.speaker.ecapa_ssl import (
    ECAPA_FILE,
    SAMPLE_RATE,
    WAVLM_FILE,
    EcapaSsl,
    asv_ssl_files,
    ecapa_ssl_from_states,
    read_ecapa_state,
    standardize,
    wavlm_layer_outputs,
)
from voxanon.progress import Progress
from voxanon.training.asv import AAMSoftmax, sample_chunks, split_utterances
from voxanon.training.trainer import Budget, Recipe, Trainer, TrainResult

TRAIN_LOG = "train_log.txt"
#: what voxanon writes beside the kit's files: the run's inputs and settings, and each utterance's chunk count
MARKER, COUNTS = "finetune.json", "chunk_counts.json"


@dataclass(frozen=True)
class EcapaSslSettings:
    """The kit's fine-tuning settings (defaults: ``eval_post.yaml`` over ``train_ecapa_ssl_tdnn_small.yaml``).

    ``lr`` is AdamW's rate and the top of the cyclic schedule, which rises from ``lr_min`` in
    ``step_size`` steps; ``chunk_seconds`` is the Fbank branch's chunk, ``wavlm_seconds`` the WavLM
    branch's crop; ``min_amplitude`` drops fixed chunks quieter than it (mean absolute value) from
    the count of examples; ``augment`` applies the frequency and time dropout to the training chunks;
    ``cache_gb`` bounds what is kept in memory.
    """

    epochs: int = 2
    batch_size: int = 32
    lr: float = 0.01
    lr_min: float = 1e-8
    step_size: int = 65000
    weight_decay: float = 0.01
    margin: float = 0.2
    scale: float = 30.0
    chunk_seconds: float = 3.0
    wavlm_seconds: float = 10.0
    min_amplitude: float = 5e-4
    augment: bool = True
    val_fraction: float = 0.1
    seed: int = 1986
    cache_gb: float = 2.0

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "step_size"):
            if getattr(self, name) < 1:
                raise ConfigError(f"fine-tuning {name} must be at least 1, got {getattr(self, name)}")
        for name in ("lr", "chunk_seconds", "wavlm_seconds"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"fine-tuning {name} must be positive, got {getattr(self, name)}")
        if not 0 < self.lr_min <= self.lr:
            raise ConfigError(f"fine-tuning lr_min must be in (0, lr={self.lr}], got {self.lr_min}")
        if not 0 < self.val_fraction < 1:
            raise ConfigError(f"fine-tuning val_fraction must be in (0, 1), got {self.val_fraction}")
        if self.weight_decay < 0 or self.min_amplitude < 0 or self.cache_gb < 0:
            raise ConfigError("fine-tuning weight_decay, min_amplitude and cache_gb cannot be negative")


class MemoryCache:
    """Arrays and tensors kept up to a byte budget, first come first kept; what does not fit is not kept."""

    def __init__(self, max_bytes: float) -> None:
        self.items: dict = {}
        self.free = max_bytes

    def get(self, key):
        """The kept value, or None."""
        return self.items.get(key)

    def put(self, key, value):
        """Keep ``value`` when it fits; returns it."""
        size = value.nbytes if isinstance(value, np.ndarray) else value.element_size() * value.numel()
        if size <= self.free:
            self.items[key] = value
            self.free -= size
        return value


class KitBatches:
    """The kit's training inputs of a data dir's utterances: Fbank chunks and WavLM layer outputs of crops."""

    def __init__(self, data: DataDir, model: EcapaSsl, cfg: EcapaSslSettings, device: str) -> None:
        self.data, self.model, self.cfg, self.device = data, model, cfg, device
        self.cache = MemoryCache(cfg.cache_gb * 2**30)
        self.n_chunk = int(round(cfg.chunk_seconds * SAMPLE_RATE))
        self.n_crop = int(round(cfg.wavlm_seconds * SAMPLE_RATE))

    def wav(self, utt: str) -> np.ndarray:
        """The utterance at 16 kHz (kept while the budget lasts)."""
        if (wav := self.cache.get(("wav", utt))) is not None:
            return wav
        try:
            wav, sr = load_audio(self.data.wav_scp[utt])
        except AudioError as exc:
            raise AudioError(f"{self.data.path}: utterance {utt!r}: {exc}") from exc
        return self.cache.put(("wav", utt), resample(wav, sr, SAMPLE_RATE).astype(np.float32))

    def chunk_count(self, utt: str) -> int:
        """Examples the utterance gives per epoch: its fixed chunks loud enough (the kit's ``prepare_csv``)."""
        wav = self.wav(utt)
        n = len(wav) // self.n_chunk
        if n == 0:
            return 0
        means = np.abs(wav[:n * self.n_chunk]).reshape(n, self.n_chunk).mean(axis=1)
        return int((means >= self.cfg.min_amplitude).sum())

    @torch.no_grad()
    def _wavlm(self, crops: list[np.ndarray]) -> torch.Tensor:
        """``(layers, B, frames, dim)`` raw layer outputs of equal-length inputs (no padding mask, as the kit)."""
        x = torch.from_numpy(np.stack(crops)).to(self.device)
        layers, _ = wavlm_layer_outputs(self.model.wavlm, x, torch.full((len(crops),), x.shape[1], device=self.device))
        return torch.stack(list(layers))

    def __call__(self, utts: list[str], rng: np.random.Generator,
                 augment: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """Fbank features ``(B, T, n_mels)`` of random chunks and WavLM layer outputs ``(L, B, T', C)`` of crops.

        The generator draws each utterance's chunk start, then each longer utterance's crop start, in order,
        then (``augment``) the frequency and time dropout of the chunks.
        """
        wavs = [self.wav(u) for u in utts]
        chunks = sample_chunks([w[:, None] for w in wavs], self.n_chunk, rng, remove_mean=False)[..., 0]
        starts = [int(rng.integers(0, len(w) - self.n_crop + 1)) if len(w) > self.n_crop else None for w in wavs]
        if augment:
            chunks = drop_chunks(drop_frequencies(chunks, rng), rng)
        layers: list[torch.Tensor | None] = [None] * len(utts)
        todo = []
        for i, (utt, wav, start) in enumerate(zip(utts, wavs, starts)):
            kept = self.cache.get(("wavlm", utt)) if start is None else None
            if kept is not None:
                layers[i] = kept.to(self.device)
                continue
            std = standardize(torch.from_numpy(wav)[None], torch.tensor([len(wav)]))[0].numpy()
            todo.append((i, std[start:start + self.n_crop] if start is not None
                         else np.pad(std, (0, self.n_crop - len(std)))))
        if todo:
            computed = self._wavlm([crop for _, crop in todo])
            for k, (i, _) in enumerate(todo):
                layers[i] = computed[:, k]
                if starts[i] is None:
                    self.cache.put(("wavlm", utts[i]), computed[:, k].contiguous().cpu())  # not a view of the batch
        feats, _ = self.model.fbank(torch.from_numpy(chunks).to(self.device))
        return feats, torch.stack(layers, dim=1)

    def embed(self, feats: torch.Tensor, layers: torch.Tensor) -> torch.Tensor:
        """The ECAPA's embeddings (before normalisation) of one batch of :meth:`__call__`."""
        ecapa = self.model.ecapa
        n = torch.full((feats.shape[0],), feats.shape[1], device=feats.device)
        n_ssl = torch.full((feats.shape[0],), layers.shape[2], device=feats.device)
        return ecapa(feats, n, ecapa.weighted_sum(layers), n_ssl)


def _place_wavlm(source: str, folder: Path) -> None:
    """``WavLM-Large.pt`` beside a checkpoint, as the kit copies it: a hard link when possible, else a copy."""
    target = folder / WAVLM_FILE
    if target.exists() and os.path.samefile(source, target):
        return
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)
    except OSError:
        with open(source, "rb") as src, atomic_open(target) as dst:
            shutil.copyfileobj(src, dst, 2**24)


def kit_log_line(record: dict) -> str:
    """One ``train_log.txt`` line in the form of speechbrain's ``FileTrainLogger`` (the kit's selection reads it)."""
    return (f"epoch: {record['epoch']}, lr: {record['lr']:.2e} - train loss: {record['loss']:.6g} - "
            f"valid loss: {record['val_loss']:.6g}, valid ErrorRate: {record['val_error']:.6g}\n")


@dataclass
class EcapaSslRecipe(Recipe):
    """Shuffled full batches of the training examples; after each epoch, validation and ``CKPT+<epoch>``."""

    kit: KitBatches
    classifier: AAMSoftmax
    optimizer: torch.optim.Optimizer
    rng: np.random.Generator
    train: tuple[list[str], np.ndarray]
    val: tuple[list[str], np.ndarray]
    out: Path
    wavlm_file: str
    scheduler: torch.optim.lr_scheduler.CyclicLR
    val_loss: float = math.nan

    def _loss(self, utts: list[str], labels: np.ndarray, rng: np.random.Generator,
              augment: bool = False) -> tuple[torch.Tensor, int]:
        emb = self.kit.embed(*self.kit(utts, rng, augment))
        y = torch.from_numpy(labels).to(emb.device)
        wrong = int((F.linear(F.normalize(emb), F.normalize(self.classifier.weight)).argmax(1) != y).sum())
        return self.classifier(emb, y), wrong

    def steps(self, epoch: int) -> int:
        return len(self.train[0]) // self.kit.cfg.batch_size

    def batches(self, epoch: int):
        utts, labels = self.train
        batch_size = self.kit.cfg.batch_size
        order = self.rng.permutation(len(utts))
        self.kit.model.ecapa.train()
        for step in range(self.steps(epoch)):
            idx = order[step * batch_size:(step + 1) * batch_size]
            yield [utts[i] for i in idx], labels[idx]

    def loss(self, batch) -> tuple[torch.Tensor, float]:
        """The batch's loss (its chunks augmented when the settings say so)."""
        utts, labels = batch
        return self._loss(utts, labels, self.rng, self.kit.cfg.augment)[0], 1

    def end_epoch(self, epoch: int, loss: float) -> dict:
        """Validate and write ``CKPT+<epoch>``; the epoch's mean loss, last rate, validation loss and error."""
        self.val_loss, val_error = self.validation()
        folder = self.out / f"CKPT+{epoch}"
        folder.mkdir(exist_ok=True)
        save_atomic({k: v.detach().cpu() for k, v in self.kit.model.ecapa.state_dict().items()},
                    folder / ECAPA_FILE)
        _place_wavlm(self.wavlm_file, folder)
        return {"loss": loss, "lr": self.scheduler.get_last_lr()[0], "val_loss": self.val_loss, "val_error": val_error}

    def validate(self, epoch: int) -> float:
        return self.val_loss

    @torch.no_grad()
    def validation(self) -> tuple[float, float]:
        """Mean AAM loss and classification error of the validation examples (the same chunks every time)."""
        cfg = self.kit.cfg
        self.kit.model.ecapa.eval()
        rng = np.random.default_rng(cfg.seed + 1)
        utts, labels = self.val
        loss, wrong = 0.0, 0
        for start in range(0, len(utts), cfg.batch_size):
            part = slice(start, start + cfg.batch_size)
            batch_loss, batch_wrong = self._loss(utts[part], labels[part], rng)
            loss += batch_loss.item() * len(utts[part])
            wrong += batch_wrong
        return loss / len(utts), wrong / len(utts)


def load_pretrained(pretrained: str | os.PathLike) -> tuple[EcapaSsl, str, str]:
    """The pretrained ``ecapa_ssl`` model (WavLM frozen, ECAPA trainable) and its two files.

    ``pretrained`` is the kit's ``exp/asv_ssl`` (or its ``embedding_model.ckpt``); EncoderError or
    ContentError name a missing or wrong checkpoint.
    """
    ckpt, wavlm_file = asv_ssl_files(pretrained)
    cfg, wavlm_state = read_checkpoint(wavlm_file)
    model = ecapa_ssl_from_states(read_ecapa_state(ckpt), cfg, wavlm_state, ckpt, f"WavLM checkpoint {wavlm_file}")
    model.wavlm.requires_grad_(False)
    model.ecapa.requires_grad_(True)
    return model, ckpt, wavlm_file


def _chunk_counts(batches: KitBatches, saved: Path, quiet: bool) -> tuple[dict[str, int], dict]:
    """Every utterance's chunk count (reading all the audio once), or the counts ``saved`` by an earlier run of
    the same data and settings; returns them and what they depend on."""
    data, cfg = batches.data, batches.cfg
    scp = Path(data.path) / "wav.scp" if data.path is not None else None
    key = {"wav.scp": hashlib.sha256(json.dumps(sorted(data.wav_scp.items())).encode()).hexdigest(),
           "modified": scp.stat().st_mtime_ns if scp is not None and scp.is_file() else None,
           "chunk_seconds": cfg.chunk_seconds, "min_amplitude": cfg.min_amplitude}
    if saved.is_file():
        try:
            earlier = json.loads(saved.read_text(encoding="utf-8"))
        except ValueError:
            earlier = {}
        if earlier.get("key") == key:
            return earlier["counts"], key
    progress = Progress(len(data.wav_scp), "chunks", quiet=quiet)
    counts = {}
    for utt in data.wav_scp:
        counts[utt] = batches.chunk_count(utt)
        progress.update()
    progress.close()
    return counts, key


def _examples(counts: dict[str, int], utts: list[str],
              labels: dict[str, int]) -> tuple[list[str], np.ndarray, list[str]]:
    """Each utterance repeated by its chunk count, their labels, and the utterances that give none."""
    out = [u for u in utts for _ in range(counts[u])]
    return out, np.array([labels[u] for u in out], dtype=np.int64), [u for u in utts if counts[u] == 0]


def _check_output(out: Path) -> None:
    """Refuse a folder whose model would shadow the fine-tuned epochs, or that holds a fine-tuning not voxanon's."""
    if (out / ECAPA_FILE).is_file():
        raise ConfigError(f"{out} already holds an {ECAPA_FILE} of its own, which the evaluation would use instead "
                          "of the fine-tuned epochs; remove it or fine-tune into another folder")
    if not (out / MARKER).is_file() and ((out / TRAIN_LOG).exists() or any(out.glob("CKPT+*"))):
        raise ConfigError(f"{out} holds a fine-tuning voxanon did not write (CKPT+<epoch> folders or {TRAIN_LOG}, "
                          "e.g. the kit's); fine-tune into another folder")


def training_objects(model: EcapaSsl, n_speakers: int, cfg: EcapaSslSettings, device: str = "cpu"
                     ) -> tuple[AAMSoftmax, torch.optim.AdamW, torch.optim.lr_scheduler.CyclicLR]:
    """The kit's AAM-softmax classifier over ``n_speakers``, AdamW over the ECAPA and it, and the cyclic schedule."""
    classifier = AAMSoftmax(model.ecapa.cfg.embedding_dim, n_speakers, cfg.margin, cfg.scale).to(device)
    optimizer = torch.optim.AdamW([*model.ecapa.parameters(), *classifier.parameters()], lr=cfg.lr,
                                  weight_decay=cfg.weight_decay)
    scheduler = torch.optim.lr_scheduler.CyclicLR(optimizer, cfg.lr_min, cfg.lr, step_size_up=cfg.step_size,
                                                  cycle_momentum=False)
    return classifier, optimizer, scheduler


def train_ecapa_ssl(data: DataDir, out: str | os.PathLike, settings: EcapaSslSettings = EcapaSslSettings(), *,
                    pretrained: str | os.PathLike, device: str = "cpu", quiet: bool = False) -> TrainResult:
    """Fine-tune (or resume fine-tuning) the pretrained ``ecapa_ssl`` on ``data`` into ``out``.

    ``OUT`` gets the kit's layout (module docstring), so ``ecapa_ssl:OUT`` loads the epoch with the lowest
    validation loss (:attr:`TrainResult.model`: its ``CKPT+<epoch>/embedding_model.ckpt``; the log: the kit's
    ``train_log.txt``).

    Raises
    ------
    DataError
        Fewer than two speakers, or no training or validation chunk (utterances shorter than ``chunk_seconds``).
    ConfigError
        Fewer training chunks than ``batch_size``; ``OUT`` holds an ``embedding_model.ckpt`` of its own (it
        would shadow the fine-tuned epochs) or a fine-tuning voxanon did not write.
    EncoderError, ContentError
        ``pretrained`` is missing or not the kit's model.
    CheckpointError
        ``OUT/last.pt`` cannot be read or was made with other data, settings or pretrained model.
    """
    out = Path(out)
    _check_output(out)
    speakers = sorted(data.spk2utt)
    if len(speakers) < 2:
        raise DataError(f"{data.path}: the training set has {len(speakers)} speaker(s) "
                        f"({', '.join(speakers) or 'none'}); speaker training needs at least two")
    model, ckpt, wavlm_file = load_pretrained(pretrained)
    model = model.to(device)
    model.wavlm.eval()
    batches = KitBatches(data, model, settings, device)
    train_utts, val_utts = split_utterances(data, settings.val_fraction, settings.seed)
    spk_index = {s: i for i, s in enumerate(speakers)}
    labels = {u: spk_index[data.utt2spk[u]] for u in data.utt2spk}
    counts, counted = _chunk_counts(batches, out / COUNTS, quiet)
    train_x, train_y, train_none = _examples(counts, train_utts, labels)
    val_x, val_y, val_none = _examples(counts, val_utts, labels)
    short = f"utterances shorter than the {settings.chunk_seconds} s chunk (or quieter) give none"
    if not train_x:
        raise DataError(f"{data.path}: no training chunk: {short}")
    if not val_x:
        raise DataError(f"{data.path}: no validation chunk ({len(val_utts)} held-out utterance(s)): {short}; "
                        "speakers need more utterances each, or raise val_fraction")
    if len(train_x) < settings.batch_size:
        raise ConfigError(f"{data.path}: {len(train_x)} training chunks, fewer than one batch of "
                          f"{settings.batch_size}; lower the batch size")
    if (train_none or val_none) and not quiet:
        skipped = train_none + val_none
        print(f"{len(skipped)} utterance(s) give no {settings.chunk_seconds} s chunk and are not used: "
              f"{', '.join(skipped[:10])}{' ...' if len(skipped) > 10 else ''}")
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / MARKER, json.dumps({"data": str(data.path), "pretrained": ckpt, "wavlm": wavlm_file,
                                         "settings": asdict(settings)}, indent=1) + "\n")
    write_text(out / COUNTS, json.dumps({"key": counted, "counts": counts}) + "\n")
    torch.manual_seed(settings.seed)
    classifier, optimizer, scheduler = training_objects(model, len(speakers), settings, device)
    rng = np.random.default_rng(settings.seed)
    resumable = {k: v for k, v in asdict(settings).items() if k not in ("epochs", "cache_gb")}
    trainer = Trainer(Budget(epochs=settings.epochs),
                      state={"ecapa": model.ecapa, "classifier": classifier, "optimizer": optimizer,
                             "scheduler": scheduler},
                      rngs={"batches": rng}, checkpoint=out / "last.pt",
                      identity={"speakers": speakers, "val_utts": [str(u) for u in val_utts], "settings": resumable,
                                "pretrained": [file_digest(ckpt), file_digest(wavlm_file)]},
                      columns=("epoch", "loss", "val_loss", "val_error", "lr"), metric="val_loss", quiet=quiet)
    if trainer.resume() and not quiet:
        print(f"resuming after epoch {trainer.epoch} from {trainer.checkpoint}")

    def write_log(_record: dict | None = None) -> None:
        write_text(out / TRAIN_LOG, "".join(kit_log_line(r) for r in trainer.history))
        if _record is not None and not quiet:
            print(f"epoch {_record['epoch']}: loss {_record['loss']:.3f}, validation loss {_record['val_loss']:.3f}, "
                  f"error {100 * _record['val_error']:.1f} % (best loss {trainer.best:.3f})")

    write_log()
    recipe = EcapaSslRecipe(batches, classifier, optimizer, rng, (train_x, train_y), (val_x, val_y), out, wavlm_file,
                            scheduler)
    trainer.run(recipe, after_epoch=write_log)
    best = min(trainer.history, key=lambda r: r["val_loss"])
    summary = {"speakers": len(speakers), "train_utts": len(train_utts), "val_utts": len(val_utts),
               "train_chunks": len(train_x), "val_chunks": len(val_x), "unused_utts": train_none + val_none,
               "steps_per_epoch": len(train_x) // settings.batch_size, "epoch": trainer.epoch,
               "best_epoch": best["epoch"], "best_val_loss": best["val_loss"]}
    return trainer.result(out, out / f"CKPT+{best['epoch']}" / ECAPA_FILE, summary, log=out / TRAIN_LOG)
