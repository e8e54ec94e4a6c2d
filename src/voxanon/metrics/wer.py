"""Word and character error rates with per-utterance alignment counts (jiwer)."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import jiwer

from voxanon.metrics.text import NORMALIZERS


@dataclass(frozen=True)
class UtteranceErrors:
    """Word alignment counts of one utterance (after normalisation)."""

    utt_id: str
    reference: str
    hypothesis: str
    substitutions: int
    deletions: int
    insertions: int
    hits: int

    @property
    def n_reference_words(self) -> int:
        """Number of reference words N = S + D + hits."""
        return self.substitutions + self.deletions + self.hits

    @property
    def errors(self) -> int:
        """Word errors S + D + I."""
        return self.substitutions + self.deletions + self.insertions


@dataclass(frozen=True)
class WERResult:
    """Corpus-level WER / CER and per-utterance details.

    Attributes
    ----------
    wer, cer : float
        Corpus word / character error rate in percent: total errors over
        total reference words / characters (spaces count as characters).
        With ``unit="char"`` both are the character error rate, spaces not
        counted.
    substitutions, deletions, insertions, n_reference_words : int
        Corpus counts S, D, I and N of the unit (words, or characters).
    utterances : tuple of UtteranceErrors
        Per-utterance alignment counts, in input order.
    normalization : str
        Name of the text normalisation applied to both sides.
    unit : str
        ``word``, or ``char`` for languages written without spaces between
        words (:func:`voxanon.metrics.text.error_unit`).
    """

    @property
    def error_rate_name(self) -> str:
        """``WER`` or ``CER``: what :attr:`wer` measures."""
        return "CER" if self.unit == "char" else "WER"

    wer: float
    cer: float
    substitutions: int
    deletions: int
    insertions: int
    n_reference_words: int
    utterances: tuple[UtteranceErrors, ...]
    normalization: str
    unit: str = "word"


def _paired(references, hypotheses) -> tuple[list[str], list[str], list[str]]:
    """Utterance ids, references and hypotheses in matching order."""
    if isinstance(references, Mapping):
        if not isinstance(hypotheses, Mapping):
            raise TypeError("references is a mapping, so hypotheses must be one too")
        missing = sorted(set(references) - set(hypotheses))
        extra = sorted(set(hypotheses) - set(references))
        if missing or extra:
            raise ValueError(f"utterance ids differ: missing hypotheses {missing[:5]}, unknown {extra[:5]}")
        ids = list(references)
        return ids, [references[u] for u in ids], [hypotheses[u] for u in ids]
    if not isinstance(references, Sequence) or isinstance(hypotheses, Mapping):
        raise TypeError("references and hypotheses must both be mappings or both be sequences")
    if len(references) != len(hypotheses):
        raise ValueError(f"{len(references)} references but {len(hypotheses)} hypotheses")
    return [str(i) for i in range(len(references))], list(references), list(hypotheses)


def _utterance_errors(utt_id, reference, hypothesis, chunks) -> UtteranceErrors:
    counts = {"substitute": 0, "delete": 0, "insert": 0, "equal": 0}
    for chunk in chunks:
        span = chunk.hyp_end_idx - chunk.hyp_start_idx if chunk.type == "insert" else chunk.ref_end_idx - chunk.ref_start_idx
        counts[chunk.type] += span
    return UtteranceErrors(
        utt_id, reference, hypothesis, counts["substitute"], counts["delete"], counts["insert"], counts["equal"]
    )


def _characters(text: str) -> str:
    """Each character a token: ``"你好 吗"`` -> ``"你 好 吗"``."""
    return " ".join(text.replace(" ", ""))


def wer(references, hypotheses, normalization: str = "vpc", unit: str = "word") -> WERResult:
    """Corpus WER and CER with per-utterance alignments.

    Parameters
    ----------
    references, hypotheses : Mapping[str, str] or Sequence[str]
        Reference and recognised transcripts, either keyed by utterance id
        (the same ids on both sides) or paired by position (ids "0", "1" ...).
    normalization : str
        Name of a normalisation in :data:`voxanon.metrics.text.NORMALIZERS`:
        "vpc" (default, :func:`normalize_vpc`), "spoken", "basic" (any
        language) or "none".
    unit : str
        "word" (default), or "char": every character (spaces aside) is one
        token, so the result is the character error rate, per utterance too
        (Chinese, Japanese: :func:`voxanon.metrics.text.error_unit`).

    Returns
    -------
    WERResult
        Percent WER / CER, corpus counts and per-utterance counts.

    Notes
    -----
    An utterance with an empty (normalised) reference contributes its words as
    insertions and nothing to N. Alignment is jiwer's minimum edit distance.
    """
    normalize = NORMALIZERS[normalization]
    ids, refs, hyps = _paired(references, hypotheses)
    if unit not in ("word", "char"):
        raise ValueError(f"unit is 'word' or 'char', not {unit!r}")
    refs = [normalize(text) for text in refs]
    hyps = [normalize(text) for text in hyps]
    if unit == "char":
        refs, hyps = [_characters(t) for t in refs], [_characters(t) for t in hyps]
    words = jiwer.process_words(refs, hyps)
    chars = jiwer.process_characters(refs, hyps) if unit == "word" else words
    utterances = tuple(map(_utterance_errors, ids, refs, hyps, words.alignments))
    n_words = words.substitutions + words.deletions + words.hits
    n_chars = chars.substitutions + chars.deletions + chars.hits
    if n_words == 0:
        raise ValueError("the references contain no words")
    return WERResult(
        wer=100.0 * (words.substitutions + words.deletions + words.insertions) / n_words,
        cer=100.0 * (chars.substitutions + chars.deletions + chars.insertions) / n_chars,
        substitutions=words.substitutions,
        deletions=words.deletions,
        insertions=words.insertions,
        n_reference_words=n_words,
        utterances=utterances,
        normalization=normalization,
        unit=unit,
    )
