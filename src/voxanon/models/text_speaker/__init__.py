"""Text speaker encoders (content-based speaker identification) behind one interface.

Specs
-----
``tfidf``
    TF-IDF over word 1-2-grams and character 2-4-grams with a multinomial
    logistic-regression speaker classifier; the embedding is the centred
    per-speaker log-probability vector. Trained with :func:`train_text_encoder`
    on a training split's transcripts.
``tfidf:<model.npz>``
    Such an encoder saved with :meth:`TfidfSpeakerEncoder.save`.
"""

from __future__ import annotations

import os

from voxanon.models.text_speaker.base import TextEncoderError, TextSpeakerEncoder

__all__ = ["KINDS", "TextEncoderError", "TextSpeakerEncoder", "load_text_encoder", "train_text_encoder"]

#: trainable text-encoder kinds
KINDS = ("tfidf",)


def train_text_encoder(kind: str, texts: list[str], speakers: list[str], *, seed: int = 0) -> TextSpeakerEncoder:
    """Train a text speaker encoder of ``kind`` on transcripts labelled with their speakers."""
    if kind == "tfidf":
        from voxanon.models.text_speaker.tfidf import train_tfidf

        return train_tfidf(texts, speakers, seed=seed)
    raise TextEncoderError(f"unknown text speaker encoder {kind!r}; choose from {', '.join(KINDS)}")


def load_text_encoder(spec: str) -> TextSpeakerEncoder:
    """Load the saved encoder named by ``spec`` (``tfidf:<model.npz>``)."""
    kind, _, arg = spec.partition(":")
    if kind == "tfidf" and arg:
        if not os.path.isfile(arg):
            raise TextEncoderError(f"tfidf text encoder file not found: {arg}")
        from voxanon.models.text_speaker.tfidf import TfidfSpeakerEncoder

        return TfidfSpeakerEncoder.load(arg)
    raise TextEncoderError(f"unknown text speaker encoder spec {spec!r}: use 'tfidf:<model.npz>'")
