"""Matching sets of kNN-VC target speakers: built once, cached on disk by content hash.

A matching set holds, for every silence-trimmed frame of a target speaker's
speech, a *key* (content-encoder features, L2-normalised, interpolated to the
vocoder's frame times) and a *value* (the vocoder's features of that frame:
HiFi-GAN log-mels), plus the speaker's mean voiced log-F0 (for prosody
transfer). Sources of target speech:

- ``tts_sources(specs, n_sentences)``: synthetic voices from ``load_tts(spec)``
  (any spec it knows: ``piper``, ``espeak-ng:<v>``, ``flite:<v>``, ``kokoro:<v>``),
  each reading the same shipped sentences;
- ``dir_sources(path)``: a Kaldi data directory (one target per speaker) or an
  audio folder (one target per subfolder; a flat folder is one target).

The cache entry is a folder named by the sha256 of the source's identity
(TTS spec and texts, or audio paths with sizes and modification times), the
encoder, the vocoder and the trimming threshold, under ``$VOXANON_CACHE/knnvc``
(default ``~/.cache/voxanon/knnvc``). It holds ``keys.npy``, ``values.npy``
and ``meta.json``, written to a temporary folder and renamed into place in one
step. Sets are loaded memory-mapped: workers that match against the same
targets share one copy in the page cache instead of each holding ~100 MB per
target. A cache from before this layout (``<sha256>.npz``) is converted on
first use.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from voxanon.atomic import atomic_folder
from voxanon.audio.io import load_audio, resample
from voxanon.dsp.frames import interpolate_frames
from voxanon.errors import DataError
from voxanon.progress import Progress

#: bump when the matching-set computation changes (invalidates caches). 2: feature vocoders' target
#: silence is trimmed on the waveform's mels (version 1 trimmed on the features and kept the silence)
FORMAT_VERSION = 2


@dataclasses.dataclass(frozen=True)
class TargetSource:
    """How to get one target speaker's speech: an identity for the cache and a loader of (wav, sr) pairs."""

    name: str
    identity: tuple
    load: Callable[[], Iterator[tuple[np.ndarray, int]]]
    size: int  #: pieces (sentences or files) that ``load`` yields


@dataclasses.dataclass(frozen=True)
class MatchingSet:
    """Keys ``(N, D)`` (unit norm), values ``(N, F)``, and the mean voiced log-F0 of one target."""

    name: str
    keys: np.ndarray
    values: np.ndarray
    log_f0_mean: float


def cache_root() -> Path:
    """``$VOXANON_CACHE/knnvc`` or ``~/.cache/voxanon/knnvc``."""
    return Path(os.environ.get("VOXANON_CACHE") or Path.home() / ".cache" / "voxanon") / "knnvc"


def tts_sources(specs: tuple[str, ...], texts: list[str]) -> list[TargetSource]:
    """One target per TTS voice spec, each reading ``texts``."""

    def loader(spec: str) -> Callable[[], Iterator[tuple[np.ndarray, int]]]:
        def load() -> Iterator[tuple[np.ndarray, int]]:
            from voxanon.models.tts import load_tts

            voice = load_tts(spec)
            for text in texts:
                yield voice.synthesize(text)
        return load

    return [TargetSource(spec, ("tts", spec, tuple(texts)), loader(spec), len(texts)) for spec in specs]


def _file_sources(groups: dict[str, list[str]]) -> list[TargetSource]:
    def loader(paths: list[str]) -> Callable[[], Iterator[tuple[np.ndarray, int]]]:
        return lambda: (load_audio(p) for p in paths)

    out = []
    for name, paths in groups.items():
        ident = []
        for p in paths:
            st = os.stat(p) if not p.rstrip().endswith("|") else None
            ident.append((p, st.st_size if st else 0, st.st_mtime_ns if st else 0))
        out.append(TargetSource(name, ("files", tuple(ident)), loader(paths), len(paths)))
    return out


def dir_sources(path: str | os.PathLike) -> list[TargetSource]:
    """Targets from a Kaldi data directory (per speaker) or an audio folder (per subfolder)."""
    path = Path(path)
    if (path / "wav.scp").is_file():
        from voxanon.data.kaldi import read_data_dir

        data = read_data_dir(path)
        groups = {spk: [data.wav_scp[u] for u in utts] for spk, utts in data.spk2utt.items()}
    else:
        from voxanon.data.folder import scan_audio_folder

        groups = {}
        for utt, file in scan_audio_folder(path).items():
            groups.setdefault(utt.rpartition("/")[0] or path.name, []).append(str(file))
    if not groups:
        raise DataError(f"targets={path}: no target speakers found")
    return _file_sources(groups)


def trim_mask(mel: np.ndarray, trim_db: float) -> np.ndarray:
    """Frames whose energy (from natural-log mel magnitudes) is within ``trim_db`` of the loudest frame."""
    energy = np.log(np.exp(mel).sum(axis=1) + 1e-12)
    return energy >= energy.max() - trim_db / 20.0 * np.log(10.0)


def mean_log_f0(wav: np.ndarray, sr: int) -> float:
    """Mean voiced log-F0 (DIO + StoneMask); NaN without voiced frames."""
    from voxanon.dsp.world import estimate_f0

    f0, _ = estimate_f0(np.asarray(wav, dtype=np.float64), sr)
    voiced = f0[f0 > 0]
    return float(np.log(voiced).mean()) if len(voiced) else float("nan")


def compute_matching_set(source: TargetSource, encoder, vocoder, trim_db: float,
                         progress: Progress | None = None) -> MatchingSet:
    """Keys, values and mean log-F0 of one target's speech (all of it encoded as one 16 kHz signal).

    ``progress`` counts the source's pieces as they load (with their seconds of audio).
    """
    gap = np.zeros(1600, dtype=np.float32)
    parts = []
    for wav, sr in source.load():
        parts += [resample(np.asarray(wav, dtype=np.float32), sr, 16000), gap]
        if progress is not None:
            progress.update(audio_seconds=len(wav) / sr)
    wav = np.concatenate(parts) if parts else gap
    if not np.any(wav):
        raise DataError(f"target {source.name}: no speech (all audio silent or empty)")
    mel = vocoder.analyze(wav, 16000)
    feats = encoder.encode(wav, 16000)
    keys = interpolate_frames(feats, encoder.frame_rate, len(mel), vocoder.sample_rate / vocoder.hop_length)
    keep = trim_mask(vocoder.level_mels(wav, 16000, mel), trim_db)
    keys = keys[keep] / (np.linalg.norm(keys[keep], axis=1, keepdims=True) + 1e-8)
    return MatchingSet(source.name, keys.astype(np.float32), mel[keep].astype(np.float32), mean_log_f0(wav, 16000))


def cache_path(source: TargetSource, encoder, vocoder, trim_db: float = 40.0) -> Path:
    """The folder where the matching set of ``source`` under this encoder, vocoder and trimming is cached."""
    ident = json.dumps([FORMAT_VERSION, list(source.identity), encoder.name, vocoder.name, trim_db], default=str)
    return cache_root() / hashlib.sha256(ident.encode()).hexdigest()


def is_cached(source: TargetSource, encoder, vocoder, trim_db: float = 40.0) -> bool:
    """Whether the matching set of ``source`` is in the cache (in this layout or the older ``.npz``)."""
    path = cache_path(source, encoder, vocoder, trim_db)
    return path.is_dir() or path.with_suffix(".npz").is_file()


def store(ms: MatchingSet, path: Path) -> None:
    """Write ``ms`` into the folder ``path`` in one step; a set another process stored first is kept."""
    with atomic_folder(path) as tmp:
        np.save(tmp / "keys.npy", np.ascontiguousarray(ms.keys, dtype=np.float32))
        np.save(tmp / "values.npy", np.ascontiguousarray(ms.values, dtype=np.float32))
        (tmp / "meta.json").write_text(json.dumps({"name": ms.name, "log_f0_mean": ms.log_f0_mean}))


def load(path: Path, name: str) -> MatchingSet:
    """The matching set in the cache folder ``path``, keys and values memory-mapped (read-only)."""
    meta = json.loads((path / "meta.json").read_text())
    return MatchingSet(name, np.load(path / "keys.npy", mmap_mode="r"), np.load(path / "values.npy", mmap_mode="r"),
                       float(meta["log_f0_mean"]))


def matching_set(source: TargetSource, encoder, vocoder, trim_db: float = 40.0,
                 progress: Progress | None = None) -> MatchingSet:
    """The cached matching set of ``source``, computing and storing it on first use."""
    path = cache_path(source, encoder, vocoder, trim_db)
    legacy = path.with_suffix(".npz")
    if not path.is_dir() and legacy.is_file():
        try:
            with np.load(legacy) as z:
                store(MatchingSet(source.name, z["keys"], z["values"], float(z["log_f0_mean"])), path)
            legacy.unlink(missing_ok=True)
        except FileNotFoundError:      # another process converted it meanwhile
            pass
    if not path.is_dir():
        store(compute_matching_set(source, encoder, vocoder, trim_db, progress), path)
    return load(path, source.name)
