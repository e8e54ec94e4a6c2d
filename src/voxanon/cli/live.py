"""``voxanon stream`` and ``voxanon serve``: anonymize speech while it is spoken."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from voxanon.cli.anonymize import method_params
from voxanon.errors import ConfigError

STREAM_DESCRIPTION = """\
Anonymize INPUT chunk by chunk with a streaming method (see `voxanon list`;
mcadams streams) and write each chunk's output as soon as it is final.

INPUT is an audio file, played in real time (--fast: as fast as it goes), - for
raw mono PCM on stdin (--rate, --format), taken as a live source, or a sound
device: `device` (the default microphone) or `device:NAME` (a name or index as
--devices lists them), captured until Ctrl-C or for --seconds. OUTPUT is a
16-bit WAV file, - for raw PCM on stdout (--format), or `device[:NAME]` to play
it (headphones: a speaker feeds the microphone). The pseudo-speaker is
the one `voxanon anonymize` draws for the same --seed and utterance id (--key;
default: the file's name without its extension). The stream omits what needs
the whole utterance (mcadams: the final peak normalisation). At the end it
prints the latency it achieved: algorithmic (look-ahead), compute per chunk
(p50/p95/p99), real-time factor and, for a live source, end to end.
"""

SERVE_DESCRIPTION = """\
Serve a web page that anonymizes the microphone live: open http://HOST:PORT/ in
a browser, press Start, speak (with headphones). The page streams the
microphone over a WebSocket (/ws; the protocol is in voxanon.jobs.live.server),
plays the anonymized voice back and shows the latency. Several sessions run at
once, up to --max-sessions; a client that sends malformed frames gets one error
message and its session ends, the others go on. Each session gets its own
pseudo-speaker from --seed (default: a random one per start) and its session
key. Binds to 127.0.0.1 unless --host says otherwise; browsers allow the
microphone only on localhost or over HTTPS (put a TLS proxy in front to serve
other machines). Needs the live extra (pip install 'voxanon[live]').
"""


def _add_method(p: argparse.ArgumentParser) -> None:
    p.add_argument("--method", default="mcadams", help="streaming anonymizer (default mcadams)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="anonymizer parameter (repeatable)")
    p.add_argument("--config", metavar="PARAMS.json", help="JSON object of anonymizer parameters")


def _anonymizer(args: argparse.Namespace):
    from voxanon.anonymizers.registry import build

    try:
        anonymizer = build(args.method, method_params(args))
    except (KeyError, ValueError) as exc:  # unknown method or bad parameter
        raise ConfigError(exc.args[0] if exc.args else str(exc)) from None
    anonymizer.require_streaming()
    return anonymizer


def _chunk(args: argparse.Namespace, session) -> int:
    if not args.chunk_ms > 0:
        raise ConfigError(f"--chunk-ms must be above 0, got {args.chunk_ms}")
    return max(1, round(args.chunk_ms * session.sample_rate / 1000))


def _device_name(spec: str) -> str | None:
    """The device named by INPUT/OUTPUT ``device`` ('' = default) or ``device:NAME``; None for a path or -."""
    if spec == "device":
        return ""
    return spec.removeprefix("device:") if spec.startswith("device:") else None


def run_stream(args: argparse.Namespace) -> int:
    from voxanon.audio.io import load_audio, resample
    from voxanon.jobs.live.session import TimedSession
    from voxanon.jobs.live.stream import PcmSink, WavSink, file_chunks, pcm_chunks, run_stream

    if args.devices:
        from voxanon.jobs.live.device import list_devices

        print("\n".join(list_devices()) or "no sound devices")
        return 0
    if args.input is None or args.output is None:
        raise ConfigError("voxanon stream needs INPUT and OUTPUT (or --devices to list the sound devices)")
    anonymizer = _anonymizer(args)
    mic, speaker = _device_name(args.input), _device_name(args.output)
    key = args.key or ("stdin" if args.input == "-" else "device" if mic is not None else Path(args.input).stem)
    if mic is not None:
        from voxanon.jobs.live.device import device_chunks

        if args.seconds is not None and not args.seconds > 0:
            raise ConfigError(f"--seconds must be above 0, got {args.seconds}")
        session = TimedSession.open(anonymizer, anonymizer.sample_rate or args.rate or 16000, args.seed, key)
        chunks = device_chunks(mic, session.sample_rate, _chunk(args, session), args.seconds)
    elif args.input == "-":
        if args.rate is None:
            raise ConfigError("raw PCM on stdin needs --rate (its sample rate in Hz)")
        session = TimedSession.open(anonymizer, args.rate, args.seed, key)
        chunks = pcm_chunks(sys.stdin.buffer, args.format, _chunk(args, session))
    else:
        wav, sr = load_audio(args.input)
        rate = anonymizer.sample_rate or sr
        session = TimedSession.open(anonymizer, rate, args.seed, key)
        chunks = file_chunks(resample(wav, sr, rate), rate, _chunk(args, session), realtime=not args.fast)
    if speaker is not None:
        from voxanon.jobs.live.device import DeviceSink

        sink = DeviceSink(speaker, session.sample_rate)
    elif args.output == "-":
        sink = PcmSink(sys.stdout.buffer, args.format)
    else:
        sink = WavSink(Path(args.output), session.sample_rate)
    try:
        report = run_stream(session, chunks, sink, live=args.input == "-" or mic is not None or not args.fast)
    finally:
        sink.close()
    if not args.quiet:
        for line in report.lines():
            print(line, file=sys.stderr)
    return 0


def run_serve(args: argparse.Namespace) -> int:
    anonymizer = _anonymizer(args)
    try:
        from voxanon.jobs.live.server import LiveServer, serve
    except ImportError as exc:
        raise ConfigError(f"voxanon serve needs aiohttp ({exc}); install the live extra: "
                          "pip install 'voxanon[live]'") from None
    if args.max_sessions < 1 or args.max_frame_seconds <= 0:
        raise ConfigError("--max-sessions must be at least 1 and --max-frame-seconds above 0")
    server = LiveServer(anonymizer, max_sessions=args.max_sessions, max_frame_seconds=args.max_frame_seconds,
                        quiet=args.quiet, **({} if args.seed is None else {"seed": args.seed}))
    serve(server, args.host, args.port)
    return 0


def register(commands) -> None:
    p = commands.top.add_parser("stream", help="anonymize a file or stdin chunk by chunk, live",
                                description=STREAM_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_method(p)
    p.add_argument("--seed", type=int, default=0, help="global seed of the per-utterance RNG (default 0)")
    p.add_argument("--key", help="utterance id that names the pseudo-speaker (default: the input's stem, or stdin)")
    p.add_argument("--chunk-ms", type=float, default=20.0, help="chunk length in ms (default 20)")
    p.add_argument("--fast", action="store_true", help="process a file as fast as possible, not in real time")
    p.add_argument("--rate", type=int, help="sample rate of raw PCM on stdin, or of a sound device (Hz; "
                   "default for a device: the method's rate, else 16000)")
    p.add_argument("--seconds", type=float, help="capture this long from a sound device (default: until Ctrl-C)")
    p.add_argument("--devices", action="store_true", help="list the sound devices and exit")
    p.add_argument("--format", choices=("s16", "f32"), default="s16",
                   help="raw PCM sample format on stdin/stdout, little-endian mono (default s16)")
    p.add_argument("--quiet", action="store_true", help="no latency report")
    p.add_argument("input", metavar="INPUT", nargs="?",
                   help="audio file, - for raw PCM on stdin, or device[:NAME] for a microphone")
    p.add_argument("output", metavar="OUTPUT", nargs="?",
                   help="WAV file, - for raw PCM on stdout, or device[:NAME] to play it")
    p.set_defaults(handler=run_stream)

    p = commands.top.add_parser("serve", help="serve a web page that anonymizes the microphone live",
                                description=SERVE_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_method(p)
    p.add_argument("--seed", type=int, help="global seed of the per-session RNGs (default: random per start)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    p.add_argument("--max-sessions", type=int, default=8, help="sessions at once; more are refused (default 8)")
    p.add_argument("--max-frame-seconds", type=float, default=1.0,
                   help="longest audio frame a client may send, bounding memory per session (default 1)")
    p.add_argument("--quiet", action="store_true", help="no log of sessions")
    p.set_defaults(handler=run_serve)
