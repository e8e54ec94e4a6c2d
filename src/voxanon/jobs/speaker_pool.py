"""Building a :class:`~voxanon.anonymizers.pseudo.pool.SpeakerPool` from Kaldi data directories."""

from __future__ import annotations

import os

import numpy as np

from voxanon.anonymizers.pseudo.pool import SpeakerPool, unit_rows
from voxanon.data.kaldi import read_data_dir
from voxanon.errors import ConfigError, DataError
from voxanon.evaluation.embeddings import extract_embeddings
from voxanon.models.speaker import load_encoder


def build_speaker_pool(data_dirs: list[str | os.PathLike], *, encoder: str = "ge2e", level: str = "speaker",
                       max_utts: int | None = None, device: str = "cpu",
                       cache_dir: str | os.PathLike | None = None, quiet: bool = False) -> SpeakerPool:
    """Embed every utterance of ``data_dirs`` and average per speaker (renormalised).

    Speakers are keyed by their id in ``utt2spk``; one id in several folders is
    one speaker (its genders must agree). ``max_utts`` caps the utterances
    used per speaker and folder (the first ones in id order).
    ``level="utterance"`` keeps the utterance embeddings in the pool as well.
    """
    if level not in ("speaker", "utterance"):
        raise ConfigError(f"--level must be 'speaker' or 'utterance', got {level!r}")
    if not data_dirs:
        raise ConfigError("give at least one data directory")
    if max_utts is not None and max_utts < 1:
        raise ConfigError(f"--max-utts must be >= 1, got {max_utts}")
    model = load_encoder(encoder, device=device)
    genders: dict[str, str] = {}
    utt_embs: list[np.ndarray] = []
    utt_spks: list[str] = []
    for path in data_dirs:
        data = read_data_dir(path)
        for spk in sorted(set(data.utt2spk.values())):
            g = data.spk2gender.get(spk)
            if g not in ("f", "m"):
                raise DataError(f"{data.path}/spk2gender: speaker {spk!r} has gender {g!r}; need 'f' or 'm'")
            if genders.setdefault(spk, g) != g:
                raise DataError(f"{data.path}/spk2gender: speaker {spk!r} is {g!r} here but {genders[spk]!r} "
                                "in an earlier folder")
        utts = [u for spk_utts in data.spk2utt.values() for u in spk_utts[:max_utts] if u in data.wav_scp]
        embs = extract_embeddings(data, model, utts=utts, cache_dir=cache_dir, quiet=quiet)
        utt_embs += [embs[u] for u in utts]
        utt_spks += [data.utt2spk[u] for u in utts]
    speakers = sorted(genders)
    index = {s: i for i, s in enumerate(speakers)}
    utt_idx = np.array([index[s] for s in utt_spks], dtype=np.int64)
    utt_mat = unit_rows(np.stack(utt_embs))
    spk_mat = np.stack([utt_mat[utt_idx == i].mean(axis=0) for i in range(len(speakers))])
    keep_utts = level == "utterance"
    return SpeakerPool(embeddings=spk_mat, speakers=np.array(speakers),
                       genders=np.array([genders[s] for s in speakers]), encoder=encoder,
                       utt_embeddings=utt_mat if keep_utts else None, utt_speakers=utt_idx if keep_utts else None)
