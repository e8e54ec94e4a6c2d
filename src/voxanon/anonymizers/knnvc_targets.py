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

Keys and values are stored as float16 (a match differs from float32's by
rounding only). A set is a folder named by the sha256 of the source's identity
(TTS spec and texts, or audio paths with sizes and modification times), the
encoder, the vocoder and the trimming threshold, in the cache
(``$VOXANON_CACHE/knnvc``, default ``~/.cache/voxanon/knnvc``). It holds
``keys.npy``, ``values.npy`` and ``meta.json``, which records the sha256 of
both array files; it is written to a temporary folder and renamed into place
in one step, and loaded memory-mapped: workers that match against the same
targets share one copy in the page cache.

The default targets' sets also ship with the package, packed to a sixth of
their float16 size (:func:`pack`: 4-bit keys, 8-bit values, a range per
dimension; docs/experiments/knnvc.md, "Shipped matching sets") and listed
with their sha256 in ``voxanon/resources/knnvc/manifest.json``. A set the
cache lacks is unpacked from there into the cache in seconds, so the first
``knnvc`` call builds nothing. A stored set whose files are missing or do not
match their digests is said so on one line and rebuilt.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from voxanon.atomic import atomic_folder
from voxanon.audio.io import load_audio, resample
from voxanon.dsp.frames import interpolate_frames
from voxanon.errors import DataError
from voxanon.models.model_files import short_reason
from voxanon.progress import Progress

#: bump when the matching-set computation changes (invalidates caches). 2: feature vocoders' target
#: silence is trimmed on the waveform's mels (version 1 trimmed on the features and kept the silence);
#: 3: float16 arrays with their digests in meta.json
FORMAT_VERSION = 3
#: packed keys: 4-bit codes over each dimension's range between these percentiles (the tails are clipped)
KEY_BITS, KEY_CLIP_PERCENT = 4, 0.1
VALUE_BITS = 8


class CorruptSetError(DataError):
    """A stored matching set whose files are missing, unreadable or do not match their recorded digests."""


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


def shipped_root() -> Path:
    """The packed matching sets shipped with the package, and their ``manifest.json``."""
    return Path(__file__).resolve().parents[1] / "resources" / "knnvc"


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


def set_name(source: TargetSource, encoder, vocoder, trim_db: float = 40.0) -> str:
    """The name of the matching set of ``source`` under this encoder, vocoder and trimming (a sha256)."""
    ident = json.dumps([FORMAT_VERSION, list(source.identity), encoder.name, vocoder.name, trim_db], default=str)
    return hashlib.sha256(ident.encode()).hexdigest()


def sha256_file(path: Path) -> str:
    """The sha256 of a file's bytes, in hex."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 22):
            h.update(block)
    return h.hexdigest()


def store(ms: MatchingSet, path: Path) -> None:
    """Write ``ms`` into the folder ``path`` in one step, float16, with the sha256 of each array file; a set another
    process stored first is kept."""
    with atomic_folder(path) as tmp:
        digests = {}
        for name in ("keys", "values"):
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(getattr(ms, name), dtype=np.float16))
            digests[name] = sha256_file(tmp / f"{name}.npy")
        meta = {"name": ms.name, "log_f0_mean": ms.log_f0_mean, "sha256": digests}
        (tmp / "meta.json").write_text(json.dumps(meta, indent=1))


#: set folders whose files were checked in this process, with their ``meta.json``'s modification time then
_verified: dict[Path, int] = {}


def load(path: Path, name: str) -> MatchingSet:
    """The matching set in the folder ``path``, memory-mapped (read-only), after checking its files against the
    digests in its ``meta.json`` (once per process); :class:`CorruptSetError` if one is missing or differs."""
    try:
        meta = json.loads((path / "meta.json").read_text())
        mtime = (path / "meta.json").stat().st_mtime_ns
        if _verified.get(path) != mtime:
            for array in ("keys", "values"):
                if sha256_file(path / f"{array}.npy") != meta["sha256"][array]:
                    raise CorruptSetError(f"matching set {path}: {array}.npy does not match its recorded sha256")
            _verified[path] = mtime
        return MatchingSet(name, np.load(path / "keys.npy", mmap_mode="r"), np.load(path / "values.npy", mmap_mode="r"),
                           float(meta["log_f0_mean"]))
    except CorruptSetError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise CorruptSetError(f"matching set {path}: unreadable ({short_reason(e)})") from e


def _quantize(x: np.ndarray, bits: int, clip_percent: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Codes ``(N, D)`` of ``bits`` bits over each column's range (between the ``clip_percent`` and
    ``100 - clip_percent`` percentiles), with the columns' lower ends and steps."""
    x = np.asarray(x, dtype=np.float32)
    low, high = np.percentile(x, [clip_percent, 100 - clip_percent], axis=0) if clip_percent else (x.min(0), x.max(0))
    step = np.maximum(high - low, 1e-12) / (2**bits - 1)
    codes = np.clip(np.rint((x - low) / step), 0, 2**bits - 1).astype(np.uint8)
    return codes, low.astype(np.float32), step.astype(np.float32)


def pack(ms: MatchingSet) -> dict[str, np.ndarray]:
    """``ms`` in its shipped form: keys as 4-bit codes (two per byte) over each dimension's range with the outer
    0.1 % clipped, values as 8-bit codes over each band's range, and the mean log-F0 (:func:`unpack` reverses it,
    up to the codes' rounding)."""
    codes, key_low, key_step = _quantize(ms.keys, KEY_BITS, KEY_CLIP_PERCENT)
    codes = np.pad(codes, ((0, 0), (0, codes.shape[1] % 2)))
    value_codes, value_low, value_step = _quantize(ms.values, VALUE_BITS, 0.0)
    return {"key_codes": codes[:, 0::2] | (codes[:, 1::2] << 4), "key_low": key_low, "key_step": key_step,
            "value_codes": value_codes, "value_low": value_low, "value_step": value_step,
            "log_f0_mean": np.float64(ms.log_f0_mean)}


def unpack(packed, name: str) -> MatchingSet:
    """The matching set of a :func:`pack`-ed mapping of arrays (keys renormalised to unit length)."""
    pairs = packed["key_codes"]
    codes = np.empty((len(pairs), 2 * pairs.shape[1]), dtype=np.uint8)
    codes[:, 0::2], codes[:, 1::2] = pairs & 0x0F, pairs >> 4
    dims = len(packed["key_low"])
    keys = codes[:, :dims] * packed["key_step"] + packed["key_low"]
    keys /= np.linalg.norm(keys, axis=1, keepdims=True) + 1e-8
    values = packed["value_codes"] * packed["value_step"] + packed["value_low"]
    return MatchingSet(name, keys.astype(np.float16), values.astype(np.float16), float(packed["log_f0_mean"]))


def shipped_manifest() -> dict:
    """``{set name: {"target", "sha256", "frames"}}`` of the shipped packed sets (empty when none ship)."""
    path = shipped_root() / "manifest.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def _say(problem: CorruptSetError) -> None:
    print(f"knnvc: {problem}; it will be rebuilt in {cache_root()}", file=sys.stderr, flush=True)


def _unpack_shipped(name: str, target: str) -> MatchingSet | None:
    """The shipped set ``name`` unpacked, or ``None`` if none ships under that name or it is corrupt (said)."""
    entry = shipped_manifest().get(name)
    if entry is None:
        return None
    path = shipped_root() / f"{name}.npz"
    try:
        if not path.is_file() or sha256_file(path) != entry["sha256"]:
            raise CorruptSetError(f"shipped matching set {path}: " + ("missing" if not path.is_file() else
                                                                      "does not match the sha256 of its manifest"))
        with np.load(path) as packed:
            return unpack(packed, target)
    except CorruptSetError as e:
        _say(e)
    except (OSError, ValueError, KeyError) as e:
        _say(CorruptSetError(f"shipped matching set {path}: unreadable ({short_reason(e)})"))
    return None


def find(source: TargetSource, encoder, vocoder, trim_db: float = 40.0) -> MatchingSet | None:
    """The stored matching set of ``source``: from the cache, else unpacked from the shipped sets into the cache;
    ``None`` when neither has it. A cached set that is missing files or does not match its digests is said so on
    one line and removed; a corrupt shipped one is said so and passed over."""
    path = cache_root() / set_name(source, encoder, vocoder, trim_db)
    if path.is_dir():
        try:
            return load(path, source.name)
        except CorruptSetError as e:
            _say(e)
            shutil.rmtree(path, ignore_errors=True)
    shipped = _unpack_shipped(path.name, source.name)
    if shipped is None:
        return None
    store(shipped, path)
    return load(path, source.name)


def matching_set(source: TargetSource, encoder, vocoder, trim_db: float = 40.0,
                 progress: Progress | None = None) -> MatchingSet:
    """The stored matching set of ``source`` (:func:`find`), computed and cached when there is none."""
    found = find(source, encoder, vocoder, trim_db)
    if found is not None:
        return found
    path = cache_root() / set_name(source, encoder, vocoder, trim_db)
    store(compute_matching_set(source, encoder, vocoder, trim_db, progress), path)
    return load(path, source.name)
