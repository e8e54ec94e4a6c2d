"""kNN-VC outputs against their source and their target speaker (GE2E cosine), and the Whisper key layers.

``similarity``: for each anonymized utterance of the given data directories,
the GE2E cosine to its original and to the embedding of the target speech the
utterance was converted to (the drawn targets' mean embeddings, weighted by their
global blend weights, recovered from the utterance rng exactly as the anonymizer
draws them), next to the original's cosine to that target.

``layers``: copy-synthesis-free check of which Whisper layer makes the best
keys: the LibriVox clips converted to one synthetic target with keys from each
layer, raw or debiased (silent-window response subtracted), scored by
whisper-tiny WER.

``compare``: the LibriVox clips through ``knnvc`` with one drawn target
(``n_targets=1``, the paper's) and with its default blend of two (default
targets), WER with whisper-tiny and pocketsphinx and GE2E cosine to the source.

``encoders``: what a key encoder costs: the LibriVox clips (11.6 s, one stretch)
anonymized with keys from each encoder spec (default Whisper tiny.en layer 3,
the default, against multilingual Whisper base layer 4), the default blend of
the default targets (their sets for that encoder must be built, or are built
first), best of 3 each, same run: encoding, matching and vocoding apart, and
the total as a real-time factor (seconds per second of audio).

``pack``: how much of a matching set's matches survive the forms that would
make it small enough to ship: the shipped packing (4-bit keys, 8-bit values,
``knnvc_targets.pack``), float16, and keys projected on their 32-128 principal
directions. Queries are the LibriVox clips and the first 12 Asterisk prompts;
against a full-precision set (a folder with ``keys.npy`` and ``values.npy``, e.g.
one kept by ``tools/ship_knnvc_sets.py --keep DIR``), it prints the share of the
16 nearest frames that stay among the 16, of the nearest frame that stays the
nearest, the mean |difference| of the matched log-mels (the default matching,
16 frames weighted at 0.02), and, for scale, that difference between the
default matching and the paper's plain mean of 4.

``match``: time of one 20-s chunk's match against the first default target's
set, the paper's plain mean of 4 against the default 16 similarity-weighted
frames; and of a 4-s utterance's and a 20-s chunk's conversion with one drawn
target against the default blend of two, with and without the vocoder (best
of 5 each, same run; the ratios are what count).

Usage::

    VOXANON_CACHE=... python experiments/bench_knnvc.py similarity ORIG_DIR ANON_DIR [...]
    python experiments/bench_knnvc.py layers [--target flite:slt] [--sentences 20]
    VOXANON_CACHE=... python experiments/bench_knnvc.py compare [--seeds 2]
    VOXANON_CACHE=... python experiments/bench_knnvc.py match
    VOXANON_CACHE=... python experiments/bench_knnvc.py encoders [--encoders whisper-tiny:3 whisper-base:4]
    python experiments/bench_knnvc.py pack SET_DIR
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import soundfile as sf

from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.knnvc import KnnVc, draw_targets, knn_match
from voxanon.anonymizers.knnvc_targets import trim_mask, tts_sources
from voxanon.audio.io import load_audio, resample
from voxanon.dsp.frames import interpolate_frames

CLIPS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "librivox"


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def similarity(pairs: list[tuple[str, str]], seed: int) -> None:
    from voxanon.data.kaldi import read_data_dir
    from voxanon.models.speaker import load_encoder

    enc = load_encoder("ge2e")
    anon = KnnVc()
    sources = anon.sources()
    target_emb = np.stack([unit(enc.embed([np.concatenate([resample(w, sr, 16000) for w, sr in s.load()])], 16000)[0])
                           for s in sources])
    to_src, to_tgt, orig_to_tgt = [], [], []
    for orig_dir, anon_dir in pairs:
        o, a = read_data_dir(orig_dir), read_data_dir(anon_dir)
        for utt in a.utts:
            chosen, weights = draw_targets(utterance_rng(seed, utt), len(sources), anon.config)
            target = unit(weights @ target_emb[chosen])
            eo = unit(enc.embed([load_audio(o.wav_scp[utt])[0]], 16000)[0])
            ea = unit(enc.embed([load_audio(a.wav_scp[utt])[0]], 16000)[0])
            to_src.append(ea @ eo)
            to_tgt.append(ea @ target)
            orig_to_tgt.append(eo @ target)
    print(f"n={len(to_src)} utterances; GE2E cosine (mean, [min, max])")
    for name, v in (("anonymized vs its source", to_src), ("anonymized vs its target", to_tgt),
                    ("original vs that target", orig_to_tgt)):
        print(f"  {name:26s} {np.mean(v):.3f} [{np.min(v):.3f}, {np.max(v):.3f}]")


def layers(target: str, n_sentences: int) -> None:
    import torch

    from voxanon.data.sentences import load_sentences
    from voxanon.metrics.wer import wer
    from voxanon.models.asr import load_asr
    from voxanon.models.content import load_content_encoder
    from voxanon.models.vocoder import load_vocoder

    enc, voc, asr = load_content_encoder("whisper-tiny:4"), load_vocoder("hifigan-universal"), load_asr()
    texts = [s.text for s in load_sentences()[:n_sentences]]
    gap = np.zeros(1600, np.float32)
    twav = np.concatenate([p for w, sr in tts_sources((target,), texts)[0].load()
                           for p in (resample(w, sr, 16000), gap)])[: 16000 * 30]
    tmel = voc.analyze(twav, 16000)
    keep = trim_mask(tmel, 40.0)
    rate = voc.sample_rate / voc.hop_length

    def states(wav: np.ndarray) -> list[torch.Tensor]:
        mel, n = enc.windows(torch.from_numpy(wav))
        with torch.inference_mode():
            return [s[0, :n] for s in enc.model(mel[:1])]

    refs = dict(line.split(" ", 1) for line in (CLIPS / "text").read_text().splitlines() if line.strip())
    srcs = [sf.read(CLIPS / f"{u}.flac", dtype="float32")[0] for u in refs]       # 16 kHz clips
    src_states, tgt_states, silent = [states(w) for w in srcs], states(twav), states(np.zeros(16000 * 30, np.float32))
    print(f"target {target}: {keep.sum() / rate:.1f} s of speech; {len(srcs)} LibriVox clips; whisper-tiny WER %")
    for layer in range(1, len(enc.model.blocks) + 1):
        for debias in (False, True):
            def keys(st, n):
                f = st[layer] - (silent[layer][: len(st[layer])] if debias else 0)
                return interpolate_frames(f.numpy(), enc.frame_rate, n, rate)
            tk = unit(keys(tgt_states, len(tmel))[keep])
            hyps = []
            for wav, st in zip(srcs, src_states):
                frames = len(wav) * voc.sample_rate // 16000 // voc.hop_length + 1
                mel, _ = knn_match(keys(st, frames), tk, tmel[keep], 4)
                hyps.append(asr.transcribe([resample(voc.synthesize(mel), voc.sample_rate, 16000)], 16000)[0])
            rate = wer(list(refs.values()), hyps).wer
            print(f"  layer {layer} {'debiased' if debias else 'raw     '} WER {rate:6.1f}")


def compare(seeds: int) -> None:
    from voxanon.jobs.benchmark.run import WER_NORMALIZATION
    from voxanon.metrics.wer import wer
    from voxanon.models.asr import load_asr
    from voxanon.models.speaker import load_encoder

    refs = dict(line.split(" ", 1) for line in (CLIPS / "text").read_text().splitlines() if line.strip())
    srcs = [sf.read(CLIPS / f"{u}.flac", dtype="float32")[0] for u in refs]       # 16 kHz clips
    enc = load_encoder("ge2e")
    src_emb = unit(enc.embed(srcs, 16000))
    asrs = {spec: load_asr(spec) for spec in ("whisper-tiny", "pocketsphinx")}
    for label, wavs in [("original", srcs)] + [
            (f"knnvc n_targets={n}", [KnnVc(threads=1, n_targets=n).anonymize(w, 16000, utterance_rng(seed, u))[0]
                                      for seed in range(seeds) for u, w in zip(refs, srcs)]) for n in (1, 2)]:
        words = list(refs.values()) * (len(wavs) // len(srcs))
        wers = {spec: wer(words, asr.transcribe(wavs, 16000), WER_NORMALIZATION).wer for spec, asr in asrs.items()}
        cos = np.sum(unit(enc.embed(wavs, 16000)) * np.tile(src_emb, (len(wavs) // len(srcs), 1)), 1)
        print(f"{label:18s} n={len(wavs)} WER whisper-tiny {wers['whisper-tiny']:5.1f} pocketsphinx "
              f"{wers['pocketsphinx']:5.1f}  GE2E cos to source {cos.mean():.3f}", flush=True)


def match_cost() -> None:
    """Best-of-5 seconds of a 20-s chunk's match (k 4 plain mean against k 16 weighted); of the whole conversion
    of a 4-s utterance and a 20-s chunk with one target against the default blend of two; and of the vocoder."""
    from timeit import repeat

    knn, single = KnnVc(), KnnVc(n_targets=1)
    vocoder, target = knn.models()[1], knn.targets()[0]
    rng = np.random.default_rng(0)
    rate = vocoder.sample_rate / vocoder.hop_length
    query = np.asarray(target.keys[rng.integers(0, len(target.keys), int(20 * rate))])
    query = query + 0.05 * rng.normal(size=query.shape).astype(np.float32)

    def best(fn) -> float:
        return min(repeat(fn, number=1, repeat=5))

    plain = best(lambda: knn_match(query, target.keys, target.values, 4))
    weighted = best(lambda: knn_match(query, target.keys, target.values, knn.config.k, knn.config.match_temperature))
    print(f"{len(target.keys)} target frames, {len(query)} query frames: k 4 plain {plain:.3f} s, k {knn.config.k} "
          f"weighted {weighted:.3f} s (x{weighted / plain:.2f})")
    single.targets()
    for seconds in (4, 20):
        q = query[: int(seconds * rate)]
        one, two = (best(lambda a=a: a.convert(q, np.random.default_rng(0))) for a in (single, knn))
        mel = knn.convert(q, np.random.default_rng(0))[0]
        vocode = best(lambda: vocoder.synthesize(mel))
        print(f"{seconds:2d} s: convert with 1 target {one:.3f} s, 2 targets blended {two:.3f} s (x{two / one:.2f}); "
              f"with the vocoder ({vocode:.3f} s) x{(two + vocode) / (one + vocode):.2f}")


def pack_fidelity(set_dir: Path) -> None:
    """Agreement of packed, float16 and projected keys' matches with a full-precision set's (see the docstring)."""
    import torch

    from voxanon.anonymizers.knnvc_targets import MatchingSet, pack, unpack
    from voxanon.data.debian_clips import prompt_clips

    keys = np.load(set_dir / "keys.npy").astype(np.float32)
    values = np.load(set_dir / "values.npy").astype(np.float32)
    anon = KnnVc()
    wavs = [load_audio(f) for f in sorted(CLIPS.glob("*.flac"))] + [load_audio(c.path) for c in prompt_clips()[:12]]
    query = np.concatenate([anon.query(w, sr) for w, sr in wavs])
    c = anon.config

    def nearest(q: np.ndarray, k: np.ndarray) -> np.ndarray:
        return torch.topk(torch.as_tensor(unit(q)) @ torch.as_tensor(k).T, 16, dim=1).indices.numpy()

    full_mel = knn_match(query, keys, values, c.k, c.match_temperature)[0]
    full_top = nearest(query, keys)
    packed = unpack(pack(MatchingSet("t", keys, values, 0.0)), "t")
    forms = {"packed (shipped): 4-bit keys, 8-bit values": (query, packed.keys, packed.values),
             "float16 keys and values": (query, keys.astype(np.float16), values.astype(np.float16))}
    directions = np.linalg.eigh(keys.T.astype(np.float64) @ keys)[1][:, ::-1].astype(np.float32)  # uncentred PCA
    for dims in (32, 64, 96, 128):
        basis = directions[:, :dims]
        forms[f"keys on {dims} principal directions"] = (query @ basis, unit(keys @ basis), values)
    print(f"{len(keys)} set frames ({keys.shape[1]}-d keys), {len(query)} query frames")
    print(f"{'form':<45} {'16 nearest kept':>15} {'nearest kept':>12} {'mel |diff|':>10}")
    for name, (q, k, v) in forms.items():
        k32 = np.asarray(k, dtype=np.float32)
        top = nearest(q, k32)
        kept16 = np.mean([len(set(a) & set(b)) / 16 for a, b in zip(top, full_top)])
        mel = knn_match(q, k32, np.asarray(v, dtype=np.float32), c.k, c.match_temperature)[0]
        print(f"{name:<45} {kept16:>15.3f} {np.mean(top[:, 0] == full_top[:, 0]):>12.3f} "
              f"{np.abs(mel - full_mel).mean():>10.4f}")
    plain4 = knn_match(query, keys, values, 4)[0]
    gap = np.abs(plain4 - full_mel).mean()
    print(f"{'(scale) the paper plain mean of 4, float':<45} {'':>15} {'':>12} {gap:>10.4f}")


def encoder_cost(specs: list[str], threads: int) -> None:
    """Best-of-3 seconds of encoding, matching and vocoding the LibriVox clips (up to 20 s), per key encoder."""
    from timeit import repeat

    import torch

    clips = [sf.read(f, dtype="float32")[0] for f in sorted(CLIPS.glob("*.flac"))]       # 16 kHz clips
    wav = np.concatenate(clips)[: 20 * 16000]
    seconds = len(wav) / 16000
    print(f"{seconds:.1f} s of LibriVox speech, {threads} torch thread(s), best of 3")
    base = None
    for spec in specs:
        knn = KnnVc(encoder=spec, threads=threads)
        knn.prepare()
        encoder, vocoder = knn.models()
        torch.set_num_threads(threads)             # the encoder's (the vocoder takes threads itself)
        query = knn.query(wav, 16000)
        mel = knn.convert(query, np.random.default_rng(0))[0]
        parts = {name: min(repeat(fn, number=1, repeat=3)) for name, fn in (
            ("encode", lambda: knn.query(wav, 16000)),
            ("match", lambda: knn.convert(query, np.random.default_rng(0))),
            ("vocode", lambda: vocoder.synthesize(mel)))}
        total = sum(parts.values())
        base = base or total
        print(f"{encoder.name:24s} {encoder.dim}-d keys: " + ", ".join(f"{k} {v:.2f} s" for k, v in parts.items())
              + f"; RTF {total / seconds:.3f} (x{total / base:.2f} the first)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    s = sub.add_parser("similarity")
    s.add_argument("dirs", nargs="+", help="ORIG_DIR ANON_DIR pairs")
    s.add_argument("--seed", type=int, default=0)
    lay = sub.add_parser("layers")
    lay.add_argument("--target", default="flite:slt")
    lay.add_argument("--sentences", type=int, default=20)
    cmp = sub.add_parser("compare")
    cmp.add_argument("--seeds", type=int, default=2)
    sub.add_parser("match")
    enc = sub.add_parser("encoders")
    enc.add_argument("--encoders", nargs="+", default=["whisper-tiny:3", "whisper-base:4"])
    enc.add_argument("--threads", type=int, default=1)
    pk = sub.add_parser("pack")
    pk.add_argument("set_dir", type=Path)
    args = ap.parse_args()
    if args.what == "compare":
        compare(args.seeds)
    elif args.what == "match":
        match_cost()
    elif args.what == "encoders":
        encoder_cost(args.encoders, args.threads)
    elif args.what == "pack":
        pack_fidelity(args.set_dir)
    elif args.what == "similarity":
        if len(args.dirs) % 2:
            ap.error("give ORIG_DIR ANON_DIR pairs")
        similarity(list(zip(args.dirs[::2], args.dirs[1::2])), args.seed)
    else:
        layers(args.target, args.sentences)


if __name__ == "__main__":
    main()
