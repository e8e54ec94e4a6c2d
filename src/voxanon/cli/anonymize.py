"""``voxanon anonymize``: anonymize a data directory or a folder of audio files."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from voxanon.errors import EXIT_OK, EXIT_PARTIAL, ConfigError
from voxanon.jobs.runner.runstate import FAILURES_FILE, LEVELS, RUN_FILE, WARNINGS_FILE

DESCRIPTION = f"""\
Anonymize every utterance of INPUT, a Kaldi data directory (has wav.scp) or a
folder of audio files (searched recursively).

Output folder: OUTPUT itself; with --suffix S, OUTPUT is the parent folder and
the output is OUTPUT/<name of INPUT>S (e.g. `--suffix _mcadams data/libri_dev
data` writes data/libri_dev_mcadams). A data directory gives wav/<utt>.wav
(an id that is no safe file name, e.g. too long, gets a readable prefix plus a
hash), wav.scp (the ids, absolute paths), utt2dur of the outputs and the other
data files copied; a folder is mirrored as <relative path>.wav. The output may
not be, or lie inside, the input; it is checked to be writable before any work.

Rerunning the same command resumes: finished wavs are kept, the rest (and
earlier failures) are redone, and so are outputs whose input changed since
(size, modification time or pipe command). Failed utterances are listed in
{FAILURES_FILE}. A full disk stops the run at once; free space and rerun.
Outputs above full scale go through a peak limiter (--no-limiter: clip them
instead); clipping and truncated WAV inputs are listed per utterance in
{WARNINGS_FILE}. The settings (method, parameters, seed, level, limiter, input,
voxanon version) are kept in {RUN_FILE}; a run with other settings is refused
unless --force, which first deletes all previous outputs.

Exit status: {EXIT_OK} done; {EXIT_PARTIAL} some utterances failed; 2 usage error; 3 bad
input data; 6 the run could not proceed (disk full, output in use, other
settings); 1 a crash (a bug).

--method takes a registered name (see `voxanon list`) or the import path
package.module:Class of an Anonymizer subclass that is not registered.

Conversation mode (--conversation, or any of --rttm, --segments,
--per-channel, --speaker-map, --target-speaker): each input file is a
recording of several speakers. Its speakers are found by the diarizer (or
given by --rttm / --segments, or one per channel with --per-channel) and each
gets a pseudo-speaker of their own, chosen to stay apart from the others;
timing is kept. Beside each output go <utt>.rttm (the turns used) and
<utt>.json (speakers, chosen keys, separation). A stereo file without
--per-channel is mixed down and diarized. See docs/conversations.md.
"""


def method_params(args: argparse.Namespace) -> dict:
    """Parameters from --config (JSON object) overridden by --param k=v."""
    params: dict = {}
    if args.config:
        try:
            params = json.loads(Path(args.config).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"--config {args.config}: {exc}") from None
        if not isinstance(params, dict):
            raise ConfigError(f"--config {args.config}: expected a JSON object of parameters")
    for item in args.param:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--param {item!r}: expected NAME=VALUE")
        params[key] = value
    return params


def _backend(args: argparse.Namespace):
    """The Ray backend when asked for (None: local); its options are errors with the local one."""
    if args.backend == "ray":
        from voxanon.jobs.runner.ray_backend import RayBackend

        return RayBackend(address=args.address, batch_size=args.batch_size, num_gpus=args.gpus_per_worker)
    given = [name for name in ("address", "batch_size", "gpus_per_worker") if getattr(args, name) is not None]
    if given:
        raise ConfigError(f"--{given[0].replace('_', '-')} needs --backend ray")
    return None


def _conversation_mode(args: argparse.Namespace) -> bool:
    return bool(args.conversation or args.rttm or args.segments or args.per_channel or args.speaker_map
                or args.target_speaker or args.num_speakers is not None)


def run(args: argparse.Namespace) -> int:
    from voxanon.anonymizers.registry import build
    from voxanon.jobs.runner.anonymize import (
        anonymize_corpus,
        output_dir_for,
        summary_line,
    )

    backend = _backend(args)
    try:
        anonymizer = build(args.method, method_params(args))
    except (KeyError, ValueError) as exc:  # unknown method or bad parameter
        raise ConfigError(exc.args[0] if exc.args else str(exc)) from None
    if _conversation_mode(args):
        if args.level != "utterance":
            raise ConfigError("--level speaker does not apply to conversations: give --speaker-map for the same "
                              "person to get the same pseudo-speaker across recordings")
        from voxanon.jobs.conversations.method import conversation_method

        anonymizer = conversation_method(anonymizer, args.input, rttm=args.rttm, segments=args.segments,
                                         per_channel=args.per_channel, speaker_map=args.speaker_map,
                                         targets=args.target_speaker, num_speakers=args.num_speakers)
    output = output_dir_for(args.input, args.output, args.suffix)
    summary = anonymize_corpus(args.input, output, anonymizer, seed=args.seed, level=args.level, jobs=args.jobs,
                               force=args.force, quiet=args.quiet, backend=backend, limiter=not args.no_limiter)
    if not args.quiet:
        if backend is not None and backend.stats:
            from voxanon.jobs.runner.ray_backend import worker_table

            print(worker_table(backend.stats, summary.wall_seconds), file=sys.stderr)
        print(summary_line(summary), file=sys.stderr)
    if summary.failed:
        print(f"voxanon anonymize: {summary.failed} utterance(s) failed, see {output / FAILURES_FILE}; "
              "rerun the same command to retry them", file=sys.stderr)
        return EXIT_PARTIAL
    return EXIT_OK


def register(commands) -> None:
    p = commands.top.add_parser("anonymize", help="anonymize a data directory or a folder of audio files",
                                description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--method", required=True, help="anonymizer name or package.module:Class")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="anonymizer parameter (repeatable; overrides --config)")
    p.add_argument("--config", metavar="PARAMS.json", help="JSON object of anonymizer parameters")
    p.add_argument("--seed", type=int, default=0, help="global seed of the per-utterance RNGs (default 0)")
    p.add_argument("--level", choices=LEVELS, default="utterance",
                   help="RNG per utterance (default) or per speaker (needs utt2spk)")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="worker processes (default: all cores; 1 runs in-process); Ray: workers (default: its CPUs)")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local processes (default) or a Ray cluster (see docs/ray.md)")
    p.add_argument("--address", metavar="ADDR", help="Ray cluster: auto or ray://host:port (default: start a local one)")
    p.add_argument("--batch-size", type=int, metavar="N", help="utterances per Ray task")
    p.add_argument("--gpus-per-worker", type=float, metavar="F",
                   help="GPUs per Ray worker for methods that need a model (default 1 if the cluster has GPUs)")
    p.add_argument("--suffix", metavar="S", help="write to OUTPUT/<input name>S instead of OUTPUT")
    p.add_argument("--force", action="store_true", help="replace outputs made with other settings")
    p.add_argument("--no-limiter", action="store_true",
                   help="clip outputs above full scale instead of limiting their peaks (reported either way)")
    p.add_argument("--quiet", action="store_true", help="no progress or summary output")
    conv = p.add_argument_group("conversation mode (see docs/conversations.md)")
    conv.add_argument("--conversation", action="store_true",
                      help="recordings of several speakers: diarize, one pseudo-speaker per speaker")
    conv.add_argument("--rttm", metavar="FILE", help="the speaker turns of the recordings (RTTM) instead of diarizing")
    conv.add_argument("--segments", metavar="FILE",
                      help="the turns as a Kaldi segments file, with the utt2spk beside it naming the speakers")
    conv.add_argument("--per-channel", action="store_true", help="one speaker per channel (call-centre stereo)")
    conv.add_argument("--speaker-map", metavar="FILE",
                      help="'<recording> <speaker> <label>' lines: the same label, the same pseudo-speaker")
    conv.add_argument("--target-speaker", action="append", default=[], metavar="ENROLL.wav",
                      help="anonymize only the speakers matching this enrollment clip (repeatable)")
    conv.add_argument("--num-speakers", type=int, metavar="N", help="the number of speakers, when known (diarizer)")
    p.add_argument("input", metavar="INPUT", help="data directory or folder of audio files")
    p.add_argument("output", metavar="OUTPUT", help="output folder (parent folder with --suffix)")
    p.set_defaults(handler=run)
