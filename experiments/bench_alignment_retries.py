"""How many utterances does the phone aligner's retry at a higher frame rate rescue, and how close are its phones?

pocketsphinx finds no phone path through some fast speech at its model's 100 frames a second;
:class:`voxanon.models.asr.alignment.PhoneAligner` then aligns it again at the rates of ``RETRY_FRAME_RATES``.
This aligns every utterance of the data directories at 100 frames a second and, for those that fail, at each retry
rate (rescued: by any); for every ``--every``-th of those that succeed it compares the phone of each 86 Hz frame
(the vocoder's rate the bottleneck is trained at) at each retry rate with the phone at 100.

    python experiments/bench_alignment_retries.py DATA_DIR... [--every 25]
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from voxanon.audio.io import load_audio, resample, to_pcm16
from voxanon.models.asr.alignment import (
    RETRY_FRAME_RATES,
    PhoneAligner,
    align_pcm,
    frame_labels,
)
from voxanon.models.asr.base import AsrError
from voxanon.models.asr.sphinx import new_decoder
from voxanon.training.bottleneck import read_todo

FRAME_RATE = 22050 / 256


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data_dirs", nargs="+")
    ap.add_argument("--every", type=int, default=25, help="compare every N-th utterance aligned at 100")
    args = ap.parse_args()
    words_of = PhoneAligner()
    decoders = {rate: new_decoder(frate=rate) for rate in (100, *RETRY_FRAME_RATES)}
    todo, texts = read_todo(args.data_dirs)

    def labels(rate: int, pcm: bytes, words: str, n: int) -> np.ndarray | None:
        try:
            return frame_labels(align_pcm(decoders[rate], pcm, words), n, FRAME_RATE)
        except RuntimeError:
            return None

    failed, rescued_any, ok = 0, 0, 0
    rescued, agreement = {r: 0 for r in RETRY_FRAME_RATES}, {r: [] for r in RETRY_FRAME_RATES}
    for utt, _, entry in todo:
        try:
            words = " ".join(words_of.words(texts[utt]))
        except AsrError:
            continue
        wav, sr = load_audio(entry, allow_silent=False)
        pcm = to_pcm16(resample(np.asarray(wav, np.float32), sr, 16000)).tobytes()
        n = int(len(wav) / sr * FRAME_RATE)
        reference = labels(100, pcm, words, n)
        if reference is not None:
            if ok % args.every == 0:
                for rate in RETRY_FRAME_RATES:
                    if (other := labels(rate, pcm, words, n)) is not None:
                        agreement[rate].append(float((other == reference).mean()))
            ok += 1
            continue
        failed += 1
        found = [rate for rate in RETRY_FRAME_RATES if labels(rate, pcm, words, n) is not None]
        for rate in found:
            rescued[rate] += 1
        rescued_any += bool(found)
    print(json.dumps({"utterances": len(todo), "failed_at_100": failed, "rescued_by_rate": rescued,
                      "rescued": rescued_any,
                      "same_phone_share": {r: round(float(np.mean(a)), 3) for r, a in agreement.items() if a},
                      "compared": {r: len(a) for r, a in agreement.items()}}, indent=1))


if __name__ == "__main__":
    main()
