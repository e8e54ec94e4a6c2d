"""Are the two people of a conversation still told apart after anonymization? Per-file versus conversation mode.

    python3 experiments/conversation_separation.py [--n 10] [--seconds 30] [--methods mcadams,knnvc]

Two-person conversations of real recorded voices (``conversation_clips.py``).
Each reference turn of a recording is embedded with the d-vector; the
separation is the mean cosine of two turns of one person minus the mean cosine
of two turns of different people (0: the two are one voice). Rows: the
original; each method per file (the whole recording through the anonymizer
with one key, as ``voxanon anonymize`` without ``--conversation``); each
method in conversation mode (the diarizer's turns, one pseudo-speaker per
speaker, chosen to stay apart). Also printed: how often the diarizer found two
speakers, and the pseudo-speaker separation the conversation mode measured.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from conversation_clips import SR, conversations  # noqa: E402

import voxanon  # noqa: E402
from voxanon.data.rttm import Turn  # noqa: E402
from voxanon.models.speaker import load_encoder  # noqa: E402


def separation(encoder, wav: np.ndarray, sr: int, turns: list[Turn]) -> float:
    """Mean same-person cosine minus mean cross-person cosine of the turns' d-vectors."""
    cuts = [wav[round(t.start * sr):round(t.end * sr)] for t in turns]
    emb = encoder.embed(cuts, sr)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    same, cross = [], []
    for i, j in itertools.combinations(range(len(turns)), 2):
        (same if turns[i].speaker == turns[j].speaker else cross).append(float(emb[i] @ emb[j]))
    return float(np.mean(same) - np.mean(cross))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10, help="conversations (default 10)")
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each (default 30)")
    parser.add_argument("--methods", default="mcadams,knnvc", help="anonymizers (default mcadams,knnvc)")
    args = parser.parse_args()
    encoder = load_encoder("dvector")
    convs = conversations(args.n, args.seconds)
    rows = {"original": [separation(encoder, wav, SR, ref) for _, wav, ref, _ in convs]}
    for method in args.methods.split(","):
        anonymizer = voxanon.build_anonymizer(method)
        anonymizer.prepare(quiet=True)
        per_file, conversation, found, distance = [], [], [], []
        for name, wav, ref, _ in convs:
            out, sr = voxanon.anonymize_waveform(anonymizer, wav, SR, key=name)
            per_file.append(separation(encoder, out, sr, ref))
            result = voxanon.anonymize_conversation(anonymizer, wav, SR, recording=name)
            conversation.append(separation(encoder, result.wav, result.sr, ref))
            found.append(result.report["speakers_found"])
            distance.append(result.report.get("min_pseudo_distance"))
            print(f"{method} {name}: per file {per_file[-1]:.3f}, conversation {conversation[-1]:.3f} "
                  f"({found[-1]} speakers found, pseudo-speaker distance {distance[-1]})", flush=True)
        rows[f"{method} per file"] = per_file
        rows[f"{method} conversation mode"] = conversation
        print(f"{method}: diarizer found 2 speakers in {found.count(2)}/{len(found)}")
    print(f"\n{len(convs)} conversations of {args.seconds:g} s; separation (same-person minus cross-person "
          "d-vector cosine of the reference turns), mean [min, max]:")
    for row, values in rows.items():
        print(f"| {row} | {np.mean(values):.2f} [{np.min(values):.2f}, {np.max(values):.2f}] |")


if __name__ == "__main__":
    main()
