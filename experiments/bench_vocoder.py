"""HiFi-GAN universal on one CPU core: speed of the ways to run it, and copy-synthesis quality.

Speed (real-time factor = CPU seconds of the process per second of audio,
median of ``--repeats`` rounds on the same mel input, one thread; CPU time, not
wall time, so that other load on a shared machine inflates it less; the ways
take turns within each round so that they see the same load):

- ``reference``: the generator as the reference code runs it (weight-norm
  parametrisations recomputed on every call, autograd on), one shot;
- ``torch``: ``engine="torch"``: weight norm folded at load time, ``torch.inference_mode``, 512-frame chunks;
- ``onnx-1d``: ONNX Runtime on the plain export (1-D convolutions), one shot;
- ``onnx``: ``engine="onnx"`` (the default when ONNX Runtime is installed): the
  export with (1, k) 2-D convolutions, at several chunk lengths (``--chunks``).

Quality (on the real LibriVox clips in tests/fixtures/librivox), for each engine:
WER of the original and of the copy-synthesis (analyze -> synthesize) with
Whisper tiny.en and pocketsphinx, and GE2E cosine similarity of the copy to the original.

Usage: ``taskset -c 0 python experiments/bench_vocoder.py [--repeats 3] [--seconds S] [--chunks 256,512,1024]
[--no-quality] [--no-speed]``
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import soundfile as sf
import torch

from voxanon.audio.io import resample
from voxanon.models.vocoder import load_vocoder
from voxanon.models.vocoder.hifigan import HifiganVocoder

CLIPS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "librivox"


def cpu_seconds(fn) -> float:
    """Process CPU seconds of one call of ``fn()``."""
    t = time.process_time()
    fn()
    return time.process_time() - t


def reference_generator(vocoder):
    """The folded generator with weight norm put back as parametrisations (the unfused reference)."""
    gen = copy.deepcopy(vocoder.generator).requires_grad_(True)
    for m in gen.modules():
        if isinstance(m, (torch.nn.Conv1d, torch.nn.ConvTranspose1d)):
            torch.nn.utils.parametrizations.weight_norm(m)
    return gen


def onnx_1d_session(vocoder, tmp: str):
    """ONNX Runtime (one thread) on the generator exported as it is, with 1-D convolutions."""
    import onnxruntime as ort

    path = f"{tmp}/hifigan-1d.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(vocoder.generator, (torch.zeros(1, 80, 100),), path, input_names=["mel"],
                          output_names=["wav"], dynamic_axes={"mel": {2: "frames"}, "wav": {2: "samples"}},
                          dynamo=False)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def speed(vocoder, mel: np.ndarray, repeats: int, chunks: list[int]) -> dict[str, float]:
    """RTF of every way of running the generator; prints them with their ratio to ``reference``."""
    seconds = len(mel) * vocoder.hop_length / vocoder.sample_rate
    x = torch.from_numpy(mel).T[None].contiguous()
    ref = reference_generator(vocoder)
    ways = {"reference": lambda: ref(x), "torch": lambda: vocoder.synthesize(mel)}
    torch_out = vocoder.synthesize(mel)
    diffs = {}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            sess = onnx_1d_session(vocoder, tmp)
        except ImportError as exc:
            print(f"onnx rows skipped: {exc}")
        else:
            ways["onnx-1d"] = lambda: sess.run(None, {"mel": x.numpy()})
            diffs["onnx-1d"] = np.abs(sess.run(None, {"mel": x.numpy()})[0][0, 0] - torch_out).max()
            for n in chunks:
                voc = HifiganVocoder(vocoder.generator, vocoder.name, engine="onnx", threads=1, chunk_frames=n)
                ways[f"onnx chunk {n}"] = lambda voc=voc: voc.synthesize(mel)
                diffs[f"onnx chunk {n}"] = np.abs(voc.synthesize(mel) - torch_out).max()
        times: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(repeats):
            for name, fn in ways.items():
                times[name].append(cpu_seconds(fn))
    out = {name: statistics.median(t) / seconds for name, t in times.items()}
    for name, value in out.items():
        diff = f", max |diff| to torch {diffs[name]:.1e}" if name in diffs else ""
        print(f"RTF {name:15s} {value:.3f}  ({out['reference'] / value:.2f}x reference, "
              f"{out['torch'] / value:.2f}x torch{diff})", flush=True)
    return out


def quality(vocoders: dict) -> None:
    """Copy-synthesis WER (two recognisers) and GE2E cosine to the original, for each ``{engine: vocoder}``."""
    from voxanon.metrics.wer import wer
    from voxanon.models.asr import load_asr
    from voxanon.models.speaker import load_encoder

    refs = dict(line.split(" ", 1) for line in (CLIPS / "text").read_text().splitlines() if line.strip())
    origs = [resample(*sf.read(CLIPS / f"{utt}.flac", dtype="float32"), 16000) for utt in refs]
    sets = {"original": origs}
    for engine, voc in vocoders.items():
        sets[f"copy {engine}"] = [resample(voc.synthesize(voc.analyze(wav, 16000)), voc.sample_rate, 16000)[: len(wav)]
                                  for wav in origs]
    for spec in ("whisper-tiny", "pocketsphinx"):
        asr = load_asr(spec)
        for label, wavs in sets.items():
            hyps = asr.transcribe(wavs, 16000)
            print(f"WER {spec:13s} {label:15s} {wer(list(refs.values()), hyps).wer:5.1f} %")
    enc = load_encoder("ge2e")
    a = enc.embed(origs, 16000)
    for label, wavs in list(sets.items())[1:]:
        b = enc.embed(wavs, 16000)
        cos = np.sum(a * b, 1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        print(f"GE2E cosine {label} vs original: mean {cos.mean():.3f} (min {cos.min():.3f}, n={len(cos)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--seconds", type=float, default=0.0, help="use only the first SECONDS of speech (0: all)")
    ap.add_argument("--chunks", default="256,512,1024", help="chunk lengths (frames) of the onnx engine rows")
    args = ap.parse_args()
    torch.set_num_threads(1)
    vocoder = load_vocoder("hifigan-universal", engine="torch")
    wav = np.concatenate([sf.read(p, dtype="float32")[0] for p in sorted(CLIPS.glob("*.flac"))])
    if args.seconds:
        wav = wav[: int(args.seconds * 16000)]
    mel = vocoder.analyze(wav, 16000)
    print(f"{len(mel) * vocoder.hop_length / vocoder.sample_rate:.1f} s of speech, 1 thread, "
          f"median of {args.repeats}, CPU time; load average {os.getloadavg()[0]:.2f}", flush=True)
    if not args.no_speed:
        speed(vocoder, mel, args.repeats, [int(n) for n in args.chunks.split(",")])
        print(f"load average {os.getloadavg()[0]:.2f}")
    if not args.no_quality:
        quality({"torch": vocoder, "onnx": load_vocoder("hifigan-universal", engine="onnx", threads=1)})


if __name__ == "__main__":
    main()
