"""Turn benchmark results into ``results.json``, CSV tables, figures and ``report.html``."""

from __future__ import annotations

import csv
import html
import json
import math
from pathlib import Path
from typing import Any

from voxanon.atomic import atomic_open, write_text
from voxanon.audio.io import AudioError, load_audio, write_wav
from voxanon.data.kaldi import read_data_dir
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
from voxanon.pipelines import figures
from voxanon.pipelines.report import audio, figure, fmt, fmt_ci, table, write_report

ORIGINAL = "original"
SCENARIO_NAMES = {"OO": "OO (no anonymization)", "OA": "OA ignorant", "AA-lazy": "AA lazy-informed",
                  "AA-semi": "AA semi-informed"}
EMOTIONS = ("neu", "sad", "ang", "hap")


def _get(d: Any, *keys: str) -> Any:
    """Nested lookup that yields None when any level is missing."""
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def _privacy(system: dict, scenario: str, split: str) -> dict | None:
    """A system's privacy result; the original row's OA/AA-lazy equal its OO (nothing is anonymized)."""
    return _get(system, "privacy", scenario, split) or (
        _get(system, "privacy", "OO", split) if system.get("method") is None and scenario != "AA-semi" else None)


def summary_rows(results: dict) -> list[dict[str, Any]]:
    """One flat row per system with the headline numbers (primary scenario and split)."""
    split = results["settings"]["primary"]["split"]
    scenario = results["settings"]["primary"]["scenario"]
    # the original speech's DNSMOS, measured beside every system's (the same utterances)
    dnsmos_original = next((q for s in results["systems"].values()
                            if (q := _get(s, "quality", "dnsmos", "original")) is not None), None)
    rows = []
    for name, s in results["systems"].items():
        p = _privacy(s, scenario, split) or {}
        lazy = _privacy(s, "AA-lazy", split) or {}
        rows.append({
            "system": name,
            "eer_f": _get(p, "by_gender", "f", "eer"), "eer_m": _get(p, "by_gender", "m", "eer"),
            "eer": p.get("eer_mean"), "eer_lazy": lazy.get("eer_mean"),
            "eer_ignorant": _get(_privacy(s, "OA", split), "eer_mean"),
            "mfdr": _get(p, "fairness", "mfdr"),
            "wer": _get(s, "wer", split, "wer"), "wer_ci": _get(s, "wer", split, "wer_ci"),
            "uar": _get(s, "ser", "uar_mean"),
            "dnsmos": _get(s, "quality", "dnsmos", "anonymized") if s.get("method") else dnsmos_original,
            "rho_f0": _get(s, "quality", "rho_f0"), "gvd": _get(s, "quality", "gvd_db"),
            "rtf": s.get("rtf"),
        })
    return rows


def ranking(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Privacy categories, ranks, relative changes, Pareto fronts and the normalised score."""
    def value(r: dict, k: str) -> float:  # NaN where a measure is missing (e.g. no emotion set)
        return float(r[k]) if r.get(k) is not None else math.nan

    complete = [r for r in rows if all(r.get(k) is not None for k in ("eer", "wer"))]
    has_uar = all(r.get("uar") is not None for r in complete)
    table_rows = [SystemResult(r["system"], value(r, "eer_f"), value(r, "eer_m"), value(r, "eer"), value(r, "wer"),
                               value(r, "uar")) for r in complete]
    out: dict[str, Any] = {"systems": {}, "uar_used": has_uar}
    if not table_rows:
        return out
    for rs in rank_systems(table_rows):
        out["systems"][rs.system.name] = {"category": rs.category, "wer_rank": rs.wer_rank,
                                          "uar_rank": rs.uar_rank if has_uar else None}
    orig = next((r for r in table_rows if r.name == ORIGINAL), None)
    if orig:
        for ch in relative_changes(table_rows, orig):
            out["systems"][ch.name].update(d_eer=ch.d_eer, d_wer=ch.d_wer, d_uar=ch.d_uar if has_uar else None)
    views = {"privacy_vs_wer": PRIVACY_VS_WER}
    if has_uar:
        views.update(privacy_vs_uar=PRIVACY_VS_UAR, uar_vs_wer=UAR_VS_WER)
    out["pareto"] = {k: [r.name for r in pareto_front(table_rows, x, y, m)] for k, (x, y, m) in views.items()}
    if has_uar:
        for ns in performance_matrix(table_rows):
            out["systems"][ns.name].update(score=ns.combined, score_rank=ns.rank)
    return out


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with atomic_open(path, "w", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=keys, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def privacy_rows(results: dict) -> list[dict[str, Any]]:
    """Long table: system × scenario × split × gender with every privacy metric."""
    rows = []
    for name, s in results["systems"].items():
        for scenario in SCENARIO_NAMES:
            for split in results["data"]["splits"]:
                p = _privacy(s, scenario, split)
                for g, m in ((p or {}).get("by_gender") or {}).items():
                    rows.append({"system": name, "scenario": scenario, "split": split, "gender": g,
                                 "eer": m["eer"], "eer_ci_low": m["eer_ci"]["low"], "eer_ci_high": m["eer_ci"]["high"],
                                 "rocch_eer": m["rocch_eer"], "cllr": m["cllr"], "min_cllr": m["min_cllr"],
                                 "linkability": m["linkability"], "zebra_bits": m["zebra"]["expected_bits"],
                                 "zebra_worst_log10": m["zebra"]["worst_case_log10"], "zebra_tag": m["zebra"]["tag"],
                                 "n_target": m["n_target"], "n_nontarget": m["n_nontarget"],
                                 "encoder": p.get("encoder")})
    return rows


def _figures(out: Path, results: dict, rows: list[dict], rank: dict) -> list[tuple[Path, str]]:
    figdir = out / "figures"
    figs = []
    names = [r["system"] for r in rows]
    eer = [r["eer"] if r["eer"] is not None else math.nan for r in rows]
    wer = [r["wer"] if r["wer"] is not None else math.nan for r in rows]
    figs.append((figures.tradeoff_scatter(figdir / "eer_vs_wer", names, eer, wer, utility_label="WER %",
                                          higher_utility_better=False,
                                          front=_get(rank, "pareto", "privacy_vs_wer") or []),
                 "Privacy (semi-informed EER) against content (WER), with the VPC privacy-category bands."))
    if rank.get("uar_used"):
        uar = [r["uar"] for r in rows]
        figs.append((figures.tradeoff_scatter(figdir / "eer_vs_uar", names, eer, uar, utility_label="UAR %",
                                              higher_utility_better=True,
                                              front=_get(rank, "pareto", "privacy_vs_uar") or []),
                     "Privacy (semi-informed EER) against emotion (UAR)."))
    split = results["settings"]["primary"]["split"]
    for scenario in ("AA-semi", "AA-lazy"):
        curves = {}
        for name, s in results["systems"].items():
            p = _privacy(s, scenario, split)
            for g, m in ((p or {}).get("by_gender") or {}).items():
                curves[f"{name} ({g})"] = (m["det"]["pfa_probit"], m["det"]["pmiss_probit"])
        if curves:
            figs.append((figures.det_curves(figdir / f"det_{scenario}", curves, f"DET, {SCENARIO_NAMES[scenario]}"),
                         f"DET curves of the {SCENARIO_NAMES[scenario]} attacker per system and gender."))
    gender_rows = [r for r in rows if r["eer_f"] is not None]
    if gender_rows:
        figs.append((figures.grouped_bars(
            figdir / "gender_eer",
            [r["system"] + (f"\nmFDR {r['mfdr']:.0f} %" if r["mfdr"] is not None else "") for r in gender_rows],
            {"female": [r["eer_f"] for r in gender_rows], "male": [r["eer_m"] for r in gender_rows]},
            ylabel="EER %", title="Semi-informed EER per gender"),
            "Per-gender EER of the semi-informed attacker, with the mFDR fairness gap."))
    ser = {n: _get(s, "ser", "per_class_recall") for n, s in results["systems"].items()}
    ser = {n: v for n, v in ser.items() if v}
    if ser:
        figs.append((figures.grouped_bars(
            figdir / "emotion_recall", list(EMOTIONS),
            {n: [v.get(e, math.nan) for e in EMOTIONS] for n, v in ser.items()},
            ylabel="recall %", title="Emotion recall per class"),
            "Per-emotion recall of the SER (trained on original data) on each system's output."))
    return figs


def _listening(out: Path, results: dict, n: int) -> str:
    """Original and each system's output for ``n`` trial utterances (both genders), side by side.

    Clips are decoded into ``<out>/listen`` first, so pipe entries of ``wav.scp`` play too.
    """
    split = results["settings"]["primary"]["split"]
    paths = results["paths"]
    if ORIGINAL not in paths:
        return "<p>No original data to compare.</p>"
    picks = []
    for key, k in ((f"{split}_trials_f", (n + 1) // 2), (f"{split}_trials_m", n // 2)):
        data = read_data_dir(paths[ORIGINAL][key])
        picks += [(key, data, utt) for utt in data.utts[:k]]
    body = []
    for key, data, utt in picks:
        cells = [f"<b>{html.escape(utt)}</b><br><span class='small'>{html.escape(data.text.get(utt, ''))}</span>"]
        for system, sets in paths.items():
            source = data.wav_scp[utt] if system == ORIGINAL else str(Path(sets[key]) / "wav" / f"{utt}.wav")
            clip = out / "listen" / system / f"{utt}.wav"
            try:
                if not clip.is_file():
                    write_wav(clip, *load_audio(source))
                cells.append(audio(clip, f"{system} {utt}"))
            except AudioError:
                cells.append("–")
        body.append(cells)
    return f"<div class='listen'>{table(['utterance', *paths], body)}</div>"


def _headline_table(rows: list[dict], rank: dict) -> str:
    header = ["system", "category", "EER semi f", "EER semi m", "EER semi", "EER lazy", "EER ignorant",
              "WER % [95% CI]", "UAR %", "DNSMOS", "ρF0", "G_VD dB", "rank WER", "rank UAR", "score", "RTF"]
    body = []
    for r in rows:
        rk = rank["systems"].get(r["system"], {})
        cat = rk.get("category")
        ci = r["wer_ci"]
        body.append([html.escape(r["system"]), f"≥{cat} %" if cat else ("&lt;10 %" if cat == 0 else "–"),
                     fmt(r["eer_f"]), fmt(r["eer_m"]), f"<b>{fmt(r['eer'])}</b>", fmt(r["eer_lazy"]),
                     fmt(r["eer_ignorant"]),
                     fmt_ci(r["wer"], (ci["low"], ci["high"]) if ci else None), fmt(r["uar"]),
                     fmt(r["dnsmos"]), fmt(r["rho_f0"]), fmt(r["gvd"]), fmt(rk.get("wer_rank")),
                     fmt(rk.get("uar_rank")), fmt(rk.get("score"), 3), fmt(r["rtf"], 4)])
    return table(header, body)


def _privacy_table(prows: list[dict]) -> str:
    header = ["system", "scenario", "split", "gender", "EER % [95% CI]", "ROCCH-EER", "Cllr", "minCllr",
              "linkability", "ZEBRA bits", "tag", "trials (tar/non)"]
    body = [[html.escape(r["system"]), SCENARIO_NAMES[r["scenario"]], r["split"], r["gender"],
             fmt_ci(r["eer"], (r["eer_ci_low"], r["eer_ci_high"])), fmt(r["rocch_eer"]), fmt(r["cllr"], 3),
             fmt(r["min_cllr"], 3), fmt(r["linkability"], 3), fmt(r["zebra_bits"], 3), html.escape(str(r["zebra_tag"])),
             f"{r['n_target']}/{r['n_nontarget']}"] for r in prows]
    return table(header, body)


def _utility_table(results: dict) -> str:
    header = ["system", "split", "WER % [95% CI]", "CER %", "utts scored", "missing text / failed",
              "UAR % (mean ± std over folds)", "per-class recall %"]
    body = []
    for name, s in results["systems"].items():
        for split, w in (s.get("wer") or {}).items():
            ci = w.get("wer_ci")
            ser = s.get("ser") or {}
            recall = ", ".join(f"{k} {v:.0f}" for k, v in (ser.get("per_class_recall") or {}).items())
            body.append([html.escape(name), split, fmt_ci(w.get("wer"), (ci["low"], ci["high"]) if ci else None),
                         fmt(w.get("cer")), fmt(w.get("n_scored")),
                         f"{len(w.get('missing_transcript') or [])} / {len(w.get('failed') or {})}",
                         f"{fmt(ser.get('uar_mean'))} ± {fmt(ser.get('uar_std'))}" if ser else "–",
                         recall or "–"])
    return table(header, body)


def _settings_section(results: dict) -> str:
    data = results["data"]
    desc = data.get("description") or {}
    stats = desc.get("sets") or desc.get("statistics")
    parts = [f"<p>Data: <code>{html.escape(data['root'])}</code>; splits {', '.join(data['splits'])}; "
             f"{'synthetic offline corpus' if data['synthetic'] else 'user data'}.</p>",
             "<p>Settings:</p><pre>" + html.escape(json.dumps(results["settings"], indent=1)) + "</pre>",
             "<p>Profile:</p><pre>" + html.escape(json.dumps(results["profile"], indent=1)) + "</pre>",
             "<p>Versions:</p><pre>" + html.escape(json.dumps(results["versions"], indent=1)) + "</pre>",
             f"<p>Run time: {results.get('elapsed_seconds', 0):.0f} s on {results['machine']['cpu_count']} cores "
             f"({html.escape(results['machine']['platform'])}).</p>"]
    if stats:
        parts.append("<p>Data statistics:</p><pre>" + html.escape(json.dumps(stats, indent=1)[:20000]) + "</pre>")
    systems = {n: {"method": s["method"], "params": s["params"]} for n, s in results["systems"].items()}
    parts.append("<p>Systems:</p><pre>" + html.escape(json.dumps(systems, indent=1)) + "</pre>")
    if results.get("errors"):
        parts.append("<p><b>Errors</b> (these systems have missing numbers):</p><pre>"
                     + html.escape(json.dumps(results["errors"], indent=1)) + "</pre>")
    return "".join(parts)


def write_outputs(out: Path, results: dict) -> Path:
    """Write results.json, summary/privacy CSVs, figures and report.html under ``out``."""
    rows = summary_rows(results)
    rank = ranking(rows)
    results["ranking"] = rank
    for r in rows:
        r.update({k: v for k, v in rank["systems"].get(r["system"], {}).items()})
    prows = privacy_rows(results)
    _write_csv(out / "summary.csv", [{k: v for k, v in r.items() if k != "wer_ci"} for r in rows])
    _write_csv(out / "privacy.csv", prows)
    write_text(out / "results.json", json.dumps(results, indent=1, default=str))
    figs = _figures(out, results, rows, rank)
    banner = None
    if results["data"]["synthetic"]:
        banner = ("<b>Synthetic offline corpus.</b> These numbers come from TTS voices with vocal-tract warps, "
                  "not real speakers, and the emotion set is acted by prosody settings (a smoke test only). "
                  "They are <b>not comparable with VoicePrivacy Challenge results</b>; run "
                  "<code>voxanon benchmark --data DIR</code> on prepared LibriSpeech/IEMOCAP for that.")
    fronts = "".join(f"<li>{k.replace('_', ' ')}: {', '.join(map(html.escape, v))}</li>"
                     for k, v in (rank.get("pareto") or {}).items())
    sections = [
        ("Results", "<p>Primary privacy number: semi-informed attacker (anonymized enrollment and trials, ECAPA "
                    f"retrained on anonymized training data), {results['settings']['primary']['split']} split. "
                    "Categories as in VPC 2024 (EER ≥ 10/20/30/40 %); ranks by WER and UAR inside each "
                    "category; score = mean of min–max normalised EER, WER (inverted) and UAR. RTF = wall time "
                    "of the anonymization run divided by the audio duration, with all worker processes.</p>"
                    + _headline_table(rows, rank) + f"<p>Pareto fronts:</p><ul>{fronts}</ul>"),
        ("Figures", "<div class='figs'>" + "".join(figure(p, c) for p, c in figs) + "</div>"),
        ("Privacy", _privacy_table(prows)),
        ("Utility", _utility_table(results)
         + ("<p class='small'>The emotion set of the synthetic corpus is acted by TTS prosody settings: UAR "
            "is a smoke test only.</p>" if results["data"]["synthetic"] else "")),
        ("Listen", _listening(out, results, results["profile"]["listen_utts"])),
        ("Settings and data", _settings_section(results)),
    ]
    return write_report(out / "report.html", title="voxanon benchmark", banner=banner, sections=sections,
                        results={k: v for k, v in results.items() if k != "paths"})
