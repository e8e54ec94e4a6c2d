"""``voxanon evaluate learnability-asr``: a CTC ASR trained on anonymized speech, tested on original speech."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from voxanon.cli.utility import add_normalization_option
from voxanon.errors import EXIT_OK


def format_asr_learnability(res) -> str:
    """The reference and anonymized-trained rows: WER [CI], CER and the WER of each test set."""
    tests = list(res.per_fold)
    lines = [f"{'ASR trained on':<18} {'WER % [95% CI]':>22} {'CER %':>6} " + " ".join(f"{t:>14}" for t in tests)]
    for role, label, value, ci, cer in (
            ("reference", "original speech", res.reference, res.reference_ci, res.reference_cer),
            ("anonymized", "anonymized speech", res.anonymized, res.anonymized_ci, res.anonymized_cer)):
        interval = f"{value:5.1f} [{ci.low:5.1f}, {ci.high:5.1f}]" if ci else f"{value:5.1f}"
        per = " ".join(f"{(v if (v := res.per_fold[t][role]) is not None else float('nan')):>14.1f}" for t in tests)
        lines.append(f"{label:<18} {interval:>22} {cer if cer is not None else float('nan'):6.1f} {per}")
    for role, t in (res.training or {}).items():
        lines.append(f"{role} model: {t['epochs_run']} epochs ({t['stopped_by']}), {t['train_seconds']:.0f} s, "
                     f"final CTC loss {t['final_loss']}, {t['train_utterances']} utterances")
    lines.append(f"tested on {res.n_test} original utterances")
    if res.message:
        lines.append(res.message)
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    import torch

    from voxanon.evaluation.learnability import asr_learnability
    from voxanon.evaluation.results import to_dict
    from voxanon.evaluation.ser import is_synthetic
    from voxanon.training.ctc import recipe
    from voxanon.training.trainer import resolve_device

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    ctc = recipe(args.recipe, epochs=args.epochs, minutes=args.minutes, seed=args.seed)
    tests = {Path(d).name: d for d in args.test}
    res = asr_learnability(args.anonymized, args.original, tests, args.models, args.reference_models, ctc,
                           cache_dir=args.cache_dir or Path(args.models).parent / "cache",
                           device=resolve_device(args.device), n_boot=args.n_boot, seed=args.seed,
                           normalization=args.normalization, synthetic=is_synthetic(args.original),
                           quiet=args.quiet)
    print(format_asr_learnability(res))
    if args.out:
        from voxanon.atomic import write_text

        write_text(args.out, json.dumps(to_dict(res), indent=1) + "\n")
        print(f"result written to {args.out}")
    return EXIT_OK


def _add_recipe_options(p: argparse.ArgumentParser) -> None:
    from voxanon.training.ctc import RECIPES

    p.add_argument("--recipe", default="whisper", choices=sorted(RECIPES),
                   help="whisper: a CTC head on frozen Whisper tiny.en features (default); scratch: a BiLSTM-CTC "
                        "trained from nothing on log-mels")
    p.add_argument("--epochs", type=int, help="training epochs (default: the recipe's, "
                   + ", ".join(f"{n} {r.epochs}" for n, r in RECIPES.items()) + ")")


def register(commands) -> None:
    p = commands.evaluate.add_parser(
        "learnability-asr", help="train a CTC ASR on anonymized speech, test it on original speech",
        description="ASR learnability: a character CTC recogniser is trained on ANONYMIZED (a training set with "
                    "'text') and the same recipe on ORIGINAL (the reference row); both are scored (WER, CER) on "
                    "the original --test sets. Finished models are reused; an interrupted training resumes.")
    p.add_argument("anonymized", help="the anonymized training data directory")
    p.add_argument("original", help="the original training data directory it was made from")
    p.add_argument("--test", action="append", required=True, metavar="DIR",
                   help="an original test data directory (repeat: e.g. the female and male trial sets)")
    p.add_argument("--models", required=True, help="where the anonymized-trained model goes (reused)")
    p.add_argument("--reference-models", required=True, help="where the original-trained model goes (reused)")
    p.add_argument("--minutes", type=float, help="wall-clock cap per training (stops after the epoch past it)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu", help="cpu, cuda or auto (default: cpu)")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (default 0: torch's default)")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap replicates of the WER intervals")
    p.add_argument("--cache-dir", help="feature and hypothesis cache (default: a 'cache' folder beside --models)")
    p.add_argument("--out", help="write the result (JSON) here")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.defer(_add_recipe_options)
    p.defer(add_normalization_option)
    p.set_defaults(handler=run)
