"""Start-up time of ``voxanon --version`` and ``voxanon --help``, against a bare Python start in the same run.

Each case runs in a fresh interpreter ``--repeats`` times, interleaved with the
reference ``python -c pass``; the table shows medians and the ratio to the
reference. ``--src DIR`` (repeatable) times the voxanon source tree under DIR
(e.g. another checkout's ``src``) instead of the installed one, so a before /
after comparison runs on the same machine at the same moment.

    python experiments/bench_startup.py --repeats 21 --src /path/to/old/src --src src
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

CASES = {"--version": "--version", "--help": "--help"}
SNIPPET = "import sys; from voxanon.cli import main; sys.argv[0] = 'voxanon'; sys.exit(main([{arg!r}]))"


def timed(argv: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one run of ``argv`` (output discarded)."""
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--src", action="append", help="voxanon source folder to time (default: installed)")
    args = parser.parse_args()
    sources = args.src or [None]
    runs: dict[str, list[float]] = {"python -c pass": []}
    cases = []
    for src in sources:
        env = dict(os.environ, **({"PYTHONPATH": os.path.abspath(src)} if src else {}))
        for arg in CASES:
            name = f"{src or 'installed'}: voxanon {arg}"
            cases.append((name, [sys.executable, "-c", SNIPPET.format(arg=arg)], env))
            runs[name] = []
    for _ in range(args.repeats):
        runs["python -c pass"].append(timed([sys.executable, "-c", "pass"], dict(os.environ)))
        for name, argv, env in cases:
            runs[name].append(timed(argv, env))
    reference = statistics.median(runs["python -c pass"])
    print(f"{'case':<60} {'median s':>9} {'min s':>7} {'x python':>9}")
    for name, times in runs.items():
        median = statistics.median(times)
        print(f"{name:<60} {median:>9.3f} {min(times):>7.3f} {median / reference:>9.1f}")


if __name__ == "__main__":
    main()
