"""HiFi-GAN universal on one CPU core: speed of three ways to run it, and copy-synthesis quality.

Speed (real-time factor = CPU seconds of the process per second of audio,
median of ``--repeats`` runs on the same mel input, one thread: CPU time, not
wall time, so that other load on a shared machine does not inflate it), all in
the same run:

- ``reference``: the generator as the reference code runs it (weight-norm
  parametrisations recomputed on every call, autograd on);
- ``voxanon``: weight norm folded at load time, ``torch.inference_mode``, chunked;
- ``onnxruntime``: the folded generator exported to ONNX (dynamic length), one thread.

Quality (on the real LibriVox clips in tests/data/librivox): WER of the
original and of the copy-synthesis (analyze -> synthesize) with Whisper tiny.en
and pocketsphinx, and GE2E cosine similarity of the copy to the original.

Usage: ``python benchmarks/bench_vocoder.py [--repeats 3] [--seconds S] [--no-quality] [--no-speed]``
"""

from __future__ import annotations

import argparse
import copy
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf
import torch

from voxanon.audio.io import resample
from voxanon.models.vocoder import load_vocoder

CLIPS = Path(__file__).resolve().parent.parent / "tests" / "data" / "librivox"


def rtf(fn, seconds: float, repeats: int) -> float:
    """Median process CPU seconds per audio second of ``fn()``."""
    times = []
    for _ in range(repeats):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return statistics.median(times) / seconds


def reference_generator(vocoder):
    """The folded generator with weight norm put back as parametrisations (the unfused reference)."""
    gen = copy.deepcopy(vocoder.generator).requires_grad_(True)
    for m in gen.modules():
        if isinstance(m, (torch.nn.Conv1d, torch.nn.ConvTranspose1d)):
            torch.nn.utils.parametrizations.weight_norm(m)
    return gen


def onnx_session(vocoder, tmp: str):
    import onnxruntime as ort

    path = f"{tmp}/hifigan.onnx"
    torch.onnx.export(vocoder.generator, (torch.zeros(1, 80, 100),), path, input_names=["mel"],
                      output_names=["wav"], dynamic_axes={"mel": {2: "frames"}, "wav": {2: "samples"}},
                      dynamo=False)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def speed(vocoder, mel: np.ndarray, repeats: int) -> dict[str, float]:
    seconds = len(mel) * vocoder.hop_length / vocoder.sample_rate
    x = torch.from_numpy(mel).T[None].contiguous()
    ref = reference_generator(vocoder)
    out = {"reference": rtf(lambda: ref(x), seconds, repeats),
           "voxanon": rtf(lambda: vocoder.synthesize(mel), seconds, repeats)}
    for name, value in out.items():
        print(f"RTF {name:12s} {value:.3f}  ({out['reference'] / value:.2f}x reference)", flush=True)
    try:
        import onnx  # noqa: F401 - torch's exporter needs it
    except ImportError:
        print("RTF onnxruntime  skipped: the ONNX export needs `pip install onnx`")
        return out
    with tempfile.TemporaryDirectory() as tmp:
        sess = onnx_session(vocoder, tmp)
        out["onnxruntime"] = rtf(lambda: sess.run(None, {"mel": x.numpy()}), seconds, repeats)
        diff = np.abs(sess.run(None, {"mel": x.numpy()})[0][0, 0] - vocoder.synthesize(mel)).max()
    print(f"RTF onnxruntime  {out['onnxruntime']:.3f}  ({out['reference'] / out['onnxruntime']:.2f}x reference, "
          f"max |diff| to torch {diff:.1e})")
    return out


def quality(vocoder) -> None:
    from voxanon.metrics.wer import wer
    from voxanon.models.asr import load_asr
    from voxanon.models.speaker import load_encoder

    refs = dict(line.split(" ", 1) for line in (CLIPS / "text").read_text().splitlines() if line.strip())
    origs, copies = [], []
    for utt in refs:
        wav, sr = sf.read(CLIPS / f"{utt}.flac", dtype="float32")
        wav = resample(wav, sr, 16000)
        copies.append(resample(vocoder.synthesize(vocoder.analyze(wav, 16000)), vocoder.sample_rate, 16000)[: len(wav)])
        origs.append(wav)
    for spec in ("whisper-tiny", "pocketsphinx"):
        asr = load_asr(spec)
        for label, wavs in (("original", origs), ("copy-synthesis", copies)):
            hyps = asr.transcribe(wavs, 16000)
            print(f"WER {spec:13s} {label:15s} {wer(list(refs.values()), hyps).wer:5.1f} %")
    enc = load_encoder("ge2e")
    a, b = enc.embed(origs, 16000), enc.embed(copies, 16000)
    cos = np.sum(a * b, 1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    print(f"GE2E cosine copy vs original: mean {cos.mean():.3f} (min {cos.min():.3f}, n={len(cos)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--seconds", type=float, default=0.0, help="use only the first SECONDS of speech (0: all)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    vocoder = load_vocoder("hifigan-universal")
    wav = np.concatenate([sf.read(p, dtype="float32")[0] for p in sorted(CLIPS.glob("*.flac"))])
    if args.seconds:
        wav = wav[: int(args.seconds * 16000)]
    mel = vocoder.analyze(wav, 16000)
    print(f"{len(mel) * vocoder.hop_length / vocoder.sample_rate:.1f} s of speech, 1 thread, "
          f"median of {args.repeats}, CPU time")
    if not args.no_speed:
        speed(vocoder, mel, args.repeats)
    if not args.no_quality:
        quality(vocoder)


if __name__ == "__main__":
    main()
