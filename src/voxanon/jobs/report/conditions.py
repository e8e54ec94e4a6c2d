"""The report's "Recording conditions" section: privacy and WER of every system under each condition."""

from __future__ import annotations

import html

from voxanon.evaluation.evaluator import PRIVACY
from voxanon.jobs.benchmark.conditions import INPUT, compared_columns, condition_summary
from voxanon.jobs.benchmark.records import BenchmarkResults, Summary
from voxanon.jobs.report.page import fmt, table

PLACE_NOTES = {
    INPUT: "applied to the input: the corpus is recorded through the condition, then anonymized; attackers "
           "enroll, train and are scored on that",
    "output": "applied to the output: the anonymized speech passes through the condition before the recogniser "
              "and the attackers (the ignorant attacker enrolls on clean original speech, the informed ones on "
              "their own anonymized data through the same condition)",
}


def _cell(value: float | None, clean: float | None, attacker: str | None = None) -> str:
    if value is None:
        return "–"
    out = fmt(value)
    if clean is not None:
        out += f" <span class='small'>({value - clean:+.1f})</span>"
    if attacker:
        out += f"<br><span class='small'>{html.escape(attacker)}</span>"
    return out


def conditions_section(results: BenchmarkResults, clean: Summary) -> str | None:
    """A table per compared measure (strongest-attacker EER, WER) with a column per condition and place; None
    without conditions."""
    runs = list(results.conditions)
    if not runs:
        return None
    summaries = [condition_summary(results, run) for run in runs]
    heads = ["system", "clean"] + [f"{run.name} ({run.applied_to})" for run in runs]
    clean_rows = {r.system: r for r in clean.rows}
    by_run = [{r.system: r for r in s.rows} for s in summaries]
    systems = list(dict.fromkeys([*clean_rows, *(name for rows in by_run for name in rows)]))
    tables = []
    for column in compared_columns(clean):
        privacy = column.rank.role == PRIVACY  # its cells name the strongest attacker
        key = column.name
        body = []
        for name in systems:
            base = clean_rows.get(name)
            base_value = base.values.get(key) if base else None
            cells = [html.escape(name), _cell(base_value, None, base.values.get("attacker") if privacy and base
                                              else None)]
            for rows in by_run:
                row = rows.get(name)
                value = row.values.get(key) if row else None
                cells.append(_cell(value, base_value, row.values.get("attacker") if privacy and row else None))
            body.append(cells)
        title = f"{column.cli}{' of the strongest attacker' if privacy else ''} (change against clean, in points)"
        tables.append(f"<p>{html.escape(title)}</p>" + table(heads, body))
    described = "".join(f"<li><b>{html.escape(run.name)}</b>: {html.escape(run.description)}</li>"
                        for run in {run.name: run for run in runs}.values())
    places = "".join(f"<li><b>{p}</b>: {html.escape(PLACE_NOTES[p])}</li>"
                     for p in dict.fromkeys(run.applied_to for run in runs))
    return (f"<p>Every system under each recording condition. Conditions:</p><ul>{described}</ul>"
            f"<p>Places:</p><ul>{places}</ul><p>The original row is the original speech through the condition "
            "(the same under both places). Each condition is drawn per utterance from the seed; every attacker "
            "of the profile ran again (the trained rungs retrained on the degraded training set). Every column of "
            "the summary per condition: <code>conditions.csv</code> and <code>results.json</code> "
            "(<code>conditions</code>).</p>" + "".join(tables))
