"""Batched speaker-embedding extraction over a data directory, with an on-disk cache.

Cache key
---------
An embedding is stored under ``<cache>/<encoder.name>/<key[:2]>/<key>.npy``
where ``key`` is the SHA-256 of the audio *content*: the bytes of the file a
``wav.scp`` entry names, or, for a pipe entry (``flac -c -d -s x.flac |``), the
command text with every file it names replaced by that file's content hash.
Hashing bytes (rather than path + size + mtime) costs a read of the file,
far less than computing the embedding, and stays right when an anonymizer
rewrites ``wav/<utt>.wav`` in place with a same-length waveform, or when a
corpus is moved or copied with its timestamps. The encoder name carries a hash
of the weights, so a retrained attacker never reuses stale embeddings.

Each batch is written as soon as it is computed (atomically), so a crashed run
resumes where it stopped and a rerun with other metrics computes nothing.

Preprocessing
-------------
Before embedding, every waveform goes through :func:`vpc_normalize`, as the
VPC 2024 extraction does (``normalize_wave`` then ``np.trim_zeros``): leading
and trailing digital silence (exact zeros) is cut and the level normalised.
The VPC normalises loudness to -30 LUFS and then divides by the peak; both are
gains, so the result is the peak-normalised waveform, which is what this does
without a loudness meter. The cache directory name carries
:data:`PREPROCESSING`, so embeddings made without it are never reused.
"""

from __future__ import annotations

import hashlib
import os
import shlex
from pathlib import Path

import numpy as np

from voxanon.atomic import atomic_open
from voxanon.audio.io import AudioError, load_audio
from voxanon.data.kaldi import DataDir
from voxanon.models.speaker import SpeakerEncoder
from voxanon.progress import Progress

#: tag of the preprocessing in the cache path; change it whenever :func:`vpc_normalize` changes
PREPROCESSING = "trim0-peak"


def vpc_normalize(wav: np.ndarray) -> np.ndarray:
    """Cut leading/trailing exact zeros and scale to peak 1 (see the module docstring).

    An all-zero waveform is returned unchanged (the encoder decides what it makes of it).
    """
    wav = np.asarray(wav, dtype=np.float32)
    nonzero = np.flatnonzero(wav)
    if nonzero.size == 0:
        return wav
    wav = wav[nonzero[0]:nonzero[-1] + 1]
    return wav / np.abs(wav).max()


def _hash_file(path: str, h) -> None:
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)


def audio_key(entry: str) -> str:
    """Content hash of a ``wav.scp`` entry (see the module docstring)."""
    entry = entry.strip()
    h = hashlib.sha256()
    if not entry.endswith("|"):
        if not os.path.isfile(entry):
            raise AudioError(f"audio file not found: {entry}")
        _hash_file(entry, h)
        return h.hexdigest()
    for token in shlex.split(entry[:-1]):
        if os.path.isfile(token):
            h.update(b"<file:")
            _hash_file(token, h)
            h.update(b">")
        else:
            h.update(token.encode() + b"\0")
    return h.hexdigest()


class EmbeddingCache:
    """One ``.npy`` file per (encoder, audio content); writes are atomic.

    ``preprocessing`` names what was done to the audio before the encoder (part of the folder name).
    """

    def __init__(self, root: str | os.PathLike, encoder_name: str, preprocessing: str = PREPROCESSING) -> None:
        self.root = Path(root) / f"{encoder_name}+{preprocessing}"

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.npy"

    def get(self, key: str) -> np.ndarray | None:
        """The cached embedding, or None (an unreadable entry counts as missing)."""
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            return np.load(path)
        except (OSError, ValueError):
            return None

    def put(self, key: str, embedding: np.ndarray) -> None:
        """Store an embedding (temporary file, then rename)."""
        with atomic_open(self._path(key)) as fh:
            np.save(fh, np.asarray(embedding, dtype=np.float32))


def extract_embeddings(
    data: DataDir,
    encoder: SpeakerEncoder,
    *,
    utts: list[str] | None = None,
    cache_dir: str | os.PathLike | None = None,
    batch_size: int = 16,
    quiet: bool = False,
) -> dict[str, np.ndarray]:
    """Embed the utterances of ``data`` (all, or ``utts``), reusing cached embeddings.

    Utterances are embedded in batches of about equal duration (sorted by
    length when ``utt2dur`` is known) so padding stays small.

    Raises
    ------
    AudioError
        An utterance that cannot be read; its id is named. Batches finished
        before it are already in the cache.
    """
    utts = list(data.wav_scp) if utts is None else utts
    missing = [u for u in utts if u not in data.wav_scp]
    if missing:
        raise AudioError(f"{data.path}: utterance {missing[0]!r} is not in wav.scp ({len(missing)} missing)")
    cache = EmbeddingCache(cache_dir, encoder.name) if cache_dir is not None else None
    out: dict[str, np.ndarray] = {}
    keys: dict[str, str] = {}
    todo = []
    for utt in utts:
        if cache is not None:
            try:
                keys[utt] = audio_key(data.wav_scp[utt])
            except (AudioError, OSError) as exc:
                raise AudioError(f"{data.path}: utterance {utt!r}: {exc}") from exc
            hit = cache.get(keys[utt])
            if hit is not None:
                out[utt] = hit
                continue
        todo.append(utt)
    if data.utt2dur:
        todo.sort(key=lambda u: float(data.utt2dur.get(u, 0.0)))
    progress = Progress(len(todo), f"embeddings ({encoder.name})", quiet=quiet or not todo)
    for start in range(0, len(todo), batch_size):
        batch = todo[start:start + batch_size]
        wavs, rates = [], []
        for utt in batch:
            try:
                wav, sr = load_audio(data.wav_scp[utt])
            except AudioError as exc:
                raise AudioError(f"{data.path}: utterance {utt!r}: {exc}") from exc
            wavs.append(vpc_normalize(wav))
            rates.append(sr)
        for sr in sorted(set(rates)):
            idx = [i for i, r in enumerate(rates) if r == sr]
            embs = encoder.embed([wavs[i] for i in idx], sr)
            for i, emb in zip(idx, embs):
                out[batch[i]] = emb
                if cache is not None:
                    cache.put(keys[batch[i]], emb)
        progress.update(len(batch), audio_seconds=sum(len(w) / r for w, r in zip(wavs, rates)))
    if todo:
        progress.close()
    return {u: out[u] for u in utts}
