"""Training features of the acoustic model, one cached file per utterance.

For every utterance of the given data directories: the clean HiFi-GAN log-mels
(the target), the F3-VA pitch, the speaker embedding of the clean speech, and
content features of ``n_perturb`` randomly voice-perturbed copies (WORLD
resynthesis with a warped envelope and scaled F0; ``n_perturb = 0`` gives the
clean content, used for validation). Files are named by the sha256 of the
audio bytes (or of the pipe command) and of everything that shapes the
features, under ``cache_dir``; a rerun reads them instead of extracting.
Unusable utterances are skipped with a line naming them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from voxanon.atomic import atomic_open
from voxanon.audio.io import load_audio, resample
from voxanon.data.kaldi import read_data_dir
from voxanon.dsp import world
from voxanon.dsp.frames import relative_pitch
from voxanon.dsp.perturb import perturb_voice, random_factors
from voxanon.errors import VoxanonError
from voxanon.models.acoustic.features import F0_PERIOD_MS, content_frames
from voxanon.models.acoustic.inference import ModelSpecs
from voxanon.progress import Progress

#: bump when the extraction changes (invalidates cached files)
FORMAT_VERSION = 1
#: utterances shorter than this many vocoder frames are skipped
MIN_FRAMES = 16


@dataclasses.dataclass(frozen=True, eq=False)
class UttFeatures:
    """Features of one utterance (float16 arrays to halve memory; ``content`` is (copies, T, D))."""

    utt: str
    speaker: str
    content: np.ndarray
    pitch: np.ndarray
    mel: np.ndarray
    embedding: np.ndarray

    @property
    def n_frames(self) -> int:
        return len(self.mel)


def default_cache_dir() -> Path:
    """``$VOXANON_CACHE/acoustic`` or ``~/.cache/voxanon/acoustic``."""
    return Path(os.environ.get("VOXANON_CACHE") or Path.home() / ".cache" / "voxanon") / "acoustic"


def _source_digest(entry: str) -> str:
    text = entry.strip()
    h = hashlib.sha256()
    if text.endswith("|"):
        h.update(text.encode())
    else:
        with open(text, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


class Extractor:
    """Computes (or reads from the cache) :class:`UttFeatures` for ``specs``."""

    def __init__(self, specs: ModelSpecs, cache_dir: str | os.PathLike, seed: int = 0) -> None:
        from voxanon.models.content import load_content_encoder
        from voxanon.models.speaker import load_encoder
        from voxanon.models.vocoder import load_vocoder

        self.specs, self.seed = specs, seed
        self.cache_dir = Path(cache_dir)
        self.encoder = load_content_encoder(specs.content)
        self.speaker = load_encoder(specs.speaker)
        self.vocoder = load_vocoder(specs.vocoder)
        self.ident = json.dumps([FORMAT_VERSION, self.encoder.name, self.speaker.name, self.vocoder.name, seed])

    @property
    def frame_rate(self) -> float:
        """Feature frames (the vocoder's) per second."""
        return self.vocoder.sample_rate / self.vocoder.hop_length

    def _compute(self, wav: np.ndarray, sr: int, n_perturb: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        voc = self.vocoder
        mel = voc.analyze(wav, sr)
        n, rate = len(mel), self.frame_rate
        wav16 = resample(np.asarray(wav, dtype=np.float32), sr, 16000)
        feats = world.analyze(wav16, 16000, frame_period=F0_PERIOD_MS)
        copies = [perturb_voice(feats, *random_factors(rng)) for _ in range(n_perturb)] or [wav16]
        content = np.stack([content_frames(c, 16000, self.encoder, n, rate) for c in copies])
        return {"content": content.astype(np.float16),
                "pitch": relative_pitch(feats.f0, 1000.0 / F0_PERIOD_MS, n, rate),
                "mel": mel.astype(np.float16), "embedding": self.speaker.embed([wav], sr)[0].astype(np.float32)}

    def features(self, utt: str, speaker: str, entry: str, n_perturb: int) -> UttFeatures:
        """The features of one ``wav.scp`` entry with ``n_perturb`` perturbed copies (0: the clean content),
        cached; AudioError or ValueError when the audio is unusable."""
        key = hashlib.sha256(f"{self.ident}{n_perturb}{_source_digest(entry)}".encode()).hexdigest()
        path = self.cache_dir / key[:2] / f"{key}.npz"
        if path.exists():
            with np.load(path) as z:
                arrays = {k: z[k] for k in z.files}
        else:
            wav, sr = load_audio(entry, allow_silent=False)
            if len(wav) / sr * self.frame_rate < MIN_FRAMES:
                raise ValueError(f"too short ({len(wav) / sr:.3f} s)")
            rng = np.random.default_rng(int.from_bytes(hashlib.sha256(f"{self.seed}:{key}".encode()).digest()[:8],
                                                        "little"))
            arrays = self._compute(wav, sr, n_perturb, rng)
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_open(path) as fh:
                np.savez(fh, **arrays)
        return UttFeatures(utt, speaker, **arrays)


def list_utterances(dirs: list[str], limit: int | None = None) -> list[tuple[str, str, str]]:
    """``(utt, speaker, wav.scp entry)`` of the utterances of ``dirs`` (speakers named ``<dir>:<spk>``; at most
    ``limit``, evenly spaced in file order)."""
    todo = []
    for d in dirs:
        data = read_data_dir(d)
        todo += [(utt, f"{Path(d).resolve()}:{data.utt2spk[utt]}", entry) for utt, entry in data.wav_scp.items()]
    if limit is not None and len(todo) > limit:
        todo = [todo[i] for i in np.linspace(0, len(todo) - 1, limit).round().astype(int)]
    return todo


def extract(todo: list[tuple[str, str, str]], extractor: Extractor, n_perturb: int, *,
            quiet: bool = False) -> tuple[list[UttFeatures], list[str], float]:
    """Features of the ``(utt, speaker, entry)`` of ``todo``, the skipped utterances (``'<utt> (<entry>): <why>'``)
    and the seconds it took."""
    start = time.monotonic()
    out, skipped = [], []
    progress = Progress(len(todo), f"features ({n_perturb} perturbed copies)" if n_perturb else "features (clean)",
                        quiet=quiet)
    for utt, speaker, entry in todo:
        try:
            out.append(extractor.features(utt, speaker, entry, n_perturb))
        except (VoxanonError, ValueError, OSError) as exc:
            skipped.append(f"{utt} ({entry}): {exc}")
            print(f"skipping utterance {utt} ({entry}): {exc}", file=sys.stderr, flush=True)
            progress.update(failed=True)
            continue
        progress.update(audio_seconds=out[-1].n_frames / extractor.frame_rate)
    progress.close()
    return out, skipped, time.monotonic() - start


def extract_dirs(dirs: list[str], extractor: Extractor, n_perturb: int, *, limit: int | None = None,
                 quiet: bool = False) -> tuple[list[UttFeatures], list[str], float]:
    """:func:`extract` of :func:`list_utterances` of ``dirs``."""
    return extract(list_utterances(dirs, limit), extractor, n_perturb, quiet=quiet)
