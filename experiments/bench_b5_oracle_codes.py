"""How many of the words would `b5` keep if its codes named every frame's phone right?

`b5` resynthesises speech from 48 codes of a bottleneck learnt to name each frame's phone (``voxanon train
bottleneck --targets phones``). On real speech the codes name the wrong phone on about 3 frames in 10. This
study separates what those wrong codes cost from what the decoder and vocoder cost: each utterance with a
transcript that pocketsphinx can align is converted twice by the same `b5` model, to the same target speaker,
once from its own codes and once from *oracle* codes, where each frame gets the codeword the recogniser's phone
head scores highest for the frame's aligned phone. Both are transcribed by the real-speech benchmark's
recognisers. If the oracle codes keep the words, better codes are the lever; if they do not, the decoder is.

    python experiments/bench_b5_oracle_codes.py DATA_DIR --recogniser BOTTLENECK_MODEL --out OUT \\
        [--model b5] [--alignments ALIGNMENTS_JSON]

``DATA_DIR`` is a Kaldi-style directory with transcripts (e.g. the real-speech benchmark's ``data``);
``BOTTLENECK_MODEL`` the ``voxanon train bottleneck --targets phones`` model whose codebook the `b5` model
quantises with (the script checks they match).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import soundfile as sf
import torch

from voxanon.anonymizers.asrbn import B5
from voxanon.audio.io import load_audio
from voxanon.data.debian_clips import WIDEBAND
from voxanon.data.kaldi import read_data_dir
from voxanon.metrics.text import default_normalization
from voxanon.metrics.wer import wer
from voxanon.models.asr import load_asr
from voxanon.models.asr.alignment import PHONES, frame_labels
from voxanon.models.asr.bottleneck import load_recogniser
from voxanon.training.phone_targets import align_utterances

RATE, HOP = 22050, 256  # the acoustic model's frame rate


def phone_codes(recogniser_path: str) -> tuple[np.ndarray, np.ndarray, torch.Tensor]:
    """For each phone, the codeword the phone head scores highest for it; for each codeword, the phone the head
    names; and the recogniser's codebook."""
    net, _ = load_recogniser(recogniser_path)
    if net.cfg.targets != "phones":
        raise SystemExit(f"{recogniser_path}: a bottleneck learnt on frame phones is needed (--targets phones)")
    with torch.no_grad():
        log_probs = torch.log_softmax(net.head.out(net.codebook), dim=-1)  # (codes, phones)
    return log_probs.argmax(0).numpy(), log_probs.argmax(1).numpy(), net.codebook.detach()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--recogniser", required=True, help="the bottleneck model (voxanon train bottleneck)")
    ap.add_argument("--model", default="b5", help="the b5 acoustic model (shipped name or model.pt)")
    ap.add_argument("--alignments", type=Path, help="alignment cache (JSON; written if missing)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    args.out.mkdir(parents=True, exist_ok=True)
    data = read_data_dir(args.data)
    todo = [(u, data.utt2spk[u], e) for u, e in sorted(data.wav_scp.items())]
    segments, left_out = align_utterances(todo, data.text, args.alignments or args.out / "alignments.json")
    code_of_phone, phone_of_code, book = phone_codes(args.recogniser)

    b5 = B5(model=args.model)
    model = b5.acoustic()
    vq = model.net.vq
    if vq is None or vq.codebook.shape != book.shape or not torch.allclose(vq.codebook, book, atol=1e-3):
        raise SystemExit(f"{args.model}: its codebook is not the recogniser's")
    predicted_codes = vq.codes

    utts = [u for u, _, _ in todo if u in segments]
    wavs, frame_error, n_frames = {"original": [], "predicted": [], "oracle": []}, 0, 0
    for i, (utt, _, entry) in enumerate(t for t in todo if t[0] in segments):
        wav, sr = load_audio(entry)
        speaker = i % model.n_speakers
        wavs["original"].append((wav, sr))
        vq.codes = predicted_codes
        wavs["predicted"].append((b5.convert(wav, sr, speaker), sr))
        seen = {}

        def oracle(x: torch.Tensor, utt=utt, seen=seen) -> torch.Tensor:
            labels = frame_labels(segments[utt], x.shape[1], RATE / HOP)
            seen["labels"], seen["codes"] = labels, predicted_codes(x)[0].numpy()
            return torch.as_tensor(code_of_phone[labels])[None]

        vq.codes = oracle
        wavs["oracle"].append((b5.convert(wav, sr, speaker), sr))
        frame_error += int((phone_of_code[seen["codes"]] != seen["labels"]).sum())
        n_frames += len(seen["labels"])
        for name in ("predicted", "oracle"):
            sf.write(args.out / f"{utt}.{name}.wav", wavs[name][-1][0], sr)

    refs = [data.text[u] for u in utts]
    norm = default_normalization("en")
    results = {"utterances": len(utts), "left_out": left_out, "phones": len(PHONES),
               "phones_with_a_code_of_their_own": len(set(code_of_phone.tolist())),
               "frame_phone_error_%": round(100 * frame_error / n_frames, 2), "wer": {}}
    wide = [i for i, u in enumerate(utts) if data.utt2spk[u] in WIDEBAND]
    results["utterances_16k"] = len(wide)
    for asr_name in ("whisper-tiny", "pocketsphinx"):
        asr = load_asr(asr_name)
        for name, items in wavs.items():
            hyps = [asr.transcribe([w], sr)[0] for w, sr in items]
            results["wer"][f"{name}_{asr_name}"] = round(wer(refs, hyps, norm).wer, 2)
            results["wer"][f"{name}_{asr_name}_16k"] = round(wer([refs[i] for i in wide], [hyps[i] for i in wide],
                                                                 norm).wer, 2)
    print(json.dumps(results, indent=1))
    (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
