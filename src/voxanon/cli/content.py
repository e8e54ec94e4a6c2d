"""``voxanon evaluate content-privacy``: content-based re-identification (C-EER) from transcripts."""

from __future__ import annotations

import argparse

from voxanon.cli.privacy import (
    _ERRORS,
    _as_error,
    _device,
    format_privacy_table,
    write_json,
)
from voxanon.ranges import Range


def run_content(args: argparse.Namespace) -> int:
    from voxanon.evaluation.content_privacy import (
        REFERENCE,
        asr_transcriber,
        evaluate_content_privacy,
        reference_transcripts,
    )
    from voxanon.evaluation.results import to_dict

    try:
        if args.transcripts == REFERENCE:
            transcripts, source = reference_transcripts, REFERENCE
        else:
            from voxanon.models.asr import load_asr

            asr = load_asr(args.transcripts, device=_device(args.device))
            transcripts, source = asr_transcriber(asr, args.asr_cache, quiet=args.quiet), asr.name
        result = evaluate_content_privacy(args.train, args.enroll, args.trials, transcripts, source,
                                          encoder=args.encoder, n_boot=args.n_boot, seed=args.seed)
    except _ERRORS as exc:
        raise _as_error(exc) from None
    if args.out:
        write_json(args.out, to_dict(result))
    print(format_privacy_table({f"C-EER ({source})": result}))
    print(f"text encoder trained on {result.n_train} transcripts of {result.train}; {result.n_empty} empty "
          "transcript(s) kept")
    if result.missing:
        first, why = next(iter(result.missing.items()))
        print(f"left out for lack of a transcript: {len(result.missing)} (first: {first}: {why})")
    if args.out:
        print(f"results written to {args.out}")
    return 0


def _encoder_option(p: argparse.ArgumentParser) -> None:
    from voxanon.models.text_speaker import KINDS

    p.add_argument("--encoder", choices=KINDS, default=KINDS[0], help="text speaker encoder trained on --train")


def register(commands) -> None:
    p = commands.evaluate.add_parser(
        "content-privacy", help="content-based re-identification: C-EER of a text speaker encoder on transcripts")
    p.add_argument("--train", required=True, help="training data dir whose transcripts train the text encoder")
    p.add_argument("--enroll", required=True, help="enrollment data dir (e.g. anonymized libri_test_enrolls)")
    p.add_argument("--trials", required=True, nargs="+", help="trial data dirs (trials_f, trials_m)")
    p.add_argument("--transcripts", default="reference",
                   help="'reference': the text files (oracle transcripts); or an ASR backend run on the audio: "
                        "whisper-tiny, pocketsphinx, wav2vec2:<dir>")
    p.defer(_encoder_option)
    p.add_argument("--asr-cache", default=".voxanon-cache/asr", help="ASR hypothesis cache directory")
    p.add_argument("--out", help="write the result (JSON) here")
    p.add_argument("--n-boot", type=Range(1).option(int), default=1000,
                   help="bootstrap replicates of the EER interval (>= 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="ASR device: cpu, cuda or auto")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(handler=run_content)
