"""Render typed benchmark results: ``summary.csv``, the evaluators' long tables (``privacy.csv`` ...), figures and
``report.html``.

Render only: the ranking comes computed in the results, the summary rows
computed once (:func:`voxanon.jobs.benchmark.records.summarize`, from the
columns, sections, figures and tables the evaluators declare), the listening clips come
decoded (:func:`voxanon.jobs.benchmark.run.listening_clips`).
"""

from __future__ import annotations

import csv
import html
import json
import math
from pathlib import Path
from typing import Any

from voxanon.atomic import atomic_open
from voxanon.evaluation.evaluator import PRIVACY, UTILITY, Column, Table, evaluator_classes
from voxanon.evaluation.results import to_dict
from voxanon.evaluation.scenarios import SCENARIOS
from voxanon.jobs.benchmark.conditions import condition_rows
from voxanon.jobs.benchmark.records import (
    RTF,
    BenchmarkResults,
    Ranking,
    Summary,
    SummaryRow,
    summarize,
)
from voxanon.jobs.report import figures, page
from voxanon.jobs.report.conditions import conditions_section
from voxanon.jobs.report.page import audio, figure, fmt, fmt_ci, table, write_report


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with atomic_open(path, "w", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=keys, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def summary_table(summary: Summary, ranking: Ranking) -> list[dict[str, Any]]:
    """``summary.csv`` rows: each system's summary columns (those written to the CSV) and its ranking entry."""
    out = []
    for r in summary.rows:
        row = {"system": r.system}
        row.update((c.name, r[c.name]) for c in summary.columns
                   if c.csv and not (c.omit_missing and r[c.name] is None))
        rk = ranking.systems.get(r.system)
        out.append({**row, **(to_dict(rk) if rk else {})})
    return out


def _figures(out: Path, results: BenchmarkResults, summary: Summary) -> list[tuple[Path, str]]:
    """The ranking's trade-off figures (privacy against each utility measure that ranked), then every registered
    evaluator's figures (:meth:`~voxanon.evaluation.evaluator.Evaluator.figures`)."""
    rows, figdir = summary.rows, out / "figures"
    pareto = results.ranking.pareto or {}
    privacy = next(c for c in summary.columns if c.rank and c.rank.role == PRIVACY)
    names = [r.system for r in rows]
    eer = [math.nan if r[privacy.name] is None else r[privacy.name] for r in rows]
    figs = []
    for c in summary.columns:
        if c.rank is None or c.rank.role != UTILITY or not results.ranking.uses(c.name):
            continue
        values = [math.nan if r[c.name] is None else r[c.name] for r in rows]
        figs.append((figures.tradeoff_scatter(figdir / f"{privacy.name}_vs_{c.name}", names, eer, values,
                                              utility_label=c.cli, higher_utility_better=c.rank.higher_better,
                                              front=pareto.get(f"privacy_vs_{c.name}") or []),
                     f"Privacy (strongest attacker's EER) against {c.rank.what} ({c.rank.label}), with the VPC "
                     "privacy-category bands."))
    for evaluator in [*evaluator_classes(), *evaluator_classes(optional=True)]:
        figs += evaluator.figures(results, summary, figures, figdir)
    return figs


def _listening(listen) -> str:
    """Original and each system's output side by side (clips decoded by the pipeline)."""
    if listen is None:
        return "<p>No original data to compare.</p>"
    body = []
    for row in listen.rows:
        cells = [f"<b>{html.escape(row.utt)}</b><br><span class='small'>{html.escape(row.text)}</span>"]
        cells += [audio(clip, f"{system} {row.utt}") if clip else "–"
                  for system, clip in zip(listen.systems, row.clips)]
        body.append(cells)
    return f"<div class='listen'>{table(['utterance', *listen.systems], body)}</div>"


def _cell(column: Column, row: SummaryRow) -> str:
    """One report cell of a summary column, formatted as the column declares."""
    value = row[column.name]
    if column.ci:
        ci = row[column.ci]
        return fmt_ci(value, (ci.low, ci.high) if ci else None, column.digits)
    if column.label:
        return html.escape(column.label(value)) if value is not None else "–"
    return f"<b>{fmt(value, column.digits)}</b>" if column.bold else fmt(value, column.digits)


def _headline_table(summary: Summary, ranking: Ranking) -> str:
    """The results table: the summary columns with a report header, the category first and the ranks (one per
    utility measure) and the score before RTF."""
    header, body = ["system", "category"], []
    columns = summary.shown("header")
    measures = [c for c in summary.columns if c.rank and c.rank.role == UTILITY]
    for c in columns:
        header += [*(f"rank {m.rank.label}" for m in measures), "score"] if c is RTF else []
        header.append(c.header)
    for r in summary.rows:
        rk = ranking.systems.get(r.system)
        cat = rk.category if rk else None
        cells = [html.escape(r.system), f"≥{cat} %" if cat else ("&lt;10 %" if cat == 0 else "–")]
        for c in columns:
            if c is RTF:
                cells += [*(fmt(rk.ranks.get(m.name) if rk else None) for m in measures),
                          fmt(rk.score if rk else None, 3)]
            cells.append(_cell(c, r))
        body.append(cells)
    return table(header, body)


def _settings_section(results: BenchmarkResults) -> str:
    data = results.data
    desc = data.description or {}
    stats = desc.get("sets") or desc.get("statistics")
    language = results.settings.language
    parts = [f"<p>Data: <code>{html.escape(data.root)}</code>; splits {', '.join(data.splits)}; "
             f"{'synthetic offline corpus' if data.synthetic else 'user data'}; language {html.escape(language)}"
             + (f" ({html.escape(desc['genders_note'])})" if desc.get("genders_note") else "")
             + ("; accented speakers: other languages' voices reading it fill dev and test" if desc.get("accented")
                else "") + ".</p>",
             "<p>Settings:</p><pre>" + html.escape(json.dumps(to_dict(results.settings), indent=1)) + "</pre>",
             "<p>Profile:</p><pre>" + html.escape(json.dumps(results.profile, indent=1)) + "</pre>",
             "<p>Versions:</p><pre>" + html.escape(json.dumps(results.versions, indent=1)) + "</pre>",
             f"<p>Run time: {results.elapsed_seconds:.0f} s on {results.machine['cpu_count']} cores "
             f"({html.escape(results.machine['platform'])}).</p>"]
    if stats:
        parts.append("<p>Data statistics:</p><pre>" + html.escape(json.dumps(stats, indent=1)[:20000]) + "</pre>")
    systems = {n: {"method": s.method, "params": s.params} for n, s in results.systems.items()}
    parts.append("<p>Systems:</p><pre>" + html.escape(json.dumps(systems, indent=1)) + "</pre>")
    if results.errors:
        parts.append("<p><b>Errors</b> (these systems have missing numbers):</p><pre>"
                     + html.escape(json.dumps(results.errors, indent=1)) + "</pre>")
    return "".join(parts)


def _evaluator_sections(results: BenchmarkResults) -> list[tuple[str, str]]:
    """The report sections the registered evaluators declare, those of one title joined, in registration order."""
    sections: dict[str, str] = {}
    for evaluator in [*evaluator_classes(), *evaluator_classes(optional=True)]:
        if (section := evaluator.section(results, page)) is not None:
            sections[section[0]] = sections.get(section[0], "") + section[1]
    return list(sections.items())


def _evaluator_tables(results: BenchmarkResults) -> list[Table]:
    """The long tables the registered evaluators declare, in registration order."""
    return [t for evaluator in [*evaluator_classes(), *evaluator_classes(optional=True)]
            for t in evaluator.tables(results)]


def write_outputs(out: Path, results: BenchmarkResults, listen=None, summary: Summary | None = None) -> Path:
    """Write results.json, summary.csv, the evaluators' table CSVs, figures and report.html under ``out``
    (``summary``: the results' :func:`~voxanon.jobs.benchmark.records.summarize`, computed here when not given)."""
    from voxanon.jobs.benchmark.records import save_results

    summary = summarize(results) if summary is None else summary
    tables = _evaluator_tables(results)
    _write_csv(out / "summary.csv", summary_table(summary, results.ranking))
    for t in tables:
        _write_csv(out / f"{t.name}.csv", t.rows)
    if results.conditions:
        _write_csv(out / "conditions.csv", condition_rows(results, summary))
    save_results(out / "results.json", results)
    figs = _figures(out, results, summary)
    banner = None
    if results.data.synthetic:
        banner = ("<b>Synthetic offline corpus.</b> These numbers come from TTS voices, not real speakers. "
                  "They are <b>not comparable with VoicePrivacy Challenge results</b>; run "
                  "<code>voxanon benchmark --data DIR</code> on prepared LibriSpeech/IEMOCAP for that.")
    fronts = "".join(f"<li>{k.replace('_', ' ')}: {', '.join(map(html.escape, v))}</li>"
                     for k, v in (results.ranking.pareto or {}).items())
    primary, rate, language = results.settings.primary, results.settings.error_rate, results.settings.language
    measures = [c.rank for c in summary.columns if c.rank and c.rank.role == UTILITY]
    labels = [m.label for m in measures]
    scored = [m.label + ("" if m.higher_better else " (inverted)") for m in measures]
    in_language = "" if language == "en" else (
        f"<p>The corpus is in {html.escape(language)}: utility is the {rate} of "
        f"{html.escape(results.settings.asr)} after the {html.escape(results.settings.wer_normalization)} "
        "normalisation.</p>")
    sections = [
        ("Results", in_language + f"<p>Privacy is the EER of the strongest attacker ({primary.split} split): the "
                    "lowest mean EER over every attacker that ran (ignorant, lazy-informed and each semi-informed "
                    "rung); "
                    "the category comes from it. EER VPC semi = "
                    f"{SCENARIOS[primary.scenario].title} attacker (anonymized enrollment and trials, ECAPA "
                    "retrained on anonymized training data), shown for comparison with the VPC. "
                    f"Categories as in VPC 2024 (EER ≥ 10/20/30/40 %); ranks by {' and '.join(labels)} inside each "
                    f"category; score = mean of min–max normalised EER and {' and '.join(scored)}. RTF = wall time "
                    "of the anonymization run divided by the audio duration, with all worker processes.</p>"
                    + _headline_table(summary, results.ranking)
                    + f"<p>Pareto fronts:</p><ul>{fronts}</ul>"),
        *_evaluator_sections(results),
        *([("Recording conditions", conditions)] if (conditions := conditions_section(results, summary)) else []),
        ("Figures", "<div class='figs'>" + "".join(figure(p, c) for p, c in figs) + "</div>"),
        *((t.title, t.html(t.rows, page)) for t in tables if t.html is not None),
        ("Listen", _listening(listen)),
        ("Settings and data", _settings_section(results)),
    ]
    raw = {k: v for k, v in to_dict(results).items() if k != "paths"}
    return write_report(out / "report.html", title="voxanon benchmark", banner=banner, sections=sections,
                        results=raw)
