"""``voxanon train acoustic`` and ``voxanon train asrbn``: train or fine-tune the speaker-conditioned acoustic model
(``asrbn``: as VPC 2024 B5/B6, vector-quantised content and a table of one-hot training speakers)."""

from __future__ import annotations

import argparse
import shlex
import sys


def _settings(args: argparse.Namespace):
    from voxanon.pipelines.train_acoustic import TrainSettings

    return TrainSettings(minutes=None if args.epochs is not None else args.minutes, epochs=args.epochs,
                         seed=args.seed, batch_size=args.batch_size, segment_frames=args.segment,
                         lr=args.lr, n_perturb=args.perturbed)


def _report(args: argparse.Namespace, summary: dict) -> int:
    from voxanon.errors import EXIT_PARTIAL

    valid = summary["final_valid_l1"]
    print(f"{args.out}/model.pt: {summary['steps']} steps in {summary['train_seconds'] / 60:.1f} min, train L1 "
          f"{summary['final_train_l1']}" + (f", valid L1 {valid}" if valid is not None else "")
          + f"; {len(summary['data']['skipped'])} utterance(s) skipped")
    return EXIT_PARTIAL if summary["data"]["skipped"] else 0


def _common(args: argparse.Namespace) -> dict:
    from voxanon.models.acoustic.inference import ModelSpecs
    from voxanon.models.acoustic.model import AcousticConfig

    return {"cfg": AcousticConfig(channels=args.channels, dilations=tuple(args.dilations)),
            "specs": ModelSpecs(content=args.content, speaker=args.speaker), "settings": _settings(args),
            "device": args.device, "init": args.init, "threads": args.threads, "cache_dir": args.cache,
            "command": shlex.join(["voxanon", *sys.argv[1:]]), "quiet": args.quiet}


def run(args: argparse.Namespace) -> int:
    from voxanon.pipelines.train_acoustic import train_acoustic

    return _report(args, train_acoustic(args.data_dirs, args.out, valid_dir=args.valid, **_common(args)))


def run_asrbn(args: argparse.Namespace) -> int:
    from voxanon.pipelines.train_asrbn import train_asrbn

    return _report(args, train_asrbn(args.data_dirs, args.out, codebook_size=args.codebook, **_common(args)))


def _add_training_args(p: argparse.ArgumentParser, *, init_help: str) -> None:
    """The options both training commands share."""
    p.add_argument("data_dirs", nargs="+", help="training data directories (Kaldi: wav.scp, utt2spk)")
    p.add_argument("--out", required=True, help="output folder: checkpoint.pt, train_log.jsonl, model.pt, model.json")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--minutes", type=float, default=45.0, help="training time budget (default 45)")
    budget.add_argument("--epochs", type=float, help="train for this many epochs instead of a time budget")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="cpu, cuda or auto (default)")
    p.add_argument("--init", help=init_help)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--cache", help="feature cache folder (default $VOXANON_CACHE/acoustic)")
    p.add_argument("--content", default="whisper-tiny:3", help="content encoder spec (default whisper-tiny:3)")
    p.add_argument("--speaker", default="ge2e", help="speaker encoder spec (default ge2e)")
    p.add_argument("--perturbed", type=int, default=1, help="voice-perturbed copies per training utterance")
    p.add_argument("--channels", type=int, default=192, help="width of the network")
    p.add_argument("--dilations", type=int, nargs="+", default=[1, 2, 4, 8, 1, 2, 4, 8],
                   help="one residual block per dilation")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--segment", type=int, default=192, help="training segment length (vocoder frames)")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--quiet", action="store_true")


def register(commands) -> None:
    p = commands.train.add_parser("acoustic", help="speaker-conditioned acoustic model (content + pitch + speaker "
                                                   "embedding -> HiFi-GAN mels); reruns resume")
    _add_training_args(p, init_help="fine-tune: start from 'default' (the shipped model) or a model.pt")
    p.add_argument("--valid", help="validation data directory (held-out speakers)")
    p.set_defaults(handler=run)

    p = commands.train.add_parser("asrbn", help="VPC B5/B6 acoustic model: vector-quantised content + pitch + "
                                                "one-hot training speaker -> HiFi-GAN mels; reruns resume")
    _add_training_args(p, init_help="start from the weights of 'default' (the shipped acoustic model) or a "
                                    "model.pt wherever names and shapes match")
    p.add_argument("--codebook", type=int, default=48, help="codewords of the content quantiser (default 48, "
                                                            "the VPC 2024 B5/B6 models' vq_48)")
    p.set_defaults(handler=run_asrbn)
