"""How much of the words do 48 codes carry: a learnt bottleneck's codes against k-means codes of the same content.

The same head as the learnt bottleneck's (``voxanon train bottleneck``'s, of its targets) is trained on fixed
codes: the k-means codebook of an acoustic model of ``voxanon train asrbn`` (``--kmeans``: ``b5``, ``b6`` or a
model.pt; its quantiser, a codebook of normalised content frames) with the identity as projection, so only the
head learns. Its validation error (clean content of held-out training utterances) and its error on real speech
(``--real``: a data directory with transcripts) stand beside those of the learnt bottleneck (``--bottleneck``,
whose own head is scored on the same real speech): the same head, data and epochs, so the difference is the
codes. For a character bottleneck the error is the greedy CER; for a phone bottleneck the share of frames whose
phone (of a pocketsphinx forced alignment) is wrong, i.e. how far each code alone stands for one phone.

    python experiments/bench_bottleneck_codes.py DATA... --kmeans b5 --bottleneck BN/model.pt \\
        --content whisper-tiny:3 --real REAL_DATA_DIR --epochs 18 --out OUT
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from voxanon.audio.io import load_audio
from voxanon.data.kaldi import read_data_dir
from voxanon.metrics.wer import wer
from voxanon.models.acoustic import load_acoustic
from voxanon.models.acoustic.features import normalize_content
from voxanon.models.acoustic.inference import ModelSpecs
from voxanon.models.asr.bottleneck import (
    BottleneckConfig,
    BottleneckCtc,
    load_recogniser,
    transcribe_codes,
)
from voxanon.models.asr.ctc import greedy_decode, pad
from voxanon.training.acoustic_features import Extractor, default_cache_dir, extract
from voxanon.training.asrbn import hold_out
from voxanon.training.bottleneck import (
    BottleneckRecipe,
    BottleneckSettings,
    Utterances,
    read_todo,
    validate,
)
from voxanon.training.phone_targets import align_utterances
from voxanon.training.trainer import Budget, Trainer


def kmeans_net(spec: str, targets: str) -> BottleneckCtc:
    """The head of ``targets`` on the fixed k-means codes of an asrbn model: identity projection, its codebook,
    nothing but the head trainable."""
    book = load_acoustic(spec).net.vq.codebook.float()
    net = BottleneckCtc(BottleneckConfig(book.shape[1], dim=book.shape[1], codebook_size=book.shape[0],
                                         targets=targets))
    with torch.no_grad():
        net.project.weight.copy_(torch.eye(book.shape[1]))
        net.project.bias.zero_()
        net.codebook.copy_(book)
    for p in (net.project.weight, net.project.bias, net.codebook):
        p.requires_grad_(False)
    return net


class FixedCodes(BottleneckRecipe):
    """A recipe that leaves the codebook as it is (no re-seeding of unused codewords)."""

    def reseed(self, unused: torch.Tensor, gen: torch.Generator) -> int:
        return 0


def real_cer(hyps: list[str], data) -> dict:
    utts = sorted(data.wav_scp)
    refs = [data.text[u] for u in utts]
    return {"real_cer": round(wer(refs, hyps, unit="char").wer, 2), "real_wer": round(wer(refs, hyps).wer, 2)}


def utterances(items: list, texts: dict[str, str], net: BottleneckCtc, alignments: dict,
               frame_rate: float) -> Utterances:
    """The head's training or scoring data: transcripts for CTC, each frame's phone for phones."""
    if net.cfg.targets == "phones":
        return Utterances.aligned(items, alignments, texts, frame_rate)
    return Utterances.of(items, texts, net.cfg.subsample)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data_dirs", nargs="+")
    ap.add_argument("--kmeans", required=True, help="b5, b6 or a model.pt of 'voxanon train asrbn' with a k-means "
                                                    "codebook")
    ap.add_argument("--bottleneck", required=True, help="a model.pt of 'voxanon train bottleneck' (same content)")
    ap.add_argument("--content", default="whisper-tiny:3")
    ap.add_argument("--real", required=True, help="real speech with transcripts (a data directory)")
    ap.add_argument("--epochs", type=int, default=18)
    ap.add_argument("--targets", choices=("chars", "phones"), default="chars", help="the learnt bottleneck's")
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args()
    torch.manual_seed(0)
    settings = BottleneckSettings(epochs=args.epochs, decay_epochs=args.epochs, warmup_epochs=0, lr=3e-3)
    extractor = Extractor(ModelSpecs(content=args.content), default_cache_dir(), settings.seed)
    todo, texts = read_todo(args.data_dirs)
    train_todo, valid_todo = hold_out(todo, settings.max_valid)
    net = kmeans_net(args.kmeans, args.targets)
    data = read_data_dir(args.real)
    real_todo = [(u, "real", data.wav_scp[u]) for u in sorted(data.wav_scp)]
    alignments = {}
    if args.targets == "phones":
        alignments = align_utterances(todo + real_todo, texts | data.text, args.out / "alignments.json")[0]
    rate = extractor.frame_rate
    train = utterances(extract(train_todo, extractor, settings.n_perturb)[0], texts, net, alignments, rate)
    valid = utterances(extract(valid_todo, extractor, 0)[0], texts, net, alignments, rate)
    opt = torch.optim.Adam([p for p in net.parameters() if p.requires_grad], lr=settings.lr)
    recipe, log = FixedCodes(net, opt, train, valid, settings, "cpu"), []
    trainer = Trainer(Budget(args.epochs), state={})
    for epoch in range(1, args.epochs + 1):
        record = {"epoch": epoch, **trainer.train_epoch(recipe, epoch), **recipe.scores[epoch]}
        log.append(record)
        print(json.dumps(record), flush=True)
    real = utterances(extract(real_todo, extractor, 0)[0], data.text, net, alignments, rate)
    if args.targets == "phones":
        learnt = load_recogniser(args.bottleneck)[0]
        result = {"kmeans": {"valid": log[-1], "real_fer": validate(net, real, "cpu")["val_fer"]},
                  "bottleneck": {"valid": validate(learnt, valid, "cpu"), "real_fer": validate(learnt, real,
                                                                                              "cpu")["val_fer"]}}
    else:
        wavs = [load_audio(data.wav_scp[u])[0] for u in sorted(data.wav_scp)]
        model = load_acoustic(args.kmeans)
        net.eval()
        with torch.inference_mode():
            hyps = []
            for w in wavs:
                hyps.append(greedy_decode(net(*pad([normalize_content(model.features(w, 16000).content)]))[0][0]))
        result = {"kmeans": {"valid": log[-1], **real_cer(hyps, data)},
                  "bottleneck": real_cer(transcribe_codes(args.bottleneck, wavs, 16000), data)}
    result["log"] = log
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "log"}, indent=1))


if __name__ == "__main__":
    main()
