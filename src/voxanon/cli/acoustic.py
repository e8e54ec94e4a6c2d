"""``voxanon train acoustic``, ``asrbn`` and ``f3va``: train or fine-tune a speaker-conditioned acoustic model
(``asrbn``: as VPC 2024 B5/B6, vector-quantised content and a table of one-hot training speakers; ``f3va``: the
F3-VA DiT conditional flow-matching backbone); ``voxanon train bottleneck``: the B5/B6 content codes, learnt
inside a CTC recogniser."""

from __future__ import annotations

import argparse
import shlex
import sys


def _settings(args: argparse.Namespace):
    from voxanon.training.acoustic import AcousticSettings

    return AcousticSettings(minutes=None if args.epochs is not None else args.minutes, epochs=args.epochs,
                         seed=args.seed, batch_size=args.batch_size, segment_frames=args.segment,
                         lr=args.lr, n_perturb=args.perturbed, max_valid=args.max_valid)


def _report(args: argparse.Namespace, summary: dict) -> int:
    from voxanon.errors import EXIT_PARTIAL

    valid = summary["final_valid_l1"]
    loss = next(k for k in summary if k.startswith("final_train_"))
    print(f"{args.out}/model.pt: {summary['steps']} steps in {summary['train_seconds'] / 60:.1f} min, train "
          f"{loss.removeprefix('final_train_').upper()} {summary[loss]}" + (f", valid L1 {valid}" if valid is not None else "")
          + f"; {len(summary['data']['skipped'])} utterance(s) skipped")
    return EXIT_PARTIAL if summary["data"]["skipped"] else 0


def _conv_config(args: argparse.Namespace):
    from voxanon.models.acoustic.model import AcousticConfig

    return AcousticConfig(channels=args.channels, dilations=tuple(args.dilations))


def _dit_config(args: argparse.Namespace):
    from voxanon.errors import ConfigError
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


def run(args: argparse.Namespace) -> int:
    from voxanon.training.acoustic import train_acoustic

    return _report(args, train_acoustic(args.data_dirs, args.out, valid_dir=args.valid,
                                        **_common(args, _conv_config(args))))


def run_asrbn(args: argparse.Namespace) -> int:
    from voxanon.training.asrbn import train_asrbn

    return _report(args, train_asrbn(args.data_dirs, args.out, codebook_size=args.codebook,
                                     bottleneck=args.bottleneck, **_common(args, _conv_config(args))))


def run_bottleneck(args: argparse.Namespace) -> int:
    from voxanon.errors import EXIT_PARTIAL
    from voxanon.models.asr.bottleneck import BottleneckConfig
    from voxanon.training.bottleneck import ERROR, BottleneckSettings, train_bottleneck

    settings = BottleneckSettings(epochs=None if args.minutes is not None else args.epochs, minutes=args.minutes, seed=args.seed,
                                  batch_size=args.batch_size, lr=args.lr, warmup_epochs=args.warmup_epochs,
                                  decay_epochs=args.decay_epochs,
                                  n_perturb=args.perturbed, clean_copy=args.clean_copy, max_valid=args.max_valid)
    summary = train_bottleneck(args.data_dirs, args.out, content=args.content, valid_dir=args.valid,
                               cfg=BottleneckConfig(0, dim=args.dim, codebook_size=args.codebook,
                                                    targets=args.targets),
                               settings=settings, device=args.device, threads=args.threads, cache_dir=args.cache,
                               jobs=args.jobs, command=shlex.join(["voxanon", *sys.argv[1:]]), quiet=args.quiet)
    metric = f"val_{ERROR[args.targets]}"
    scored = [r for r in summary["history"] if metric in r]
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


def run_f3va(args: argparse.Namespace) -> int:
    from voxanon.training.acoustic import train_acoustic

    return _report(args, train_acoustic(args.data_dirs, args.out, valid_dir=args.valid, prior=args.prior or None,
                                        **_common(args, _dit_config(args))))


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
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--segment", type=int, default=192, help="training segment length (vocoder frames)")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--max-valid", type=int, default=48, help="validation utterances (at most; default 48)")
    p.add_argument("--quiet", action="store_true")


def _add_conv_args(p: argparse.ArgumentParser) -> None:
    """The sizes of the conv network."""
    p.add_argument("--channels", type=int, default=192, help="width of the network")
    p.add_argument("--dilations", type=int, nargs="+", default=[1, 2, 4, 8, 1, 2, 4, 8],
                   help="one residual block per dilation")


def register(commands) -> None:
    p = commands.train.add_parser("acoustic", help="speaker-conditioned acoustic model (content + pitch + speaker "
                                                   "embedding -> HiFi-GAN mels); reruns resume")
    _add_training_args(p, init_help="fine-tune: start from 'default' (the shipped model) or a model.pt")
    _add_conv_args(p)
    p.add_argument("--valid", help="validation data directory (held-out speakers)")
    p.set_defaults(handler=run)

    p = commands.train.add_parser("asrbn", help="VPC B5/B6 acoustic model: vector-quantised content + pitch + "
                                                "one-hot training speaker -> HiFi-GAN mels; reruns resume")
    _add_training_args(p, init_help="start from the weights of 'default' (the shipped acoustic model), 'b5', "
                                    "'b6' or a model.pt wherever names and shapes match; a model with codes "
                                    "learnt in a recogniser keeps its quantiser unless --bottleneck is given")
    _add_conv_args(p)
    p.add_argument("--codebook", type=int, default=48, help="codewords of the content quantiser (default 48, "
                                                            "the VPC 2024 B5/B6 models' vq_48)")
    p.add_argument("--bottleneck", help="take the quantiser (projection and codebook) from this model.pt of "
                                        "'voxanon train bottleneck' instead of fitting k-means; --content must be "
                                        "its encoder")
    p.set_defaults(handler=run_asrbn)

    p = commands.train.add_parser("bottleneck", help="B5/B6 content codes: a vector-quantised bottleneck learnt "
                                                     "inside a recogniser of characters (CTC) or of each frame's "
                                                     "phone; reruns resume")
    p.add_argument("data_dirs", nargs="+", help="training data directories (Kaldi: wav.scp, utt2spk, text)")
    p.add_argument("--out", required=True, help="output folder: checkpoint.pt, train_log.jsonl, model.pt, model.json")
    p.add_argument("--valid", help="validation data directory with transcripts (default: one held-out utterance "
                                   "of each of up to --max-valid training speakers)")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--epochs", type=int, default=30, help="epochs (default 30)")
    budget.add_argument("--minutes", type=float, help="train for this many minutes instead")
    p.add_argument("--content", default="whisper-tiny:3", help="content encoder spec (default whisper-tiny:3); "
                                                               "the acoustic model must use the same")
    p.add_argument("--codebook", type=int, default=48, help="codewords (default 48, as the VPC's B5/B6)")
    p.add_argument("--dim", type=int, default=64, help="bottleneck dimensions (default 64)")
    p.add_argument("--targets", choices=("chars", "phones"), default="chars",
                   help="what the codes are trained to recognise: the transcript's characters (CTC, default) or "
                        "each frame's phone of a pocketsphinx forced alignment (one linear map per code)")
    p.add_argument("--jobs", type=int, default=0, help="processes aligning phones (0: all cores)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="cpu, cuda or auto (default)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--cache", help="feature cache folder (default $VOXANON_CACHE/acoustic; shared with asrbn)")
    p.add_argument("--perturbed", type=int, default=1, help="voice-perturbed copies per training utterance")
    p.add_argument("--clean-copy", action="store_true", help="also train on each utterance's clean content "
                                                             "(lowered the frame phone error of real speech)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup-epochs", type=int, default=2, help="epochs without quantising first; the codebook then "
                                                                 "starts as k-means through the trained projection")
    p.add_argument("--decay-epochs", type=int, default=30, help="the learning rate's cosine falls to a tenth over "
                                                                 "this many epochs, whatever the budget (default 30)")
    p.add_argument("--max-valid", type=int, default=48, help="held-out utterances without --valid (default 48)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(handler=run_bottleneck)

    p = commands.train.add_parser("f3va", help="F3-VA backbone: DiT conditional flow matching on HiFi-GAN mels from "
                                               "VQ content + pitch + speaker embedding; reruns resume")
    _add_training_args(p, init_help="fine-tune: start from a model.pt of 'voxanon train f3va'")
    p.add_argument("--valid", help="validation data directory (held-out speakers)")
    p.add_argument("--width", type=int, default=192, help="transformer width (default 192; paper-size 1024)")
    p.add_argument("--depth", type=int, default=4, help="DiT blocks (default 4; paper-size 22)")
    p.add_argument("--heads", type=int, default=3, help="attention heads (default 3; paper-size 16)")
    p.add_argument("--ff-mult", type=int, default=2, help="feed-forward width in multiples of --width")
    p.add_argument("--codebook", type=int, default=64, help="k-means VQ codewords of the content (0: no VQ)")
    p.add_argument("--cfg-dropout", type=float, default=0.1,
                   help="fraction of rows trained without conditions, for classifier-free guidance (0: off)")
    p.add_argument("--sigma-min", type=float, default=1e-5, help="CFM noise floor")
    p.add_argument("--prior", default="", help="start the flow from this conv acoustic model's prediction "
                   "(a shipped name such as 'default', or a model.pt of 'voxanon train acoustic'; frozen, stored "
                   "in the backbone) instead of N(0, I): the CPU design (docs/f3va.md)")
    p.set_defaults(handler=run_f3va, lr=5e-4, max_valid=16)
