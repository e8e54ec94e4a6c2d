"""Are the corpus speakers distinct, and are dev/test speakers out of the training speakers' reach?

Usage: python benchmarks/bench_corpus_speakers.py CORPUS [--encoder ge2e]

Reads the rendered wavs of a ``voxanon data synth`` corpus, also one whose
build is still running or was interrupted (``wav/<set>/<spk>/<utt>.wav``;
the render order gives every speaker its first utterance before anyone's
second), embeds them with the pretrained encoder and prints, on original
speech:

- the *pairwise* EER over every pair of dev/test utterances (same speaker
  = target), overall and by gender, with the counts;
- the same with impostor pairs restricted to speakers sharing a parent voice;
- the VPC-protocol OO EER per set and gender over the trials whose audio
  exists (enrollment = mean of the speaker's enrollment utterances, every
  enrolled speaker x every trial utterance of the gender);
- :func:`voxanon.jobs.corpus.check.reachability`: each dev/test
  utterance's cosine to its own speaker, to the nearest training speaker and
  to the nearest other dev/test speaker.

The full-protocol numbers (VPC trial lists) come from
``voxanon data synth OUT --check`` once a build has finished.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from voxanon.audio.io import load_audio
from voxanon.data.sentences import load_sentences
from voxanon.jobs.corpus.check import reachability
from voxanon.jobs.corpus.kokoro_speakers import assign_speakers
from voxanon.jobs.corpus.sets import SAMPLE_RATE, SizeSpec, plan_corpus, speaker_needs
from voxanon.metrics import compute_eer
from voxanon.models.speaker import load_encoder
from voxanon.models.tts.kokoro import available_voices


def _plan(root: Path):
    """The corpus plan, rebuilt from the settings the build recorded (works before the build has finished)."""
    settings = json.loads((root / ".voxanon-synth-settings.json").read_text())
    spec = SizeSpec(**settings["size"])
    sets = assign_speakers(list(available_voices()), speaker_needs(spec), settings["seed"])
    return plan_corpus(sets, load_sentences(), spec, settings["seed"])


def _protocol_eer(plan, emb: dict[str, np.ndarray]) -> dict:
    """OO EER per set and gender on the VPC trials whose enrollment and trial audio exist."""
    spk_of = {j.utt: j.spk for j in plan.jobs}
    gender = {s.spk: s.gender for ss in plan.speakers.values() for s in ss}
    out = {}
    for name in ("dev", "test"):
        models = {}
        for spk in plan.enrolled[name]:
            utts = [u for u in plan.enroll_utts[name] if spk_of[u] == spk]
            if utts and all(u in emb for u in utts):
                models[spk] = np.mean([emb[u] for u in utts], axis=0)
        for g in ("f", "m"):
            trials = [u for u in plan.trial_utts[name] if u in emb and gender[spk_of[u]] == g]
            spks = [s for s in models if gender[s] == g]
            if not trials or not spks:
                continue
            m = np.stack([models[s] for s in spks])
            t = np.stack([emb[u] for u in trials])
            scores = (m / np.linalg.norm(m, axis=1, keepdims=True)) @ (t / np.linalg.norm(t, axis=1, keepdims=True)).T
            target = np.array([[spk_of[u] == s for u in trials] for s in spks])
            if target.any() and (~target).any():
                out[f"{name}_{g}"] = {"eer": round(float(compute_eer(scores[target], scores[~target]).eer), 3),
                                      "enrolled": len(spks), "trial_utts": len(trials),
                                      "target": int(target.sum()), "nontarget": int((~target).sum())}
    return out


def _pairwise(emb: np.ndarray, spk: np.ndarray, parents: dict[str, list[str]]) -> dict:
    unit = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    i, j = np.triu_indices(len(emb), k=1)
    scores = np.einsum("ij,ij->i", unit[i], unit[j])
    same = spk[i] == spk[j]
    gender = np.array([s[0] for s in spk])
    shared = np.array([bool(set(parents[a]) & set(parents[b])) for a, b in zip(spk[i], spk[j])])
    out = {"utterances": int(len(emb)), "speakers": int(len(set(spk)))}
    for name, keep in (("all", np.ones_like(same)), ("f", (gender[i] == "f") & (gender[j] == "f")),
                       ("m", (gender[i] == "m") & (gender[j] == "m"))):
        tgt, non = scores[keep & same], scores[keep & ~same]
        if not len(tgt) or not len(non):
            continue
        out[name] = {"eer": round(float(compute_eer(tgt, non).eer), 4), "target_pairs": int(len(tgt)),
                     "nontarget_pairs": int(len(non))}
        hard = scores[keep & ~same & shared]
        if len(hard) and len(tgt):
            out[name]["hard_eer"] = round(float(compute_eer(tgt, hard).eer), 4)
            out[name]["hard_pairs"] = int(len(hard))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--encoder", default="ge2e")
    args = ap.parse_args(argv)
    root = Path(args.corpus)
    plan = _plan(root)
    parents = {s.spk: s.parents for ss in plan.speakers.values() for s in ss}
    wavs = {s: sorted((root / "wav" / s).glob("*/*.wav")) for s in ("dev", "test", "train")}
    encoder = load_encoder(args.encoder)
    t0 = time.perf_counter()
    emb = {}
    for name, paths in wavs.items():
        audio = [load_audio(p)[0] for p in paths]
        emb[name] = (encoder.embed(audio, SAMPLE_RATE) if audio else np.zeros((0, encoder.dim)),
                     np.array([p.parent.name for p in paths]))
    eval_emb = np.concatenate([emb["dev"][0], emb["test"][0]])
    eval_spk = np.concatenate([emb["dev"][1], emb["test"][1]])
    counts = {s: int(np.sum(eval_spk == s)) for s in set(eval_spk)}
    multi = np.array([counts[s] > 1 for s in eval_spk])
    by_utt = {p.stem: e for name, paths in wavs.items() for p, e in zip(paths, emb[name][0])}
    result = {"encoder": encoder.name, "corpus": str(root), "embed_seconds": round(time.perf_counter() - t0, 1),
              "protocol": _protocol_eer(plan, by_utt),
              "pairwise": _pairwise(eval_emb, eval_spk, parents),
              "reachability": reachability(eval_emb[multi], eval_spk[multi], *emb["train"])
              if multi.any() and len(emb["train"][0]) else None}
    json.dump(result, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
