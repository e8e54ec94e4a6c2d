"""The benchmark's typed results: one record per system, the ranking, and the versioned ``results.json``.

The benchmark builds a :class:`BenchmarkResults` (ranking included, computed
once by :func:`rank`), writes it with :func:`save_results`; the report and the
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
from voxanon.evaluation.results import (
    RESULT_KINDS,
    AsrResult,
    Interval,
    LearnabilityResult,
    PrivacyResult,
    from_dict,
    to_dict,
)
from voxanon.evaluation.scenarios import AA_LAZY, OA, OO, SCENARIOS, strongest_attacker

SCHEMA_VERSION = 3
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

    def privacy(self, scenario: str, split: str) -> PrivacyResult | None:
        """A privacy result; the original row's OA/AA-lazy equal its OO when absent (nothing is anonymized)."""
        res = self.get("privacy", scenario, split)
        if res is None and self.method is None and scenario in SCENARIOS and SCENARIOS[scenario].attacker == "pretrained":
            res = self.get("privacy", OO, split)
        return res

    def of_kind(self, kind: str) -> dict[tuple[str, ...], Any]:
        """Every result of one kind, by slot."""
        return {k[1:]: v for k, v in self.results.items() if k[0] == kind}

    def attacker_eers(self, split: str) -> dict[str, float]:
        """Mean EER (%) of every attacker that ran on ``split`` (scenarios and ladder rungs), by name."""
        return {scenario: res.eer_mean for (scenario, sp), res in self.of_kind("privacy").items() if sp == split}

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


@dataclass(frozen=True)
class DataInfo:
    """Which data the run used."""

    root: str
    synthetic: bool
    splits: list[str]
    description: dict[str, Any]


@dataclass(frozen=True)
class RankEntry:
    """A system's VPC privacy category, ranks, changes against the original and normalised score."""

    category: int
    wer_rank: int
    uar_rank: int | None
    d_eer: float | None = None
    d_wer: float | None = None
    d_uar: float | None = None
    score: float | None = None
    score_rank: int | None = None


@dataclass(frozen=True)
class Ranking:
    """Ranks of the systems with complete results and the Pareto fronts of each trade-off view."""

    systems: dict[str, RankEntry]
    uar_used: bool
    pareto: dict[str, list[str]] | None = None


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
    if version != SCHEMA_VERSION:
        raise DataError(f"{path}: results schema version {version!r} is not {SCHEMA_VERSION} (written by "
                        f"another voxanon version); rerun `voxanon benchmark` into this folder to rebuild it")
    return from_dict(BenchmarkResults, data, str(path))


# -- headline rows and ranking ------------------------------------------------------------------------
@dataclass(frozen=True)
class SummaryRow:
    """A system's headline numbers on the primary split, led by the strongest attacker.

    ``attacker`` is the attacker with the lowest mean EER over all that ran
    (:func:`~voxanon.evaluation.scenarios.strongest_attacker`); ``eer``,
    ``eer_f``, ``eer_m`` and ``mfdr`` are its numbers, and the privacy category
    comes from them. ``eer_semi`` is the VPC semi-informed attacker (rung c),
    ``attackers`` every attacker's mean EER. Where those evaluators ran:
    ``c_eer`` is the content attack's mean EER from the run's ASR transcripts
    (``c_eer_reference`` from the reference transcripts), ``uar_learn`` the UAR
    on original speech of the SER trained on the system's output and
    ``wer_learn`` the WER on original test trials of the CTC ASR trained on its
    training set (for the original row: both trained on original speech, the
    learnability references), ``wer_check`` the WER of each second recogniser
    of the run, by backend.
    """

    system: str
    attacker: str | None
    eer: float | None
    eer_f: float | None
    eer_m: float | None
    eer_semi: float | None
    eer_lazy: float | None
    eer_ignorant: float | None
    attackers: dict[str, float]
    mfdr: float | None
    wer: float | None
    wer_ci: Interval | None
    uar: float | None
    dnsmos: float | None
    rho_f0: float | None
    gvd: float | None
    rtf: float | None
    c_eer: float | None = None
    c_eer_reference: float | None = None
    uar_learn: float | None = None
    wer_learn: float | None = None
    wer_check: dict[str, float] = field(default_factory=dict)


def summary_rows(results: BenchmarkResults) -> list[SummaryRow]:
    """One row per system with the headline numbers."""
    split = results.settings.primary.split
    # the original speech's DNSMOS, measured beside every system's (the same utterances)
    dnsmos_original = next((q.dnsmos.original for s in results.systems.values()
                            if (q := s.get("quality")) is not None), None)
    # the learnability reference (SER trained on original speech), carried by every anonymized system's result
    learn_original = {task: next((r.reference for s in results.systems.values()
                                  if (r := s.get("learnability", task)) is not None), None) for task in ("ser", "asr")}
    rows = []
    for name, s in results.systems.items():
        eers = s.attacker_eers(split)
        best = strongest_attacker(eers)
        p = s.privacy(best[0], split) if best else None
        semi, lazy, ignorant = (s.privacy(sc, split) for sc in (results.settings.primary.scenario, AA_LAZY, OA))
        w: AsrResult | None = s.get("wer", split)
        ser, q = s.get("ser"), s.get("quality")
        gender = p.by_gender if p else {}
        # the ASR transcripts of the run, and the reference text (content_privacy.REFERENCE)
        content, content_ref = (s.get("content", source, split) for source in (results.settings.asr, "reference"))
        learn = {task: s.get("learnability", task) for task in learn_original}
        rows.append(SummaryRow(
            system=name, attacker=best[0] if best else None, eer=best[1] if best else None,
            eer_f=gender["f"].eer if "f" in gender else None, eer_m=gender["m"].eer if "m" in gender else None,
            eer_semi=semi.eer_mean if semi else None, eer_lazy=lazy.eer_mean if lazy else None,
            eer_ignorant=ignorant.eer_mean if ignorant else None, attackers=eers,
            mfdr=p.fairness.mfdr if p and p.fairness else None,
            wer=w.wer if w else None, wer_ci=w.wer_ci if w else None, uar=ser.uar_mean if ser else None,
            dnsmos=(q.dnsmos.anonymized if q else None) if s.method else dnsmos_original,
            rho_f0=q.rho_f0 if q else None, gvd=q.gvd_db if q else None, rtf=s.rtf,
            c_eer=content.eer_mean if content else None,
            c_eer_reference=content_ref.eer_mean if content_ref else None,
            uar_learn=learned(learn["ser"], learn_original["ser"], s.method),
            wer_learn=learned(learn["asr"], learn_original["asr"], s.method),
            wer_check={b: w.wer for (b, sp), w in s.of_kind("wer_check").items() if sp == split}))
    return rows


def check_asrs(rows: list[SummaryRow]) -> list[str]:
    """The second recognisers that scored any of ``rows``, in order of first appearance."""
    return list(dict.fromkeys(b for r in rows for b in r.wer_check))


def learned(result: LearnabilityResult | None, reference: float | None, method: str | None) -> float | None:
    """A system's learnability number: trained on its output, or for the original row the reference."""
    return result.anonymized if result else (reference if method is None else None)


def rank(rows: list[SummaryRow]) -> Ranking:
    """Privacy categories, ranks, relative changes, Pareto fronts and the normalised score."""
    from voxanon.metrics.ranking import (
        PRIVACY_VS_UAR,
        PRIVACY_VS_WER,
        UAR_VS_WER,
        SystemResult,
        pareto_front,
        performance_matrix,
        rank_systems,
        relative_changes,
    )

    def value(v: float | None) -> float:  # NaN where a measure is missing (e.g. no emotion set)
        return float(v) if v is not None else math.nan

    complete = [r for r in rows if r.eer is not None and r.wer is not None]
    has_uar = all(r.uar is not None for r in complete)
    table_rows = [SystemResult(r.system, value(r.eer_f), value(r.eer_m), value(r.eer), value(r.wer), value(r.uar))
                  for r in complete]
    if not table_rows:
        return Ranking({}, has_uar)
    entries: dict[str, dict[str, Any]] = {}
    for rs in rank_systems(table_rows):
        entries[rs.system.name] = {"category": rs.category, "wer_rank": rs.wer_rank,
                                   "uar_rank": rs.uar_rank if has_uar else None}
    orig = next((r for r in table_rows if r.name == ORIGINAL), None)
    if orig:
        for ch in relative_changes(table_rows, orig):
            entries[ch.name].update(d_eer=ch.d_eer, d_wer=ch.d_wer, d_uar=ch.d_uar if has_uar else None)
    views = {"privacy_vs_wer": PRIVACY_VS_WER}
    if has_uar:
        views.update(privacy_vs_uar=PRIVACY_VS_UAR, uar_vs_wer=UAR_VS_WER)
    pareto = {k: [r.name for r in pareto_front(table_rows, x, y, m)] for k, (x, y, m) in views.items()}
    if has_uar:
        for ns in performance_matrix(table_rows):
            entries[ns.name].update(score=ns.combined, score_rank=ns.rank)
    return Ranking({k: RankEntry(**v) for k, v in entries.items()}, has_uar, pareto)


def privacy_rows(results: BenchmarkResults) -> list[dict[str, Any]]:
    """Long table: system × scenario × split × gender with every privacy metric."""
    rows = []
    for name, s in results.systems.items():
        for (scenario, split), p in s.of_kind("privacy").items():
            for g, m in p.by_gender.items():
                rows.append({"system": name, "scenario": scenario, "split": split, "gender": g,
                             "eer": m.eer, "eer_ci_low": m.eer_ci.low, "eer_ci_high": m.eer_ci.high,
                             "rocch_eer": m.rocch_eer, "cllr": m.cllr, "min_cllr": m.min_cllr,
                             "linkability": m.linkability, "zebra_bits": m.zebra.expected_bits,
                             "zebra_worst_log10": m.zebra.worst_case_log10, "zebra_tag": m.zebra.tag,
                             "n_target": m.n_target, "n_nontarget": m.n_nontarget, "encoder": p.encoder})
    return rows
