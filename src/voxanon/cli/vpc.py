"""``voxanon evaluate vpc``: a VPC edition's protocol on a kit ``data/`` folder, with the kit's ``results_summary``.

A command of its own rather than options of ``evaluate privacy``: it takes the
kit's folder and set names instead of data directories, runs the edition's
scenarios, ASR and SER together and writes the kit's summary beside voxanon's results.
``--finetune-asv`` first trains the 2026 semi-informed attacker, as the kit's
``eval_post`` configuration does before it evaluates.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from voxanon.errors import ConfigError
from voxanon.ranges import Range

#: fine-tuning options -> EcapaSslSettings fields
FINETUNE_OPTIONS = {"epochs": "epochs", "batch_size": "batch_size", "lr": "lr"}


def run(args: argparse.Namespace) -> int:
    from voxanon.jobs.vpc import run_vpc

    finetune = None
    given = {field: getattr(args, opt) for opt, field in FINETUNE_OPTIONS.items() if getattr(args, opt) is not None}
    if args.finetune_asv:
        from voxanon.training.ecapa_ssl import EcapaSslSettings
        from voxanon.training.trainer import resolve_device

        finetune = EcapaSslSettings(**given)
        args.device = resolve_device(args.device)
    elif given:
        names = ", ".join("--" + opt.replace("_", "-") for opt in FINETUNE_OPTIONS if getattr(args, opt) is not None)
        raise ConfigError(f"{names} set the fine-tuning: add --finetune-asv")
    results = run_vpc(args.data, args.out, edition=args.edition, suffix=args.suffix, exp=args.exp, asv=args.asv,
                      asv_anon=args.asv_anon, asr=args.asr, ser=args.ser, device=args.device,
                      cache_dir=args.cache, n_boot=args.n_boot, quiet=args.quiet, finetune=finetune)
    training = results.get("asv_anon_training")
    if training:
        print(f"fine-tuned ASV_eval^anon: {training['out_dir']} (epoch {training['best_epoch']} of "
              f"{training['epoch']}, validation loss {training['best_val_loss']:.3f})")
    summary = Path(args.out) / "results_summary.txt"
    print(summary.read_text(encoding="utf-8"), end="")
    for attacker, eers in results["ranking_eer"].items():
        if eers:
            print(f"VPC {results['edition']} ranking EER ({attacker} ASV, anon/anon): "
                  + ", ".join(f"{split} {eer:.3f} %" for split, eer in eers.items()))
    print(f"results: {Path(args.out) / 'vpc_results.json'}; the kit's form: {summary}")
    return 0


def register(commands) -> None:
    from voxanon.data.vpc_kit import EDITIONS

    p = commands.evaluate.add_parser("vpc", help="a VPC edition's protocol on a kit data/ folder (results_summary)")
    p.add_argument("data", help="the kit's data/ folder (libri_{dev,test}_enrolls, ..._trials_*, IEMOCAP_{dev,test})")
    p.add_argument("--edition", choices=EDITIONS,
                   help="2024: per-gender trial lists (trials_f, trials_m), EER averaged; 2026: the mixed lists "
                        "(trials_mixed) only (default: 2026 when mixed lists exist, else 2024)")
    p.add_argument("--suffix", default="", help="the kit's anon_data_suffix: anonymized sets are <set><suffix> "
                                                "(e.g. _mcadams); without it only the original (OO) is scored")
    p.add_argument("--exp", default="exp", help="the kit's exp/ folder with its models (default: exp)")
    p.add_argument("--asv", help="pretrained ASV spec (default: speechbrain:<exp/asv_orig/...embedding_model.ckpt> "
                                 "for 2024, ecapa_ssl:<exp/asv_ssl> for 2026)")
    p.add_argument("--asv-anon", help="the attacker retrained on anonymized data (ASV_eval^anon; default: "
                                      "exp/asv_anon<suffix> when it exists); with --finetune-asv, the folder the "
                                      "fine-tuning writes")
    p.add_argument("--asr", help="ASR spec for the WER of the trial lists, e.g. vpc2024:exp/asr (default: no ASR)")
    p.add_argument("--ser", help="the kit's exp/ser folder (fold_<k> models) for the IEMOCAP UAR (default: no SER)")
    p.add_argument("--out", default="results/vpc", help="results folder (default: results/vpc)")
    p.add_argument("--cache", help="embedding and hypothesis cache (default: OUT/cache)")
    p.add_argument("--n-boot", type=Range(1).option(int), default=1000,
                   help="bootstrap replicates of voxanon's EER intervals (>= 1)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    p.add_argument("--quiet", action="store_true")
    f = p.add_argument_group("fine-tuning the 2026 semi-informed attacker (as the kit's eval_post)")
    f.add_argument("--finetune-asv", action="store_true",
                   help="first fine-tune the pretrained ecapa_ssl (--asv, default exp/asv_ssl) on the anonymized "
                        "train-clean-360<suffix> into exp/asv_anon<suffix> (or --asv-anon DIR), then evaluate with "
                        "it; a rerun resumes an interrupted fine-tuning")
    f.add_argument("--epochs", type=Range(1).option(int), help="fine-tuning epochs (default 2, as the kit)")
    f.add_argument("--batch-size", type=Range(1).option(int), help="fine-tuning batch size (default 32, as the kit)")
    f.add_argument("--lr", type=Range(0, lo_open=True).option(float),
                   help="AdamW learning rate and top of the cyclic schedule (default 0.01, as the kit)")
    p.set_defaults(handler=run)
