"""The shipped entity lists (``resources/seca/entities.json``, CC0): SECA's gazetteer and its replacements.

Four types, CoNLL's: ``PER`` (persons), ``LOC`` (locations), ``ORG`` (organisations) and ``MISC``
(nationalities, languages, religions, holidays, events). A replacement has the original's type and a
similar length, is drawn with the utterance's generator and never equals the original.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources

import numpy as np

from voxanon.errors import ConfigError

ENTITY_TYPES = ("PER", "LOC", "ORG", "MISC")
#: a candidate's length may differ from the original's by this fraction (at least MIN_SLACK characters)
LENGTH_SLACK = 0.25
MIN_SLACK = 2


@dataclass(frozen=True)
class EntityLists:
    """Given names, surnames, locations, organisations and miscellaneous names; ``ambiguous``: common words."""

    given_names: tuple[str, ...]
    surnames: tuple[str, ...]
    by_type: dict[str, tuple[str, ...]]
    ambiguous: frozenset[str]
    licence: str
    source: str


@functools.cache
def entity_lists() -> EntityLists:
    """The shipped lists, loaded once."""
    raw = json.loads(resources.files("voxanon.resources").joinpath("seca/entities.json").read_text(encoding="utf-8"))
    given, surnames = tuple(raw["given_names"]), tuple(raw["surnames"])
    by_type = {"PER": given, **{t: tuple(raw[t]) for t in ENTITY_TYPES[1:]}}
    return EntityLists(given, surnames, by_type, frozenset(w.lower() for w in raw["ambiguous"]), raw["licence"],
                       raw["source"])


def _near(candidates: list[str], length: int) -> list[str]:
    """Candidates within the length slack of ``length`` (or the ten nearest when none is)."""
    slack = max(MIN_SLACK, LENGTH_SLACK * length)
    near = [c for c in candidates if abs(len(c) - length) <= slack]
    return near or sorted(candidates, key=lambda c: abs(len(c) - length))[:10]


def replacement(original: str, kind: str, rng: np.random.Generator) -> str:
    """A name of type ``kind`` of similar length to ``original``, drawn with ``rng``; never ``original`` itself.

    A person of several words becomes a given name and a surname, each near the length of its counterpart.
    """
    if kind not in ENTITY_TYPES:
        raise ConfigError(f"entity type {kind!r} is not one of {', '.join(ENTITY_TYPES)}")
    lists = entity_lists()
    words = original.split()
    if kind == "PER" and len(words) > 1:
        first = _pick(lists.given_names, words[0], rng)
        return f"{first} {_pick(lists.surnames, ' '.join(words[1:]), rng)}"
    return _pick(lists.by_type[kind], original, rng)


def _pick(names: tuple[str, ...], original: str, rng: np.random.Generator) -> str:
    candidates = [n for n in names if n.lower() != original.lower()]
    near = _near(candidates, len(original))
    return near[int(rng.integers(len(near)))]
