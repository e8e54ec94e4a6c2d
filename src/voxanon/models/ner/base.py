"""The NER interface: :class:`Entity` spans and :class:`Ner`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from voxanon.errors import ModelError


class NerError(ModelError):
    """A recogniser that cannot be loaded; the message says how to install it."""


@dataclass(frozen=True)
class Entity:
    """Characters ``[start, end)`` of a text, of type PER, LOC, ORG or MISC; ``sure``: not an ambiguous match."""

    start: int
    end: int
    type: str
    sure: bool = True


class Ner(ABC):
    """A named-entity recogniser; ``name`` identifies model and version."""

    name: str

    @abstractmethod
    def find(self, text: str) -> list[Entity]:
        """Entities of ``text``, sorted, not overlapping."""


def merge(primary: list[Entity], secondary: list[Entity]) -> list[Entity]:
    """Union of two entity lists: overlapping spans become one covering both.

    The merged span takes the type of a sure ``secondary`` entity (the gazetteer knows its names), else the
    first ``primary`` one's.
    """
    out: list[Entity] = []
    for e in sorted(primary + secondary, key=lambda e: (e.start, -e.end)):
        if out and e.start < out[-1].end:
            last = out[-1]
            kind = e.type if (e in secondary and e.sure and not (last in secondary and last.sure)) else last.type
            out[-1] = Entity(last.start, max(last.end, e.end), kind, last.sure or e.sure)
        else:
            out.append(e)
    return out
