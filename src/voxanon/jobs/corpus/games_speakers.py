"""Which game characters may share an actor, and train/test subsets that keep each such group on one side.

Each character's clips (as written, band-limited) are embedded with an offline speaker encoder. A character is
compared with itself by splitting its clips into two halves (alternating, in id order) and taking the cosine
between the halves' centroids; two characters are compared by the cosine between their centroids. Two
characters *may share an actor* when their centroids are at least as close as the least self-similar
character's two halves (the threshold): the encoder then cannot tell them apart better than it tells a
character from itself. Characters with fewer than :data:`MIN_CLIPS` clips are not checked and stay on the
training side. Groups (connected components of "may share an actor") go whole to ``train`` or ``test``; the
hero's group (the character with the most clips) always trains.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from voxanon.audio.io import load_audio
from voxanon.data.games.write import read_manifest, write_manifest
from voxanon.data.kaldi import read_data_dir, write_data_dir
from voxanon.errors import DataError
from voxanon.progress import Progress

#: the fewest clips a character needs to be checked: halves of ten clips or more (smaller halves scatter: Queen's
#: 11-clip character has two halves only 0.883 apart, while every character with 20 or more is above 0.97)
MIN_CLIPS = 20
#: at most this many clips per character are embedded (evenly spaced in id order)
MAX_CLIPS = 60


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x)


def _spread(utts: list[str], n: int) -> list[str]:
    """At most ``n`` of ``utts``, evenly spaced."""
    return utts if len(utts) <= n else [utts[int(i)] for i in np.linspace(0, len(utts) - 1, n)]


def actor_groups(embeddings: dict[str, np.ndarray]) -> dict:
    """From each character's clip embeddings (rows, L2-normalised): self (half vs half) and cross (centroid vs
    centroid) cosines, the threshold, the pairs that may share an actor and the groups they form."""
    within = {spk: float(_unit(e[0::2].mean(0)) @ _unit(e[1::2].mean(0))) for spk, e in embeddings.items()}
    centroid = {spk: _unit(e.mean(0)) for spk, e in embeddings.items()}
    threshold = min(within.values())
    names = sorted(embeddings)
    cross = sorted(((float(centroid[a] @ centroid[b]), a, b) for i, a in enumerate(names) for b in names[i + 1:]),
                   reverse=True)
    parent = {s: s for s in names}

    def root(s: str) -> str:
        while parent[s] != s:
            s = parent[s]
        return s

    shared = [(a, b, round(c, 3)) for c, a, b in cross if c >= threshold]
    for a, b, _ in shared:
        parent[root(a)] = root(b)
    groups: dict[str, list[str]] = {}
    for s in names:
        groups.setdefault(root(s), []).append(s)
    return {"threshold": round(threshold, 3), "within": {s: round(v, 3) for s, v in sorted(within.items())},
            "may_share_actor": [list(p) for p in shared],
            "closest_pairs": [[a, b, round(c, 3)] for c, a, b in cross[:10]],
            "groups": sorted(groups.values(), key=lambda g: (-len(g), g))}


def split_groups(groups: list[list[str]], clips: dict[str, int], unchecked: list[str], test_fraction: float,
                 seed: int) -> dict[str, list[str]]:
    """Speakers of ``train`` and ``test``: groups drawn in a seeded order go to test while they fit in
    ``test_fraction`` of all clips; the hero's group (most clips) and ``unchecked`` characters train."""
    hero = max(clips, key=lambda s: (clips[s], s))
    order = [g for g in groups if hero not in g]
    random.Random(seed).shuffle(order)
    target, test = test_fraction * sum(clips.values()), []
    for group in order:
        if sum(clips[s] for s in test) + sum(clips[s] for s in group) <= target:
            test += group
    train = sorted(s for s in clips if s not in test)
    return {"train": train, "test": sorted(test)} | ({"unchecked": sorted(unchecked)} if unchecked else {})


def check_game_speakers(game_dir: str | Path, *, encoder: str = "ge2e", test_fraction: float = 0.2, seed: int = 0,
                        quiet: bool = False) -> dict:
    """Run the check on a directory ``voxanon data games`` wrote: the result goes into its manifest
    (``speaker_check``) and the subsets into ``train/`` and ``test/`` beside it; returns the result."""
    from voxanon.models.speaker import load_encoder

    game_dir = Path(game_dir)
    manifest = read_manifest(game_dir)
    if manifest is None:
        raise DataError(f"{game_dir}: no manifest.json: write the game with 'voxanon data games' first")
    data = read_data_dir(game_dir)
    spk2utt = data.spk2utt
    checked = {s: _spread(u, MAX_CLIPS) for s, u in spk2utt.items() if len(u) >= MIN_CLIPS}
    if len(checked) < 2:
        raise DataError(f"{game_dir}: fewer than two characters with {MIN_CLIPS} clips or more: nothing to check")
    enc = load_encoder(encoder)
    progress = Progress(len(checked), "characters embedded", quiet=quiet)
    embeddings = {}
    for spk, utts in checked.items():
        wavs = [load_audio(data.wav_scp[u])[0] for u in utts]
        embeddings[spk] = np.asarray(enc.embed(wavs, 16000), dtype=np.float64)
        progress.update()
    progress.close()
    result = {"encoder": getattr(enc, "name", encoder), "min_clips": MIN_CLIPS, "max_clips_embedded": MAX_CLIPS,
              **actor_groups(embeddings)}
    clips = {s: len(u) for s, u in spk2utt.items()}
    unchecked = sorted(set(spk2utt) - set(checked))
    speakers = split_groups(result["groups"], clips, unchecked, test_fraction, seed)
    result["splits"] = {}
    for name in ("train", "test"):
        utts = [u for s in speakers[name] for u in spk2utt[s]]
        write_data_dir(data.subset(sorted(utts)), game_dir / name)
        result["splits"][name] = {"speakers": speakers[name], "clips": len(utts),
                                  "hours": round(sum(float(data.utt2dur[u]) for u in utts) / 3600, 3)}
    result["splits"]["unchecked_train"] = unchecked
    result["test_fraction"], result["seed"] = test_fraction, seed
    manifest["speaker_check"] = result
    write_manifest(game_dir, manifest)
    return result
