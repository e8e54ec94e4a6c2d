"""A pool of speaker embeddings that pseudo-speakers are drawn from, stored as ``.npz``.

The pool must be disjoint from the speakers an evaluation anonymizes (VPC B1
uses LibriTTS train-other-500 for LibriSpeech test speakers). File layout
(``np.savez_compressed``):

``embeddings``       (N, D) speaker-level embeddings (unit norm; float32 or float16)
``speakers``         (N,) speaker ids
``genders``          (N,) ``'f'`` or ``'m'``
``encoder``          () the speaker encoder's spec (``ge2e``) the embeddings come from
``utt_embeddings``   (M, D) optional utterance-level embeddings
``utt_speakers``     (M,) optional index of each utterance's speaker into ``speakers``

Loading casts to float32 and renormalises, so float16 files lose only precision.
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voxanon.atomic import atomic_open
from voxanon.errors import DataError

GENDERS = ("f", "m")


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` (or the vector ``x``) scaled to unit L2 norm, as float32."""
    x = np.asarray(x, dtype=np.float32)
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(norm, 1e-12)


@dataclass
class SpeakerPool:
    """Speaker embeddings with ids and genders (see the module docstring for the fields)."""

    embeddings: np.ndarray
    speakers: np.ndarray
    genders: np.ndarray
    encoder: str
    utt_embeddings: np.ndarray | None = None
    utt_speakers: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.embeddings = unit_rows(self.embeddings)
        self.speakers = np.asarray(self.speakers, dtype=str)
        self.genders = np.asarray(self.genders, dtype=str)
        if self.utt_embeddings is not None:
            self.utt_embeddings = unit_rows(self.utt_embeddings)
            self.utt_speakers = np.asarray(self.utt_speakers, dtype=np.int64)
        problem = self._problem()
        if problem:
            raise DataError(f"speaker pool: {problem}")

    def _problem(self) -> str | None:
        emb = self.embeddings
        if emb.ndim != 2 or emb.shape[0] == 0:
            return f"embeddings must be a non-empty (N, D) array, got shape {emb.shape}"
        if not np.isfinite(emb).all():
            return "embeddings contain NaN or infinite values"
        n = emb.shape[0]
        if self.speakers.shape != (n,) or self.genders.shape != (n,):
            return f"{n} embeddings but {self.speakers.size} speaker ids and {self.genders.size} genders"
        if len(set(self.speakers.tolist())) != n:
            return "speaker ids are not unique"
        bad = sorted(set(self.genders.tolist()) - set(GENDERS))
        if bad:
            return f"gender {bad[0]!r} is not 'f' or 'm'"
        if (self.utt_embeddings is None) != (self.utt_speakers is None):
            return "utt_embeddings and utt_speakers must be given together"
        if self.utt_embeddings is not None:
            u = self.utt_embeddings
            if u.ndim != 2 or u.shape[1] != emb.shape[1] or self.utt_speakers.shape != (u.shape[0],):
                return (f"utterance embeddings of shape {u.shape} with {self.utt_speakers.size} speaker indices "
                        f"do not match speaker embeddings of shape {emb.shape}")
            if not np.isfinite(u).all():
                return "utterance embeddings contain NaN or infinite values"
            if u.shape[0] and (self.utt_speakers.min() < 0 or self.utt_speakers.max() >= n):
                return "utt_speakers indexes past the speaker list"
        return None

    @property
    def dim(self) -> int:
        """Embedding size."""
        return int(self.embeddings.shape[1])

    def __len__(self) -> int:
        return int(self.embeddings.shape[0])

    def training_points(self) -> np.ndarray:
        """Utterance-level embeddings when the pool has them (more points), else the speaker-level ones."""
        if self.utt_embeddings is not None and len(self.utt_embeddings):
            return self.utt_embeddings
        return self.embeddings

    def save(self, path: str | os.PathLike, dtype: str = "float32") -> Path:
        """Write the pool as ``.npz`` (atomically) with embeddings stored as ``dtype`` (float32 or float16)."""
        arrays = {"embeddings": self.embeddings.astype(dtype), "speakers": self.speakers,
                  "genders": self.genders, "encoder": np.asarray(self.encoder)}
        if self.utt_embeddings is not None:
            arrays["utt_embeddings"] = self.utt_embeddings.astype(dtype)
            arrays["utt_speakers"] = self.utt_speakers
        with atomic_open(path) as fh:
            np.savez_compressed(fh, **arrays)
        return Path(path)


def load_pool(path: str | os.PathLike) -> SpeakerPool:
    """Read a pool written by :meth:`SpeakerPool.save`; a missing or malformed file raises DataError."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"speaker pool {path}: no such file (build one with 'voxanon data speaker-pool')")
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise DataError(f"speaker pool {path}: not a readable .npz file ({exc})") from exc
    missing = [k for k in ("embeddings", "speakers", "genders", "encoder") if k not in arrays]
    if missing:
        raise DataError(f"speaker pool {path}: missing array {missing[0]!r} (not a voxanon speaker pool?)")
    try:
        return SpeakerPool(embeddings=arrays["embeddings"], speakers=arrays["speakers"], genders=arrays["genders"],
                           encoder=str(arrays["encoder"]), utt_embeddings=arrays.get("utt_embeddings"),
                           utt_speakers=arrays.get("utt_speakers"))
    except DataError as exc:
        raise DataError(f"{path}: {exc}") from None
