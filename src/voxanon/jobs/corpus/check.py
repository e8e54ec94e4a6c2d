"""Speaker separability of a synthetic corpus, and how far its test speakers are from its training speakers.

Two questions, answered with a pretrained speaker encoder on original speech:

1. *Are the speakers distinct?* The VPC verification protocol (original
   enrollment, original trials, OO) on the dev and test trial lists: EER per
   gender and their mean (LibriSpeech test-clean with GE2E: about 4.6 %),
   plus a *hard* EER keeping only impostors that share a base voice with the
   enrolled speaker (formant corpus: same engine voice, other warp; Kokoro
   corpus: a shared parent voice pack).
2. *Can the attacker's training set reach a test speaker?* Every dev/test
   utterance is compared with (a) the centroid of its own speaker's other
   utterances (``own``), (b) the nearest training-speaker centroid
   (``nearest_train``) and (c) the nearest other dev/test speaker's centroid
   (``nearest_other``). Training speakers that shared a voice with a test
   speaker would put ``nearest_train`` near ``own``; ``reachable`` is the
   share of utterances whose nearest training speaker is closer than their
   own speaker.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from voxanon.data import layout
from voxanon.data.kaldi import read_data_dir
from voxanon.errors import DataError
from voxanon.evaluation.embeddings import extract_embeddings
from voxanon.evaluation.privacy import evaluate_privacy
from voxanon.evaluation.results import to_dict
from voxanon.metrics import compute_eer
from voxanon.models.speaker import load_encoder

_PERCENTILES = (5, 25, 50, 75, 95)


def _hard_eer(scores: list[dict], parents: dict[str, set[str]], spk_of: dict[str, str]) -> dict:
    target = [s["score"] for s in scores if s["target"]]
    hard = [s["score"] for s in scores
            if not s["target"] and parents[s["enroll_spk"]] & parents[spk_of[s["utt"]]]]
    if not target or not hard:
        return {"eer": None, "nontarget_trials": len(hard)}
    return {"eer": float(compute_eer(np.array(target), np.array(hard)).eer), "nontarget_trials": len(hard)}


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def _summary(x: np.ndarray) -> dict:
    return {"mean": round(float(np.mean(x)), 4),
            **{f"p{p}": round(float(v), 4) for p, v in zip(_PERCENTILES, np.percentile(x, _PERCENTILES))}}


def reachability(eval_emb: np.ndarray, eval_spk: np.ndarray, train_emb: np.ndarray,
                 train_spk: np.ndarray) -> dict:
    """Cosine of each evaluation utterance to its own speaker, the nearest training and other speaker.

    Parameters
    ----------
    eval_emb, train_emb : (N, D) utterance embeddings
    eval_spk, train_spk : (N,) speaker ids (every evaluation speaker needs >= 2 utterances)

    Returns
    -------
    dict
        ``own``, ``nearest_train``, ``nearest_other`` (mean and percentiles of
        the cosine), ``reachable`` (share with nearest_train > own) and ``utterances``.
    """
    e = _unit(eval_emb.astype(np.float64))
    spks, idx = np.unique(eval_spk, return_inverse=True)
    sums = np.zeros((len(spks), e.shape[1]))
    np.add.at(sums, idx, e)
    counts = np.bincount(idx, minlength=len(spks))
    own = np.einsum("ij,ij->i", e, _unit(sums[idx] - e)) if np.all(counts > 1) else None
    if own is None:
        raise DataError("every evaluation speaker needs at least two utterances")
    centroids = _unit(sums / counts[:, None])
    other = e @ centroids.T
    other[np.arange(len(e)), idx] = -np.inf
    t_spks, t_idx = np.unique(train_spk, return_inverse=True)
    t_sums = np.zeros((len(t_spks), e.shape[1]))
    np.add.at(t_sums, t_idx, _unit(train_emb.astype(np.float64)))
    nearest_train = (e @ _unit(t_sums).T).max(axis=1)
    return {"utterances": int(len(e)), "train_speakers": int(len(t_spks)), "own": _summary(own),
            "nearest_train": _summary(nearest_train), "nearest_other": _summary(other.max(axis=1)),
            "reachable": round(float(np.mean(nearest_train > own)), 4)}


def check_separability(root: str | os.PathLike, *, encoder: str = "ge2e", sets: tuple[str, ...] = ("dev", "test"),
                       device: str = "cpu", quiet: bool = False) -> dict:
    """OO EER of ``encoder`` on the corpus' trial lists and the training-speaker reachability (see module doc).

    Returns a JSON-ready dict: per set ``eer`` per gender, ``eer_mean``, ``hard``
    (shared-parent impostors); ``reachability`` over every dev/test utterance.
    """
    root = Path(root)
    corpus = json.loads((root / layout.CORPUS_FILE).read_text(encoding="utf-8"))
    parents = {spk: set(s.get("parents") or [f"{s['engine']}/{s['voice']}"]) for spk, s in corpus["speakers"].items()}
    model = load_encoder(encoder, device=device)
    out = {"encoder": model.name, "corpus": str(root), "speakers": {
        g: sum(1 for s in corpus["speakers"].values() if s["gender"] == g) for g in layout.GENDERS},
        "base_voices": len(set().union(*parents.values())), "sets": {}}
    eval_emb, eval_spk = [], []
    for name in sets:
        enroll = read_data_dir(root / layout.SYNTH_DATA / layout.enrolls(name))
        trial_dirs = [read_data_dir(root / layout.SYNTH_DATA / layout.trials(name, g)) for g in layout.GENDERS]
        result = evaluate_privacy(enroll, trial_dirs, model, n_boot=100, quiet=quiet)
        spk_of = {u: s for td in trial_dirs for u, s in td.utt2spk.items()}
        out["sets"][name] = {
            "eer": {g: m.eer for g, m in result.by_gender.items()},
            "eer_mean": result.eer_mean,
            "hard": _hard_eer(to_dict(result.scores), parents, spk_of),
        }
        for data in [enroll, *trial_dirs]:
            emb = extract_embeddings(data, model, quiet=quiet)
            eval_emb += [emb[u] for u in sorted(emb)]
            eval_spk += [data.utt2spk[u] for u in sorted(emb)]
    train = read_data_dir(root / layout.SYNTH_DATA / layout.SYNTH_TRAIN)
    train_emb = extract_embeddings(train, model, quiet=quiet)
    utts = sorted(train_emb)
    out["reachability"] = reachability(np.stack(eval_emb), np.array(eval_spk),
                                       np.stack([train_emb[u] for u in utts]),
                                       np.array([train.utt2spk[u] for u in utts]))
    return out
