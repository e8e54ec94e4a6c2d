"""Pseudo-speakers that stay apart, and the speakers an enrollment clip names.

A speaker's pseudo-speaker is whatever the anonymizer draws from
``utterance_rng(seed, key)``, so choosing a speaker's *key* chooses their
pseudo-speaker, through the anonymizer's own registry and draws.

Distinguishable
    Each speaker has ``candidates`` keys (``<base>``, ``<base>#1``, ...). A
    sample of their speech is anonymized with each, embedded by the speaker
    encoder, and the keys are chosen greedily, speaker by speaker (in name
    order): the first takes its first candidate, each next one the candidate
    farthest (largest minimum cosine distance) from those already chosen.
    Deterministic for a given seed.
Fixed keys
    A speaker with a label across recordings keeps that label as the key (the
    same person, the same pseudo-speaker in every recording), so it is not
    searched; the separation is still measured and reported.
Targets
    A speaker is a target when the cosine between the embedding of their
    speech and an enrollment clip's reaches ``threshold``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from voxanon.models.speaker import SpeakerEncoder

#: the encoder that measures separation and matches targets: the d-vector, which tells real voices apart best here
ENCODER = "dvector"
#: d-vector cosine from which a speaker is taken for an enrollment clip's: between the cross-speaker (at most 0.57)
#: and the same-speaker (0.89 and above) cosines of real recorded voices (see docs/conversations.md)
TARGET_THRESHOLD = 0.7


@dataclass(frozen=True)
class KeyChoice:
    """The chosen key of every speaker, the keys tried, and the smallest pairwise cosine distance of the chosen."""

    keys: dict[str, str]
    tried: dict[str, list[str]]
    min_distance: float | None


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def choose_keys(base: dict[str, str], fixed: set[str], anonymize: Callable[[str, str], np.ndarray], sr: int,
                encoder: SpeakerEncoder, candidates: int = 4) -> KeyChoice:
    """Keys that keep the speakers' pseudo-voices apart (see the module notes).

    Parameters
    ----------
    base : speaker -> base key
    fixed : speakers whose base key is kept as it is (labels across recordings)
    anonymize : ``(speaker, key) -> `` their speech sample anonymized with that key, at ``sr``
    encoder : the speaker encoder that measures the separation
    candidates : keys tried per speaker that is not fixed
    """
    speakers = sorted(base, key=lambda s: (s not in fixed, s))  # fixed ones first: the others avoid them
    tried = {s: [base[s]] if s in fixed else [base[s], *(f"{base[s]}#{i}" for i in range(1, candidates))]
             for s in speakers}
    if len(speakers) < 2:
        return KeyChoice({s: tried[s][0] for s in speakers}, tried, None)
    chosen: dict[str, str] = {}
    vectors: list[np.ndarray] = []
    for speaker in speakers:
        keys = tried[speaker] if vectors else tried[speaker][:1]  # the first speaker takes its first key
        embeddings = _unit(encoder.embed([anonymize(speaker, key) for key in keys], sr))
        if vectors:
            nearest = (embeddings @ np.stack(vectors).T).max(axis=1)  # highest cosine to a chosen one
            pick = int(np.argmin(nearest))
        else:
            pick = 0
        chosen[speaker] = tried[speaker][pick]
        vectors.append(embeddings[pick])
    sims = np.stack(vectors) @ np.stack(vectors).T
    min_distance = float(1.0 - sims[np.triu_indices(len(vectors), 1)].max())
    return KeyChoice({s: chosen[s] for s in sorted(chosen)}, tried, round(min_distance, 4))


def target_scores(speech: dict[str, np.ndarray], enrollments: np.ndarray, sr: int,
                  encoder: SpeakerEncoder) -> dict[str, float]:
    """Each speaker's highest cosine to an enrollment embedding (rows of ``enrollments``); speakers without
    speech get -1 (never a target)."""
    names = [s for s in sorted(speech) if len(speech[s])]
    scores = dict.fromkeys(speech, -1.0)
    if names:
        cosines = (_unit(encoder.embed([speech[s] for s in names], sr)) @ _unit(enrollments).T).max(axis=1)
        scores.update({s: round(float(c), 4) for s, c in zip(names, cosines)})
    return scores
