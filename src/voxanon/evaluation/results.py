"""Typed evaluation results: frozen dataclasses that serialise to and from plain JSON.

Every evaluator returns one of these; the benchmark stores them in its
versioned ``results.json`` and the report and CLI read them back with
:func:`from_dict`. Fields whose default is ``None`` are left out of the JSON
while ``None``; a JSON object that does not fit its type raises
:class:`~voxanon.errors.DataError` naming the field.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from typing import Any, TypeVar

from voxanon.errors import DataError
from voxanon.metrics.beyond_eer import BeyondEERResult

T = TypeVar("T")


# -- serialisation ---------------------------------------------------------------------------------
def to_dict(obj: Any) -> Any:
    """Plain JSON-ready data of a result (nested dataclasses, dicts, lists)."""
    if hasattr(obj, "to_json"):
        return obj.to_json()
    if dataclasses.is_dataclass(obj):
        out = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if value is None and f.default is None:
                continue
            out[f.name] = to_dict(value)
        return out
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    return obj


def _decode(tp: Any, value: Any, where: str) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        return _decode(inner[0], value, where) if len(inner) == 1 else value
    if hasattr(tp, "from_json"):
        return tp.from_json(value, where)
    if dataclasses.is_dataclass(tp):
        return from_dict(tp, value, where)
    if origin is dict:
        if not isinstance(value, dict):
            raise DataError(f"{where}: expected an object, got {type(value).__name__}")
        _, vt = typing.get_args(tp)
        return {k: _decode(vt, v, f"{where}.{k}") for k, v in value.items()}
    if origin in (list, tuple):
        if not isinstance(value, list):
            raise DataError(f"{where}: expected a list, got {type(value).__name__}")
        (it, *_rest) = typing.get_args(tp) or (Any,)
        items = [_decode(it, v, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    return value


def from_dict(cls: type[T], data: Any, where: str | None = None) -> T:
    """Rebuild ``cls`` from :func:`to_dict` output; DataError names a missing or unknown field."""
    where = where or cls.__name__
    if not isinstance(data, dict):
        raise DataError(f"{where}: expected an object, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise DataError(f"{where}: unknown field(s) {', '.join(unknown)}")
    kwargs = {}
    for name, f in fields.items():
        if name in data:
            kwargs[name] = _decode(hints[name], data[name], f"{where}.{name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise DataError(f"{where}: missing field {name!r}")
    return cls(**kwargs)


# -- privacy ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EerInterval:
    """Bootstrap interval of the EER (%), resampling enrolled speakers."""

    low: float
    high: float
    alpha: float
    n_boot: int
    resampled: str


@dataclass(frozen=True)
class Zebra:
    """ZEBRA privacy summary (expected bits, worst case, categorical tag)."""

    expected_bits: float
    worst_case_log10: float
    tag: str


@dataclass(frozen=True)
class DetPoints:
    """DET curve, probit axes, thinned."""

    pfa_probit: list[float]
    pmiss_probit: list[float]


@dataclass(frozen=True)
class VerificationMetrics:
    """Metrics of one trial list (one gender)."""

    n_target: int
    n_nontarget: int
    eer: float
    eer_threshold: float
    eer_ci: EerInterval
    rocch_eer: float
    cllr: float
    min_cllr: float
    linkability: float | None  # None: too few target trials to estimate
    zebra: Zebra
    det: DetPoints


@dataclass(frozen=True)
class Fairness:
    """Per-gender EERs and the mFDR gap."""

    eer_female: float
    eer_male: float
    mfdr: float


@dataclass(frozen=True)
class TrialScore:
    """One scored trial."""

    enroll_spk: str
    utt: str
    score: float
    target: bool
    gender: str


@dataclass(frozen=True)
class RealVoiceCheck:
    """How a trained attacker verifies original recordings of real people it never heard
    (:mod:`voxanon.evaluation.real_voices`): every pair of utterances scored, EER in %.

    ``pretrained_eer`` is the same check for the pretrained encoder the rung started from (None: trained from
    scratch). An attacker far above it learnt the corpus's voices, not speakers.
    """

    eer: float
    pretrained_eer: float | None
    speakers: int
    utterances: int
    target_pairs: int
    nontarget_pairs: int
    data: str


@dataclass(frozen=True)
class AttackerTraining:
    """How a semi-informed attacker (a ladder rung) was trained: its model, the training log and dev selection.

    ``history`` has one entry per epoch (or per candidate of a closed-form
    back-end) with at least ``epoch``, ``loss`` and ``val_eer`` (mean per-gender
    EER % on the dev trials); ``val_eer`` is that of the selected model. ``real_voices``: the trained model on
    real voices it never heard (None where the data has none, e.g. VPC data, or for a training recorded before
    the check existed).
    """

    rung: str
    model: str
    train: str
    selected_on: str
    val_eer: float
    history: list[dict[str, Any]]
    real_voices: RealVoiceCheck | None = None


@dataclass(frozen=True)
class PrivacyResult:
    """One attack scenario on one split: metrics per gender of the enrolled speaker and their mean EER."""

    encoder: str
    enroll: str
    trials: list[str]
    by_gender: dict[str, VerificationMetrics]
    eer_mean: float
    fairness: Fairness | None = None
    scenario: str | None = None
    scores: list[TrialScore] | None = None
    training: AttackerTraining | None = None  # set for a retrained attacker of the benchmark's ladder
    #: rank-1 linkability, singling out, rank disclosure, TPR at low FPR, per-speaker EERs: every trial
    #: utterance against every enrolled speaker (None: fewer than 2 speakers or 2 trials of one, or a result
    #: computed before these metrics existed)
    beyond: BeyondEERResult | None = None

    def without_scores(self) -> PrivacyResult:
        """The same result without the per-trial scores (as the benchmark stores it)."""
        return dataclasses.replace(self, scores=None)


@dataclass(frozen=True)
class ContentPrivacyResult:
    """Content-based re-identification (C-EER) on one split: a text speaker encoder attacking transcripts.

    ``transcripts`` says where the transcripts came from (``reference``: the
    ``text`` files, an oracle; otherwise the ASR backend's name); ``missing``
    lists the utterances (or speakers) left out and why; ``n_empty`` counts
    the empty transcripts that were kept.
    """

    encoder: str
    transcripts: str
    train: str
    enroll: str
    trials: list[str]
    by_gender: dict[str, VerificationMetrics]
    eer_mean: float
    n_train: int
    n_empty: int
    missing: dict[str, str]
    fairness: Fairness | None = None


# -- utility ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Interval:
    """Point estimate with a percentile bootstrap interval."""

    estimate: float
    low: float
    high: float
    alpha: float
    n_boot: int


@dataclass(frozen=True)
class AsrResult:
    """WER / CER of one data directory, with everything that was left out and why."""

    data: str
    asr_backend: str
    normalization: str
    n_scored: int
    wer: float | None
    cer: float | None
    wer_ci: Interval | None
    substitutions: int | None
    deletions: int | None
    insertions: int | None
    n_reference_words: int | None
    missing_transcript: list[str]
    empty_reference: list[str]
    failed: dict[str, str]
    decoded_now: int
    utterances: list[dict[str, Any]] | None = None
    unit: str = "word"

    def summary(self) -> AsrResult:
        """The same result without the per-utterance details."""
        return dataclasses.replace(self, utterances=None)


@dataclass(frozen=True)
class SerFold:
    """SER of one fold (scored by the model that did not train on its speakers)."""

    model: str
    speakers: list[str]
    n: int
    uar: float | None
    per_class_recall: dict[str, float]


@dataclass(frozen=True)
class SerResult:
    """Emotion recognition (UAR) of one data directory, per fold and pooled."""

    data_dir: str
    models: str
    fold_routing: bool
    labels: list[str]
    uar_mean: float
    uar_std: float
    folds: dict[str, SerFold]
    per_class_recall: dict[str, float]
    confusion: list[list[int]]
    n_utterances: int
    excluded_labels: dict[str, int]
    failed_audio: dict[str, str]
    batch_size: int
    seconds: float
    smoke_test_only: bool
    message: str | None
    utterances: list[dict[str, Any]] | None = None
    #: 95 % percentile-bootstrap interval of ``uar_mean`` (utterances resampled within their fold)
    uar_ci: list[float] | None = None

    def summary(self) -> SerResult:
        """The same result without the per-utterance details."""
        return dataclasses.replace(self, utterances=None)


@dataclass(frozen=True)
class LearnabilityResult:
    """Utility by training on anonymized data: a ``task`` model trained on the system's anonymized data
    and one trained on original data (the reference), both scored with ``metric`` on original test data.

    SER (``uar``): ``anonymized`` and ``reference`` are means over folds (``*_std`` their spread);
    ``per_fold`` has fold -> {"anonymized": value, "reference": value}. ASR (``wer``): corpus WER % of
    the original test trials with bootstrap intervals (``*_ci``) and CER (``*_cer``), ``per_fold`` per
    trial list (gender), no std; ``training`` has each model's training summary (loss per epoch).
    """

    task: str
    metric: str
    train: str
    test: str
    anonymized: float
    anonymized_std: float | None
    reference: float
    reference_std: float | None
    per_fold: dict[str, dict[str, float | None]]
    epochs: int
    n_test: int
    smoke_test_only: bool
    message: str | None = None
    anonymized_ci: Interval | None = None
    reference_ci: Interval | None = None
    anonymized_cer: float | None = None
    reference_cer: float | None = None
    training: dict[str, Any] | None = None


@dataclass(frozen=True)
class Dnsmos:
    """Mean DNSMOS overall score of original and anonymized utterances (and all four scores)."""

    original: float
    anonymized: float
    original_all: dict[str, float]
    anonymized_all: dict[str, float]
    n: int


@dataclass(frozen=True)
class QualityResult:
    """Naturalness (DNSMOS), intonation (ρF0) and voice distinctiveness (G_VD, De-ID)."""

    dnsmos: Dnsmos
    rho_f0: float | None
    rho_f0_n: int
    gvd_db: float
    deid: float
    gvd_speakers: int
    gvd_utterances: int
    encoder: str


#: result kind -> (result type, depth of its keys inside a system's record, e.g. privacy[scenario][split])
RESULT_KINDS: dict[str, tuple[type, int]] = {
    "privacy": (PrivacyResult, 2),
    "content": (ContentPrivacyResult, 2),
    "wer": (AsrResult, 1),
    "wer_check": (AsrResult, 2),
    "ser": (SerResult, 0),
    "learnability": (LearnabilityResult, 1),
    "quality": (QualityResult, 0),
}


def register_kind(kind: str, result_type: type, depth: int) -> None:
    """Declare a new result kind (a new evaluator's results) so results.json files read back typed."""
    known = RESULT_KINDS.get(kind)
    if known is not None and known != (result_type, depth):
        raise ValueError(f"result kind {kind!r} is already registered for {known[0].__name__}")
    RESULT_KINDS[kind] = (result_type, depth)
