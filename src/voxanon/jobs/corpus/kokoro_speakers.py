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

A corpus in another language (``es``, ``fr``, ``it``, ``zh``, ``ja``:
:data:`~voxanon.data.layout.CORPUS_LANGUAGES`) keeps
that rule with the roles of the packs swapped: its evaluation base voices are
the packs made for that language (``e*``, ``f*``, ``i*``, ``z*``, ``j*``), all of them, and
its training base voices are every other pack reading that language, except
the packs of the same voice in another language: a pack's name after the
underscore names its voice, and ``pf_dora``, ``pm_alex``, ``pm_santa`` are
Spanish ``ef_dora``, ``em_alex``, ``em_santa`` made for Portuguese (cosine
of the packs' timbre halves 0.97-0.98; ``am_santa`` 0.83; two packs of one
gender: median 0.38), so a Spanish corpus trains on none of them. A
language has few packs (Spanish 1 female / 2 male, French 1 / 0, Italian
1 / 1), so its evaluation speakers are each of its packs and same-gender
mixture (one per set of parents, as in English: other weights of the same
parents are not another speaker) times the vocal-tract warps of the formant
corpus (:data:`voxanon.jobs.corpus.voices.WARPS`: female 0.95 ... 1.10, male
0.90 ... 1.05), which a speaker encoder tells apart. A gender whose packs
give fewer than two speakers for each of dev and test (French male: no pack)
has no dev or test speakers at all: that corpus's trials are of the other
gender only.

So few voices make short trial lists whose speakers are warps of one or two
voices. An *accented* corpus (``accented=True``) fills dev and test up to the
size's count with other languages' voices reading the language: after the
language's own speakers, a seeded half of the other voices (by voice name, so
``pf_dora`` and ``ef_dora`` fall on one side) and their mixtures, unwarped,
as in English; the training side keeps the other half.
"""

from __future__ import annotations

from itertools import combinations

from voxanon.data.layout import CORPUS_LANGUAGES
from voxanon.jobs.corpus.seeding import unit
from voxanon.jobs.corpus.sets import CorpusPlanError
from voxanon.jobs.corpus.voices import WARPS, BaseVoice, Speaker
from voxanon.models.tts.kokoro_g2p import PACK_LANGUAGES

ENGINE = "kokoro"
ENGLISH_PREFIXES = ("a", "b")
#: fewest dev (and test) speakers a gender of a language corpus needs: a trial list needs a non-target speaker
MIN_SPLIT_SPEAKERS = 2
MIX_RANGE = (0.3, 0.7)
RATE_RANGE = (0.9, 1.1)


def pack_gender(name: str) -> str:
    """``f`` or ``m`` from a pack name (``af_heart`` -> ``f``)."""
    return name[1]


def voice_name(pack: str) -> str:
    """The voice a pack is of, whatever language it was made for (``em_santa`` -> ``santa``)."""
    return pack.split("_", 1)[1]


def split_packs(packs: list[str], gender: str, seed: int, language: str = "en") -> tuple[list[str], list[str]]:
    """(evaluation, training) base voices of one gender; disjoint, seeded (``language``: see the module notes)."""
    mine = sorted(p for p in packs if pack_gender(p) == gender)
    if language != "en":
        own = [p for p in mine if PACK_LANGUAGES.get(p[:1]) == language]
        return own, [p for p in mine if voice_name(p) not in {voice_name(o) for o in own}]
    english = sorted((p for p in mine if p[0] in ENGLISH_PREFIXES), key=lambda p: unit(seed, "kokoro-base", p))
    n_eval = -(-2 * len(english) // 3)  # two thirds, rounded up
    return sorted(english[:n_eval]), sorted(english[n_eval:] + [p for p in mine if p[0] not in ENGLISH_PREFIXES])


def _lerp(lo_hi: tuple[float, float], x: float) -> float:
    return round(lo_hi[0] + (lo_hi[1] - lo_hi[0]) * x, 3)


def _speaker(gender: str, parents: tuple[str, ...], seed: int, warp: float | None = None) -> Speaker:
    if len(parents) == 1:
        spec, spk = parents[0], f"{gender}-{parents[0]}"
    else:
        w = _lerp(MIX_RANGE, unit(seed, "mix", *parents))
        spec = f"{parents[0]}*{w:g}+{parents[1]}*{1 - w:.3g}"
        spk = f"{gender}-{parents[0]}-{parents[1]}"
    if warp is not None:  # a warped speaker (language corpora): the warp ends its id
        spk = f"{spk}-w{round(warp * 100):03d}"
    rate = _lerp(RATE_RANGE, unit(seed, "spk-rate", spk))
    return Speaker(spk, BaseVoice(ENGINE, spec, gender), warp=1.0 if warp is None else warp, rate=rate)


def speaker_pool(bases: list[str], gender: str, seed: int) -> list[Speaker]:
    """Every pure voice (hashed order), then every pairwise mixture (hashed order)."""
    pure = sorted(bases, key=lambda p: unit(seed, "pure", p))
    pairs = sorted(combinations(sorted(bases), 2), key=lambda ab: unit(seed, "pair", *ab))
    return [_speaker(gender, (p,), seed) for p in pure] + [_speaker(gender, ab, seed) for ab in pairs]


def warped_pool(bases: list[str], gender: str, seed: int) -> list[Speaker]:
    """Every voice of :func:`speaker_pool` times every warp of the gender (a language corpus's evaluation
    speakers): dealt round-robin over the voices, warps in hashed order within a voice, so that any prefix spreads
    over as many voices as it can."""
    queues = []
    for voice in speaker_pool(bases, gender, seed):
        parents = tuple(voice.parents)
        warped = [_speaker(gender, parents, seed, w) for w in WARPS[gender]]
        queues.append(sorted(warped, key=lambda s: unit(seed, "warp", s.spk)))
    pool: list[Speaker] = []
    while any(queues):
        pool += [q.pop(0) for q in queues if q]
    return pool


def accent_split(bases: list[str], seed: int) -> tuple[list[str], list[str]]:
    """(evaluation, training) halves of other languages' packs for an accented corpus: voices (a pack's name
    after the underscore) in hashed order, the first half (rounded up) to evaluation, with all their packs."""
    voices = sorted({voice_name(p) for p in bases}, key=lambda v: unit(seed, "accent", v))
    chosen = set(voices[:-(-len(voices) // 2)])
    return [p for p in bases if voice_name(p) in chosen], [p for p in bases if voice_name(p) not in chosen]


def assign_speakers(packs: list[str], need: dict[str, int], seed: int,
                    language: str = "en", accented: bool = False) -> dict[str, list[Speaker]]:
    """Speakers per set (``dev``, ``test``, ``train``, ``emo``; ``need`` is per gender).

    In a language other than English, dev and test get as many of the language's speakers as it has, up to
    ``need`` (an equal number each, at least :data:`MIN_SPLIT_SPEAKERS`, else none of that gender); with
    ``accented``, other languages' voices fill them up to ``need`` (see the module notes; English ignores it).

    Raises
    ------
    CorpusPlanError
        The installed packs cannot supply that many speakers of a gender (English), or no gender has enough
        (another language); the language is not one of :data:`~voxanon.data.layout.CORPUS_LANGUAGES`.
    """
    if language not in CORPUS_LANGUAGES:
        raise CorpusPlanError(f"no Kokoro corpus in {language!r}; choose one of {', '.join(CORPUS_LANGUAGES)}")
    out: dict[str, list[Speaker]] = {name: [] for name in need}
    for gender in ("f", "m"):
        eval_bases, train_bases = split_packs(packs, gender, seed, language)
        n_eval, n_train = need["dev"] + need["test"], need["train"] + need["emo"]
        if language == "en":
            eval_pool = speaker_pool(eval_bases, gender, seed)
        else:
            eval_pool = warped_pool(eval_bases, gender, seed)
            if accented:
                accent_bases, train_bases = accent_split(train_bases, seed)
                eval_pool += speaker_pool(accent_bases, gender, seed)
            per_split = min(need["dev"], need["test"], len(eval_pool) // 2)
            n_eval = 2 * per_split if per_split >= MIN_SPLIT_SPEAKERS else 0
        train_pool = speaker_pool(train_bases, gender, seed)
        if len(eval_pool) < n_eval or len(train_pool) < n_train:
            raise CorpusPlanError(
                f"Kokoro: {len(eval_bases)} evaluation and {len(train_bases)} training {gender} voice packs give "
                f"{len(eval_pool)}/{len(train_pool)} speakers, this size needs {n_eval}/{n_train}: "
                "choose a smaller size" + (", build without accented speakers (they take half of the training "
                                           "voices)" if accented else "")
                + " or install all 54 kokoro-js@1.2.1 packs (tools/setup.sh)")
        chosen = eval_pool[:n_eval]
        out["dev"] += chosen[0::2][:need["dev"]]
        out["test"] += [s for s in chosen if s not in out["dev"]]
        out["train"] += train_pool[:need["train"]]
        out["emo"] += train_pool[need["train"]:n_train]
    if not out["dev"]:
        own = [p for p in sorted(packs) if PACK_LANGUAGES.get(p[:1]) == language]
        raise CorpusPlanError(f"Kokoro: the {language!r} voice packs ({', '.join(own) or 'none installed'}) give "
                              f"fewer than {MIN_SPLIT_SPEAKERS} dev and {MIN_SPLIT_SPEAKERS} test speakers of either "
                              "gender: install all 54 kokoro-js@1.2.1 packs (tools/setup.sh)")
    return out
