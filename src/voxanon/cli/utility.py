"""``voxanon evaluate utility``: content (``--asr``: WER/CER) and emotion (``--ser``: UAR) preservation.

The two parts are independent: ``--asr`` is evaluated here; ``--ser`` hands the
same arguments to :func:`voxanon.evaluation.ser.evaluate_ser_cli`.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from voxanon.errors import EXIT_OK, EXIT_PARTIAL, ConfigError, DataError
from voxanon.ranges import Range


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def format_asr_table(sets: list[dict]) -> str:
    """Readable side-by-side table of WER/CER results (first set: original)."""
    header = ("set", "data", "WER %", "95% CI", "CER %", "utts", "words", "no text", "empty ref", "failed")
    rows = [header]
    for i, s in enumerate(sets):
        ci = s["wer_ci"]
        rows.append(("original" if i == 0 else f"anonymized {i}", s["data"], _fmt(s["wer"]),
                     f"[{_fmt(ci['low'])}, {_fmt(ci['high'])}]" if ci else "-", _fmt(s["cer"]),
                     str(s["n_scored"]), str(s["n_reference_words"] or 0), str(len(s["missing_transcript"])),
                     str(len(s["empty_reference"])), str(len(s["failed"]))))
    widths = [max(len(r[c]) for r in rows) for c in range(len(header))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
    for s in sets:
        for label, utts in (("no transcript (skipped)", s["missing_transcript"]),
                            ("empty reference (not scored)", s["empty_reference"])):
            if utts:
                lines.append(f"{s['data']}: {label}: {' '.join(utts)}")
        for utt, why in s["failed"].items():
            lines.append(f"{s['data']}: failed: {utt}: {why}")
    return "\n".join(lines)


def write_asr_results(results: dict, out_dir: Path) -> None:
    """``asr_results.json``, ``asr_summary.tsv``, ``asr_utterances.tsv`` and ``asr_report.txt``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "asr_results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    keys = ("data", "wer", "cer", "n_scored", "n_reference_words", "substitutions", "deletions", "insertions")
    with open(out_dir / "asr_summary.tsv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t")
        w.writerow([*keys, "wer_ci_low", "wer_ci_high", "asr_backend", "normalization"])
        for s in results["sets"]:
            ci = s["wer_ci"] or {}
            w.writerow([*(s[k] for k in keys), ci.get("low"), ci.get("high"), s["asr_backend"], s["normalization"]])
    with open(out_dir / "asr_utterances.tsv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t")
        w.writerow(["data", "utt", "errors", "ref_words", "reference", "hypothesis"])
        for s in results["sets"]:
            for u in s["utterances"]:
                n = u["substitutions"] + u["deletions"] + u["hits"]
                errors = u["substitutions"] + u["deletions"] + u["insertions"]
                w.writerow([s["data"], u["utt_id"], errors, n, u["reference"], u["hypothesis"]])
    (out_dir / "asr_report.txt").write_text(format_asr_table(results["sets"]) + "\n", encoding="utf-8")


def run_asr(args: argparse.Namespace) -> int:
    from voxanon.data.kaldi import read_data_dir
    from voxanon.evaluation.asr import evaluate_asr
    from voxanon.models.asr import load_asr

    asr = load_asr(args.asr_backend, device=args.device, threads=args.threads)
    out = Path(args.out)
    cache = Path(args.cache_dir) if args.cache_dir else out / "asr_cache"
    sets = []
    for data_dir in args.data_dirs:
        ev = evaluate_asr(read_data_dir(data_dir), asr, cache, normalization=args.normalization,
                          batch_size=args.batch_size, n_boot=args.n_boot, quiet=args.quiet)
        sets.append(ev.to_dict())
    results = {"asr_backend": asr.name, "normalization": args.normalization, "n_boot": args.n_boot,
               "hypothesis_cache": str(cache), "sets": sets}
    write_asr_results(results, out)
    print(format_asr_table(sets))
    print(f"results: {out / 'asr_results.json'}")
    unscored = [s["data"] for s in sets if not s["n_scored"]]
    if unscored:
        raise DataError(f"no utterance of {', '.join(unscored)} could be scored; see {out / 'asr_report.txt'}")
    failed = sum(len(s["failed"]) for s in sets)
    if failed:
        print(f"voxanon evaluate utility: {failed} utterance(s) failed, listed in {out / 'asr_report.txt'}",
              file=sys.stderr)
        return EXIT_PARTIAL
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    if not (args.asr or args.ser):
        raise ConfigError("choose --asr, --ser or both")
    status = run_asr(args) if args.asr else 0
    if args.ser:
        from voxanon.evaluation.ser import evaluate_ser_cli

        status = max(status, evaluate_ser_cli(args))
    return status


def _add_model_options(p: argparse.ArgumentParser) -> None:
    from voxanon.metrics.text import NORMALIZERS
    from voxanon.models.asr import DEFAULT_ASR

    a = p.add_argument_group("ASR")
    a.add_argument("--asr-backend", default=DEFAULT_ASR, metavar="SPEC",
                   help=f"whisper-tiny, pocketsphinx or wav2vec2:<dir or hub name> (default: {DEFAULT_ASR})")
    a.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    a.add_argument("--threads", type=int, default=0, help="CPU threads of the ASR (default 0: library default)")
    a.add_argument("--normalization", default="vpc", choices=sorted(NORMALIZERS),
                   help="text normalisation before scoring (default: vpc)")
    a.add_argument("--n-boot", type=Range(1).option(int), default=1000,
                   help="bootstrap replicates of the WER interval (>= 1)")
    a.add_argument("--cache-dir", help="hypothesis cache (default: OUT/asr_cache); reruns decode nothing twice")
    s = p.add_argument_group("SER")
    s.add_argument("--ser-models", help="folder of per-fold SER models (fold_<k>/ser.pt)")
    s.add_argument("--ser-model", help="one SER model spec for all utterances")


def register(commands) -> None:
    p = commands.evaluate.add_parser("utility", help="WER/CER (--asr) and emotion UAR (--ser) of data directories")
    p.add_argument("data_dirs", nargs="+", metavar="DATA_DIR",
                   help="original data directory first, then anonymized ones, compared side by side")
    p.add_argument("--asr", action="store_true", help="word/character error rates against 'text'")
    p.add_argument("--ser", action="store_true", help="emotion recognition UAR against 'utt2emo'")
    p.add_argument("--out", default="results/utility", help="results folder (default: results/utility)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.defer(_add_model_options)
    p.set_defaults(handler=run)
