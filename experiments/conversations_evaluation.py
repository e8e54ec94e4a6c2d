"""Anonymized conversations, naive per-file: what the evaluation of conversations says about McAdams and kNN-VC.

Builds a conversation corpus from a corpus made by ``voxanon data synth``
(:func:`voxanon.jobs.corpus.conversations.build_conversations`), anonymizes
its recordings naively (each whole recording through the anonymizer as one
utterance, as ``voxanon anonymize`` does) and its held-out enrollment the same
way, and evaluates the original and each system
(:func:`voxanon.evaluation.conversations.evaluate_conversations`): per-speaker
EER of the pretrained attackers (OA ignorant, AA lazy-informed), DER and
speaker-count error of the diarizer, cpWER of Whisper tiny.en on the reference
turns, and the overlap leak. Prints one markdown table; every run's
``results.json`` and CSV tables are under OUT/results/<system>.

``--diarizer voxanon`` uses conversation mode's diarizer once it is installed;
the default, ``oracle``, answers the reference (DER 0: the floor).

Usage::

    voxanon data synth SYNTH --size small
    python experiments/conversations_evaluation.py SYNTH OUT [--conversations 12] [--methods mcadams knnvc]
        [--encoders ge2e dvector] [--diarizer oracle] [--jobs 1]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    from voxanon.api import anonymize_dir, build_anonymizer
    from voxanon.evaluation.conversations import evaluate_conversations, load_diarizer
    from voxanon.jobs.corpus.conversations import ConversationSettings, build_conversations
    from voxanon.models.asr import load_asr

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("synth", help="a corpus built by `voxanon data synth`")
    ap.add_argument("out", help="work folder (corpus, anonymized copies, results)")
    ap.add_argument("--conversations", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--methods", nargs="+", default=["mcadams", "knnvc"])
    ap.add_argument("--encoders", nargs="+", default=["ge2e", "dvector"])
    ap.add_argument("--diarizer", default="oracle")
    ap.add_argument("--asr", default="whisper-tiny")
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()

    out = Path(args.out)
    corpus = out / "corpus"
    desc = build_conversations(args.synth, corpus, ConversationSettings(conversations=args.conversations,
                                                                        seed=args.seed))
    asr = load_asr(args.asr)
    common = dict(diarizer=load_diarizer(args.diarizer), diarizer_name=args.diarizer, encoders=tuple(args.encoders),
                  asr=asr, cache_dir=out / "cache", n_boot=1000)
    results = {"original": evaluate_conversations(corpus, out / "results" / "original", **common)}
    for method in args.methods:
        anonymizer = build_anonymizer(method)
        dirs = {}
        for name in ("conversations", "enrolls"):
            dirs[name] = out / "anonymized" / method / name
            summary = anonymize_dir(corpus / "data" / name, dirs[name], anonymizer, seed=args.seed, jobs=args.jobs)
            if summary.failed:
                raise SystemExit(f"{method}: {summary.failed} {name} failed; see {dirs[name]}/failures.tsv")
        system = f"naive-{method}"
        results[system] = evaluate_conversations(corpus, out / "results" / system, anonymized=dirs["conversations"],
                                                 anon_enroll=dirs["enrolls"], system=system, **common)

    speakers = sum(len(r["speakers"]) for r in desc["recordings"].values())
    minutes = sum(r["duration"] for r in desc["recordings"].values()) / 60
    print(f"corpus: {len(desc['recordings'])} conversations, {speakers} speakers, {minutes:.1f} min; "
          f"diarizer {args.diarizer}, ASR {asr.name}, encoders {', '.join(args.encoders)}\n")
    attacks = [f"{s} {e}" for e in args.encoders for s in ("OO", "OA", "AA-lazy")]
    header = ["system", "strongest attack (EER %)", *[f"{a} EER %" for a in attacks], "DER %", "abs. count error",
              "cpWER %", *[f"overlap {e}: cos talking / others, closest talking %" for e in args.encoders]]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for system, r in results.items():
        side = r.sides[system]
        eers = ["-" if system != "original" and a.startswith("OO") or a not in r.attacks
                else f"{r.attacks[a].eer_mean:.1f}" for a in attacks]
        strongest = f"{r.strongest} ({r.strongest_eer:.1f})" if r.strongest else "-"
        leak = [f"{v.cosine_talking:.3f} / {v.cosine_others:.3f}, {100 * v.closest_is_talking:.0f}"
                for v in side.overlap.values()]
        d = side.diarization
        cells = [system, strongest, *eers, f"{d.der:.1f}" if d else "-", f"{d.count_error:.2f}" if d else "-",
                 f"{side.cpwer.cpwer:.1f}" if side.cpwer else "-", *leak]
        print("| " + " | ".join(cells) + " |")
    print("\n" + json.dumps({s: str(out / "results" / s / "results.json") for s in results}, indent=1))


if __name__ == "__main__":
    main()
