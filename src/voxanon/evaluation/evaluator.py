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
``report.html``, :meth:`~Evaluator.figures` its figures and :meth:`~Evaluator.tables` its long tables
(:class:`Table`: a CSV beside the summary and, where it has one, a report section). It owns its
inputs too: its :attr:`~Evaluator.Options` (what a user sets, from a profile
or ``voxanon benchmark --set NAME.FIELD=VALUE``) and its
:meth:`~Evaluator.prerequisites` (work done once per run on original data).
A new evaluation is one class plus one line in :data:`EVALUATORS` (or a call
to :func:`register`), and its result kind in
:func:`voxanon.evaluation.results.register_kind`; the benchmark, the report
and the CLI find everything else there.
"""

from __future__ import annotations

import dataclasses
import importlib
import typing
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping

from voxanon.errors import ConfigError
from voxanon.evaluation.fingerprint import data_fingerprint, digest, model_fingerprint


@dataclass(frozen=True)
class RunSettings:
    """The knobs every evaluator of one benchmark run shares (each evaluator's own are its :attr:`Evaluator.Options`).

    ``asr`` is the run's recogniser (its WER, the content attack's transcripts), ``wer_normalization`` and
    ``asr_unit`` (``word``: WER, ``char``: CER) how its transcripts are scored, from the corpus's ``language``;
    ``pretrained`` is the pretrained speaker encoder of the ignorant and lazy attackers.
    """

    splits: tuple[str, ...]
    n_boot: int
    seed: int
    asr: str
    wer_normalization: str
    pretrained: str
    asr_unit: str = "word"
    language: str = "en"


def option(default: Any, *, profile: str | None = None) -> Any:
    """A field of an evaluator's :attr:`~Evaluator.Options`: its ``default`` and the benchmark profile key it is
    read from (:class:`~voxanon.jobs.benchmark.profiles.Profile`'s field of that name; None: only
    ``NAME.FIELD`` in the profile's ``settings``, :func:`options_of`)."""
    return field(default=default, metadata={"profile": profile})


@dataclass(frozen=True)
class NoOptions:
    """The options of an evaluator that has none."""


def options_of(name: str, cls: type[Evaluator], values: Mapping[str, Any]) -> Any:
    """The options of evaluator ``cls`` registered as ``name``, from a run's ``values`` (a profile's fields and
    its ``settings``): each field's ``NAME.FIELD`` value, else the value of its profile key, else its default."""
    found = {}
    for f in dataclasses.fields(cls.Options):
        key = f.metadata.get("profile")
        if f"{name}.{f.name}" in values:
            found[f.name] = values[f"{name}.{f.name}"]
        elif key is not None and key in values:
            found[f.name] = values[key]
    return cls.Options(**found)


def _coerce(tp: Any, text: str, where: str) -> Any:
    """``text`` (a command-line value) as a value of the option type ``tp`` (tuples: comma-separated)."""
    tp = {"int": int, "float": float, "str": str, "bool": bool}.get(tp, tp) if isinstance(tp, str) else tp
    if typing.get_origin(tp) is tuple:
        (item, *_rest) = typing.get_args(tp) or (str,)
        return tuple(_coerce(item, t.strip(), where) for t in text.split(",") if t.strip())
    if tp is bool:
        if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise ConfigError(f"{where}: expected true or false, got {text!r}")
        return text.lower() in ("true", "1", "yes")
    if tp in (int, float, str):
        try:
            return tp(text)
        except ValueError:
            raise ConfigError(f"{where}: expected {tp.__name__}, got {text!r}") from None
    return text


def parse_setting(text: str) -> tuple[str, Any]:
    """``NAME.FIELD=VALUE`` (``--set``) as the ``settings`` entry ``("NAME.FIELD", value)``, the value of the
    option's type; ConfigError naming what is wrong and what exists."""
    key, eq, value = text.partition("=")
    name, dot, option_name = key.strip().partition(".")
    if not (eq and dot and name and option_name):
        raise ConfigError(f"--set {text!r}: expected NAME.SETTING=VALUE (e.g. ser.epochs=15)")
    if name not in EVALUATORS and name not in OPTIONAL_EVALUATORS:
        raise ConfigError(f"--set {text!r}: no evaluator {name!r}; evaluators: "
                          f"{', '.join([*EVALUATORS, *OPTIONAL_EVALUATORS])}")
    cls = evaluator_class(name)
    hints = typing.get_type_hints(cls.Options)
    known = [f.name for f in dataclasses.fields(cls.Options)]
    if option_name not in known:
        raise ConfigError(f"--set {text!r}: evaluator {name} has no setting {option_name!r}; its settings: "
                          f"{', '.join(known) or 'none'}")
    return f"{name}.{option_name}", _coerce(hints[option_name], value.strip(), f"--set {key.strip()}")


@dataclass(frozen=True)
class SystemData:
    """What the evaluators read for one system (sets by short name, :mod:`voxanon.data.layout`; ``original`` also
    holds the corpus's real recordings, :data:`~voxanon.data.layout.REAL`, where it has them)."""

    label: str
    anonymized: bool
    sets: Mapping[str, Path]
    original: Mapping[str, Path]
    synthetic: bool = False
    #: the run's shared work for the evaluators (:class:`Prerequisite`), each folder by :attr:`Prerequisite.id`
    prepared: Mapping[str, Path] = field(default_factory=dict)


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
class Prerequisite:
    """Work a run does once on its original data before any evaluation, for the evaluators that declare it
    (:meth:`Evaluator.prerequisites`), e.g. the SER models trained on original speech.

    ``make(folder, env)`` builds it into ``folder`` (the run's ``<name>/<digest of key>``: :attr:`id`) and returns
    a JSON-ready report; its stage is cached under ``key``, so it is built once and shared by every evaluator that
    declares the same name and key. The evaluators find the folder in :attr:`SystemData.prepared`; where it
    failed, the error is recorded as ``what`` and they are not run.
    """

    name: str
    key: dict[str, Any]
    make: Callable[[Path, Env], Any] = field(compare=False)
    what: str = ""

    @property
    def id(self) -> str:
        """Its folder relative to the run's output: ``<name>/<digest of key>``."""
        return f"{self.name}/{stage_key(self.key)}"


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


@dataclass(frozen=True)
class Table:
    """A long table an evaluator writes beside the benchmark summary (:meth:`Evaluator.tables`): ``<name>.csv``
    of ``rows`` (one dict each; nothing is written without rows) and, with ``html``, a report section titled
    ``title`` after the figures, ``html(rows, page)`` drawn with :mod:`voxanon.jobs.report.page`'s helpers."""

    name: str
    rows: list[dict[str, Any]]
    title: str = ""
    html: Callable[[list[dict[str, Any]], Any], str] | None = None


class Evaluator(ABC):
    """One evaluation of one system; subclasses set ``kind`` and ``Settings`` and implement the methods."""

    kind: ClassVar[str]
    Settings: ClassVar[type]
    #: what a user sets for this evaluation (:func:`option` fields with defaults; in a profile or with
    #: ``--set NAME.FIELD=VALUE``, :func:`options_of`), from which :meth:`plan` makes the instances' settings
    Options: ClassVar[type] = NoOptions
    #: whether the benchmark measures it again under each recording condition (:mod:`voxanon.jobs.benchmark.conditions`)
    under_conditions: ClassVar[bool] = False

    def __init__(self, settings: Any) -> None:
        if not isinstance(settings, self.Settings):
            raise TypeError(f"{type(self).__name__} takes {self.Settings.__name__}, not {type(settings).__name__}")
        self.settings = settings

    @classmethod
    @abstractmethod
    def plan(cls, run: RunSettings, options: Any) -> list[Evaluator]:
        """The instances a benchmark run uses (e.g. one per split), given the run and this evaluator's
        ``options`` (an :attr:`Options`)."""

    def extra_splits(self) -> tuple[str, ...]:
        """Splits besides those it evaluates whose sets this evaluation reads (the benchmark anonymizes them too,
        where the corpus has them; default: none)."""
        return ()

    def prerequisites(self, original: Mapping[str, Path]) -> list[Prerequisite]:
        """The shared work this evaluation needs done on the run's ``original`` sets first (default: none)."""
        return []

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

    @classmethod
    def tables(cls, results: Any) -> list[Table]:
        """This evaluator's long tables of a run's ``results`` (:class:`Table`); default: none."""
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


def plan(run: RunSettings, evaluators: list[str] | None = None, values: Mapping[str, Any] | None = None
         ) -> list[Evaluator]:
    """Every registered evaluator's (or those named) instances for ``run``, in registration order, each planned
    with its options from ``values`` (:func:`options_of`; none given: the defaults)."""
    out = []
    for name in evaluators or list(EVALUATORS):
        cls = evaluator_class(name)
        out += cls.plan(run, options_of(name, cls, values or {}))
    return out
