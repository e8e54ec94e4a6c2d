"""``voxanon evaluate utility``: content (``--asr``: WER/CER) and emotion (``--ser``: UAR) preservation.

The two parts are independent and share the data directories and ``--out``;
their result files and reports come from :mod:`voxanon.jobs.report.utility`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from voxanon.errors import EXIT_OK, EXIT_PARTIAL, ConfigError, DataError
from voxanon.ranges import Range


def run_asr(args: argparse.Namespace) -> int:
    from voxanon.data.kaldi import read_data_dir
    from voxanon.evaluation.asr import evaluate_asr
    from voxanon.jobs.report.utility import format_asr_table, write_asr_results
    from voxanon.models.asr import load_asr

    asr = load_asr(args.asr_backend, device=args.device, threads=args.threads)
    out = Path(args.out)
    cache = Path(args.cache_dir) if args.cache_dir else out / "asr_cache"
    sets = [evaluate_asr(read_data_dir(d), asr, cache, normalization=args.normalization, unit=args.unit,
                         batch_size=args.batch_size, n_boot=args.n_boot, quiet=args.quiet).to_result()
            for d in args.data_dirs]
    header = {"asr_backend": asr.name, "normalization": args.normalization, "unit": args.unit, "n_boot": args.n_boot,
              "hypothesis_cache": str(cache)}
    write_asr_results(header, sets, out)
    print(format_asr_table(sets))
    print(f"results: {out / 'asr_results.json'}")
    unscored = [s.data for s in sets if not s.n_scored]
    if unscored:
        raise DataError(f"no utterance of {', '.join(unscored)} could be scored; see {out / 'asr_report.txt'}")
    failed = sum(len(s.failed) for s in sets)
    if failed:
        print(f"voxanon evaluate utility: {failed} utterance(s) failed, listed in {out / 'asr_report.txt'}",
              file=sys.stderr)
        return EXIT_PARTIAL
    return EXIT_OK


def run_ser(args: argparse.Namespace) -> int:
    """Score every data directory with the per-fold models (``--ser-models``) or one model (``--ser-model``)."""
    from voxanon.evaluation.ser import evaluate_ser
    from voxanon.jobs.report.utility import ser_text, write_ser_results

    models_dir, spec = getattr(args, "ser_models", None), getattr(args, "ser_model", None)
    if (models_dir is None) == (spec is None):
        raise ConfigError("SER evaluation: give either --ser-models DIR (per-fold models) or --ser-model SPEC")
    results = [evaluate_ser(d, models_dir, model_spec=spec, batch_size=args.batch_size, quiet=args.quiet)
               for d in args.data_dirs]
    out = write_ser_results(results, args.out)
    print(ser_text(results))
    print(f"results: {out / 'ser_results.json'}")
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    if not (args.asr or args.ser):
        raise ConfigError("choose --asr, --ser or both")
    status = run_asr(args) if args.asr else 0
    if args.ser:
        status = max(status, run_ser(args))
    return status


def add_normalization_option(p) -> None:
    """The ``--normalization`` option of the commands that score WER."""
    from voxanon.metrics.text import NORMALIZERS

    p.add_argument("--normalization", default="vpc", choices=sorted(NORMALIZERS),
                   help="text normalisation before scoring: vpc (the VPC's: case, , ! ? .), spoken (also every "
                        "other mark, numbers spelt out, titles in full: for Whisper; `voxanon benchmark` scores with "
                        "it) or basic (any language: lower case, marks removed, Latin accents folded) (default: vpc)")


def _add_model_options(p: argparse.ArgumentParser) -> None:
    from voxanon.models.asr import DEFAULT_ASR

    a = p.add_argument_group("ASR")
    a.add_argument("--asr-backend", default=DEFAULT_ASR, metavar="SPEC",
                   help=f"whisper-tiny, whisper-base[:<language>] (multilingual), pocketsphinx, wav2vec2:<dir or hub "
                        f"name> or ctc:<model.pt> (a CTC model "
                        f"trained by `voxanon evaluate learnability-asr`) (default: {DEFAULT_ASR})")
    a.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    a.add_argument("--threads", type=int, default=0, help="CPU threads of the ASR (default 0: library default)")
    add_normalization_option(a)
    a.add_argument("--unit", choices=("word", "char"), default="word",
                   help="count errors in words (WER) or characters (CER: for Chinese, Japanese and other languages "
                        "written without spaces) (default: word)")
    a.add_argument("--n-boot", type=Range(1).option(int), default=1000,
                   help="bootstrap replicates of the WER interval (>= 1)")
    a.add_argument("--cache-dir", help="hypothesis cache (default: OUT/asr_cache); reruns decode nothing twice")
    s = p.add_argument_group("SER")
    s.add_argument("--ser-models", help="folder of per-fold SER models (fold_<k>/ser.pt)")
    s.add_argument("--ser-model", help="one SER model spec for all utterances")


def register(commands) -> None:
    p = commands.evaluate.add_parser("utility", help="WER/CER (--asr) and emotion UAR (--ser) of data directories")
    p.add_argument("data_dirs", nargs="+", metavar="DATA_DIR",
                   help="data directories scored side by side, in the order given (e.g. originals, then anonymized)")
    p.add_argument("--asr", action="store_true", help="word/character error rates against 'text'")
    p.add_argument("--ser", action="store_true", help="emotion recognition UAR against 'utt2emo'")
    p.add_argument("--out", default="results/utility", help="results folder (default: results/utility)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.defer(_add_model_options)
    p.set_defaults(handler=run)
