"""The evaluator contract: one evaluation (an attack scenario, ASR, SER, quality, ...) as a typed unit.

An :class:`Evaluator` has a ``kind`` (where its results live in a system's
record, e.g. ``privacy``), a ``slot`` inside it (e.g. ``("AA-semi", "test")``),
its settings as a frozen dataclass, the data sets it reads
(:meth:`~Evaluator.inputs`), the models it loads (:meth:`~Evaluator.models`)
and :meth:`~Evaluator.run`, which returns a typed result
(:mod:`voxanon.evaluation.results`). The benchmark derives each stage's cache
key from exactly these (:func:`stage_key`), so it never writes one by hand.

An evaluator also owns its output: :meth:`~Evaluator.columns` declares the
columns it adds to the benchmark summary (:class:`Column`: summary.csv, the
report's results table, the printed table; a column's :class:`Rank` says
whether and how it ranks systems), :meth:`~Evaluator.section` its part of
``report.html`` and :meth:`~Evaluator.figures` its figures. A new evaluation is one class plus one line in
:data:`EVALUATORS` (or a call to :func:`register`), and its result kind in
:func:`voxanon.evaluation.results.register_kind`; the benchmark, the report
and the CLI find its columns and section there.
"""

from __future__ import annotations

import dataclasses
import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping

from voxanon.evaluation.fingerprint import data_fingerprint, digest, model_fingerprint


@dataclass(frozen=True)
class RunSettings:
    """The benchmark knobs evaluators are planned from (one run)."""

    splits: tuple[str, ...]
    wer_splits: tuple[str, ...]
    n_boot: int
    seed: int
    asr: str
    wer_normalization: str
    pretrained: str
    quality_utts: int
    quality_split: str
    #: the semi-informed attacker rungs to train and run (:mod:`voxanon.evaluation.ladder`)
    rungs: tuple[str, ...]
    ecapa_recipe: str
    attacker_epochs: int
    finetune_epochs: int
    #: epochs of the per-fold SER recipe (the reference models and the learnability ones)
    ser_epochs: int = 15
    #: further recognisers whose WER is measured beside ``asr``'s (:class:`~voxanon.evaluation.asr.CheckAsrEvaluator`)
    check_asrs: tuple[str, ...] = ()
    #: the unit the ASR's errors are counted in: ``word`` (WER) or ``char`` (CER), from the corpus's language
    asr_unit: str = "word"


@dataclass(frozen=True)
class SystemData:
    """What the evaluators read for one system (sets by short name, :mod:`voxanon.data.layout`)."""

    label: str
    anonymized: bool
    sets: Mapping[str, Path]
    original: Mapping[str, Path]
    ser_models: Path | None = None  # per-fold SER models trained on original emotion data
    synthetic: bool = False
    #: real recordings of voices no model heard (the corpus's ``data/real``): the trained attackers' real-voice check
    real: Path | None = None


@dataclass
class Env:
    """Shared services of one run: caches under ``cache_dir``, progress switch, models loaded once."""

    cache_dir: Path
    quiet: bool = False
    device: str = "cpu"
    _models: dict[str, Any] = field(default_factory=dict)

    def model(self, spec: str, load: Callable[[str], Any]) -> Any:
        """The model ``spec``, loaded with ``load`` the first time it is asked for."""
        if spec not in self._models:
            self._models[spec] = load(spec)
        return self._models[spec]


#: the roles of summary columns in the ranking (:class:`Rank`)
PRIVACY, UTILITY = "privacy", "utility"


@dataclass(frozen=True)
class Rank:
    """A summary column's part in the VPC ranking (:func:`voxanon.jobs.benchmark.records.rank`).

    ``role`` :data:`PRIVACY`: the column whose value (EER %, higher is more private) puts each system in its
    privacy category; one per run. :data:`UTILITY`: a measure systems are ranked by inside each category
    (``higher_better`` or lower), changes are taken of against the original and Pareto fronts drawn for;
    ``label`` names it in the report (``rank WER``) and ``what`` says what it measures (``content``). A
    ``required`` measure is one a system must have to be ranked; an optional one ranks only when every ranked
    system has it (the ranking records whether it did: ``<column>_used``).
    """

    role: str
    higher_better: bool = True
    label: str = ""
    what: str = ""
    required: bool = False


@dataclass(frozen=True)
class Column:
    """One column of the benchmark summary, declared by an evaluator (:meth:`Evaluator.columns`).

    ``value(record, results)`` reads the cell of one system from its record
    (:class:`~voxanon.jobs.benchmark.records.SystemRecord`) in the run's
    results (:class:`~voxanon.jobs.benchmark.records.BenchmarkResults`), or
    None. ``name`` is its summary.csv key (``csv=False``: not written there;
    ``omit_missing``: the cell is left out of a row where it is None, so the
    column appears only when some system has it). ``header`` titles it in the
    report's results table and ``cli`` in the printed table (None: not shown
    there); ``digits``, ``bold``, ``label`` (text shown for the value) and
    ``ci`` (the name of the column holding its interval) format the report
    cell. One name may be declared twice to sit elsewhere in the report than
    in summary.csv (``csv=False`` on the second). ``rank``: the column's part in the ranking (None: none).
    """

    name: str
    value: Callable[[Any, Any], Any]
    header: str | None = None
    cli: str | None = None
    digits: int = 2
    bold: bool = False
    label: Callable[[Any], str] | None = None
    ci: str | None = None
    csv: bool = True
    omit_missing: bool = False
    rank: Rank | None = None


class Evaluator(ABC):
    """One evaluation of one system; subclasses set ``kind`` and ``Settings`` and implement the methods."""

    kind: ClassVar[str]
    Settings: ClassVar[type]
    #: whether the benchmark measures it again under each recording condition (:mod:`voxanon.jobs.benchmark.conditions`)
    under_conditions: ClassVar[bool] = False

    def __init__(self, settings: Any) -> None:
        if not isinstance(settings, self.Settings):
            raise TypeError(f"{type(self).__name__} takes {self.Settings.__name__}, not {type(settings).__name__}")
        self.settings = settings

    @classmethod
    @abstractmethod
    def plan(cls, run: RunSettings) -> list[Evaluator]:
        """The instances a benchmark run uses (e.g. one per split)."""

    @classmethod
    def columns(cls, results: Any) -> list[Column]:
        """The summary columns this evaluator adds to a run's ``results`` (default: none)."""
        return []

    @classmethod
    def section(cls, results: Any, page: Any) -> tuple[str, str] | None:
        """This evaluator's report section (title, HTML) drawn with ``page``'s helpers
        (:mod:`voxanon.jobs.report.page`: ``table``, ``fmt``, ``fmt_ci``); None: no section. Sections of one title
        are joined in registration order."""
        return None

    @classmethod
    def figures(cls, results: Any, summary: Any, draw: Any, folder: Path) -> list[tuple[Path, str]]:
        """This evaluator's report figures, drawn into ``folder`` with ``draw``'s functions
        (:mod:`voxanon.jobs.report.figures`) from the run's ``results`` and its ``summary``
        (:class:`~voxanon.jobs.benchmark.records.Summary`): (PNG path, caption) each; default: none."""
        return []

    @property
    def slot(self) -> tuple[str, ...]:
        """Keys of this evaluator's result inside its kind (``()``: the kind holds one result)."""
        return ()

    @property
    def name(self) -> str:
        """Readable id, e.g. ``privacy AA-semi test``."""
        return " ".join((self.kind, *self.slot))

    @property
    def group(self) -> str:
        """Evaluators of one system with the same group share work and run in order in one worker (default: alone)."""
        return self.name

    def applies(self, data: SystemData) -> bool:
        """Whether this evaluation is run on ``data`` (e.g. OO only on original speech)."""
        return True

    @abstractmethod
    def inputs(self, data: SystemData) -> dict[str, Path]:
        """The data directories read, by role."""

    def models(self, data: SystemData) -> dict[str, str]:
        """The model specs loaded, by role (files they name are hashed by content)."""
        return {}

    @abstractmethod
    def run(self, data: SystemData, env: Env) -> Any:
        """Evaluate ``data``; returns the typed result."""

    def key(self, data: SystemData, seed: int) -> dict[str, Any]:
        """Everything the result depends on: kind, slot, settings, input content, model content, seed."""
        return {"kind": self.kind, "slot": list(self.slot), "settings": dataclasses.asdict(self.settings),
                "inputs": {k: data_fingerprint(p) for k, p in sorted(self.inputs(data).items())},
                "models": {k: model_fingerprint(s) for k, s in sorted(self.models(data).items())},
                "seed": seed}


def stage_key(parts: dict[str, Any]) -> str:
    """Short digest of a stage's key material (names cached outputs)."""
    return digest(parts)[:16]


#: evaluator name -> "module:Class", imported when a run needs it; the name is its kind, except where
#: several evaluators write one kind (the attacker ladder writes privacy results)
EVALUATORS: dict[str, str] = {
    "privacy": "voxanon.evaluation.privacy:PrivacyEvaluator",
    "ladder": "voxanon.evaluation.ladder:LadderEvaluator",
    "wer": "voxanon.evaluation.asr:AsrEvaluator",
    "wer_check": "voxanon.evaluation.asr:CheckAsrEvaluator",
    "wer_real": "voxanon.evaluation.asr:RealSpeechAsrEvaluator",
    "ser": "voxanon.evaluation.ser:SerEvaluator",
    "quality": "voxanon.evaluation.quality:QualityEvaluator",
}

#: evaluators a profile adds by name (:attr:`~voxanon.jobs.benchmark.profiles.Profile.extra_evaluators`); not in
#: the default plan because of their cost (content: ASR of every training set; learnability: SER training
#: per system; learnability-asr: a CTC ASR trained per system)
OPTIONAL_EVALUATORS: dict[str, str] = {
    "content": "voxanon.evaluation.content_privacy:ContentPrivacyEvaluator",
    "learnability": "voxanon.evaluation.learnability:SerLearnabilityEvaluator",
    "learnability-asr": "voxanon.evaluation.learnability:AsrLearnabilityEvaluator",
}


def register(name: str, target: str) -> None:
    """Add an evaluator (``"package.module:Class"``) to the benchmark under ``name``."""
    EVALUATORS[name] = target


def evaluator_class(name: str) -> type[Evaluator]:
    """Import the evaluator class registered as ``name`` (or one of :data:`OPTIONAL_EVALUATORS`)."""
    module, _, name = (EVALUATORS.get(name) or OPTIONAL_EVALUATORS[name]).partition(":")
    return getattr(importlib.import_module(module), name)


def evaluator_classes(optional: bool = False) -> list[type[Evaluator]]:
    """The registered evaluator classes (or the optional ones), in registration order, each once."""
    names = OPTIONAL_EVALUATORS if optional else EVALUATORS
    return list(dict.fromkeys(evaluator_class(name) for name in names))


def plan(run: RunSettings, evaluators: list[str] | None = None) -> list[Evaluator]:
    """Every registered evaluator's (or those named) instances for ``run``, in registration order."""
    return [e for name in (evaluators or list(EVALUATORS)) for e in evaluator_class(name).plan(run)]
