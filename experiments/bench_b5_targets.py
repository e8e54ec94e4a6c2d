"""How many words does `b5` keep in each of its target voices?

`b5` (and `b6`) speak each utterance in one of the acoustic model's training speakers, drawn per utterance.
Those speakers are not alike: most are Kokoro voices with hundreds of sentences each, some are real recorded
voices with a few dozen short clips (letter names, clock words), which the decoder learnt from but has heard
little of. This script converts the same utterances into every target voice and transcribes them, so the
words each voice keeps can be compared (Whisper tiny.en and pocketsphinx WER per target, against the
originals').

    python experiments/bench_b5_targets.py DATA_DIR --out OUT [--model b5] [--utterances 12] [--jobs 2]

``DATA_DIR`` is a Kaldi-style directory with transcripts (one or several); ``--utterances`` of each, evenly
spread over its sorted ids, are used. Give held-out speech, e.g. a corpus's ``dev_trials_f`` and ``dev_trials_m``,
not the speech the choice will be scored on.
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from voxanon.anonymizers.asrbn import B5
from voxanon.audio.io import load_audio, resample
from voxanon.data.kaldi import read_data_dir
from voxanon.metrics.text import default_normalization
from voxanon.metrics.wer import wer
from voxanon.models.asr import load_asr

_B5: B5 | None = None


def _convert(job: tuple[str, str, int]) -> np.ndarray:
    """One utterance (``model``, audio entry, target) converted at 16 kHz."""
    global _B5
    model, entry, target = job
    if _B5 is None:
        _B5 = B5(model=model, threads=1)
    wav, sr = load_audio(entry)
    return resample(_B5.convert(wav, sr, target), sr, 16000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--model", default="b5")
    ap.add_argument("--utterances", type=int, default=12, help="utterances per directory")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()

    entries, refs = [], []
    for d in args.data:
        data = read_data_dir(d)
        utts = sorted(data.wav_scp)
        for utt in utts[:: max(1, len(utts) // args.utterances)][: args.utterances]:
            entries.append(data.wav_scp[utt])
            refs.append(data.text[utt])
    model = B5(model=args.model).acoustic()
    speakers = model.meta.get("speakers") or [str(i) for i in range(model.n_speakers)]
    jobs = [(args.model, e, t) for t in range(model.n_speakers) for e in entries]
    with ProcessPoolExecutor(args.jobs) as pool:
        outs = list(pool.map(_convert, jobs, chunksize=4))

    norm = default_normalization("en")
    originals = [resample(*load_audio(e), 16000) for e in entries]
    result, n = {"utterances": len(entries), "original": {}, "targets": {name: {} for name in speakers}}, len(entries)
    for asr_name in ("whisper-tiny", "pocketsphinx"):
        asr = load_asr(asr_name)
        result["original"][asr_name] = round(wer(refs, asr.transcribe(originals, 16000), norm).wer, 2)
        for t, name in enumerate(speakers):
            hyps = asr.transcribe(outs[t * n:(t + 1) * n], 16000)
            result["targets"][name][asr_name] = round(wer(refs, hyps, norm).wer, 2)
    print(f"original: {result['original']}")
    for t, (name, row) in enumerate(result["targets"].items()):
        print(f"{t:3d} {name:60s} {row['whisper-tiny']:6.2f} {row['pocketsphinx']:6.2f}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
