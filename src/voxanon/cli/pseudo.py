"""``voxanon data speaker-pool`` and ``voxanon train speaker-flow``: the pool and flow of pseudo-speaker generators."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

DEFAULT_EPOCHS = 200


def run_pool(args: argparse.Namespace) -> int:
    from voxanon.jobs.speaker_pool import build_speaker_pool

    pool = build_speaker_pool(args.data_dirs, encoder=args.encoder, level=args.level, max_utts=args.max_utts,
                              device=args.device,
                              cache_dir=args.cache_dir, quiet=args.quiet)
    pool.save(args.out, dtype=args.dtype)
    if not args.quiet:
        n_utt = 0 if pool.utt_embeddings is None else len(pool.utt_embeddings)
        print(f"{args.out}: {len(pool)} speakers (f {int((pool.genders == 'f').sum())} / "
              f"m {int((pool.genders == 'm').sum())}), {n_utt} utterance embeddings, {pool.dim}-d {pool.encoder}")
    return 0


def run_flow(args: argparse.Namespace) -> int:
    import torch

    from voxanon.anonymizers.pseudo.pool import load_pool
    from voxanon.models.flow import save_flow
    from voxanon.training.flow import FlowSettings, train_flow

    if args.threads:
        torch.set_num_threads(args.threads)
    pool = load_pool(args.pool)
    epochs = args.epochs if args.epochs is not None or args.minutes is not None else DEFAULT_EPOCHS
    settings = FlowSettings(epochs=epochs, minutes=args.minutes, seed=args.seed, hidden=args.hidden,
                            layers=args.layers)
    flow, log = train_flow(pool.training_points(), settings, encoder=pool.encoder, device=args.device,
                           quiet=args.quiet)
    command = ["voxanon", "train", "speaker-flow", str(args.pool), "--out", str(args.out), "--seed", str(args.seed),
               "--hidden", str(args.hidden), "--layers", str(args.layers), "--device", args.device]
    command += ["--epochs", str(args.epochs)] if args.epochs is not None else []
    command += ["--minutes", str(args.minutes)] if args.minutes is not None else []
    command += ["--threads", str(args.threads)] if args.threads else []
    command += ["--fp32"] if args.fp32 else []
    log = {"command": shlex.join(command), "pool": str(args.pool), "hidden": args.hidden, "layers": args.layers,
           "device": args.device, "threads": torch.get_num_threads(), **log}
    save_flow(flow, args.out, fp16=not args.fp32, train_log=log)
    Path(str(args.out) + ".json").write_text(json.dumps(log, indent=1) + "\n")
    if not args.quiet:
        print(f"{args.out}: {log['epochs']} epochs, {log['steps']} steps on {log['points']} embeddings in "
              f"{log['seconds']} s, final loss {log['loss'][-1]:.4f}")
    return 0


def register(commands) -> None:
    p = commands.data.add_parser("speaker-pool", help="embed the speakers of data directories into a pseudo-speaker "
                                                      "pool (.npz)")
    p.add_argument("data_dirs", nargs="+", metavar="DATA_DIR", help="Kaldi data directories (utt2spk, spk2gender)")
    p.add_argument("--out", required=True, help="output .npz")
    p.add_argument("--encoder", default="ge2e", help="speaker encoder spec (default ge2e)")
    p.add_argument("--level", choices=("speaker", "utterance"), default="speaker",
                   help="'utterance' also keeps every utterance's embedding (the flow trains on them)")
    p.add_argument("--max-utts", type=int, default=None, help="use at most this many utterances per speaker")
    p.add_argument("--dtype", choices=("float32", "float16"), default="float32", help="storage type")
    p.add_argument("--device", default="cpu")
    p.add_argument("--cache-dir", default=None, help="embedding cache folder (reused by later runs)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(handler=run_pool)

    t = commands.train.add_parser("speaker-flow", help="train the F3-VA flow-matching model on a speaker pool")
    t.add_argument("pool", metavar="POOL.npz",
                   help="pool from 'voxanon data speaker-pool' (utterance level preferred)")
    t.add_argument("--out", required=True, help="output checkpoint (.pt); a .json log is written beside it")
    t.add_argument("--epochs", type=int, default=None,
                   help=f"epochs (default {DEFAULT_EPOCHS} unless --minutes is given)")
    t.add_argument("--minutes", type=float, default=None, help="wall-time budget")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--device", default="cpu", help="cpu or cuda")
    t.add_argument("--hidden", type=int, default=512, help="hidden width of the velocity MLP")
    t.add_argument("--layers", type=int, default=3, help="hidden layers of the velocity MLP")
    t.add_argument("--threads", type=int, default=0,
                   help="CPU threads (default 0: torch's default; 1 is fastest on a busy machine)")
    t.add_argument("--fp32", action="store_true", help="store float32 weights (default float16)")
    t.add_argument("--quiet", action="store_true")
    t.set_defaults(handler=run_flow)
