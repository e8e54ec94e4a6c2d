"""Pseudo-speaker generators in embedding space, on held-out speakers.

Usage: python experiments/bench_pseudo_speakers.py SOURCE_DIR... [--pool POOL.npz] [--flow FLOW.pt]
       [--max-utts 2] [--draws 4] [--cache-dir DIR] [--json OUT.json]

Sources: the speakers of the given Kaldi data directories (e.g. a Kokoro
corpus's ``dev_enrolls`` and ``test_enrolls``), one speaker-level GE2E
embedding each (mean of up to ``--max-utts`` utterances, renormalised). The
pool and flow default to the shipped ones. The script checks that no source
speaker id is in the pool, prints the accuracy of the pool's gender centroids
on the sources' labelled genders (per directory; speakers in several
directories must not be), and then, per generator (``--draws``
independent RNGs per source):

- ``cos src``: mean cosine of the pseudo-speaker to its source;
- ``cos pool``: mean cosine of the pseudo-speaker to its nearest pool speaker;
- ``cos other``: mean cosine between pseudo-speakers of different sources
  (lower = more diverse; the sources' own value is the ``source`` row);
- ``cos draws``: mean cosine between two draws for the same source (how
  linkable two utterances of one speaker anonymized independently are);
- ``gender kept``: share of pseudo-speakers whose predicted gender is the source's;
- ``ms/call``: wall time of one call (single thread of this run, for scale only).
"""

import argparse
import json
import time

import numpy as np

from voxanon.anonymizers.pseudo import (
    SpeakerPool,
    load_default_flow,
    load_default_pool,
    load_pool,
    make_generator,
)
from voxanon.anonymizers.pseudo.generators import gender_centroids, predict_gender
from voxanon.jobs.speaker_pool import build_speaker_pool
from voxanon.models.flow import load_flow

CONFIGS = [("pool", {}), ("same_gender", {}), ("cross_gender", {}), ("gaussian", {"alpha": 0.0}),
           ("gaussian", {"alpha": 0.5})] + [("f3va", {"w": w}) for w in (-1.0, -0.5, 0.0, 0.5, 1.0)] + [
           ("f3va", {"w_range": (-0.5, 0.5)}), ("f3va", {"w": 1.0, "solver": "rk4", "steps": 32})]


def mean_offdiag(a: np.ndarray, b: np.ndarray) -> float:
    """Mean of ``a @ b.T`` off the diagonal (pairs of different sources)."""
    sims = a @ b.T
    return float((sims.sum() - np.trace(sims)) / (sims.size - len(sims)))


def measure(kind, params, sources, src_genders, pool, flow, centroids, draws):
    gen = make_generator(kind, pool=pool, flow=flow, **params)
    out = np.empty((draws, *sources.shape), dtype=np.float32)
    start = time.perf_counter()
    for d in range(draws):
        for i, s in enumerate(sources):
            out[d, i] = gen(s, np.random.default_rng([d, i]))
    ms = 1000 * (time.perf_counter() - start) / (draws * len(sources))
    kept = np.mean([predict_gender(p, centroids) == g for row in out for p, g in zip(row, src_genders)])
    return {"generator": kind, "params": params,
            "cos_src": float(np.mean(np.einsum("dnk,nk->dn", out, sources))),
            "cos_pool": float(np.mean((out.reshape(-1, out.shape[-1]) @ pool.embeddings.T).max(axis=1))),
            "cos_other": float(np.mean([mean_offdiag(row, row) for row in out])),
            "cos_draws": float(np.mean([np.mean(np.sum(out[d] * out[d + 1], axis=1)) for d in range(draws - 1)])),
            "gender_kept": float(kept), "ms_per_call": round(ms, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sources", nargs="+", help="Kaldi data directories of the held-out speakers")
    ap.add_argument("--pool", default=None)
    ap.add_argument("--flow", default=None)
    ap.add_argument("--max-utts", type=int, default=2)
    ap.add_argument("--draws", type=int, default=4)
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    pool = load_pool(args.pool) if args.pool else load_default_pool()
    flow = load_flow(args.flow) if args.flow else load_default_flow()
    centroids = gender_centroids(pool)
    parts = []
    for path in args.sources:
        part = build_speaker_pool([path], encoder=pool.encoder, max_utts=args.max_utts, cache_dir=args.cache_dir,
                                  quiet=True)
        acc = np.mean([predict_gender(e, centroids) == g for e, g in zip(part.embeddings, part.genders)])
        print(f"gender by nearest pool centroid: accuracy {acc:.3f} on the {len(part)} speakers of {path}")
        parts.append(part)
    src = SpeakerPool(np.concatenate([p.embeddings for p in parts]), np.concatenate([p.speakers for p in parts]),
                      np.concatenate([p.genders for p in parts]), pool.encoder)
    overlap = sorted(set(src.speakers) & set(pool.speakers))
    acc = float(np.mean([predict_gender(e, centroids) == g for e, g in zip(src.embeddings, src.genders)]))
    print(f"pool: {len(pool)} speakers (f {int((pool.genders == 'f').sum())}), {pool.dim}-d {pool.encoder}; "
          f"sources: {len(src)} speakers (f {int((src.genders == 'f').sum())}), shared ids: {len(overlap)}")
    rows = [{"generator": "source", "params": {}, "cos_src": 1.0,
             "cos_pool": float(np.mean((src.embeddings @ pool.embeddings.T).max(axis=1))),
             "cos_other": mean_offdiag(src.embeddings, src.embeddings), "cos_draws": 1.0, "gender_kept": acc,
             "ms_per_call": 0.0}]
    rows += [measure(k, p, src.embeddings, src.genders, pool, flow, centroids, args.draws) for k, p in CONFIGS]
    print("| generator | params | cos src | cos pool | cos other | cos draws | gender kept | ms/call |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
        print(f"| {r['generator']} | {params} | {r['cos_src']:.3f} | {r['cos_pool']:.3f} | {r['cos_other']:.3f} | "
              f"{r['cos_draws']:.3f} | {r['gender_kept']:.2f} | {r['ms_per_call']:.2f} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"pool_speakers": len(pool), "sources": len(src), "shared_ids": overlap,
                       "gender_accuracy": acc, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
