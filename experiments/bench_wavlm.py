"""kNN-VC's WavLM-Large from a unilm-layout ``.pt``: load time and CPU speed of layer 6, on generated weights.

The real ``WavLM-Large.pt`` is not on these machines: this writes a checkpoint
of random weights with the release's keys, cfg and exact sizes (315,453,120
parameters, about 1.26 GB) to a temporary folder, then measures, in one run:

- load: wall and CPU seconds of ``load_content_encoder("wavlm-pt:<file>:6")``
  (``torch.load`` + conversion to transformers ``WavLMModel``);
- speed (one thread, real-time factor = process CPU seconds per audio second,
  median of ``--repeats``) on ``--seconds`` of a real LibriVox clip: all 24
  layers (what ``output_hidden_states`` on the full model costs) against the
  encoder as voxanon runs it (the layers above 6 dropped).

Usage: ``python experiments/bench_wavlm.py [--seconds 10] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the repository root: tests.helpers writes the checkpoint

from tests.helpers.unilm_wavlm_checkpoint import LARGE_CFG, write_checkpoint
from voxanon.audio.io import resample
from voxanon.jobs.perf import cpu_rtf
from voxanon.models.content import load_content_encoder
from voxanon.models.content.hf import HfContent
from voxanon.models.content.unilm import load_unilm_wavlm


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    clip = sorted((ROOT / "tests" / "fixtures" / "librivox").glob("*.flac"))[0]
    wav, sr = sf.read(clip, dtype="float32")
    wav = np.resize(resample(wav, sr, 16000), int(args.seconds * 16000))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "WavLM-Large.pt"
        write_checkpoint(path, LARGE_CFG)
        print(f"checkpoint: {path.stat().st_size / 1e9:.2f} GB (random weights, WavLM-Large keys and shapes)")
        wall, cpu = time.perf_counter(), time.process_time()
        enc = load_content_encoder(f"wavlm-pt:{path}:6")
        print(f"load wavlm-pt:...:6: {time.perf_counter() - wall:.1f} s wall, {time.process_time() - cpu:.1f} s CPU; "
              f"peak RSS so far {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB")
        full = HfContent(load_unilm_wavlm(path), 24, "wavlm-large-all-layers")
    r6 = cpu_rtf(lambda: enc.encode(wav, 16000), args.seconds, args.repeats)
    r24 = cpu_rtf(lambda: full.encode(wav, 16000), args.seconds, args.repeats)
    print(f"{args.seconds:.0f} s of speech, 1 thread, RTF (CPU s / audio s), median of {args.repeats}:")
    print(f"  all 24 layers:            {r24:.3f}")
    print(f"  layer 6 (voxanon, 6 run): {r6:.3f}   ({r24 / r6:.1f}x less CPU)")


if __name__ == "__main__":
    main()
