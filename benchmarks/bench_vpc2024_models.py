"""The VPC 2024 kit's ASR (``exp/asr``) and SER (``exp/ser`` fold) through voxanon: load time and CPU speed.

The real checkpoints are not on these machines: the kit-shaped folders are
generated with random weights (``tests/helpers/vpc_kit_folders.py``: the kit's
file names, hyperparams layout and keys), at the test sizes (``small``) and at
the real sizes (``full``: asr-wav2vec2-librispeech, 317.6 M parameters, 1.27 GB;
an IEMOCAP fold on wav2vec2-base, 94.4 M, 0.38 GB), written to a temporary
folder. Measured in one run, on one CPU thread:

- load: wall seconds of ``load_asr("vpc2024:<exp/asr>")`` / ``load_ser("vpc2024:<fold>")``
  (hyperparams, ``torch.load``, key checks, the files' sha256 for the model name);
- speed: real-time factor (process CPU seconds per audio second, median of
  ``--repeats``) of ``transcribe`` / ``predict_proba`` on one ``--seconds`` long
  speech-like utterance.

Usage: ``python benchmarks/bench_vpc2024_models.py [--sizes small full] [--seconds 10] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from timing import cpu_rtf

from tests.helpers.vpc_kit_folders import (
    BASE,
    LV60,
    SMALL_BASE,
    SMALL_LV60,
    write_asr_folder,
    write_ser_fold,
)
from voxanon.audio.synthetic import speech_like
from voxanon.models.asr.vpc2024 import Vpc2024Asr
from voxanon.models.ser.vpc2024 import Vpc2024Ser

#: generated kit model sizes: (ASR wav2vec2 config, ASR DNN width, SER wav2vec2 config)
SIZES = {"small": (SMALL_LV60, 48, SMALL_BASE), "full": (LV60, 1024, BASE)}


def kit_models(root: Path, size: str) -> tuple[Vpc2024Asr, float, Vpc2024Ser, float]:
    """Write the kit's ``exp/asr`` and one ``exp/ser`` fold at ``size`` under ``root`` and load them (one thread).

    Returns the ASR, its load wall seconds, the SER fold and its load wall seconds.
    """
    asr_cfg, dnn, ser_cfg = SIZES[size]
    write_asr_folder(root / "exp" / "asr", asr_cfg, dnn=dnn)
    write_ser_fold(root / "exp" / "ser" / "fold_1" / "CKPT+1", ser_cfg)
    t0 = time.perf_counter()
    asr = Vpc2024Asr(root / "exp" / "asr", threads=1)
    load_asr = time.perf_counter() - t0
    t0 = time.perf_counter()
    ser = Vpc2024Ser(root / "exp" / "ser" / "fold_1")
    return asr, load_asr, ser, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", choices=("small", "full"), default=["small", "full"])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    wav = speech_like(args.seconds, seed=0)
    print(f"one {args.seconds:g}-s utterance, 1 thread, median of {args.repeats}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            asr, load_asr, ser, load_ser = kit_models(Path(tmp) / size, size)
            n_asr = sum(p.numel() for p in asr.encoder.parameters())
            n_ser = sum(p.numel() for p in ser.lobe.parameters()) + sum(p.numel() for p in ser.mlp.parameters())
            print(f"{size:5s} ASR {n_asr / 1e6:8.3f} M params  load {load_asr:5.1f} s  "
                  f"RTF {cpu_rtf(lambda m=asr: m.transcribe([wav], 16000), args.seconds, args.repeats):.3f}")
            print(f"{size:5s} SER {n_ser / 1e6:8.3f} M params  load {load_ser:5.1f} s  "
                  f"RTF {cpu_rtf(lambda m=ser: m.predict_proba([wav], 16000), args.seconds, args.repeats):.3f}")
            del asr, ser


if __name__ == "__main__":
    main()
