"""The PII-rich test sentences (``resources/seca/pii_sentences.jsonl``, written for voxanon, CC0).

Each sentence carries its named entities as character spans ``[start, end)`` with a type of
:data:`~voxanon.data.entity_lists.ENTITY_TYPES`; :func:`word_spans` turns them into word indices of the
VPC-style transcript.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

from voxanon.data.entity_lists import ENTITY_TYPES
from voxanon.data.sentences import normalize_transcript
from voxanon.errors import DataError


@dataclass(frozen=True)
class Span:
    """An entity: characters ``[start, end)`` of its sentence, and its type."""

    start: int
    end: int
    type: str


@dataclass(frozen=True)
class PiiSentence:
    """A sentence as spoken, its id and its entities."""

    id: str
    text: str
    entities: tuple[Span, ...]

    @property
    def transcript(self) -> str:
        """VPC-style transcript (upper case, words only)."""
        return normalize_transcript(self.text)


def word_spans(text: str, spans: tuple[Span, ...]) -> list[dict]:
    """Each span as ``{"type", "words": [first, last + 1]}`` over the words of ``normalize_transcript(text)``."""
    out = []
    for span in spans:
        first = len(normalize_transcript(text[:span.start]).split())
        n = len(normalize_transcript(text[span.start:span.end]).split())
        out.append({"type": span.type, "words": [first, first + n]})
    return out


def load_pii_sentences() -> list[PiiSentence]:
    """The shipped sentences, in file order; ValueError naming a line whose spans are malformed."""
    raw = resources.files("voxanon.resources").joinpath("seca/pii_sentences.jsonl").read_text(encoding="utf-8")
    out = []
    for number, line in enumerate(raw.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        item = json.loads(line)
        spans = tuple(Span(e["start"], e["end"], e["type"]) for e in item["entities"])
        for s in spans:
            if s.type not in ENTITY_TYPES or not 0 <= s.start < s.end <= len(item["text"]):
                raise DataError(f"pii_sentences.jsonl line {number}: bad entity {s}")
        out.append(PiiSentence(item["id"], item["text"], spans))
    return out
