"""TF-IDF text speaker encoder: word and character n-grams, a multinomial logistic-regression speaker classifier.

Features: lower-cased word 1-2-grams and character 2-4-grams of each word
padded with spaces, each block with sublinear term frequency, smoothed IDF and
unit length, the two blocks concatenated (scaled to unit length). The
classifier is an L2-regularised multinomial logistic regression over the
training speakers, fitted with L-BFGS from zero weights (deterministic). The
embedding of a text is its log-probability vector over the training speakers,
centred (minus its mean): unseen speakers are placed by whom they write like,
as the penultimate layer of a neural classifier would.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter

import numpy as np
import scipy.optimize
import scipy.sparse as sp

from voxanon.models.text_speaker.base import TextEncoderError, TextSpeakerEncoder

_WORD = re.compile(r"[a-z0-9']+")
#: most frequent n-grams kept per block (by document frequency)
MAX_FEATURES = 50_000


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def word_ngrams(text: str) -> list[str]:
    """Word 1- and 2-grams."""
    w = _words(text)
    return w + [f"{a} {b}" for a, b in zip(w, w[1:])]


def char_ngrams(text: str) -> list[str]:
    """Character 2-4-grams inside each space-padded word."""
    out = []
    for w in _words(text):
        p = f" {w} "
        out += [p[i:i + n] for n in (2, 3, 4) for i in range(len(p) - n + 1)]
    return out


ANALYZERS = {"word": word_ngrams, "char": char_ngrams}


def _counts(texts: list[str], analyzer, vocab: dict[str, int]) -> sp.csr_matrix:
    rows, cols, vals = [], [], []
    for r, t in enumerate(texts):
        for g, c in Counter(g for g in analyzer(t) if g in vocab).items():
            rows.append(r)
            cols.append(vocab[g])
            vals.append(c)
    return sp.csr_matrix((np.asarray(vals, dtype=np.float64), (rows, cols)), shape=(len(texts), len(vocab)))


def _unit_rows(x: sp.csr_matrix) -> sp.csr_matrix:
    norm = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    return sp.diags(1.0 / np.maximum(norm, 1e-12)) @ x


class TfidfSpeakerEncoder(TextSpeakerEncoder):
    """A trained TF-IDF + logistic-regression text speaker encoder (see the module docstring)."""

    def __init__(self, vocab: dict[str, list[str]], idf: dict[str, np.ndarray], weights: np.ndarray,
                 bias: np.ndarray, speakers: list[str]) -> None:
        self.vocab = {k: {g: i for i, g in enumerate(v)} for k, v in vocab.items()}
        self.idf = idf
        self.weights = weights
        self.bias = bias
        self.speakers = speakers
        self.dim = len(speakers)
        h = hashlib.sha256(weights.tobytes() + bias.tobytes() + json.dumps(vocab).encode())
        self.name = f"tfidf-{h.hexdigest()[:12]}"

    def features(self, texts: list[str]) -> sp.csr_matrix:
        """TF-IDF features of ``texts`` (rows of unit length; an empty text is a zero row)."""
        blocks = []
        for kind, analyzer in ANALYZERS.items():
            x = _counts(texts, analyzer, self.vocab[kind])
            x.data = 1.0 + np.log(x.data)
            blocks.append(_unit_rows(x @ sp.diags(self.idf[kind])))
        return _unit_rows(sp.hstack(blocks, format="csr"))

    def logits(self, texts: list[str]) -> np.ndarray:
        """Classifier scores over the training speakers, ``(N, n_speakers)``."""
        return np.asarray(self.features(texts) @ self.weights) + self.bias

    def embed(self, texts: list[str]) -> np.ndarray:
        z = self.logits(texts)
        logp = z - np.logaddexp.reduce(z, axis=1, keepdims=True)
        return (logp - logp.mean(axis=1, keepdims=True)).astype(np.float32)

    def save(self, path: str | os.PathLike) -> None:
        """Write the encoder as one ``.npz`` file (vocabulary as JSON, arrays as they are)."""
        meta = {"vocab": {k: sorted(v, key=v.get) for k, v in self.vocab.items()}, "speakers": self.speakers}
        np.savez(path, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), weights=self.weights,
                 bias=self.bias, **{f"idf_{k}": v for k, v in self.idf.items()})

    @classmethod
    def load(cls, path: str | os.PathLike) -> TfidfSpeakerEncoder:
        """Read an encoder written by :meth:`save`."""
        try:
            with np.load(path) as z:
                meta = json.loads(z["meta"].tobytes().decode())
                return cls(meta["vocab"], {k: z[f"idf_{k}"] for k in ANALYZERS}, z["weights"], z["bias"],
                           meta["speakers"])
        except (OSError, ValueError, KeyError) as exc:
            raise TextEncoderError(f"{path}: not a tfidf text encoder file ({type(exc).__name__}: {exc})") from None


def _fit_vocab(texts: list[str], analyzer) -> tuple[list[str], np.ndarray]:
    df: Counter[str] = Counter()
    for t in texts:
        df.update(set(analyzer(t)))
    grams = sorted(df, key=lambda g: (-df[g], g))[:MAX_FEATURES]
    n = len(texts)
    idf = np.log((1.0 + n) / (1.0 + np.array([df[g] for g in grams], dtype=np.float64))) + 1.0
    return grams, idf


def train_tfidf(texts: list[str], speakers: list[str], *, l2: float = 1e-3, max_iter: int = 500,
                seed: int = 0) -> TfidfSpeakerEncoder:
    """Fit the vocabulary, IDF and speaker classifier on labelled transcripts.

    Parameters
    ----------
    texts, speakers : one transcript and its speaker per training utterance
    l2 : weight of the L2 penalty on the classifier weights
    max_iter : L-BFGS iterations
    seed : recorded for the interface; the fit is deterministic (zero start, no sampling)
    """
    del seed  # nothing random: the same data always gives the same model
    if len(texts) != len(speakers):
        raise TextEncoderError(f"{len(texts)} transcripts but {len(speakers)} speaker labels")
    labels = sorted(set(speakers))
    if len(labels) < 2:
        raise TextEncoderError(f"a text speaker classifier needs at least 2 training speakers, got {len(labels)}")
    vocab, idf = {}, {}
    for kind, analyzer in ANALYZERS.items():
        vocab[kind], idf[kind] = _fit_vocab(texts, analyzer)
    if not any(vocab.values()):
        raise TextEncoderError("the training transcripts contain no words")
    k = len(labels)
    enc = TfidfSpeakerEncoder(vocab, idf, np.zeros((0, k)), np.zeros(k), labels)
    x = enc.features(texts)
    y = np.zeros((len(texts), k))
    y[np.arange(len(texts)), np.searchsorted(labels, speakers)] = 1.0
    n, d = x.shape

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:d * k].reshape(d, k), theta[d * k:]
        z = np.asarray(x @ w) + b
        logp = z - np.logaddexp.reduce(z, axis=1, keepdims=True)
        g = (np.exp(logp) - y) / n
        value = -(y * logp).sum() / n + 0.5 * l2 * (w * w).sum()
        return value, np.concatenate([(np.asarray(x.T @ g) + l2 * w).ravel(), g.sum(axis=0)])

    res = scipy.optimize.minimize(loss, np.zeros(d * k + k), jac=True, method="L-BFGS-B",
                                  options={"maxiter": max_iter})
    return TfidfSpeakerEncoder(vocab, idf, res.x[:d * k].reshape(d, k), res.x[d * k:], labels)
