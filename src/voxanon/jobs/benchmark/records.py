"""The benchmark's typed results: one record per system, the ranking, and the versioned ``results.json``.

The benchmark builds a :class:`BenchmarkResults` and its :class:`Summary`
(computed once by :func:`summarize` from the columns the evaluators declare),
ranks the summary rows (:func:`rank`), writes the results with :func:`save_results`; the report and the
CLI read it back with :func:`load_results` and render it. An unknown or old
``schema_version`` is a :class:`~voxanon.errors.DataError`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from voxanon.atomic import write_text
from voxanon.errors import DataError
from voxanon.evaluation.evaluator import Column
from voxanon.evaluation.results import RESULT_KINDS, from_dict, to_dict

SCHEMA_VERSION = 5
#: older versions this one still reads (4 added ``conditions``, absent from a version 3 file; 5 added the settings'
#: ``language`` and ``error_unit``, English words in older files)
READABLE_VERSIONS = (3, 4, SCHEMA_VERSION)
ORIGINAL = "original"


@dataclass(frozen=True)
class SystemRecord:
    """One system: its settings, anonymization speed and every evaluator's typed result by (kind, *slot)."""

    method: str | None
    params: dict[str, Any]
    key: str
    rtf: float | None = None
    rtf_jobs: int | None = None
    failed_utterances: int | None = None
    results: dict[tuple[str, ...], Any] = field(default_factory=dict)

    def get(self, kind: str, *slot: str) -> Any:
        """The result of evaluator ``kind`` at ``slot`` (None when it was not run or failed)."""
        return self.results.get((kind, *slot))

    def of_kind(self, kind: str) -> dict[tuple[str, ...], Any]:
        """Every result of one kind, by slot."""
        return {k[1:]: v for k, v in self.results.items() if k[0] == kind}

    def to_json(self) -> dict[str, Any]:
        """``results.json`` form: kinds nested by slot (``privacy[scenario][split]``)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "results"}
        out = {k: v for k, v in out.items() if v is not None or k == "method"}
        for (kind, *slot), res in self.results.items():
            node = out.setdefault(kind, {}) if slot else out
            for k in slot[:-1]:
                node = node.setdefault(k, {})
            node[slot[-1] if slot else kind] = to_dict(res)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str) -> SystemRecord:
        """Inverse of :meth:`to_json`; result kinds come from :data:`RESULT_KINDS`."""
        data = dict(data)
        results: dict[tuple[str, ...], Any] = {}
        for kind, (rtype, depth) in RESULT_KINDS.items():
            node = data.pop(kind, None)
            if node is not None:
                _collect(results, (kind,), node, rtype, depth, f"{where}.{kind}")
        return replace(from_dict(cls, data, where), results=results)


def _collect(out: dict, prefix: tuple[str, ...], node: Any, rtype: type, depth: int, where: str) -> None:
    if depth == 0:
        out[prefix] = from_dict(rtype, node, where)
        return
    if not isinstance(node, dict):
        raise DataError(f"{where}: expected an object")
    for k, v in node.items():
        _collect(out, (*prefix, k), v, rtype, depth - 1, f"{where}.{k}")


@dataclass(frozen=True)
class Primary:
    """The headline privacy number: scenario and split."""

    scenario: str
    split: str


@dataclass(frozen=True)
class RunInfo:
    """Settings every number of the run shares."""

    seed: int
    asr: str
    wer_normalization: str
    pretrained_encoder: str
    semi_informed_attacker: str
    primary: Primary
    #: the corpus's language and the unit the ASR's errors are counted in (``word``: WER, ``char``: CER)
    language: str = "en"
    error_unit: str = "word"

    @property
    def error_rate(self) -> str:
        """``WER`` or ``CER``: the name of the ASR's error rate."""
        return "CER" if self.error_unit == "char" else "WER"


@dataclass(frozen=True)
class DataInfo:
    """Which data the run used."""

    root: str
    synthetic: bool
    splits: list[str]
    description: dict[str, Any]


@dataclass(frozen=True)
class RankEntry:
    """A system's VPC privacy category, its rank by each utility measure (None: not ranked by it), the changes
    against the original (``eer`` and each measure, in % of the original's value) and its normalised score.

    In ``results.json`` and summary.csv the ranks are ``<measure>_rank`` and the changes ``d_<name>``.
    """

    category: int
    ranks: dict[str, int | None]
    changes: dict[str, float] = field(default_factory=dict)
    score: float | None = None
    score_rank: int | None = None

    def to_json(self) -> dict[str, Any]:
        """``{category, wer_rank, uar_rank, d_eer, d_wer, d_uar, score, score_rank}`` (changes and score only
        where computed)."""
        out: dict[str, Any] = {"category": self.category, **{f"{k}_rank": v for k, v in self.ranks.items()}}
        out.update((f"d_{k}", v) for k, v in self.changes.items() if v is not None)
        out.update((k, getattr(self, k)) for k in ("score", "score_rank") if getattr(self, k) is not None)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str) -> RankEntry:
        """Inverse of :meth:`to_json`."""
        if not isinstance(data, dict) or "category" not in data:
            raise DataError(f"{where}: expected an object with a category")
        ranks = {k.removesuffix("_rank"): v for k, v in data.items() if k.endswith("_rank") and k != "score_rank"}
        changes = {k.removeprefix("d_"): v for k, v in data.items() if k.startswith("d_")}
        return cls(data["category"], ranks, changes, data.get("score"), data.get("score_rank"))


@dataclass(frozen=True)
class Ranking:
    """Ranks of the systems with complete results and the Pareto fronts of each trade-off view (``privacy_vs_wer``,
    ``uar_vs_wer``, ...). ``used``: whether each optional measure ranked (``uar_used`` in ``results.json``)."""

    systems: dict[str, RankEntry]
    used: dict[str, bool] = field(default_factory=dict)
    pareto: dict[str, list[str]] | None = None

    def uses(self, measure: str) -> bool:
        """Whether ``measure`` ranked the systems (a required one always does)."""
        return self.used.get(measure, True)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"systems": to_dict(self.systems), **{f"{k}_used": v for k, v in self.used.items()}}
        return out | ({"pareto": self.pareto} if self.pareto is not None else {})

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str) -> Ranking:
        if not isinstance(data, dict) or not isinstance(data.get("systems"), dict):
            raise DataError(f"{where}: expected an object with systems")
        systems = {k: RankEntry.from_json(v, f"{where}.systems.{k}") for k, v in data["systems"].items()}
        used = {k.removesuffix("_used"): v for k, v in data.items() if k.endswith("_used")}
        return cls(systems, used, data.get("pareto"))


@dataclass(frozen=True)
class ConditionRun:
    """Every system's results under one recording condition applied in one place
    (:mod:`voxanon.jobs.benchmark.conditions`: ``input``, before anonymization, or ``output``, after it)."""

    condition: dict[str, Any]
    description: str
    applied_to: str
    systems: dict[str, SystemRecord] = field(default_factory=dict)
    paths: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The condition's name (``noise10``)."""
        return self.condition["name"]


@dataclass(frozen=True)
class BenchmarkResults:
    """Everything one benchmark run produced (``results.json``)."""

    schema_version: int
    voxanon_version: str
    created: str
    profile: dict[str, Any]
    settings: RunInfo
    versions: dict[str, str]
    machine: dict[str, Any]
    data: DataInfo
    systems: dict[str, SystemRecord]
    errors: dict[str, list[str]]
    paths: dict[str, dict[str, str]]
    ranking: Ranking
    elapsed_seconds: float
    #: the run's recording conditions (``voxanon benchmark --conditions``), empty without them
    conditions: list[ConditionRun] = field(default_factory=list)


def save_results(path: Path, results: BenchmarkResults) -> None:
    """Write ``results.json`` atomically."""
    write_text(path, json.dumps(to_dict(results), indent=1, default=str))


def load_results(path: str | Path) -> BenchmarkResults:
    """Read a ``results.json``; DataError when it is unreadable or of another schema version."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: cannot read benchmark results ({exc})") from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version not in READABLE_VERSIONS:
        raise DataError(f"{path}: results schema version {version!r} is not {SCHEMA_VERSION} (written by "
                        f"another voxanon version); rerun `voxanon benchmark` into this folder to rebuild it")
    return from_dict(BenchmarkResults, data, str(path))


# -- summary rows and ranking -------------------------------------------------------------------------
#: the anonymization's real-time factor: the run's own column, after the default evaluators' columns
RTF = Column("rtf", lambda record, results: record.rtf, header="RTF", digits=4)


@dataclass(frozen=True)
class SummaryRow:
    """A system's summary numbers on the primary split, by column name (``row["eer"]``)."""

    system: str
    values: dict[str, Any]

    def __getitem__(self, name: str) -> Any:
        return self.values[name]


@dataclass(frozen=True)
class Summary:
    """The summary of a run: the declared columns (summary.csv order) and one row per system.

    Columns come from the registered evaluators (:meth:`~voxanon.evaluation.evaluator.Evaluator.columns`):
    the default ones first (the privacy headline, led by the strongest attacker, then the rest in
    registration order), the run's :data:`RTF`, then the optional evaluators'.
    """

    columns: list[Column]
    rows: list[SummaryRow]

    def shown(self, view: str) -> list[Column]:
        """The columns a view shows (``view``: ``"header"``, the report, or ``"cli"``): those titled for it, less
        the ``omit_missing`` ones no system has."""
        return [c for c in self.columns if getattr(c, view)
                and not (c.omit_missing and all(r[c.name] is None for r in self.rows))]


def summary_columns(results: BenchmarkResults) -> list[Column]:
    """Every registered evaluator's summary columns for ``results``, in :class:`Summary` order."""
    from voxanon.evaluation.evaluator import evaluator_classes

    return [*(c for e in evaluator_classes() for c in e.columns(results)), RTF,
            *(c for e in evaluator_classes(optional=True) for c in e.columns(results))]


def summarize(results: BenchmarkResults) -> Summary:
    """The run's summary rows, computed once: every declared column read from every system's record."""
    columns = summary_columns(results)
    rows = [SummaryRow(name, {c.name: c.value(record, results) for c in columns})
            for name, record in results.systems.items()]
    return Summary(columns, rows)


def rank(summary: Summary) -> Ranking:
    """Privacy categories, ranks, relative changes, Pareto fronts and the normalised score of the summary's rows.

    The columns' ranking roles (:class:`~voxanon.evaluation.evaluator.Rank`) say what ranks: the privacy
    column (the headline's strongest-attacker EER) sets the category, the utility columns (WER, UAR) rank inside
    it. A system without the privacy value or a required measure is not ranked; an optional measure ranks only
    when every ranked system has it, and the normalised score needs every measure.
    """
    from voxanon.evaluation.evaluator import PRIVACY, UTILITY
    from voxanon.metrics.ranking import PRIVACY as EER
    from voxanon.metrics.ranking import (
        Measure,
        SystemResult,
        pareto_front,
        performance_matrix,
        rank_systems,
        relative_changes,
    )

    def value(v: float | None) -> float:  # NaN where a measure is missing (e.g. no emotion set)
        return float(v) if v is not None else math.nan

    privacy = next(c for c in summary.columns if c.rank and c.rank.role == PRIVACY)
    utilities = [c for c in summary.columns if c.rank and c.rank.role == UTILITY]
    complete = [r for r in summary.rows if r[privacy.name] is not None
                and all(r[c.name] is not None for c in utilities if c.rank.required)]
    used = {c.name: all(r[c.name] is not None for r in complete) for c in utilities if not c.rank.required}
    measures = [Measure(c.name, c.rank.higher_better) for c in utilities if used.get(c.name, True)]
    table_rows = [SystemResult(r.system, value(r[privacy.name]), {m.name: value(r[m.name]) for m in measures})
                  for r in complete]
    if not table_rows:
        return Ranking({}, used)
    entries: dict[str, dict[str, Any]] = {}
    for rs in rank_systems(table_rows, measures):
        entries[rs.system.name] = {"category": rs.category, "ranks": {c.name: rs.ranks.get(c.name) for c in utilities}}
    orig = next((r for r in table_rows if r.name == ORIGINAL), None)
    if orig:
        for ch in relative_changes(table_rows, orig):
            entries[ch.name]["changes"] = ch.changes
    views = {f"privacy_vs_{m.name}": (EER, m.name, (True, m.higher_better)) for m in measures}
    views.update((f"{b.name}_vs_{a.name}", (b.name, a.name, (b.higher_better, a.higher_better)))
                 for i, a in enumerate(measures) for b in measures[i + 1:])
    pareto = {k: [r.name for r in pareto_front(table_rows, x, y, m)] for k, (x, y, m) in views.items()}
    if len(measures) == len(utilities):
        for ns in performance_matrix(table_rows, measures):
            entries[ns.name].update(score=ns.combined, score_rank=ns.rank)
    return Ranking({k: RankEntry(**v) for k, v in entries.items()}, used, pareto)
