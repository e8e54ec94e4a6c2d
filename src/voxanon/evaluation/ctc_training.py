"""Training a learnability CTC recogniser (recipe: :mod:`voxanon.training.ctc`) on a data directory.

Front-end features are computed once per utterance and cached by audio
content (:class:`~voxanon.evaluation.embeddings.EmbeddingCache` under
``<cache>/ctc-<front-end name>+peak``), so retraining (another seed, more
epochs, the reference model of the next benchmark system) extracts nothing
again. Utterances without a transcript, with unreadable, empty, silent or
non-finite audio are listed with the reason and left out; the rest trains.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np

from voxanon.audio.io import AudioError, check_waveform, load_audio, resample
from voxanon.data.kaldi import DataDir, read_data_dir
from voxanon.evaluation.embeddings import EmbeddingCache, audio_key
from voxanon.models.asr.base import AsrError
from voxanon.models.asr.ctc import Frontend, load_frontend
from voxanon.models.checkpoint import load_checkpoint
from voxanon.progress import Progress
from voxanon.training import ctc
from voxanon.training.trainer import TrainResult

MODEL_FILE, LOG_FILE = "model.pt", "train_log.jsonl"


def ctc_features(data: DataDir, utts: list[str], frontend: Frontend, cache_dir: str | os.PathLike, *,
                 quiet: bool = False) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Front-end features of ``utts`` (cached by audio content), and the utterances that failed with the reason."""
    cache = EmbeddingCache(cache_dir, f"ctc-{frontend.name}", frontend.preprocessing)
    feats, failed = {}, {}
    progress = Progress(len(utts), f"CTC features ({frontend.name})", quiet=quiet)
    for utt in utts:
        try:
            key = audio_key(data.wav_scp[utt])
            hit = cache.get(key)
            if hit is None:
                wav, sr = load_audio(data.wav_scp[utt], allow_silent=False)
                check_waveform(wav, f"utterance {utt}")
                hit = frontend(resample(wav, sr, frontend.sample_rate))
                if not len(hit):
                    raise AudioError(f"utterance {utt}: too short for {frontend.name} (no frame)")
                cache.put(key, hit)
            feats[utt] = hit
            progress.update()
        except (AudioError, OSError, ValueError) as exc:
            failed[utt] = str(exc)
            progress.update(failed=True)
    progress.close()
    return feats, failed


def trained_summary(out_dir: str | os.PathLike) -> dict | None:
    """The training summary of a finished model in ``out_dir`` (None when there is none)."""
    path = Path(out_dir) / MODEL_FILE
    return load_checkpoint(path, "CTC model", AsrError)["meta"] if path.is_file() else None


def train_ctc(data_dir: str | os.PathLike, out: str | os.PathLike, recipe: ctc.CtcSettings, *,
              cache_dir: str | os.PathLike, device: str = "cpu", quiet: bool = False) -> TrainResult:
    """Train ``recipe`` on the utterances (``wav.scp`` + ``text``) of ``data_dir`` into ``out/model.pt``.

    A finished model of the same recipe is reused (another recipe retrains; an
    interrupted run resumes from its checkpoint). The result's summary (also
    ``out/train_summary.json``) holds the recipe, the per-epoch loss history,
    the utterances left out and why.
    """
    done = trained_summary(out)
    if done is not None and done.get("recipe") == dataclasses.asdict(recipe):
        return TrainResult(Path(out), Path(out) / MODEL_FILE, Path(out) / LOG_FILE, done["history"], None, done)
    data = read_data_dir(data_dir)
    utts = [u for u in data.utts if data.text.get(u, "").strip()]
    missing = {u: "no transcript in text" for u in data.utts if u not in utts}
    feats, failed = ctc_features(data, utts, load_frontend(recipe.frontend), cache_dir, quiet=quiet)
    if not feats:
        raise AsrError(f"{data_dir}: no utterance to train a CTC model on ({len(missing)} without text, "
                       f"{len(failed)} unreadable)")
    result = ctc.train_ctc([(f, data.text[u]) for u, f in feats.items()], out, recipe, device=device,
                           meta={"data_dir": str(data_dir), "left_out_utterances": {**missing, **failed}},
                           quiet=quiet)
    (Path(out) / "train_summary.json").write_text(json.dumps(result.summary, indent=1) + "\n", encoding="utf-8")
    return result
