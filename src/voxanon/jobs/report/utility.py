"""Result files and text reports of ``voxanon evaluate utility``: ASR (WER/CER) and SER (UAR), in one place."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

from voxanon.data.iemocap import classes_of
from voxanon.evaluation.results import AsrResult, SerResult, to_dict
from voxanon.table import cell, format_table


# -- ASR -------------------------------------------------------------------------------------------
def format_asr_table(sets: list[AsrResult]) -> str:
    """Side-by-side table of WER/CER results, one row per set in the order given, then what was skipped and why."""
    rate = "CER %" if sets and all(s.unit == "char" for s in sets) else "WER %"
    header = ("#", "data", rate, "95% CI", "CER %", "utts", "words" if rate == "WER %" else "chars", "no text",
              "empty ref", "failed")
    rows = []
    for i, s in enumerate(sets):
        ci = s.wer_ci
        rows.append((str(i + 1), s.data, cell(s.wer),
                     f"[{cell(ci.low)}, {cell(ci.high)}]" if ci else "-", cell(s.cer), str(s.n_scored),
                     str(s.n_reference_words or 0), str(len(s.missing_transcript)), str(len(s.empty_reference)),
                     str(len(s.failed))))
    lines = [format_table(header, rows, align="l" * len(header))]
    for s in sets:
        for label, utts in (("no transcript (skipped)", s.missing_transcript),
                            ("empty reference (not scored)", s.empty_reference)):
            if utts:
                lines.append(f"{s.data}: {label}: {' '.join(utts)}")
        for utt, why in s.failed.items():
            lines.append(f"{s.data}: failed: {utt}: {why}")
    return "\n".join(lines)


def write_asr_results(header: dict[str, Any], sets: list[AsrResult], out_dir: str | os.PathLike) -> Path:
    """``asr_results.json`` (``header`` plus the sets), ``asr_summary.tsv``, ``asr_utterances.tsv``, ``asr_report.txt``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "asr_results.json").write_text(json.dumps({**header, "sets": to_dict(sets)}, indent=2) + "\n",
                                          encoding="utf-8")
    keys = ("data", "wer", "cer", "n_scored", "n_reference_words", "substitutions", "deletions", "insertions")
    with open(out / "asr_summary.tsv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t")
        w.writerow([*keys, "wer_ci_low", "wer_ci_high", "asr_backend", "normalization", "unit"])
        for s in sets:
            ci = s.wer_ci
            w.writerow([*(getattr(s, k) for k in keys), ci.low if ci else None, ci.high if ci else None,
                        s.asr_backend, s.normalization, s.unit])
    with open(out / "asr_utterances.tsv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t")
        w.writerow(["data", "utt", "errors", "ref_words", "reference", "hypothesis"])
        for s in sets:
            for u in s.utterances or []:
                n = u["substitutions"] + u["deletions"] + u["hits"]
                errors = u["substitutions"] + u["deletions"] + u["insertions"]
                w.writerow([s.data, u["utt_id"], errors, n, u["reference"], u["hypothesis"]])
    (out / "asr_report.txt").write_text(format_asr_table(sets) + "\n", encoding="utf-8")
    return out


# -- SER -------------------------------------------------------------------------------------------
def format_ser_report(result: SerResult) -> str:
    """Human-readable summary of one SER result: folds, mean UAR, recall, confusion, what was skipped."""
    lines = [f"SER on {result.data_dir} with {result.models}"]
    if result.smoke_test_only:
        lines.append(f"WARNING: {result.message}")
    if not result.fold_routing:
        lines.append("note: one model scored every fold; it may have been trained on these speakers")
    for fold, e in result.folds.items():
        value = "n/a" if e.uar is None else f"{e.uar:.2f}"
        lines.append(f"  fold {fold}: UAR {value} % on {e.n} utterances ({', '.join(e.speakers)})")
    interval = f", 95 % CI [{result.uar_ci[0]:.1f}, {result.uar_ci[1]:.1f}]" if result.uar_ci else ""
    lines.append(f"UAR mean over folds: {result.uar_mean:.2f} % (std {result.uar_std:.2f}{interval})")
    lines.append("per-class recall: " + ", ".join(f"{k} {v:.1f}" for k, v in result.per_class_recall.items()))
    lines.append("confusion (rows true, columns predicted " + " ".join(result.labels) + "):")
    lines.append(format_table(["", *result.labels], [[lab, *row] for lab, row in zip(result.labels, result.confusion)],
                              indent="  "))
    if result.excluded_labels:
        lines.append("excluded labels: " + ", ".join(f"{k} {v}" for k, v in sorted(result.excluded_labels.items())))
    lines += [f"unreadable audio, skipped: {u}: {why}" for u, why in result.failed_audio.items()]
    return "\n".join(lines)


def format_ser_comparison(results: list[SerResult]) -> str:
    """One line per data directory: mean UAR, per-class recall, number scored."""
    classes = classes_of(c for r in results for c in r.labels)
    rows = [[r.data_dir, cell(r.uar_mean), *(cell(r.per_class_recall.get(e, float("nan")), 1, "nan") for e in classes),
             str(r.n_utterances), "(smoke test only)" if r.smoke_test_only else ""] for r in results]
    return format_table(["data", "UAR %", *classes, "n", ""], rows)


def write_ser_results(results: list[SerResult], out_dir: str | os.PathLike) -> Path:
    """Write ``ser_results.json``, ``ser_folds.tsv``, ``ser_utterances.tsv`` and ``ser_report.txt``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "ser_results.json").write_text(json.dumps({"sets": to_dict(results)}, indent=2) + "\n", encoding="utf-8")
    with open(out / "ser_folds.tsv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t")
        w.writerow(["data", "fold", "uar", "n", "speakers", "model", "smoke_test_only"])
        for r in results:
            for fold, e in r.folds.items():
                w.writerow([r.data_dir, fold, "" if e.uar is None else f"{e.uar:.3f}", e.n, ",".join(e.speakers),
                            e.model, r.smoke_test_only])
            w.writerow([r.data_dir, "mean", f"{r.uar_mean:.3f}", r.n_utterances, "", r.models, r.smoke_test_only])
    with open(out / "ser_utterances.tsv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t")
        w.writerow(["data", "utt", "spk", "fold", "ref", "hyp"])
        for r in results:
            w.writerows([r.data_dir, u["utt"], u["spk"], u["fold"], u["ref"], u["hyp"]] for u in r.utterances or [])
    (out / "ser_report.txt").write_text(ser_text(results) + "\n", encoding="utf-8")
    return out


def ser_text(results: list[SerResult]) -> str:
    """The comparison table and each set's report (printed and written as ``ser_report.txt``)."""
    return "\n\n".join([format_ser_comparison(results)] + [format_ser_report(r) for r in results])
