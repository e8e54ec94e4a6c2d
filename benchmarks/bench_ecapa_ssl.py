"""CPU speed of the VPC 2026 ``ecapa_ssl`` attacker at full size (WavLM-Large + the kit's ECAPA variant), random weights.

The real checkpoints are not on these machines: the model is built in memory at the kit's
sizes (WavLM-Large, 315 M parameters, all 24 layers run; ``ECAPA_TDNN_test()``, about 32 M)
with random weights, which cost the same as trained ones. On ``--seconds`` of a real LibriVox
clip, one thread unless ``--threads``, it prints the real-time factor (process CPU seconds
per audio second, median of ``--repeats``) of the whole embedding and of its WavLM part, the
peak memory, and what the RTF projects for ``--audio-hours`` of trial and enrollment audio.

Usage: ``python benchmarks/bench_ecapa_ssl.py [--seconds 10] [--repeats 3] [--threads 1] [--audio-hours 8.6]``
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
import soundfile as sf
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from timing import cpu_rtf

from tests.helpers.asv_ssl_checkpoint import WAVLM_LARGE_CFG
from voxanon.audio.io import resample
from voxanon.models.content.unilm import transformers_config
from voxanon.models.speaker.ecapa import EcapaConfig
from voxanon.models.speaker.ecapa_ssl import (
    EcapaSsl,
    EcapaSslEncoder,
    EcapaTdnnSsl,
    wavlm_layer_outputs,
)


def random_ecapa_ssl(seed: int = 0) -> EcapaSsl:
    """The kit's ``ecapa_ssl`` at full size (WavLM-Large, all 24 layers, + ``ECAPA_TDNN_test()``), random weights."""
    from transformers import WavLMModel

    torch.manual_seed(seed)
    return EcapaSsl(WavLMModel(transformers_config(WAVLM_LARGE_CFG)), EcapaTdnnSsl(EcapaConfig.full(), 24),
                    normalize_waveform=True)


def speech_clip(seconds: float) -> np.ndarray:
    """The first LibriVox test clip at 16 kHz, repeated or cut to ``seconds`` (float32)."""
    clip = sorted((ROOT / "tests" / "fixtures" / "librivox").glob("*.flac"))[0]
    wav, sr = sf.read(clip, dtype="float32")
    return np.resize(resample(wav, sr, 16000), int(seconds * 16000)).astype(np.float32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--audio-hours", type=float, default=8.6,
                    help="audio to project the time of (default: about one pass over LibriSpeech dev+test "
                         "enrollment and trial utterances)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    wall = time.perf_counter()
    model = random_ecapa_ssl()
    enc = EcapaSslEncoder(model, "ecapa-ssl-random")
    n_wavlm = sum(p.numel() for p in model.wavlm.parameters())
    n_ecapa = sum(p.numel() for p in model.ecapa.parameters())
    print(f"built in {time.perf_counter() - wall:.1f} s: WavLM {n_wavlm / 1e6:.1f} M + ECAPA variant "
          f"{n_ecapa / 1e6:.1f} M parameters (random)")
    wav = speech_clip(args.seconds)
    batch = torch.from_numpy(wav)[None]
    lengths = torch.tensor([len(wav)])

    def wavlm_only() -> None:
        with torch.inference_mode():
            layers, _ = wavlm_layer_outputs(model.wavlm, batch, lengths)
            for _ in layers:
                pass

    total = cpu_rtf(lambda: enc.embed([wav], 16000), args.seconds, args.repeats)
    wavlm = cpu_rtf(wavlm_only, args.seconds, args.repeats)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(f"{args.seconds:.0f} s of speech, {args.threads} thread(s), RTF (CPU s / audio s), median of {args.repeats}:")
    print(f"  whole embedding:  {total:.3f}")
    print(f"  WavLM, 24 layers: {wavlm:.3f}  ({wavlm / total:.0%})")
    print(f"peak RSS {rss:.2f} GB")
    hours = args.audio_hours * total
    print(f"{args.audio_hours:g} h of audio: {hours:.1f} CPU hours, {hours / 2:.1f} h on 2 cores, "
          f"{hours / 16:.1f} h on 16 cores (linear scaling assumed)")


if __name__ == "__main__":
    main()
