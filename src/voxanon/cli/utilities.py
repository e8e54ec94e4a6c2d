"""The utilities: ``voxanon list`` (every registered anonymizer with its parameters and defaults) and ``voxanon
perf`` (real-time factor and peak memory of every anonymizer and evaluation model)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from voxanon.errors import ConfigError

PERF_DESCRIPTION = """\
Time every registered anonymizer (or --methods) and the evaluation models
(encoder:ge2e, asr:whisper-tiny) on generated speech-like inputs, each in a
fresh single-threaded process: a warm-up call, then --repeats calls per
duration; report the median real-time factor (wall s / audio s) and the peak
resident memory. Models are also measured on CUDA when a GPU is present.
Longer durations are skipped once a target would exceed --budget seconds.

Then measure the throughput of `voxanon anonymize` on a small generated corpus
with 1 and 2 local jobs and the Ray backend with 2 workers (if Ray is
installed), as ratios to the 1-job run.

--quick: durations 1 and 2 s, 1 repeat, 10 s budget, 4 utterances of 1 s.
"""


def list_streaming(available: dict) -> int:
    """One line per anonymizer: its algorithmic latency when it streams, else why it cannot."""
    width = max(map(len, available))
    for name, cls in available.items():
        if not cls.streams():
            print(f"{name:<{width}}  offline only: {cls.stream_limit}")
            continue
        rate = cls.sample_rate or 16000
        session = cls().open_stream(rate, 0, "list")
        print(f"{name:<{width}}  streams: {session.latency_ms:.1f} ms algorithmic latency at {rate} Hz "
              "(default parameters)")
    return 0


def list_anonymizers(args: argparse.Namespace) -> int:
    from voxanon.anonymizers.base import describe_config
    from voxanon.anonymizers.registry import available, broken

    if args.streaming:
        return list_streaming(available())
    for name, cls in available().items():
        flags = [f"rate {cls.sample_rate} Hz" if cls.sample_rate else "any rate"]
        flags.append("needs model" if cls.needs_model else "no model")
        if cls.streams():
            flags.append("streams")
        if not cls.offline:
            flags.append("needs weights not available offline")
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        print(f"{name}  ({', '.join(flags)})\n    {doc}")
        for pname, ptype, default, help_text, valid in describe_config(cls.Config):
            bounds = f" (valid: {valid})" if valid is not None else ""
            print(f"    --param {pname}={default!r:<12} [{ptype}] {help_text}{bounds}")
        print()
    for name, why in broken().items():
        print(f"{name}  (FAILED TO LOAD: {why})\n")
    return 0


def perf(args: argparse.Namespace) -> int:
    from voxanon.jobs.perf import (
        DEFAULT_DURATIONS,
        MEMORY_DURATIONS,
        default_targets,
        format_table,
        run_perf,
    )

    quick = args.quick
    durations = args.durations or ([1.0, 2.0] if quick else
                                   list(MEMORY_DURATIONS if args.memory else DEFAULT_DURATIONS))
    repeats = args.repeats or (1 if quick or args.memory else 3)
    budget = args.budget or (10.0 if quick else float("inf") if args.memory else 120.0)
    scaling_args = None if args.no_scaling else {
        "method": args.scaling_method, "utterances": 4 if quick else args.scaling_utterances,
        "seconds": 1.0 if quick else 5.0, "ray_workers": 0 if args.no_ray else 2}
    log = (lambda line: None) if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    try:
        report = run_perf(args.methods or default_targets(), durations, repeats, devices=args.devices,
                          budget_s=budget, scaling_args=scaling_args, speech=args.speech, log=log)
    except (KeyError, ValueError) as exc:  # an unknown target or a bad setting
        raise ConfigError(exc.args[0] if exc.args else str(exc)) from None
    report["argv"] = sys.argv
    print(format_table(report))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


def _add_durations(p: argparse.ArgumentParser) -> None:
    from voxanon.jobs.perf import DEFAULT_DURATIONS

    p.add_argument("--durations", type=float, nargs="+", metavar="S", help="input durations in seconds "
                   f"(default {' '.join(f'{d:g}' for d in DEFAULT_DURATIONS)})")


def register(commands) -> None:
    p = commands.top.add_parser("list", help="list anonymizers with their parameters")
    p.add_argument("--streaming", action="store_true",
                   help="one line per anonymizer: its latency when it streams (voxanon stream, voxanon serve), "
                        "else why it cannot")
    p.set_defaults(handler=list_anonymizers)

    p = commands.top.add_parser("perf", help="real-time factor and memory of anonymizers and models",
                                description=PERF_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.defer(_add_durations)
    p.add_argument("--repeats", type=int, metavar="N", help="timed calls per duration (default 3)")
    p.add_argument("--methods", nargs="+", metavar="NAME",
                   help="anonymizer names, encoder:ge2e, asr:whisper-tiny (default: all)")
    p.add_argument("--devices", nargs="+", metavar="DEV", help="default: cpu, and cuda when present")
    p.add_argument("--budget", type=float, metavar="S", help="seconds of timed calls per target (default 120)")
    p.add_argument("--scaling-method", default="world", metavar="NAME", help="method of the scaling runs")
    p.add_argument("--scaling-utterances", type=int, default=24, metavar="N",
                   help="utterances of 5 s in the scaling corpus (default 24)")
    p.add_argument("--no-scaling", action="store_true", help="skip the runner scaling runs")
    p.add_argument("--no-ray", action="store_true", help="skip the Ray backend in the scaling runs")
    p.add_argument("--quick", action="store_true", help="tiny settings for a smoke test")
    p.add_argument("--memory", action="store_true",
                   help="peak memory at 10 s, 60 s, 10 min and 1 h: one call each, no time budget")
    p.add_argument("--speech", metavar="WAV", help="measure on this recording, repeated to each duration, instead "
                   "of generated speech-like noise (the cascade recognises no words in noise)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--out", metavar="PERF.json", help="write the full report as JSON")
    p.set_defaults(handler=perf)
