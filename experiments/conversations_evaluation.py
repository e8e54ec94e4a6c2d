"""Anonymized conversations, naive per file and in conversation mode: what the evaluation says about each.

Builds a conversation corpus from a corpus made by ``voxanon data synth``
(:func:`voxanon.jobs.corpus.conversations.build_conversations`), anonymizes
its recordings in each of ``--modes``: ``naive`` (each whole recording through
the anonymizer as one utterance, as plain ``voxanon anonymize`` does),
``conversation`` (conversation mode, speakers found by its diarizer, as
``voxanon anonymize --conversation``) and ``conversation-oracle`` (conversation
mode on the reference turns, as ``--rttm``); the held-out enrollment is
anonymized per utterance. It evaluates the original and each system
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
        [--modes naive conversation] [--encoders ge2e dvector] [--diarizer oracle] [--jobs 1]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    from voxanon.api import anonymize_dir, build_anonymizer
    from voxanon.evaluation.conversations import evaluate_conversations, load_diarizer
    from voxanon.jobs.conversations.method import conversation_method
    from voxanon.jobs.corpus.conversations import ConversationSettings, build_conversations
    from voxanon.models.asr import load_asr

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("synth", help="a corpus built by `voxanon data synth`")
    ap.add_argument("out", help="work folder (corpus, anonymized copies, results)")
    ap.add_argument("--conversations", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--methods", nargs="+", default=["mcadams", "knnvc"])
    ap.add_argument("--modes", nargs="+", default=["naive"], choices=["naive", "conversation", "conversation-oracle"])
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
    recordings = corpus / "data" / "conversations"
    for method in args.methods:
        anonymizer = build_anonymizer(method)
        enrolls = out / "anonymized" / method / "enrolls"
        _run(anonymize_dir(corpus / "data" / "enrolls", enrolls, anonymizer, seed=args.seed, jobs=args.jobs), enrolls)
        for mode in args.modes:
            system = f"{mode}-{method}"
            converted = out / "anonymized" / method / mode
            how = anonymizer if mode == "naive" else conversation_method(
                anonymizer, recordings, rttm=str(recordings / "reference.rttm") if mode.endswith("oracle") else None)
            _run(anonymize_dir(recordings, converted, how, seed=args.seed, jobs=args.jobs), converted)
            results[system] = evaluate_conversations(corpus, out / "results" / system, anonymized=converted,
                                                     anon_enroll=enrolls, system=system, **common)

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


def _run(summary, folder: Path) -> None:
    if summary.failed:
        raise SystemExit(f"{summary.failed} recordings failed; see {folder}/failures.tsv")


if __name__ == "__main__":
    main()
