"""``voxanon evaluate privacy``, ``voxanon attacker train`` and ``voxanon data librispeech``."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from voxanon.data.kaldi import DataError, read_data_dir
from voxanon.errors import ConfigError, VoxanonError
from voxanon.ranges import Range

_ERRORS = (ValueError, OSError)


def _as_error(exc: Exception) -> VoxanonError:
    """A VoxanonError as it is; a ValueError or OSError from below as a DataError (exit 3)."""
    return exc if isinstance(exc, VoxanonError) else DataError(str(exc))


def _device(name: str) -> str:
    if name != "auto":
        return name
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def write_json(path: str, data) -> None:
    """Write ``data`` as indented JSON to ``path``, making its folder."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1), encoding="utf-8")


def format_privacy_table(results: dict) -> str:
    """One row per scenario and gender, then the scenario's mean EER (``results``: scenario -> PrivacyResult).

    With several attacks on anonymized speech, a first line names the strongest
    attacker (lowest mean EER; OO, which attacks nothing anonymized, is left
    out), its rows come first, and the line says how much each weaker
    attacker overstated privacy.
    """
    from voxanon.evaluation.scenarios import (
        SCENARIOS,
        overstatement,
        strongest_attacker,
    )
    from voxanon.table import cell, format_table

    attacks = {n: r.eer_mean for n, r in results.items() if n not in SCENARIOS or SCENARIOS[n].needs_anonymized}
    best = strongest_attacker(attacks) if len(attacks) > 1 else None
    lead = ""
    if best:
        over = ", ".join(f"{n} by {d:.1f}" for n, d in overstatement(attacks).items())
        lead = (f"strongest attacker: {best[0]} (mean EER {best[1]:.2f} %); "
                f"weaker attackers overstated privacy (EER points): {over}\n")
        results = {best[0]: results[best[0]], **{n: r for n, r in results.items() if n != best[0]}}
    rows = []
    for name, r in results.items():
        for g, m in r.by_gender.items():
            rows.append([name, g, cell(m.eer), f"[{m.eer_ci.low:.1f}, {m.eer_ci.high:.1f}]", cell(m.rocch_eer),
                         cell(m.cllr, 3), cell(m.min_cllr, 3), cell(m.linkability, 3, "n/a"),
                         cell(m.zebra.expected_bits, 4), m.zebra.tag, r.encoder])
        rows.append([name, "mean", cell(r.eer_mean), *[""] * 8])
    header = ["scenario", "gender", "EER %", "95% CI", "ROCCH", "Cllr", "minCllr", "link", "ZEBRA bits", "tag",
              "encoder"]
    return lead + format_table(header, rows, align="ll" + "r" * 8 + "l", rule=True)


def run_privacy(args: argparse.Namespace) -> int:
    from voxanon.evaluation.privacy import run_scenarios
    from voxanon.evaluation.results import to_dict
    from voxanon.evaluation.scenarios import SCENARIOS, applicable

    scenarios = [name for name, sc in SCENARIOS.items() if getattr(args, sc.flag)]
    if not scenarios:
        scenarios = applicable(bool(args.anon_trials), bool(args.attacker))
    try:
        results = run_scenarios(
            scenarios, orig_enroll=args.enroll, orig_trials=args.trials, anon_enroll=args.anon_enroll,
            anon_trials=args.anon_trials, pretrained=args.encoder,
            attacker=f"ecapa:{args.attacker}" if args.attacker else None, cache_dir=args.cache,
            device=_device(args.device), n_boot=args.n_boot, quiet=args.quiet)
    except _ERRORS as exc:
        raise _as_error(exc) from None
    if args.out:
        write_json(args.out, to_dict(results))
    print(format_privacy_table(results))
    if args.out:
        print(f"results written to {args.out}")
    return 0


def run_train(args: argparse.Namespace) -> int:
    from voxanon.evaluation.attacker_training import train_attacker
    from voxanon.evaluation.dev_selection import as_data_dir
    from voxanon.models.speaker.ecapa import EcapaConfig
    from voxanon.training.asv import AsvSettings

    if args.recipe == "vpc":
        cfg = AsvSettings.vpc()
    else:
        cfg = AsvSettings(model=EcapaConfig.full(padding_mode="zeros") if args.full else EcapaConfig())
    model = cfg.model
    if args.channels:
        model = replace(model, channels=(args.channels,) * 4 + (3 * args.channels,))
    if args.embedding_dim:
        model = replace(model, embedding_dim=args.embedding_dim)
    if args.attention_channels:
        model = replace(model, attention_channels=args.attention_channels)
    overrides = {k: v for k, v in (("epochs", args.epochs), ("batch_size", args.batch_size),
                                   ("chunk_seconds", args.chunk_seconds), ("lr_min", args.lr_min),
                                   ("lr_max", args.lr_max), ("weight_decay", args.weight_decay),
                                   ("step_size", args.step_size), ("cycle_epochs", args.cycle_epochs))
                 if v is not None}
    if args.cycle_epochs is not None and args.step_size is None:
        overrides["step_size"] = None
    cfg = replace(cfg, model=model, seed=args.seed, **overrides)
    if bool(args.dev_enroll) != bool(args.dev_trials):
        raise ConfigError("--dev-enroll and --dev-trials go together: give both or neither")
    try:
        dev = (as_data_dir(args.dev_enroll), [as_data_dir(t) for t in args.dev_trials]) if args.dev_enroll else None
        summary = train_attacker(read_data_dir(args.data_dir), args.out_dir, cfg, dev=dev,
                                 device=_device(args.device), quiet=args.quiet)
    except _ERRORS as exc:
        raise _as_error(exc) from None
    print(f"best validation EER {summary['best_eer']:.2f} %; attacker model: {Path(args.out_dir) / 'best.pt'}")
    return 0


def run_librispeech(args: argparse.Namespace) -> int:
    from voxanon.data.librispeech import format_stats, prepare_librispeech

    try:
        stats = prepare_librispeech(args.root, args.out, lists=args.lists, enroll_fraction=args.enroll_fraction,
                                    enroll_utts=args.enroll_utts, seed=args.seed, trials=args.trials)
    except _ERRORS as exc:
        raise _as_error(exc) from None
    print(format_stats(stats))
    return 0


_SIDES = {"orig": "original", "anon": "anonymized"}


def register(commands) -> None:
    from voxanon.evaluation.scenarios import SCENARIOS

    p = commands.evaluate.add_parser("privacy", help="speaker-verification attacks (EER and more)")
    p.add_argument("--enroll", required=True, help="original enrollment data dir (e.g. libri_dev_enrolls)")
    p.add_argument("--trials", required=True, nargs="+", help="original trial data dirs (trials_f, trials_m)")
    p.add_argument("--anon-enroll", help="anonymized enrollment data dir")
    p.add_argument("--anon-trials", nargs="+", help="anonymized trial data dirs")
    for sc in SCENARIOS.values():
        p.add_argument(f"--{sc.flag.replace('_', '-')}", action="store_true",
                       help=f"{sc.title}: {_SIDES[sc.enroll]} enrollment, {_SIDES[sc.trials]} trials, "
                            f"{sc.attacker} encoder")
    p.add_argument("--encoder", default="ge2e", help="pretrained encoder spec: ge2e, ecapa:CKPT, speechbrain:CKPT")
    p.add_argument("--attacker", help="checkpoint of 'voxanon attacker train' (best.pt) for --aa-semi")
    p.add_argument("--cache", default=".voxanon-cache/embeddings", help="embedding cache directory")
    p.add_argument("--out", help="write the results (JSON) here")
    p.add_argument("--n-boot", type=Range(1).option(int), default=1000,
                   help="bootstrap replicates of the EER interval (>= 1)")
    p.add_argument("--device", default="auto", help="cpu, cuda or auto")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(handler=run_privacy)

    attacker = commands.top.add_parser("attacker", help="train the semi-informed attacker").add_subparsers(
        dest="attacker_command", metavar="ACTION")
    t = attacker.add_parser("train", help="train an ECAPA-TDNN on a (anonymized) training data dir")
    t.add_argument("data_dir")
    t.add_argument("out_dir")
    t.add_argument("--recipe", choices=("small", "vpc"), default="small",
                   help="small: 128/384-channel ECAPA, batch 32, cyclic LR 1e-5..2e-3 over 2 epochs (default); "
                        "vpc: the VPC 2024 attacker recipe, ECAPA 512/1536, attention 128, SE 128, reflect padding, "
                        "batch 256, cyclic LR 1e-8..1e-2 (half cycle 65000 steps), weight decay 2e-6")
    t.add_argument("--dev-enroll", help="dev enrollment data dir: select the epoch on dev trials (with --dev-trials)")
    t.add_argument("--dev-trials", nargs="+", help="dev trial data dirs (trials_f, trials_m)")
    t.add_argument("--epochs", type=int, help="default 10")
    t.add_argument("--batch-size", type=int, help="default 32 (vpc: 256)")
    t.add_argument("--chunk-seconds", type=float, help="default 3.0")
    t.add_argument("--lr-min", type=float, help="default 1e-5 (vpc: 1e-8)")
    t.add_argument("--lr-max", type=float, help="default 2e-3 (vpc: 1e-2)")
    t.add_argument("--weight-decay", type=float, help="default 2e-5 (vpc: 2e-6)")
    t.add_argument("--step-size", type=int, help="optimizer steps from lr-min to lr-max (vpc: 65000)")
    t.add_argument("--cycle-epochs", type=float, help="cyclic LR period in epochs, instead of --step-size (default 2)")
    t.add_argument("--full", action="store_true",
                   help="with --recipe small: speechbrain's VoxCeleb ECAPA size (1024/3072 channels; "
                        "larger than the VPC attacker)")
    t.add_argument("--channels", type=int, help="channels of the TDNN and SE-Res2Net layers (MFA gets 3x)")
    t.add_argument("--embedding-dim", type=int)
    t.add_argument("--attention-channels", type=int)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--device", default="auto", help="cpu, cuda or auto")
    t.add_argument("--quiet", action="store_true")
    t.set_defaults(handler=run_train)

    d = commands.data.add_parser("librispeech", help="VPC LibriSpeech enrollment/trial sets and train-clean-360")
    d.add_argument("root", help="folder holding LibriSpeech's subsets (dev-clean, test-clean, train-clean-360)")
    d.add_argument("out", help="output folder for the data directories")
    d.add_argument("--lists", help="folder with official VPC lists (libri_dev_enrolls/enrolls, .../trials)")
    d.add_argument("--enroll-fraction", type=Range(0, 1, lo_open=True).option(float), default=0.75,
                   help="enrolled share of each gender's speakers, in (0, 1]")
    d.add_argument("--enroll-utts", type=Range(1).option(int), default=12,
                   help="enrollment utterances per enrolled speaker (>= 1)")
    d.add_argument("--trials", choices=("vpc", "paper"), default="vpc",
                   help="trial construction without --lists: vpc (every enrolled speaker against every same-gender "
                        "trial utterance) or paper ('Anonymization, Not Elimination': per enrollment utterance 2 "
                        "target and 2 non-target trials, one female and one male impostor; 5-15 s utterances only)")
    d.add_argument("--seed", type=int, default=0)
    d.set_defaults(handler=run_librispeech)
