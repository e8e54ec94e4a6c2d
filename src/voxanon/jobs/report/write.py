"""Render typed benchmark results: ``summary.csv``, ``privacy.csv``, figures and ``report.html``.

Render only: the ranking comes computed in the results, the summary rows
computed once (:func:`voxanon.jobs.benchmark.records.summarize`, from the
columns and sections the evaluators declare), the listening clips come
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
from voxanon.data.iemocap import classes_of
from voxanon.evaluation.evaluator import Column, evaluator_classes
from voxanon.evaluation.results import SerResult, to_dict
from voxanon.evaluation.scenarios import (
    AA_LAZY,
    AA_SEMI,
    SCENARIOS,
    title,
)
from voxanon.jobs.benchmark.conditions import condition_rows
from voxanon.jobs.benchmark.records import (
    ORIGINAL,
    RTF,
    BenchmarkResults,
    Ranking,
    Summary,
    SummaryRow,
    privacy_rows,
    summarize,
)
from voxanon.jobs.report import figures, page
from voxanon.jobs.report.conditions import conditions_section
from voxanon.jobs.report.page import audio, figure, fmt, fmt_ci, table, write_report

#: class code -> the word the report uses
CLASS_NAMES = {"neu": "neutral", "sad": "sadness", "ang": "anger", "hap": "happiness", "fea": "fear"}


def emofilm_note(classes: tuple[str, ...]) -> str:
    """What the report says about an EmoFilm emotion set of ``classes``."""
    chance = f", chance {100 / len(classes):.0f} %" if classes else ""
    return ("The emotion set is real emotional speech: EmoFilm's Spanish clips (film dubs; "
            f"{', '.join(CLASS_NAMES.get(c, c) for c in classes)}: no neutral{chance}), in 5 folds of voices "
            "inferred from speaker embeddings.")


def ser_classes(results: BenchmarkResults) -> tuple[str, ...]:
    """The emotion classes of the run's SER results, in :data:`~voxanon.data.iemocap.CLASSES` order."""
    return classes_of(c for s in results.systems.values() if s.get("ser") for c in s.get("ser").labels)


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


def _figures(out: Path, results: BenchmarkResults, rows: list[SummaryRow]) -> list[tuple[Path, str]]:
    rank = results.ranking
    pareto = rank.pareto or {}
    figdir = out / "figures"
    figs = []
    names = [r.system for r in rows]
    eer = [r["eer"] if r["eer"] is not None else math.nan for r in rows]
    wer = [r["wer"] if r["wer"] is not None else math.nan for r in rows]
    rate = results.settings.error_rate
    figs.append((figures.tradeoff_scatter(figdir / "eer_vs_wer", names, eer, wer, utility_label=f"{rate} %",
                                          higher_utility_better=False, front=pareto.get("privacy_vs_wer") or []),
                 f"Privacy (strongest attacker's EER) against content ({rate}), with the VPC privacy-category "
                 "bands."))
    if rank.uar_used:
        uar = [r["uar"] for r in rows]
        figs.append((figures.tradeoff_scatter(figdir / "eer_vs_uar", names, eer, uar, utility_label="UAR %",
                                              higher_utility_better=True, front=pareto.get("privacy_vs_uar") or []),
                     "Privacy (strongest attacker's EER) against emotion (UAR)."))
    split = results.settings.primary.split
    for scenario in (AA_SEMI, AA_LAZY):
        name_ = SCENARIOS[scenario].title
        curves = {}
        for name, s in results.systems.items():
            p = s.privacy(scenario, split)
            for g, m in (p.by_gender if p else {}).items():
                curves[f"{name} ({g})"] = (m.det.pfa_probit, m.det.pmiss_probit)
        if curves:
            figs.append((figures.det_curves(figdir / f"det_{scenario}", curves, f"DET, {name_}"),
                         f"DET curves of the {name_} attacker per system and gender."))
    # a corpus may hold one gender only (a language without packs of the other): its bars alone
    genders = [(g, name) for g, name in (("eer_f", "female"), ("eer_m", "male")) if any(r[g] is not None for r in rows)]
    gender_rows = [r for r in rows if any(r[g] is not None for g, _ in genders)]
    if gender_rows:
        figs.append((figures.grouped_bars(
            figdir / "gender_eer",
            [r.system + (f"\nmFDR {r['mfdr']:.0f} %" if r["mfdr"] is not None else "") for r in gender_rows],
            {name: [math.nan if r[g] is None else r[g] for r in gender_rows] for g, name in genders},
            ylabel="EER %", title="Strongest attacker's EER per gender"),
            "Per-gender EER of each system's strongest attacker, with the mFDR fairness gap."))
    ser = {n: s.get("ser").per_class_recall for n, s in results.systems.items() if s.get("ser")}
    ser = {n: v for n, v in ser.items() if v}
    if ser:
        figs.append((figures.grouped_bars(
            figdir / "emotion_recall", list(classes := ser_classes(results)),
            {n: [v.get(e, math.nan) for e in classes] for n, v in ser.items()},
            ylabel="recall %", title="Emotion recall per class"),
            "Per-emotion recall of the SER (trained on original data) on each system's output."))
    return figs


def _listening(listen) -> str:
    """Original and each system's output side by side (clips decoded by the pipeline)."""
    if listen is None:
        return "<p>No original data to compare.</p>"
    body = []
    for row in listen.rows:
        cells = [f"<b>{html.escape(row.utt)}</b><br><span class='small'>{html.escape(row.text)}</span>"]
        cells += [audio(clip, f"{system} {row.utt}") if clip else "–" for system, clip in zip(listen.systems, row.clips)]
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
    """The results table: the summary columns with a report header, the category first and the ranks before RTF."""
    header, body = ["system", "category"], []
    columns = summary.shown("header")
    for c in columns:
        header += ["rank WER", "rank UAR", "score"] if c is RTF else []
        header.append(c.header)
    for r in summary.rows:
        rk = ranking.systems.get(r.system)
        cat = rk.category if rk else None
        cells = [html.escape(r.system), f"≥{cat} %" if cat else ("&lt;10 %" if cat == 0 else "–")]
        for c in columns:
            if c is RTF:
                cells += [fmt(rk.wer_rank if rk else None), fmt(rk.uar_rank if rk else None),
                          fmt(rk.score if rk else None, 3)]
            cells.append(_cell(c, r))
        body.append(cells)
    return table(header, body)


def _uar_cell(ser: SerResult | None) -> str:
    """``mean ± std [low, high]`` of a SER result, or a dash."""
    if ser is None:
        return "–"
    interval = f" [{fmt(ser.uar_ci[0])}, {fmt(ser.uar_ci[1])}]" if ser.uar_ci else ""
    return f"{fmt(ser.uar_mean)} ± {fmt(ser.uar_std)}{interval}"


def _privacy_table(prows: list[dict]) -> str:
    header = ["system", "scenario", "split", "gender", "EER % [95% CI]", "ROCCH-EER", "Cllr", "minCllr",
              "linkability", "ZEBRA bits", "tag", "trials (tar/non)"]
    body = [[html.escape(r["system"]), html.escape(title(r["scenario"])), r["split"], r["gender"],
             fmt_ci(r["eer"], (r["eer_ci_low"], r["eer_ci_high"])), fmt(r["rocch_eer"]), fmt(r["cllr"], 3),
             fmt(r["min_cllr"], 3), fmt(r["linkability"], 3), fmt(r["zebra_bits"], 3), html.escape(str(r["zebra_tag"])),
             f"{r['n_target']}/{r['n_nontarget']}"] for r in prows]
    return table(header, body)


def _utility_table(results: BenchmarkResults) -> str:
    rate = results.settings.error_rate
    header = ["system", "split", "recogniser", f"{rate} % [95% CI]", "CER %", "utts scored", "missing text / failed",
              "UAR % (mean ± std over folds) [95 % CI]", "per-class recall %"]
    body = []
    for name, s in results.systems.items():
        ser = s.get("ser")
        recall = ", ".join(f"{k} {v:.0f}" for k, v in (ser.per_class_recall if ser else {}).items())
        wers = [(split, results.settings.asr, w) for (split,), w in s.of_kind("wer").items()]
        wers += [(split, backend, w) for (backend, split), w in s.of_kind("wer_check").items()]
        for split, backend, w in wers:
            ci = w.wer_ci
            body.append([html.escape(name), split, html.escape(backend),
                         fmt_ci(w.wer, (ci.low, ci.high) if ci else None),
                         fmt(w.cer), fmt(w.n_scored), f"{len(w.missing_transcript)} / {len(w.failed)}",
                         _uar_cell(ser), recall or "–"])
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


def content_shift_sentence(row: SummaryRow, original: SummaryRow | None) -> str | None:
    """One sentence: how far ``row``'s C-EER (ASR transcripts) moved from the original's (None: either is missing)."""
    if original is None or row is original or row["c_eer"] is None or original["c_eer"] is None:
        return None
    d = row["c_eer"] - original["c_eer"]
    return (f"{row.system}: C-EER {row['c_eer']:.1f} %, {abs(d):.1f} points {'above' if d >= 0 else 'below'} "
            f"the original's {original['c_eer']:.1f} %.")


def _bullets(lead: str, sentences) -> str:
    """``lead`` and a list of the sentences that are not None (empty when none is)."""
    items = "".join(f"<li>{html.escape(t)}</li>" for t in sentences if t)
    return f"<p>{lead}</p><ul>{items}</ul>" if items else ""


def _content_shifts(rows: list[SummaryRow]) -> str:
    original = next((r for r in rows if r.system == ORIGINAL), None)
    return _bullets("How much each system moved content linkage (C-EER):",
                    (content_shift_sentence(r, original) for r in rows))


def _evaluator_sections(results: BenchmarkResults) -> list[tuple[str, str]]:
    """The report sections the registered evaluators declare, those of one title joined, in registration order."""
    sections: dict[str, str] = {}
    for evaluator in [*evaluator_classes(), *evaluator_classes(optional=True)]:
        if (section := evaluator.section(results, page)) is not None:
            sections[section[0]] = sections.get(section[0], "") + section[1]
    return list(sections.items())


def write_outputs(out: Path, results: BenchmarkResults, listen=None, summary: Summary | None = None) -> Path:
    """Write results.json, summary/privacy CSVs, figures and report.html under ``out`` (``summary``: the results'
    :func:`~voxanon.jobs.benchmark.records.summarize`, computed here when not given)."""
    from voxanon.jobs.benchmark.records import save_results

    summary = summarize(results) if summary is None else summary
    rows = summary.rows
    prows = privacy_rows(results)
    _write_csv(out / "summary.csv", summary_table(summary, results.ranking))
    _write_csv(out / "privacy.csv", prows)
    if results.conditions:
        _write_csv(out / "conditions.csv", condition_rows(results, summary))
    save_results(out / "results.json", results)
    figs = _figures(out, results, rows)
    banner = None
    real_emotion = (results.data.description or {}).get("emotion_set")
    emotion_note = (emofilm_note(ser_classes(results)) if real_emotion else
                    "The emotion set of the synthetic corpus is acted by TTS prosody settings: UAR is a smoke test "
                    "only.")
    if results.data.synthetic:
        banner = ("<b>Synthetic offline corpus.</b> These numbers come from TTS voices, not real speakers. "
                  f"{emotion_note} They are <b>not comparable with VoicePrivacy Challenge results</b>; run "
                  "<code>voxanon benchmark --data DIR</code> on prepared LibriSpeech/IEMOCAP for that.")
    fronts = "".join(f"<li>{k.replace('_', ' ')}: {', '.join(map(html.escape, v))}</li>"
                     for k, v in (results.ranking.pareto or {}).items())
    primary, rate, language = results.settings.primary, results.settings.error_rate, results.settings.language
    in_language = "" if language == "en" else (
        f"<p>The corpus is in {html.escape(language)}: utility is the {rate} of "
        f"{html.escape(results.settings.asr)} after the {html.escape(results.settings.wer_normalization)} "
        "normalisation.</p>")
    sections = [
        ("Results", in_language + f"<p>Privacy is the EER of the strongest attacker ({primary.split} split): the lowest mean "
                    "EER over every attacker that ran (ignorant, lazy-informed and each semi-informed rung); "
                    "the category comes from it. EER VPC semi = "
                    f"{SCENARIOS[primary.scenario].title} attacker (anonymized enrollment and trials, ECAPA "
                    "retrained on anonymized training data), shown for comparison with the VPC. "
                    f"Categories as in VPC 2024 (EER ≥ 10/20/30/40 %); ranks by {rate} and UAR inside each "
                    f"category; score = mean of min–max normalised EER, {rate} (inverted) and UAR. RTF = wall time "
                    "of the anonymization run divided by the audio duration, with all worker processes.</p>"
                    + _headline_table(summary, results.ranking) + _content_shifts(rows)
                    + f"<p>Pareto fronts:</p><ul>{fronts}</ul>"),
        *_evaluator_sections(results),
        *([("Recording conditions", conditions)] if (conditions := conditions_section(results, summary)) else []),
        ("Figures", "<div class='figs'>" + "".join(figure(p, c) for p, c in figs) + "</div>"),
        ("Privacy", _privacy_table(prows)),
        ("Utility", _utility_table(results)
         + (f"<p class='small'>{emotion_note}</p>" if results.data.synthetic else "")),
        ("Listen", _listening(listen)),
        ("Settings and data", _settings_section(results)),
    ]
    raw = {k: v for k, v in to_dict(results).items() if k != "paths"}
    return write_report(out / "report.html", title="voxanon benchmark", banner=banner, sections=sections,
                        results=raw)
