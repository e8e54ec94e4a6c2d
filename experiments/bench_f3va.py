"""The ``f3va`` anonymizer against its stand-in ``embedding generator=f3va`` (the conv model): words, quality,
voice, speed.

On held-out speech (Kokoro ``test_trials_f`` + ``test_trials_m``, ``--n`` evenly spaced, and the real Debian
clips of ``--real-speakers``), every system anonymizes every utterance with the utterance's RNG (seed 0), so
``f3va`` and ``embedding generator=f3va`` draw the same pseudo-speaker. Reported per system: Whisper tiny.en and
pocketsphinx WER, DNSMOS (P.835 overall), GE2E cosine of the output to the pseudo-speaker's embedding (the
target) and to the source, and the real-time factor (wall seconds of ``process`` per audio second, on
``--threads`` torch threads). The default systems are the reference and ``f3va`` at each of ``--steps`` mel ODE
steps; ``--system LABEL=METHOD:{json}`` adds others (e.g. another model). Prints a markdown table and writes
``--out`` (JSON) with the peak resident memory.

Usage: ``python experiments/bench_f3va.py --corpus runs/kokoro_eval [--model f3va] [--n 40] [--real-dir DIR]
[--steps 4 8 16] [--system 'T0=f3va:{"mel_temperature": 0}'] [--out bench_f3va.json]``
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time

import numpy as np

from voxanon.evaluation.heldout import add_heldout_args, heldout_groups, unit, write_results


def parse_system(text: str) -> tuple[str, str, dict]:
    """``LABEL=METHOD:{json}`` (or ``LABEL=METHOD``) -> (label, method, params)."""
    label, _, spec = text.partition("=")
    method, _, params = spec.partition(":")
    return label, method, json.loads(params) if params else {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="f3va", help="the f3va backbone (default: the shipped one)")
    add_heldout_args(ap, 40)
    ap.add_argument("--steps", type=int, nargs="+", default=[4, 8, 16], help="mel ODE steps of f3va to compare")
    ap.add_argument("--system", action="append", default=[], help="LABEL=METHOD:{json}, another system to run")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default="bench_f3va.json")
    args = ap.parse_args()

    from voxanon.anonymizers.base import utterance_rng
    from voxanon.anonymizers.registry import build
    from voxanon.evaluation.quality import dnsmos
    from voxanon.metrics.wer import wer
    from voxanon.models.asr import load_asr
    from voxanon.models.speaker import load_encoder

    common = {"threads": args.threads}
    systems = [("embedding generator=f3va (conv)", "embedding", {"generator": "f3va"})]
    systems += [(f"f3va mel_steps={s}", "f3va", {"model": args.model, "mel_steps": s}) for s in args.steps]
    systems += [parse_system(s) for s in args.system]
    anons = {label: build(method, {**common, **params}) for label, method, params in systems}
    asrs = {"whisper": load_asr("whisper-tiny"), "sphinx": load_asr("pocketsphinx")}
    enc = load_encoder("ge2e")
    groups = heldout_groups(args)

    results, start = {}, time.monotonic()
    for name, rows in groups.items():
        refs = [r["text"] for r in rows]
        audio = sum(len(r["wav"]) / r["sr"] for r in rows)
        table = {"original": {"dnsmos": [], "cos_source": []},
                 **{label: {"dnsmos": [], "cos_source": [], "cos_target": [], "seconds": 0.0} for label in anons}}
        outs = {label: [] for label in table}
        for r in rows:
            wav, sr = r["wav"], r["sr"]
            source = unit(enc.embed([wav], sr)[0])
            done = [("original", wav, sr, None)]
            for label, anon in anons.items():
                tic = time.perf_counter()
                y, ysr = anon.process(wav, sr, utterance_rng(0, r["utt"]))
                table[label]["seconds"] += time.perf_counter() - tic
                voice = anon.pseudo_speaker(wav, sr, utterance_rng(0, r["utt"]))
                done.append((label, y, ysr, unit(np.asarray(getattr(voice, "embedding", voice), dtype=np.float32))))
            for label, y, ysr, target in done:
                outs[label].append((y, ysr))
                e = unit(enc.embed([y], ysr)[0])
                table[label]["cos_source"].append(float(e @ source))
                table[label]["dnsmos"].append(dnsmos(y, ysr)["ovrl"])
                if target is not None:
                    table[label]["cos_target"].append(float(e @ target))
            print(f"{name}: {r['utt']} ({time.monotonic() - start:.0f} s)", file=sys.stderr, flush=True)
        summary = {}
        for label, row in table.items():
            summary[label] = {k: round(float(np.mean(v)), 3) for k, v in row.items() if isinstance(v, list) and v}
            if "seconds" in row:
                summary[label]["rtf"] = round(row["seconds"] / audio, 3)
            for asr_name, asr in asrs.items():
                hyps = [asr.transcribe([y], ysr)[0] for y, ysr in outs[label]]
                summary[label][f"wer_{asr_name}"] = round(wer(refs, hyps).wer, 1)
        results[name] = {"utterances": len(rows), "audio_seconds": round(audio, 1), "systems": summary}
    results["systems"] = [{"label": label, "method": method, "params": params} for label, method, params in systems]
    results["threads"], results["seconds"] = args.threads, round(time.monotonic() - start, 1)
    results["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    write_results(results, args.out, list(groups), "systems", "system", [
        ("Whisper WER %", "wer_whisper"), ("sphinx WER %", "wer_sphinx"), ("DNSMOS", "dnsmos"),
        ("cos to target", "cos_target"), ("cos to source", "cos_source"), ("RTF", "rtf")])
    print(f"{results['seconds']} s, peak RSS {results['peak_rss_mb']} MB")


if __name__ == "__main__":
    main()
