"""What each anonymizer's first call costs: the whole CLI on one clip with an empty cache, then again cached.

For every anonymizer (or ``--methods``), ``voxanon anonymize IN OUT --method M
--jobs 1 --quiet`` runs on one real clip (a LibriVox clip of the test fixtures,
or ``--clip``) twice in a row with a fresh, empty ``$VOXANON_CACHE``: the first
call pays whatever the method builds or unpacks on first use (kNN-VC's
matching sets, the vocoder's ONNX export, ...), the second finds it cached;
both load the models and start the interpreter, and ``voxanon --version`` in
the same run is the floor. The table gives wall seconds and what the first
call left in the cache (MB per top-level folder). Models that
the set-up fetches (Kokoro, the d-vector, Whisper, ...) are not in
``$VOXANON_CACHE`` and count as installed.

Usage::

    python experiments/bench_first_use.py [--methods knnvc f3va ...] [--clip FILE]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLIP = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "librivox" / \
    "sense_and_sensibility_01_austen_64kb-0880.flac"


def timed(argv: list[str], cache: Path) -> float:
    """Wall seconds of ``argv`` with ``$VOXANON_CACHE`` at ``cache``; a failing call stops the benchmark."""
    start = time.monotonic()
    done = subprocess.run(argv, env=dict(os.environ, VOXANON_CACHE=str(cache)), capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return time.monotonic() - start


def cache_sizes(cache: Path) -> str:
    """``folder MB`` for each top-level folder of the cache."""
    sizes = []
    for folder in sorted(p for p in cache.iterdir() if p.is_dir()) if cache.is_dir() else []:
        mb = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20
        sizes.append(f"{folder.name} {mb:.0f} MB")
    return ", ".join(sizes) or "-"


def main() -> None:
    from voxanon.api import list_anonymizers

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="+", default=[a.name for a in list_anonymizers()])
    ap.add_argument("--clip", type=Path, default=CLIP)
    args = ap.parse_args()
    import soundfile as sf

    seconds = sf.info(str(args.clip)).duration
    with tempfile.TemporaryDirectory(prefix="first-use-") as tmp:
        clip_dir = Path(tmp) / "in"
        clip_dir.mkdir()
        (clip_dir / args.clip.name).symlink_to(args.clip.resolve())
        version = timed([sys.executable, "-m", "voxanon", "--version"], Path(tmp) / "unused")
        print(f"clip: {args.clip.name} ({seconds:.1f} s); `voxanon --version`: {version:.2f} s")
        print(f"{'method':<20} {'first call s':>12} {'cached s':>9} {'first - cached':>15}  cache written by the first")
        for method in args.methods:
            cache = Path(tmp) / f"cache-{method}"
            cmd = [sys.executable, "-m", "voxanon", "anonymize", "--method", method, "--jobs", "1", "--quiet",
                   str(clip_dir)]
            first = timed(cmd + [str(Path(tmp) / f"{method}-1")], cache)
            cached = timed(cmd + [str(Path(tmp) / f"{method}-2")], cache)
            print(f"{method:<20} {first:>12.1f} {cached:>9.1f} {first - cached:>15.1f}  {cache_sizes(cache)}",
                  flush=True)


if __name__ == "__main__":
    main()
