"""Oracle C-EER of the synthetic corpus design, with and without topics, at every size.

C-EER from reference transcripts depends only on which speaker says which
sentence, so it is measured on the corpus *plan* (no audio is rendered): the
text speaker encoder of ``voxanon evaluate content-privacy`` trained on the
plan's ``train`` transcripts, scored on its dev and test trials. This is the
upper bound an ASR-transcript attacker can reach on a corpus built with
``voxanon data synth [--topics]``.

    python experiments/bench_content_topics.py [--engine kokoro] [--sizes small default large] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

from voxanon.data.sentences import load_sentences, load_topic_sentences
from voxanon.evaluation.content_privacy import (
    REFERENCE,
    evaluate_content_privacy,
    reference_transcripts,
)
from voxanon.jobs.corpus.build import _speakers
from voxanon.jobs.corpus.sets import SIZES, data_dirs, plan_corpus


def oracle_c_eer(engine: str, size: str, topics: bool, seed: int) -> dict[str, float]:
    """Mean C-EER (reference transcripts) of the dev and test trials of one planned corpus."""
    spec = SIZES[engine][size]
    plan = plan_corpus(_speakers(engine, spec, seed, None), load_sentences(), spec, seed,
                       load_topic_sentences() if topics else None)
    dirs = data_dirs(plan, "/planned", {j.utt: 1.0 for j in plan.jobs})
    out = {}
    for split in ("dev", "test"):
        result = evaluate_content_privacy(dirs["train"], dirs[f"{split}_enrolls"],
                                          [dirs[f"{split}_trials_f"], dirs[f"{split}_trials_m"]],
                                          reference_transcripts, REFERENCE, n_boot=1, seed=seed)
        out[split] = result.eer_mean
    out["train_utts"] = len(dirs["train"].utts)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", default="kokoro", choices=sorted(SIZES))
    ap.add_argument("--sizes", nargs="+", default=["small", "default", "large"])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print("| size | train utterances | topics | C-EER dev % | C-EER test % | seconds |")
    print("|---|---|---|---|---|---|")
    for size in args.sizes:
        for topics in (False, True):
            t0 = time.perf_counter()
            r = oracle_c_eer(args.engine, size, topics, args.seed)
            print(f"| {size} | {r['train_utts']} | {'yes' if topics else 'no'} | {r['dev']:.2f} | {r['test']:.2f} "
                  f"| {time.perf_counter() - t0:.1f} |")


if __name__ == "__main__":
    main()
