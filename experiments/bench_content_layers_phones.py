"""Which layer of a Whisper encoder tells the phones of real speech apart best?

A linear phone classifier (softmax, no quantiser, no context) is trained on each layer's content frames, as
``voxanon train bottleneck --targets phones`` reads them (clean content at the vocoder's frame rate, normalised per
utterance, each frame labelled with its phone of a pocketsphinx forced alignment), and scored by the share of
frames whose phone is wrong (FER): on held-out training utterances (every ``--hold-out``-th) and on real speech
with transcripts (``--real``). Each utterance goes through the encoder once; every layer is read from that pass.
It ranks layers for the 48 phone codes of ``b5`` without training a bottleneck per layer. ``--augment`` adds to
each fitted utterance a copy under a recording condition drawn per utterance from those named (``telephone``,
``noise20``, ``reverb300``: :mod:`voxanon.dsp.conditions`), to see whether such copies narrow the gap between
held-out synthetic and real speech.

    python experiments/bench_content_layers_phones.py DATA... --real REAL_DATA_DIR --out OUT \\
        --encoders whisper-tiny whisper-base --alignments RUN/alignments.json --limit 400
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np
import torch
from torch import nn

from voxanon.audio.io import load_audio, resample
from voxanon.dsp.conditions import Condition, parse_condition
from voxanon.models.acoustic.features import (
    content_frames,
    n_vocoder_frames,
    normalize_content,
)
from voxanon.models.asr.alignment import PHONES, frame_labels
from voxanon.models.content import load_content_encoder
from voxanon.models.content.whisper import WhisperContent
from voxanon.training.bottleneck import read_todo
from voxanon.training.phone_targets import align_utterances

RATE, HOP = 22050, 256  # the HiFi-GAN frame rate the bottleneck's content is read at


class OnePass(nn.Module):
    """The encoder's hidden states up to layer ``upto``, computed once per input and reused for each layer asked."""

    def __init__(self, encoder: nn.Module, upto: int) -> None:
        super().__init__()
        self.encoder, self.upto = encoder, upto
        self.last: tuple[torch.Tensor, list[torch.Tensor]] | None = None

    def forward(self, mel: torch.Tensor, upto: int | None = None) -> list[torch.Tensor]:
        if self.last is None or self.last[0].shape != mel.shape or not torch.equal(self.last[0], mel):
            self.last = (mel.clone(), self.encoder(mel, upto=self.upto))
        return self.last[1]


def layer_encoders(spec: str, layers: list[int] | None = None) -> list[WhisperContent]:
    """One content encoder per layer of ``spec``'s Whisper encoder (``layers``: those alone), sharing one pass."""
    first = load_content_encoder(f"{spec}:1")
    layers = layers or list(range(1, first.n_layers + 1))
    shared = OnePass(first.model, max(layers))
    out = []
    for layer in layers:
        enc = WhisperContent(first.model, layer, name=spec)
        enc.model = shared
        out.append(enc)
    return out


def layer_frames(entry: str, encoders: list[WhisperContent], condition: Condition | None = None,
                 seed: int = 0) -> list[np.ndarray]:
    """Normalised content of each layer at the vocoder's frame rate (of the audio under ``condition``)."""
    wav, sr = load_audio(entry, allow_silent=False)
    if condition is not None:
        wav = condition.apply(np.asarray(wav, dtype=np.float64), sr, np.random.default_rng([seed, len(wav)]))[0]
    n = n_vocoder_frames(len(wav), sr, RATE, HOP)
    wav16 = resample(np.asarray(wav, dtype=np.float32), sr, 16000)
    return [normalize_content(content_frames(wav16, 16000, enc, n, RATE / HOP)) for enc in encoders]


def fit_probe(x: np.ndarray, y: np.ndarray, seed: int, epochs: int = 40) -> nn.Linear:
    """Softmax regression of ``y`` on ``x`` (Adam, minibatches, weight decay)."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    probe = nn.Linear(x.shape[1], len(PHONES))
    opt = torch.optim.AdamW(probe.parameters(), lr=2e-3, weight_decay=1e-2)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    for _ in range(epochs):
        for idx in torch.randperm(len(xt), generator=gen).split(512):
            loss = nn.functional.cross_entropy(probe(xt[idx]), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return probe


@torch.no_grad()
def frame_error(probe: nn.Linear, x: np.ndarray, y: np.ndarray) -> float:
    return round(100 * float((probe(torch.from_numpy(x)).argmax(-1).numpy() != y).mean()), 2)


def labelled(todo, alignments, encoders, conditions=()) -> tuple[list[list[np.ndarray]], list[np.ndarray]]:
    """Per layer the frames of each aligned utterance of ``todo`` (under a condition drawn per utterance from
    ``conditions`` when given), and their labels."""
    per_layer, labels = [[] for _ in encoders], []
    for i, (utt, _, entry) in enumerate(todo):
        if utt not in alignments:
            continue
        feats = layer_frames(entry, encoders, conditions[i % len(conditions)] if conditions else None, i)
        labels.append(frame_labels(alignments[utt], len(feats[0]), RATE / HOP))
        for store, f in zip(per_layer, feats):
            store.append(f)
        if (i + 1) % 50 == 0:
            print(f"  {i + 1}/{len(todo)} utterances", flush=True)
    return per_layer, labels


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data_dirs", nargs="+", help="training data directories with transcripts")
    ap.add_argument("--real", required=True, help="real speech with transcripts (a data directory)")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--encoders", nargs="+", default=["whisper-tiny", "whisper-base"])
    ap.add_argument("--layers", nargs="+", type=int, help="these layers alone (default: every layer)")
    ap.add_argument("--augment", nargs="+", default=[], help="recording conditions of a second copy")
    ap.add_argument("--alignments", type=Path, help="a run's alignments.json to start from")
    ap.add_argument("--limit", type=int, default=400, help="training utterances read (evenly spaced)")
    ap.add_argument("--hold-out", type=int, default=8, help="every N-th of them is held out")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.threads:
        torch.set_num_threads(args.threads)
    todo, texts = read_todo(args.data_dirs)
    if len(todo) > args.limit:
        todo = [todo[i] for i in np.linspace(0, len(todo) - 1, args.limit).round().astype(int)]
    cache = args.out / "alignments.json"
    if args.alignments and not cache.exists():
        shutil.copy(args.alignments, cache)
    alignments = align_utterances(todo, texts, cache)[0]
    real_todo, real_texts = read_todo([args.real])
    real_alignments = align_utterances(real_todo, real_texts, args.out / "real_alignments.json")[0]
    conditions = [parse_condition(c) for c in args.augment]
    rows = []
    for spec in args.encoders:
        encoders = layer_encoders(spec, args.layers)
        print(f"{spec}: training utterances", flush=True)
        train, train_y = labelled(todo, alignments, encoders)
        real, real_y = labelled(real_todo, real_alignments, encoders)
        held = np.arange(len(train_y)) % args.hold_out == 0
        extra, extra_y = [[] for _ in encoders], []
        if conditions:
            fit_todo = [t for t, h in zip((t for t in todo if t[0] in alignments), held) if not h]
            extra, extra_y = labelled(fit_todo, alignments, encoders, conditions)
        split = {name: np.concatenate([y for y, h in zip(train_y, held) if h == keep]) for name, keep in
                 (("fit", False), ("held", True))}
        fit_y = np.concatenate([split["fit"], *extra_y])
        for enc, frames, real_frames, extra_frames in zip(encoders, train, real, extra):
            fit = np.concatenate([f for f, h in zip(frames, held) if not h] + extra_frames)
            held_x = np.concatenate([f for f, h in zip(frames, held) if h])
            real_x = np.concatenate(real_frames)
            errors = [(frame_error(p, held_x, split["held"]), frame_error(p, real_x, np.concatenate(real_y)))
                      for p in (fit_probe(fit, fit_y, seed) for seed in args.seeds)]
            row = {"encoder": spec, "layer": enc.layer, "augment": args.augment, "train_utterances": len(train_y),
                   "held_out_fer": [e[0] for e in errors], "real_fer": [e[1] for e in errors],
                   "fit_frames": len(fit), "real_frames": len(real_x), "real_utterances": len(real_y)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    (args.out / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
    print("| encoder | layer | held-out FER % | real-speech FER % |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['encoder']} | {r['layer']} | {np.mean(r['held_out_fer']):.1f} | {np.mean(r['real_fer']):.1f} |")


if __name__ == "__main__":
    main()
