"""Kokoro speakers: the voice packs, their same-gender style mixtures, and the split by base voice.

A *base voice* is one Kokoro style pack (``af_heart``). A *speaker* is one
base voice or a mixture of two same-gender base voices (weight of the first
drawn from [0.3, 0.7] by a hash of the seed and the pair), with its own
habitual speaking rate (0.9 ... 1.1, hashed). Gender is the packs' own
label (second letter of the name).

Split (per gender, seeded): two thirds of the English packs (US ``a*`` and
UK ``b*``; rounded up) are *evaluation* base voices: dev and test speakers
are drawn from them alone (every pure voice first, then mixtures), dealt
alternately to dev and test. The other English packs and all non-English
packs speaking English are *training* base voices: the attacker-training
and emotion speakers come from them. So no training speaker shares a base
voice with a dev or test speaker (a mixture is not a stranger to its
parents: its GE2E cosine to a parent is 0.85-0.97).
"""

from __future__ import annotations

from itertools import combinations

from voxanon.jobs.corpus.seeding import unit
from voxanon.jobs.corpus.sets import CorpusPlanError
from voxanon.jobs.corpus.voices import BaseVoice, Speaker

ENGINE = "kokoro"
ENGLISH_PREFIXES = ("a", "b")
MIX_RANGE = (0.3, 0.7)
RATE_RANGE = (0.9, 1.1)


def pack_gender(name: str) -> str:
    """``f`` or ``m`` from a pack name (``af_heart`` -> ``f``)."""
    return name[1]


def split_packs(packs: list[str], gender: str, seed: int) -> tuple[list[str], list[str]]:
    """(evaluation, training) base voices of one gender; disjoint, seeded."""
    mine = sorted(p for p in packs if pack_gender(p) == gender)
    english = sorted((p for p in mine if p[0] in ENGLISH_PREFIXES), key=lambda p: unit(seed, "kokoro-base", p))
    n_eval = -(-2 * len(english) // 3)  # two thirds, rounded up
    return sorted(english[:n_eval]), sorted(english[n_eval:] + [p for p in mine if p[0] not in ENGLISH_PREFIXES])


def _lerp(lo_hi: tuple[float, float], x: float) -> float:
    return round(lo_hi[0] + (lo_hi[1] - lo_hi[0]) * x, 3)


def _speaker(gender: str, parents: tuple[str, ...], seed: int) -> Speaker:
    if len(parents) == 1:
        spec, spk = parents[0], f"{gender}-{parents[0]}"
    else:
        w = _lerp(MIX_RANGE, unit(seed, "mix", *parents))
        spec = f"{parents[0]}*{w:g}+{parents[1]}*{1 - w:.3g}"
        spk = f"{gender}-{parents[0]}-{parents[1]}"
    rate = _lerp(RATE_RANGE, unit(seed, "spk-rate", spk))
    return Speaker(spk, BaseVoice(ENGINE, spec, gender), warp=1.0, rate=rate)


def speaker_pool(bases: list[str], gender: str, seed: int) -> list[Speaker]:
    """Every pure voice (hashed order), then every pairwise mixture (hashed order)."""
    pure = sorted(bases, key=lambda p: unit(seed, "pure", p))
    pairs = sorted(combinations(sorted(bases), 2), key=lambda ab: unit(seed, "pair", *ab))
    return [_speaker(gender, (p,), seed) for p in pure] + [_speaker(gender, ab, seed) for ab in pairs]


def assign_speakers(packs: list[str], need: dict[str, int], seed: int) -> dict[str, list[Speaker]]:
    """Speakers per set (``dev``, ``test``, ``train``, ``emo``; ``need`` is per gender).

    Raises
    ------
    CorpusPlanError
        The installed packs cannot supply that many speakers of a gender.
    """
    out: dict[str, list[Speaker]] = {name: [] for name in need}
    for gender in ("f", "m"):
        eval_bases, train_bases = split_packs(packs, gender, seed)
        eval_pool = speaker_pool(eval_bases, gender, seed)
        train_pool = speaker_pool(train_bases, gender, seed)
        n_eval, n_train = need["dev"] + need["test"], need["train"] + need["emo"]
        if len(eval_pool) < n_eval or len(train_pool) < n_train:
            raise CorpusPlanError(
                f"Kokoro: {len(eval_bases)} evaluation and {len(train_bases)} training {gender} voice packs give "
                f"{len(eval_pool)}/{len(train_pool)} speakers, this size needs {n_eval}/{n_train}: "
                "choose a smaller size or install all 54 kokoro-js@1.2.1 packs (tools/setup.sh)")
        chosen = eval_pool[:n_eval]
        out["dev"] += chosen[0::2][:need["dev"]]
        out["test"] += [s for s in chosen if s not in out["dev"]]
        out["train"] += train_pool[:need["train"]]
        out["emo"] += train_pool[need["train"]:n_train]
    return out
