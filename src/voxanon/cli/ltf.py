"""``voxanon train ltf``: train the "Listen to the Features" content-embedding anonymizer."""

from __future__ import annotations

import argparse
import shlex
import sys


def run(args: argparse.Namespace) -> int:
    from voxanon.errors import EXIT_PARTIAL
    from voxanon.models.ltf.model import LtfConfig
    from voxanon.training.ltf import LtfSettings, train_ltf

    settings = LtfSettings(minutes=None if args.epochs is not None else args.minutes, epochs=args.epochs,
                           seed=args.seed, batch_size=args.batch_size, segment=args.segment, lr=args.lr,
                           lr_decay=args.lr_decay, lambda_c=args.lambda_c, lambda_s=args.lambda_s,
                           grl=not args.no_grl, init=args.init)
    cfg = LtfConfig(content=args.content, codebook_size=args.codebook_size, code_dim=args.code_dim,
                    gru_dim=args.gru_dim, vocoder=args.vocoder, output=args.output)
    summary = train_ltf(args.data_dirs, args.out, cfg=cfg, settings=settings, device=args.device,
                        threads=args.threads, command=shlex.join(["voxanon", *sys.argv[1:]]), quiet=args.quiet)
    print(f"{args.out}/model.pt: {summary['steps']} steps in {summary['train_seconds'] / 60:.1f} min, content loss "
          f"{summary['final_l_c']}, valid {summary['final_valid_l_c']}, codebook perplexity "
          f"{summary['final_perplexity']:.0f}; {len(summary['data']['skipped'])} utterance(s) skipped")
    return EXIT_PARTIAL if summary["data"]["skipped"] else 0


def register(commands) -> None:
    p = commands.train.add_parser("ltf", help="'Listen to the Features' generator: content features -> upsampler -> "
                                              "FVQ -> bi-GRU -> HiFi-GAN, trained on a content loss; reruns resume")
    p.add_argument("data_dirs", nargs="+", help="training data directories (Kaldi: wav.scp, utt2spk)")
    p.add_argument("--out", required=True, help="output folder: checkpoint.pt, train_log.jsonl, model.pt, model.json")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--minutes", type=float, default=40.0, help="training time budget (default 40)")
    budget.add_argument("--epochs", type=float, help="train for this many epochs instead (paper: 100)")
    p.add_argument("--content", default="whisper-tiny:3",
                   help="frozen encoder spec (default whisper-tiny:3; the paper's: hf:<wav2vec2-base dir>:9)")
    p.add_argument("--codebook-size", type=int, default=2048, help="FVQ codewords (paper: 2048 or 65536)")
    p.add_argument("--code-dim", type=int, default=8, help="FVQ codeword length (paper: 8 or 16)")
    p.add_argument("--gru-dim", type=int, default=256, help="bi-GRU units per direction")
    p.add_argument("--vocoder", default="v1-16k", choices=("v1-16k", "v2-16k"),
                   help="HiFi-GAN generator size (v1-16k: V1, 13.9 M; v2-16k: V2, 0.9 M, --init scratch only)")
    p.add_argument("--output", default="mel", choices=("mel", "waveform"),
                   help="mel (default, the CPU design): emit HiFi-GAN log-mels, trained through a map onto "
                        "Whisper's, vocoded by the frozen universal HiFi-GAN; waveform: the paper's loop with "
                        "HiFi-GAN inside (the --device cuda recipe)")
    p.add_argument("--lambda-c", type=float, default=1.0, help="content-loss weight")
    p.add_argument("--lambda-s", type=float, default=0.0,
                   help="speaker-loss weight (0: no speaker branch; paper: lambda_c/lambda_s 10 to 40)")
    p.add_argument("--no-grl", action="store_true", help="speaker branch without gradient reversal (a probe)")
    p.add_argument("--init", default="universal", choices=("universal", "scratch"),
                   help="HiFi-GAN generator start: the universal V1 retimed to 16 kHz (default) or random")
    p.add_argument("--batch-size", type=int, default=8, help="segments per step (paper: 128)")
    p.add_argument("--segment", type=int, default=16640, help="segment length in samples (default 16640, 52 frames)")
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--lr-decay", type=float, default=0.999, help="learning-rate factor per epoch")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="cpu, cuda or auto (default)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(handler=run)
