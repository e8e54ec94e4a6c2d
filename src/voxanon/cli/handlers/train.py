"""Handlers of ``voxanon train``: each trains one model with its recipe in :mod:`voxanon.training` (or the
attacker and SER trainers of :mod:`voxanon.evaluation`) and prints where the model went."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path

from voxanon.cli.handlers.shared import INPUT_ERRORS, as_error, device
from voxanon.errors import EXIT_OK, EXIT_PARTIAL, ConfigError


def _settings(args: argparse.Namespace):
    from voxanon.training.acoustic import AcousticSettings

    return AcousticSettings(minutes=None if args.epochs is not None else args.minutes, epochs=args.epochs,
                         seed=args.seed, batch_size=args.batch_size, segment_frames=args.segment,
                         lr=args.lr, n_perturb=args.perturbed, max_valid=args.max_valid)


def _report(args: argparse.Namespace, result) -> int:
    summary = result.summary
    valid = summary["final_valid_l1"]
    loss = next(k for k in summary if k.startswith("final_train_"))
    print(f"{args.out}/model.pt: {summary['steps']} steps in {summary['train_seconds'] / 60:.1f} min, train "
          f"{loss.removeprefix('final_train_').upper()} {summary[loss]}"
          + (f", valid L1 {valid}" if valid is not None else "")
          + f"; {len(summary['data']['skipped'])} utterance(s) skipped")
    return EXIT_PARTIAL if summary["data"]["skipped"] else 0


def _conv_config(args: argparse.Namespace):
    from voxanon.models.acoustic.model import AcousticConfig

    return AcousticConfig(channels=args.channels, dilations=tuple(args.dilations))


def _dit_config(args: argparse.Namespace):
    from voxanon.models.acoustic.dit import DiTConfig

    try:
        return DiTConfig(width=args.width, depth=args.depth, heads=args.heads, ff_mult=args.ff_mult,
                         codebook_size=args.codebook, cfg_dropout=args.cfg_dropout, sigma_min=args.sigma_min)
    except ValueError as exc:
        raise ConfigError(f"f3va backbone: {exc}") from None


def _common(args: argparse.Namespace, cfg) -> dict:
    from voxanon.models.acoustic.inference import ModelSpecs

    return {"cfg": cfg, "specs": ModelSpecs(content=args.content, speaker=args.speaker), "settings": _settings(args),
            "device": args.device, "init": args.init, "threads": args.threads, "cache_dir": args.cache,
            "command": shlex.join(["voxanon", *sys.argv[1:]]), "quiet": args.quiet}


def acoustic(args: argparse.Namespace) -> int:
    from voxanon.training.acoustic import train_acoustic

    return _report(args, train_acoustic(args.data_dirs, args.out, valid_dir=args.valid,
                                        **_common(args, _conv_config(args))))


def asrbn(args: argparse.Namespace) -> int:
    from voxanon.training.asrbn import train_asrbn

    return _report(args, train_asrbn(args.data_dirs, args.out, codebook_size=args.codebook,
                                     bottleneck=args.bottleneck, **_common(args, _conv_config(args))))


def bottleneck(args: argparse.Namespace) -> int:
    from voxanon.models.asr.bottleneck import BottleneckConfig
    from voxanon.training.bottleneck import ERROR, BottleneckSettings, train_bottleneck

    settings = BottleneckSettings(epochs=None if args.minutes is not None else args.epochs, minutes=args.minutes,
                                  seed=args.seed, batch_size=args.batch_size, lr=args.lr,
                                  warmup_epochs=args.warmup_epochs, decay_epochs=args.decay_epochs,
                                  n_perturb=args.perturbed, clean_copy=args.clean_copy, max_valid=args.max_valid)
    result = train_bottleneck(args.data_dirs, args.out, settings, content=args.content, valid_dir=args.valid,
                              cfg=BottleneckConfig(0, dim=args.dim, codebook_size=args.codebook, targets=args.targets),
                              device=args.device, threads=args.threads, cache_dir=args.cache, jobs=args.jobs,
                              command=shlex.join(["voxanon", *sys.argv[1:]]), quiet=args.quiet)
    summary, metric = result.summary, f"val_{ERROR[args.targets]}"
    scored = [r for r in result.history if metric in r]
    if not scored:
        print(f"{args.out}: {summary['epochs_run']} epoch(s), all of the warm-up (--warmup-epochs "
              f"{args.warmup_epochs}): no codes yet, no model.pt written; run more epochs to go on")
        return EXIT_PARTIAL
    best = min(scored, key=lambda r: r[metric])
    rates = (f"frame phone error {best['val_fer']} %" if args.targets == "phones" else
             f"CER {best['val_cer']} % / WER {best['val_wer']} %")
    print(f"{args.out}/model.pt: epoch {best['epoch']} of {summary['epochs_run']}, valid {rates} from the codes "
          f"alone, perplexity {best['perplexity']} of {args.codebook}; {len(summary['data']['left_out'])} "
          "utterance(s) left out")
    return EXIT_PARTIAL if summary["data"]["left_out"] else 0


def f3va(args: argparse.Namespace) -> int:
    from voxanon.training.acoustic import train_acoustic

    return _report(args, train_acoustic(args.data_dirs, args.out, valid_dir=args.valid, prior=args.prior or None,
                                        **_common(args, _dit_config(args))))


def ltf(args: argparse.Namespace) -> int:
    from voxanon.models.ltf.model import LtfConfig
    from voxanon.training.ltf import LtfSettings, train_ltf

    settings = LtfSettings(minutes=None if args.epochs is not None else args.minutes, epochs=args.epochs,
                           seed=args.seed, batch_size=args.batch_size, segment=args.segment, lr=args.lr,
                           lr_decay=args.lr_decay, lambda_c=args.lambda_c, lambda_s=args.lambda_s,
                           grl=not args.no_grl, init=args.init)
    cfg = LtfConfig(content=args.content, codebook_size=args.codebook_size, code_dim=args.code_dim,
                    gru_dim=args.gru_dim, vocoder=args.vocoder, output=args.output)
    summary = train_ltf(args.data_dirs, args.out, settings, cfg=cfg, device=args.device, threads=args.threads,
                        command=shlex.join(["voxanon", *sys.argv[1:]]), quiet=args.quiet).summary
    print(f"{args.out}/model.pt: {summary['steps']} steps in {summary['train_seconds'] / 60:.1f} min, content loss "
          f"{summary['final_l_c']}, valid {summary['final_valid_l_c']}, codebook perplexity "
          f"{summary['final_perplexity']:.0f}; {len(summary['data']['skipped'])} utterance(s) skipped")
    return EXIT_PARTIAL if summary["data"]["skipped"] else 0


def speaker_flow(args: argparse.Namespace) -> int:
    import torch

    from voxanon.anonymizers.pseudo.pool import load_pool
    from voxanon.cli.train import FLOW_EPOCHS
    from voxanon.training.flow import FlowSettings, train_flow

    if args.threads:
        torch.set_num_threads(args.threads)
    pool = load_pool(args.pool)
    epochs = args.epochs if args.epochs is not None or args.minutes is not None else FLOW_EPOCHS
    settings = FlowSettings(epochs=epochs, minutes=args.minutes, seed=args.seed, hidden=args.hidden,
                            layers=args.layers)
    command = ["voxanon", "train", "speaker-flow", str(args.pool), "--out", str(args.out), "--seed", str(args.seed),
               "--hidden", str(args.hidden), "--layers", str(args.layers), "--device", args.device]
    command += ["--epochs", str(args.epochs)] if args.epochs is not None else []
    command += ["--minutes", str(args.minutes)] if args.minutes is not None else []
    command += ["--threads", str(args.threads)] if args.threads else []
    command += ["--fp32"] if args.fp32 else []
    meta = {"command": shlex.join(command), "pool": str(args.pool), "hidden": args.hidden, "layers": args.layers,
            "device": args.device, "threads": torch.get_num_threads()}
    out = Path(args.out)
    log = train_flow(pool.training_points(), out.parent, settings, name=out.name, encoder=pool.encoder,
                     device=args.device, fp16=not args.fp32, meta=meta, quiet=args.quiet).summary
    if not args.quiet:
        print(f"{args.out}: {log['epochs']} epochs, {log['steps']} steps on {log['points']} embeddings in "
              f"{log['seconds']} s, final loss {log['loss'][-1]:.4f}")
    return 0


def attacker(args: argparse.Namespace) -> int:
    from voxanon.data.kaldi import read_data_dir
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
        result = train_attacker(read_data_dir(args.data_dir), args.out_dir, cfg, dev=dev,
                                device=device(args.device), quiet=args.quiet)
    except INPUT_ERRORS as exc:
        raise as_error(exc) from None
    print(f"best validation EER {result.best:.2f} %; attacker model: {result.model}")
    return 0


def ser(args: argparse.Namespace) -> int:
    from voxanon.evaluation.ser import train_folds

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
