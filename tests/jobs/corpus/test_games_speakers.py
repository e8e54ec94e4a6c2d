"""The games' speaker check: characters as close as a character's own halves are grouped, and groups go whole to
one side of the split."""

from __future__ import annotations

import numpy as np

from voxanon.jobs.corpus.games_speakers import actor_groups, split_groups


def _voice(rng: np.random.Generator, centre: np.ndarray, n: int, spread: float) -> np.ndarray:
    x = centre + spread * rng.standard_normal((n, centre.size))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_two_characters_of_one_voice_are_grouped_and_distinct_voices_are_not():
    rng = np.random.default_rng(0)
    actor, other, third = (rng.standard_normal(64) for _ in range(3))
    emb = {"a-hero": _voice(rng, actor, 40, 0.05), "a-twin": _voice(rng, actor, 20, 0.05),
           "b": _voice(rng, other, 20, 0.05), "c": _voice(rng, third, 20, 0.05)}
    result = actor_groups(emb)
    assert [p[:2] for p in result["may_share_actor"]] == [["a-hero", "a-twin"]]
    assert result["groups"] == [["a-hero", "a-twin"], ["b"], ["c"]]
    assert result["threshold"] == min(result["within"].values())
    assert result["closest_pairs"][0][:2] == ["a-hero", "a-twin"]


def test_groups_stay_whole_and_the_hero_trains():
    clips = {"hero": 400, "a": 30, "b": 30, "c": 25, "d": 20, "tiny": 3}
    groups = [["a", "b"], ["c"], ["d"], ["hero"]]
    for seed in range(5):
        split = split_groups(groups, clips, ["tiny"], 0.2, seed)
        assert "hero" in split["train"] and "tiny" in split["train"]
        assert ("a" in split["test"]) == ("b" in split["test"])
        assert sorted(split["train"] + split["test"]) == sorted(clips)
        assert 0 < sum(clips[s] for s in split["test"]) <= 0.2 * sum(clips.values())
