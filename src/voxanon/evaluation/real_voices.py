"""Does a trained attacker verify real people? Its EER on original recordings of voices no model here heard.

An attacker retrained on a synthetic corpus can learn that corpus's voices
instead of what tells speakers apart. This check scores it on real recordings
outside every training set (the corpus's ``data/real``: recorded clips from
Debian packages, :mod:`voxanon.data.debian_clips`), unanonymized: every pair
of utterances is a trial, a target where both come from one speaker, scored
with one utterance on each side (cosine, or the rung's PLDA back-end). The
same check for the pretrained encoder the rung started from is the reference:
an attacker far above it has learnt the corpus, not speakers, and its privacy
numbers describe synthetic voices only.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from voxanon.data.kaldi import DataDir, DataError
from voxanon.evaluation.dev_selection import as_data_dir
from voxanon.evaluation.embeddings import extract_embeddings
from voxanon.evaluation.results import RealVoiceCheck
from voxanon.metrics import compute_eer
from voxanon.models.speaker import SpeakerEncoder

#: scores every utterance (rows: as enrollment) against every utterance (columns: as trial)
PairScorer = Callable[[np.ndarray], np.ndarray]


def cosine_pairs(embeddings: np.ndarray) -> np.ndarray:
    """Cosine of every pair of rows."""
    unit = embeddings / np.maximum(np.linalg.norm(embeddings, axis=1, keepdims=True), 1e-12)
    return unit @ unit.T


def pairs_eer(scores: np.ndarray, speakers: list[str]) -> tuple[float, int, int]:
    """EER (%) over the pairs ``i < j`` of a square score matrix, a target where ``speakers[i] == speakers[j]``;
    with the numbers of target and non-target pairs.

    Raises
    ------
    DataError
        No target or no non-target pair (fewer than two speakers, or no speaker with two utterances).
    """
    spk = np.asarray(speakers)
    i, j = np.triu_indices(len(spk), k=1)
    target = spk[i] == spk[j]
    if not target.any() or target.all():
        raise DataError(f"real-voice check needs two speakers and one of them twice; got {len(set(speakers))} "
                        f"speaker(s) over {len(spk)} utterance(s)")
    values = scores[i, j]
    return compute_eer(values[target], values[~target]).eer, int(target.sum()), int((~target).sum())


def real_voice_eer(data: DataDir, encoder: SpeakerEncoder, score: PairScorer = cosine_pairs, *,
                   cache_dir: str | os.PathLike | None = None, quiet: bool = True) -> tuple[float, int, int]:
    """:func:`pairs_eer` of ``encoder``'s embeddings of every utterance of ``data`` (scoring-time preprocessing,
    embeddings cached under ``cache_dir``), scored by ``score``."""
    utts = sorted(data.wav_scp)
    emb = extract_embeddings(data, encoder, utts=utts, cache_dir=cache_dir, quiet=quiet)
    return pairs_eer(score(np.stack([emb[u] for u in utts])), [data.utt2spk[u] for u in utts])


def check_real_voices(real: str | os.PathLike | DataDir, trained: SpeakerEncoder, pretrained: SpeakerEncoder | None,
                      score: PairScorer = cosine_pairs, *, cache_dir: str | os.PathLike | None = None,
                      quiet: bool = True) -> RealVoiceCheck:
    """The check for one trained attacker: its embeddings scored by ``score`` (its back-end, or cosine), and the
    ``pretrained`` encoder it started from with cosine (None: trained from scratch)."""
    data = as_data_dir(real)
    eer, n_target, n_nontarget = real_voice_eer(data, trained, score, cache_dir=cache_dir, quiet=quiet)
    reference = (real_voice_eer(data, pretrained, cache_dir=cache_dir, quiet=quiet)[0]
                 if pretrained is not None else None)
    return RealVoiceCheck(eer=round(eer, 4), pretrained_eer=None if reference is None else round(reference, 4),
                          speakers=len(set(data.utt2spk.values())), utterances=len(data.wav_scp),
                          target_pairs=n_target, nontarget_pairs=n_nontarget, data=str(data.path or ""))
