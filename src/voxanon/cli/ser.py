"""``voxanon data iemocap``, ``voxanon ser train`` and ``voxanon ser learnability``: IEMOCAP preparation,
per-fold SER training, and SER trained on anonymized folds tested on original ones."""

from __future__ import annotations

import argparse
import json

from voxanon.errors import EXIT_OK, EXIT_PARTIAL


def run_prepare(args: argparse.Namespace) -> int:
    from voxanon.data import layout
    from voxanon.data.iemocap import prepare_iemocap

    report = prepare_iemocap(args.root, args.out, dev_gender=args.dev_gender)
    print(report.summary())
    print(f"data directories: {args.out}/{layout.IEMOCAP_ALL}, {layout.IEMOCAP_DEV}, {layout.IEMOCAP_TEST}")
    return 0


def run_train(args: argparse.Namespace) -> int:
    from voxanon.evaluation.ser import train_folds  # torch: imported only when training

    folds = args.folds.split(",") if args.folds else None
    report = train_folds(args.data_dir, args.out_dir, folds=folds, epochs=args.epochs, batch_size=args.batch_size,
                         channels=args.channels, seed=args.seed, quiet=args.quiet)
    for fold, info in report["folds"].items():
        print(f"fold {fold}: {info['checkpoint']} (trained on {', '.join(info['train_speakers'])}; "
              f"{json.dumps(info['train_counts'])})")
    if report["excluded_labels"]:
        print("excluded labels: " + ", ".join(f"{k} {v}" for k, v in sorted(report["excluded_labels"].items())))
    for utt, why in report["failed_audio"].items():
        print(f"unreadable audio, skipped: {utt}: {why}")
    return EXIT_PARTIAL if report["failed_audio"] else EXIT_OK


def run_learnability(args: argparse.Namespace) -> int:
    from voxanon.evaluation.learnability import (
        ser_learnability,  # torch: imported only when training
    )
    from voxanon.evaluation.results import to_dict
    from voxanon.evaluation.ser import is_synthetic, train_folds

    recipe = {"epochs": args.epochs, "channels": args.channels, "seed": args.seed}
    train_folds(args.original, args.reference_models, quiet=args.quiet, **recipe)  # finished folds are reused
    res = ser_learnability(args.anonymized, args.original, args.reference_models, args.models,
                           synthetic=is_synthetic(args.original), quiet=args.quiet, **recipe)
    print("fold  UAR % trained on anonymized  UAR % trained on original")
    for fold, v in res.per_fold.items():
        print(f"{fold:>4}  {v['anonymized']:27.1f}  {v['reference']:25.1f}")
    print(f"mean  {res.anonymized:19.1f} ± {res.anonymized_std:4.1f}  {res.reference:17.1f} ± "
          f"{res.reference_std:4.1f}   (tested on {res.n_test} original utterances)")
    if res.message:
        print(res.message)
    if args.out:
        from voxanon.cli.privacy import write_json

        write_json(args.out, to_dict(res))
        print(f"result written to {args.out}")
    return EXIT_OK


def register(commands) -> None:
    p = commands.data.add_parser("iemocap", help="prepare IEMOCAP for the VPC 5-fold SER protocol")
    p.add_argument("root", help="IEMOCAP release folder holding Session1..Session5")
    p.add_argument("out", help="output folder for IEMOCAP_all, IEMOCAP_dev and IEMOCAP_test")
    p.add_argument("--dev-gender", choices=("f", "m"), default="f",
                   help="which speaker of each session goes to the development set (default: f)")
    p.set_defaults(handler=run_prepare)

    ser = commands.top.add_parser("ser", help="speech emotion recognition models").add_subparsers(
        dest="ser_command", metavar="ACTION")
    t = ser.add_parser("train", help="train one compact SER per IEMOCAP fold on original data")
    t.add_argument("data_dir", help="data directory with utt2emo and spk2fold (e.g. IEMOCAP_all)")
    t.add_argument("out_dir", help="where fold_<k>/ser.pt are written (reruns resume)")
    t.add_argument("--folds", help="comma-separated folds to train (default: all in spk2fold)")
    t.add_argument("--epochs", type=int, default=15)
    t.add_argument("--batch-size", type=int, default=32)
    t.add_argument("--channels", type=int, default=128, help="network width")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--quiet", action="store_true", help="no progress lines")
    t.set_defaults(handler=run_train)

    ln = ser.add_parser("learnability", help="train the per-fold SER on anonymized speech, test on original speech",
                        description="Learnability of an anonymized emotion set: the per-fold compact SER is "
                                    "trained on ANONYMIZED and each original held-out fold of ORIGINAL is scored "
                                    "with the model that never heard its speakers; the reference row is the same "
                                    "recipe trained on ORIGINAL (trained into --reference-models when absent).")
    ln.add_argument("anonymized", help="anonymized emotion data directory (utt2emo, spk2fold)")
    ln.add_argument("original", help="the original emotion data directory it was made from")
    ln.add_argument("--reference-models", required=True, help="per-fold models trained on ORIGINAL (reused)")
    ln.add_argument("--models", required=True, help="where the anonymized-trained fold models go (reused)")
    ln.add_argument("--epochs", type=int, default=15)
    ln.add_argument("--channels", type=int, default=128, help="network width")
    ln.add_argument("--seed", type=int, default=0)
    ln.add_argument("--out", help="write the result (JSON) here")
    ln.add_argument("--quiet", action="store_true", help="no progress lines")
    ln.set_defaults(handler=run_learnability)
