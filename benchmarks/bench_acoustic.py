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

Usage: ``python benchmarks/bench_acoustic.py --corpus /work/runs/kdef/corpus [--model default] [--n 20]
[--real-dir DIR --real-speakers librivox-ss01,pocketsphinx-cards] [--out results.json]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from voxanon.audio.io import load_audio
from voxanon.data.kaldi import read_data_dir
from voxanon.metrics.wer import wer
from voxanon.models.acoustic import load_acoustic
from voxanon.models.asr import load_asr

CONDITIONS = ("original", "copy", "own", "same", "cross")
#: conditions whose WER is measured (the swapped ones only for their voice, to keep the run short)
WER_CONDITIONS = ("original", "copy", "own")


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def load_set(dirs: list[Path], n: int | None, speakers: set[str] | None = None) -> list[dict]:
    """Utterances (id, speaker, gender, text, wav, sr) of ``dirs``, ``n`` evenly spaced or all."""
    rows = []
    for d in dirs:
        data = read_data_dir(d)
        for utt in data.utts:
            spk = data.utt2spk[utt]
            if speakers is None or spk in speakers:
                rows.append({"utt": utt, "spk": spk, "gender": data.spk2gender.get(spk, "?"),
                             "text": data.text.get(utt, ""), "entry": data.wav_scp[utt]})
    if n is not None and len(rows) > n:
        rows = [rows[i] for i in np.linspace(0, len(rows) - 1, n).round().astype(int)]
    for r in rows:
        r["wav"], r["sr"] = load_audio(r.pop("entry"))
    return rows


def add_test_set_args(ap: argparse.ArgumentParser, n: int) -> None:
    """The options that pick the held-out speech: corpus test sets, how many of them, the real clips."""
    ap.add_argument("--corpus", required=True, help="Kokoro corpus folder (data/test_trials_f, ...)")
    ap.add_argument("--sets", default="test_trials_f,test_trials_m")
    ap.add_argument("--n", type=int, default=n, help="Kokoro utterances (0: none, e.g. to run --real-dir alone)")
    ap.add_argument("--real-dir", help="real Debian clips data dir (data/real)")
    ap.add_argument("--real-speakers", default="librivox-ss01,pocketsphinx-cards")


def write_report(results: dict, out: str, groups: list[str], key: str, label: str,
                 columns: list[tuple[str, str]]) -> None:
    """Write ``results`` to ``out`` (JSON) and print each group's ``results[group][key]`` rows as a markdown
    table: the set, the row's name (headed ``label``) and ``columns`` (header, field; empty where absent)."""
    Path(out).write_text(json.dumps(results, indent=1) + "\n")
    print("| set | " + label + " | " + " | ".join(h for h, _ in columns) + " |")
    print("|---" * (len(columns) + 2) + "|")
    for name in groups:
        for row_name, row in results[name][key].items():
            cells = " | ".join(str(row.get(field, "")) for _, field in columns)
            print(f"| {name} ({results[name]['utterances']}) | {row_name} | {cells} |")


def pick_target(spk: str, gender: str, same: bool, means: dict[str, np.ndarray], genders: dict[str, str]) -> str:
    """The next speaker after ``spk`` (sorted, cyclic) of the same or the opposite gender."""
    names = sorted(s for s in means if s != spk and (genders[s] == gender) == same)
    later = [s for s in names if s > spk]
    return (later or names)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="default")
    add_test_set_args(ap, 20)
    ap.add_argument("--out", default="bench_acoustic.json")
    args = ap.parse_args()

    start = time.monotonic()
    model = load_acoustic(args.model)
    vocoder, enc = model.vocoder(), model.speaker_encoder()
    asrs = {"whisper": load_asr("whisper-tiny"), "sphinx": load_asr("pocketsphinx")}
    set_dirs = [Path(args.corpus) / "data" / s for s in args.sets.split(",")]
    groups = {"kokoro": load_set(set_dirs, args.n)} if args.n else {}
    if args.real_dir:
        groups["real"] = load_set([Path(args.real_dir)], None, set(args.real_speakers.split(",")))
    pool = load_set(set_dirs, None)            # every utterance of the sets: target speakers' mean embeddings
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
    write_report(results, args.out, list(groups), "conditions", "condition", [
        ("Whisper WER %", "wer_whisper"), ("sphinx WER %", "wer_sphinx"), ("cos to source", "cos_source"),
        ("cos to target", "cos_target"), ("source~target", "cos_source_target")])
    print(f"model: {results['model']}; {results['seconds']} s")


if __name__ == "__main__":
    main()
