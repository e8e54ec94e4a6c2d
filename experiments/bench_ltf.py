"""Does an LTF generator speak? Both recognisers and the voice, on speech its training did not see.

For a ``model.pt`` of ``voxanon train ltf`` (or its ``checkpoint.pt``
mid-run, or ``default``: the shipped model), on ``--n`` evenly spaced
utterances of the Kokoro corpus's test trials (unseen speakers) and the real
clips of ``--real-dir`` (``--real-speakers``, held out of the shipped
model's training):

- Whisper tiny.en and pocketsphinx WER (spoken normalisation: numbers spelt out) of the original
  and of the LTF output; pocketsphinx is the judge that a Whisper-encoder loss
  cannot fool;
- GE2E cosine of each output to its source utterance, and of the outputs to
  each other across speakers (does everyone get one voice?).

Usage::

    python experiments/bench_ltf.py MODEL --corpus CORPUS [--n 24] [--real-dir REAL/data] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from voxanon.evaluation.heldout import add_heldout_args, heldout_groups, unit
from voxanon.jobs.benchmark.run import WER_NORMALIZATION
from voxanon.metrics.wer import wer
from voxanon.models.asr import load_asr
from voxanon.models.speaker import load_encoder


def load_model(spec: str):
    """An :class:`LtfModel` from a ``model.pt``, a training ``checkpoint.pt`` or ``default``."""
    import torch

    from voxanon.models.ltf.inference import LtfModel
    from voxanon.models.ltf.model import LtfConfig, LtfNet

    if spec == "default":
        from voxanon.anonymizers.ltf import DEFAULT_MODEL

        return LtfModel.from_file(DEFAULT_MODEL)
    if Path(spec).name != "checkpoint.pt":
        return LtfModel.from_file(spec)
    ckpt = torch.load(spec, map_location="cpu", weights_only=False)
    net = LtfNet(LtfConfig.from_dict(ckpt["config"]))
    net.load_state_dict(ckpt["model"])
    return LtfModel(net, {"steps": ckpt["step"], "train_seconds": ckpt["seconds"]})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    add_heldout_args(ap, 24)
    ap.add_argument("--out", help="JSON results")
    args = ap.parse_args()

    start = time.monotonic()
    model = load_model(args.model)
    asrs = {"whisper": load_asr("whisper-tiny"), "sphinx": load_asr("pocketsphinx")}
    ge2e = load_encoder("ge2e")
    groups = heldout_groups(args)
    results = {"model": args.model, "meta": {k: model.meta.get(k) for k in ("steps", "train_seconds")}}
    for name, rows in groups.items():
        refs = [r["text"] for r in rows]
        t0 = time.monotonic()
        outs = [model.convert(r["wav"], r["sr"]) for r in rows]
        audio = sum(len(r["wav"]) / r["sr"] for r in rows)
        src = unit(np.stack([ge2e.embed([r["wav"]], r["sr"])[0] for r in rows]))
        emb = unit(np.stack([ge2e.embed([y], r["sr"])[0] for y, r in zip(outs, rows)]))
        spk = np.array([r["spk"] for r in rows])
        other = spk[:, None] != spk[None, :]
        table = {"original": {}, "ltf": {"cos_to_source": round(float((emb * src).sum(1).mean()), 3),
                                         "cos_between_speakers": round(float((emb @ emb.T)[other].mean()), 3),
                                         "source_cos_between_speakers": round(float((src @ src.T)[other].mean()), 3),
                                         "rtf": round((time.monotonic() - t0) / audio, 3)}}
        for asr_name, asr in asrs.items():
            table["original"][f"wer_{asr_name}"] = round(wer(refs, [asr.transcribe([r["wav"]], r["sr"])[0]
                                                                    for r in rows], WER_NORMALIZATION).wer, 1)
            hyps = [asr.transcribe([y], r["sr"])[0] for y, r in zip(outs, rows)]
            table["ltf"][f"wer_{asr_name}"] = round(wer(refs, hyps, WER_NORMALIZATION).wer, 1)
            if asr_name == "whisper":
                table["ltf"]["examples"] = [f"{refs[i]} -> {hyps[i]}" for i in range(min(3, len(rows)))]
        results[name] = {"utterances": len(rows), **table}
        print(f"{name}: {json.dumps(table)}", file=sys.stderr, flush=True)
    results["seconds"] = round(time.monotonic() - start, 1)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    print("| set | condition | Whisper WER % | sphinx WER % | GE2E cos to source | cos between speakers |")
    print("|---|---|---|---|---|---|")
    for name in groups:
        r = results[name]
        print(f"| {name} ({r['utterances']}) | original | {r['original']['wer_whisper']} | "
              f"{r['original']['wer_sphinx']} | 1.0 | {r['ltf']['source_cos_between_speakers']} |")
        print(f"| | ltf | {r['ltf']['wer_whisper']} | {r['ltf']['wer_sphinx']} | {r['ltf']['cos_to_source']} | "
              f"{r['ltf']['cos_between_speakers']} |")


if __name__ == "__main__":
    main()
