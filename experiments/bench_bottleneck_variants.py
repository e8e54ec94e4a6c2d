"""Do the phone codes of B5's bottleneck stand for phones better on real speech with another recipe?

``voxanon train bottleneck --targets phones`` (the recipe of the shipped ``b5``) is run over several seeds
beside two variants, each scored by the share of frames whose phone is wrong when read from the
codes (FER): on the held-out training utterances (the run's ``best_val_fer``) and on real speech with transcripts
(``--real``, aligned by pocketsphinx as the training utterances are). The variants:

- ``linear``: the recipe as shipped (an affine projection of each content frame, then the nearest codeword);
- ``clean``: each training utterance's clean content beside its voice-perturbed copy (twice the frames;
  ``voxanon train bottleneck --clean-copy``);
- ``context``: a projection that reads 9 frames (a convolution to 256 units, GELU, a linear map) before the
  quantiser, where the shipped one reads one.

For each trained bottleneck the real-speech FER is also given after a majority filter over 3, 5 and 7 codes.
``context`` is patched into the training code here (through the network's projection); it is not an option of
``voxanon train bottleneck``. Alignments of the training utterances are read from ``--alignments`` (a run's
``alignments.json``) when given. Every seed trains on the features of seed 0 (the voice perturbation drawn
once, cached), so the seeds vary the network's initialisation and the batches, and nothing is extracted again.

    python experiments/bench_bottleneck_variants.py DATA... --real REAL_DATA_DIR --out OUT \\
        --variants linear clean context --seeds 0 1 2 --alignments RUN/alignments.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import shutil
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import torch
from torch import nn

import voxanon.training.bottleneck as training
from voxanon.data.kaldi import read_data_dir
from voxanon.models.acoustic.inference import ModelSpecs
from voxanon.models.acoustic.vq import kmeans
from voxanon.models.asr import bottleneck
from voxanon.models.asr.bottleneck import BottleneckConfig, load_recogniser
from voxanon.training.acoustic_features import Extractor, default_cache_dir, extract
from voxanon.training.phone_targets import align_utterances

VARIANTS = ("linear", "clean", "context")
SMOOTHING = (1, 3, 5, 7)


class ContextProjection(nn.Module):
    """``(..., T, in_dim)`` -> ``(..., T, dim)`` from ``width`` frames around each (zero padded at the ends)."""

    def __init__(self, in_dim: int, dim: int, width: int = 9, hidden: int = 256) -> None:
        super().__init__()
        self.conv = nn.Conv1d(in_dim, hidden, width, padding=width // 2)
        self.out = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        one = x.dim() == 2
        y = self.conv((x[None] if one else x).transpose(1, 2)).transpose(1, 2)
        y = self.out(nn.functional.gelu(y))
        return y[0] if one else y


@torch.no_grad()
def initial_codebook(net, train, seed: int) -> np.ndarray:
    """k-means of the training frames through the network's projection, utterance by utterance."""
    rng = np.random.default_rng([seed, net.cfg.codebook_size])
    z = np.concatenate([net.project(torch.from_numpy(c)).numpy() for c in train.content])
    if len(z) > training.KMEANS_FRAMES:
        z = z[np.sort(rng.choice(len(z), training.KMEANS_FRAMES, replace=False))]
    return kmeans(z, net.cfg.codebook_size, rng)


@torch.no_grad()
def reseed(self, unused: torch.Tensor, gen: torch.Generator) -> int:
    """Each unused codeword onto a random projected frame, the projection run over the frame's utterance."""
    n = int(unused.sum())
    frames = []
    for u in torch.randint(len(self.train), (n,), generator=gen).tolist():
        z = self.net.project(torch.from_numpy(self.train.content[u]))
        frames.append(z[int(torch.randint(len(z), (1,), generator=gen))])
    if n:
        self.net.codebook[unused] = torch.stack(frames)
    return n


@contextlib.contextmanager
def variant(name: str):
    """The training and loading code patched for ``name``."""
    with contextlib.ExitStack() as stack:
        if name == "context":
            init = bottleneck.BottleneckCtc.__init__

            def context_init(self, cfg):
                init(self, cfg)
                self.project = ContextProjection(cfg.in_dim, cfg.dim)

            stack.enter_context(mock.patch.object(bottleneck.BottleneckCtc, "__init__", context_init))
            stack.enter_context(mock.patch.object(training, "initial_codebook", initial_codebook))
            stack.enter_context(mock.patch.object(training.BottleneckRecipe, "reseed", reseed))
        yield


def frame_error(net, real: training.Utterances, window: int) -> float:
    """FER (%) of the real utterances read from their codes after a majority filter over ``window`` codes."""
    wrong = total = 0
    with torch.no_grad():
        for content, target in zip(real.content, real.targets):
            codes = net.codes(net.project(torch.from_numpy(content))).numpy()
            if window > 1:
                runs = np.lib.stride_tricks.sliding_window_view(np.pad(codes, window // 2, mode="edge"), window)
                codes = np.array([np.bincount(r, minlength=net.cfg.codebook_size).argmax() for r in runs])
            phones = net.head.out(net.codebook[torch.from_numpy(codes)]).argmax(-1).numpy()
            wrong += int((phones != np.asarray(target)).sum())
            total += len(target)
    return round(100 * wrong / total, 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data_dirs", nargs="+")
    ap.add_argument("--real", required=True, help="real speech with transcripts (a data directory)")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--content", default="whisper-tiny:3")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--alignments", type=Path, help="a run's alignments.json to start from")
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.threads:
        torch.set_num_threads(args.threads)
    extractor = Extractor(ModelSpecs(content=args.content), default_cache_dir(), 0)
    data = read_data_dir(args.real)
    real_todo = [(u, "real", data.wav_scp[u]) for u in sorted(data.wav_scp)]
    real_alignments = align_utterances(real_todo, data.text, args.out / "real_alignments.json")[0]
    real = training.Utterances.aligned(extract(real_todo, extractor, 0, quiet=True)[0], real_alignments, data.text,
                                       extractor.frame_rate)
    results = []
    for name in args.variants:
        for seed in args.seeds:
            run = args.out / f"{name}-seed{seed}"
            run.mkdir(exist_ok=True)
            if args.alignments and not (run / "alignments.json").exists():
                shutil.copy(args.alignments, run / "alignments.json")
            settings = training.BottleneckSettings(epochs=args.epochs, decay_epochs=args.epochs, warmup_epochs=3,
                                                   lr=3e-3, seed=seed, clean_copy=name == "clean")
            with variant(name), mock.patch.object(training, "Extractor", lambda specs, cache, _seed: extractor):
                result = training.train_bottleneck(args.data_dirs, str(run), settings, content=args.content,
                                                   cfg=BottleneckConfig(0, targets="phones"), threads=args.threads,
                                                   quiet=True,
                                                   command=f"{shlex.join(['python', *sys.argv])}  # run {run.name}")
                net = load_recogniser(result.model)[0].float()
            row = {"variant": name, "seed": seed, "valid_fer": result.best,
                   "train_seconds": result.summary["train_seconds"],
                   **{f"real_fer_filter{w}": frame_error(net, real, w) for w in SMOOTHING}}
            results.append(row)
            print(json.dumps(row), flush=True)
    (args.out / "results.json").write_text(json.dumps({"real_utterances": len(real), "runs": results}, indent=1)
                                           + "\n")
    for name in args.variants:
        rows = [r for r in results if r["variant"] == name]
        mean = {k: round(float(np.mean([r[k] for r in rows])), 2) for k in rows[0] if k.startswith(("valid", "real"))}
        print(name, "mean over seeds", mean)


if __name__ == "__main__":
    main()
