"""The speaker-conditioned acoustic model: does it keep the content, keep the voice, and follow the embedding?

On held-out utterances of unseen speakers (``--sets``: Kokoro ``test_trials_f`` + ``test_trials_m`` by default,
``--n`` of them evenly spaced) and the real Debian clips of the speakers named by ``--real-speakers`` (held
out of the default model's training), for each utterance:

- ``original``: the input itself;
- ``copy``: HiFi-GAN universal copy-synthesis (analyze -> synthesize), the ceiling of anything vocoded;
- ``own``: the acoustic model with the utterance's own GE2E embedding;
- ``same`` / ``cross``: the acoustic model with the mean embedding of another speaker of the same / opposite
  gender from the same set (the next such speaker in sorted order; real clips take Kokoro targets).

Reported per condition: Whisper tiny.en and pocketsphinx WER (VPC normalisation; original, copy and own
only), GE2E cosine of the output
to the source utterance's embedding and (``same``/``cross``) to the target speaker's mean embedding, with the
cosine of source and target themselves as the point of reference. Also the train/valid curve of the model
(from its ``meta``). Writes ``--out`` (JSON) and prints a markdown table.

Usage: ``python experiments/bench_acoustic.py --corpus runs/kdef/corpus [--model default] [--n 20]
[--real-dir DIR --real-speakers librivox-ss01,pocketsphinx-cards] [--out results.json]``
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from voxanon.evaluation.heldout import (
    add_heldout_args,
    corpus_sets,
    heldout_groups,
    load_utterances,
    unit,
    write_results,
)
from voxanon.metrics.wer import wer
from voxanon.models.acoustic import load_acoustic
from voxanon.models.asr import load_asr

CONDITIONS = ("original", "copy", "own", "same", "cross")
#: conditions whose WER is measured (the swapped ones only for their voice, to keep the run short)
WER_CONDITIONS = ("original", "copy", "own")


def pick_target(spk: str, gender: str, same: bool, means: dict[str, np.ndarray], genders: dict[str, str]) -> str:
    """The next speaker after ``spk`` (sorted, cyclic) of the same or the opposite gender."""
    names = sorted(s for s in means if s != spk and (genders[s] == gender) == same)
    later = [s for s in names if s > spk]
    return (later or names)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="default")
    add_heldout_args(ap, 20)
    ap.add_argument("--out", default="bench_acoustic.json")
    args = ap.parse_args()

    start = time.monotonic()
    model = load_acoustic(args.model)
    vocoder, enc = model.vocoder(), model.speaker_encoder()
    asrs = {"whisper": load_asr("whisper-tiny"), "sphinx": load_asr("pocketsphinx")}
    groups = heldout_groups(args)
    pool = load_utterances(corpus_sets(args), None)  # every utterance of the sets: target speakers' mean embeddings
    pool_emb = unit(enc.embed([r["wav"] for r in pool], pool[0]["sr"]))
    genders = {r["spk"]: r["gender"] for r in pool}
    means = {s: unit(pool_emb[[r["spk"] == s for r in pool]].mean(0)) for s in genders}

    results = {}
    for name, rows in groups.items():
        outs = {c: [] for c in CONDITIONS}
        cos = {c: {"source": [], "target": [], "source_target": []} for c in CONDITIONS}
        for r in rows:
            wav, sr = r["wav"], r["sr"]
            own = unit(enc.embed([wav], sr)[0])
            feats = model.features(wav, sr)
            outs["original"].append((wav, sr))
            outs["copy"].append((vocoder.synthesize(vocoder.analyze(wav, sr)), vocoder.sample_rate))
            outs["own"].append((vocoder.synthesize(model.mel(feats, own)), vocoder.sample_rate))
            targets = {"original": None, "copy": None, "own": None}
            for cond, same in (("same", True), ("cross", False)):
                gender = r["gender"] if r["gender"] in ("f", "m") else "f"
                tgt = pick_target(r["spk"], gender, same, means, genders)
                targets[cond] = means[tgt]
                outs[cond].append((vocoder.synthesize(model.mel(feats, means[tgt])), vocoder.sample_rate))
            print(f"{name}: {r['utt']} ({time.monotonic() - start:.0f} s)", file=sys.stderr, flush=True)
            for cond in CONDITIONS:
                y, ysr = outs[cond][-1]
                e = unit(enc.embed([y], ysr)[0])
                cos[cond]["source"].append(float(e @ own))
                if targets[cond] is not None:
                    cos[cond]["target"].append(float(e @ targets[cond]))
                    cos[cond]["source_target"].append(float(own @ targets[cond]))
        refs = [r["text"] for r in rows]
        table = {}
        for cond in CONDITIONS:
            row = {f"cos_{k}": round(float(np.mean(v)), 3) for k, v in cos[cond].items() if v}
            for asr_name, asr in asrs.items() if cond in WER_CONDITIONS else ():
                hyps = [asr.transcribe([y], ysr)[0] for y, ysr in outs[cond]]
                row[f"wer_{asr_name}"] = round(wer(refs, hyps).wer, 1)
            table[cond] = row
        results[name] = {"utterances": len(rows), "conditions": table}

    meta = model.meta
    results["model"] = {"spec": args.model, "steps": meta.get("steps"), "train_seconds": meta.get("train_seconds"),
                        "final_train_l1": meta.get("final_train_l1"), "final_valid_l1": meta.get("final_valid_l1")}
    results["seconds"] = round(time.monotonic() - start, 1)
    write_results(results, args.out, list(groups), "conditions", "condition", [
        ("Whisper WER %", "wer_whisper"), ("sphinx WER %", "wer_sphinx"), ("cos to source", "cos_source"),
        ("cos to target", "cos_target"), ("source~target", "cos_source_target")])
    print(f"model: {results['model']}; {results['seconds']} s")


if __name__ == "__main__":
    main()
