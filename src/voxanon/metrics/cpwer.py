"""cpWER: concatenated minimum-permutation word error rate of a multi-speaker recording (CHiME-6).

Each speaker's words are concatenated in time order, on both sides; every
reference speaker is paired with one hypothesis speaker (a missing side is an
empty text) so that the total word errors are fewest, and cpWER is those
errors over the reference words. Word errors are :func:`voxanon.metrics.wer.wer`'s
(jiwer's edit distance after the same text normalisation); the best pairing is
``scipy.optimize.linear_sum_assignment`` over the pairwise error counts, which
equals the minimum over all permutations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from voxanon.metrics.wer import wer


@dataclass(frozen=True)
class CpWERResult:
    """Word errors of the best speaker pairing of one or more recordings."""

    errors: int
    n_reference_words: int
    #: (reference speaker, hypothesis speaker) pairs; "" stands for a missing speaker
    pairing: tuple[tuple[str, str], ...] = ()

    @property
    def cpwer(self) -> float:
        """cpWER in percent."""
        return 100.0 * self.errors / self.n_reference_words if self.n_reference_words else float("nan")

    def __add__(self, other: CpWERResult) -> CpWERResult:
        return CpWERResult(self.errors + other.errors, self.n_reference_words + other.n_reference_words,
                           self.pairing + other.pairing)


def speaker_texts(turns: Iterable[tuple[str, float, str]]) -> dict[str, str]:
    """Each speaker's words in time order from ``(speaker, start, text)`` turns."""
    out: dict[str, list[str]] = {}
    for speaker, _, text in sorted(turns, key=lambda t: (t[1], t[0])):
        out.setdefault(speaker, []).append(text)
    return {speaker: " ".join(texts) for speaker, texts in sorted(out.items())}


def cpwer(reference: Mapping[str, str], hypothesis: Mapping[str, str], *, normalization: str = "vpc") -> CpWERResult:
    """cpWER of one recording: ``reference`` and ``hypothesis`` map speakers to their concatenated words.

    Raises ValueError when the reference holds no words.
    """
    n = max(len(reference), len(hypothesis))
    refs = [*reference, *[""] * (n - len(reference))]
    hyps = [*hypothesis, *[""] * (n - len(hypothesis))]
    pairs = [(i, j) for i in range(n) for j in range(n)]
    result = wer({f"{i} {j}": reference.get(refs[i], "") for i, j in pairs},
                 {f"{i} {j}": hypothesis.get(hyps[j], "") for i, j in pairs}, normalization=normalization)
    errors = np.array([u.errors for u in result.utterances], dtype=float).reshape(n, n)
    rows, cols = linear_sum_assignment(errors)
    n_words = sum(u.n_reference_words for u in result.utterances[::n])  # each reference speaker once (column 0)
    return CpWERResult(int(errors[rows, cols].sum()), n_words,
                       tuple((refs[i], hyps[j]) for i, j in zip(rows, cols) if refs[i] or hyps[j]))
