"""Build the matching sets of kNN-VC's default targets and ship them, packed, with the package.

``knnvc`` with its default parameters matches against two Kokoro voices reading
the 552 shipped sentences. Building their matching sets takes 10-20 minutes on
two cores, so they ship in ``src/voxanon/resources/knnvc``, packed
(``voxanon.anonymizers.knnvc_targets.pack``: 4-bit keys, 8-bit values;
docs/experiments/knnvc.md, "Shipped matching sets") and listed with their
sha256 in ``manifest.json``; the first ``knnvc`` call unpacks them in seconds.
Rerun this after changing any default the sets depend on (encoder, vocoder,
voices, sentences, trimming, the set format):
``tests/anonymizers/test_knnvc.py`` fails until the shipped sets match the
defaults again.

The sets are built from scratch in a temporary cache (the shipped ones are set
aside meanwhile, so none is unpacked instead of built, and put back if the build
fails), then replace the shipped ones; ``--keep DIR`` keeps the built
full-precision sets there (for ``experiments/bench_knnvc.py pack``). Usage::

    python tools/ship_knnvc_sets.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", type=Path, help="also keep the built full-precision sets in this folder")
    args = ap.parse_args()
    import numpy as np

    from voxanon.anonymizers.knnvc import KnnVc
    from voxanon.anonymizers.knnvc_targets import load, pack, sha256_file, shipped_root

    shipped = shipped_root()
    with tempfile.TemporaryDirectory(prefix="knnvc-ship-") as tmp:
        aside = Path(tmp) / "shipped-before"
        if shipped.is_dir():
            shutil.move(shipped, aside)
        try:
            os.environ["VOXANON_CACHE"] = str(Path(tmp) / "cache")
            start = time.monotonic()
            KnnVc().prepare()
            built = sorted((Path(tmp) / "cache" / "knnvc").iterdir())
            shipped.mkdir(parents=True)
            manifest = {}
            for folder in built:
                ms = load(folder, json.loads((folder / "meta.json").read_text())["name"])
                np.savez_compressed(shipped / f"{folder.name}.npz", **pack(ms))
                manifest[folder.name] = {"target": ms.name, "sha256": sha256_file(shipped / f"{folder.name}.npz"),
                                         "frames": len(ms.keys)}
            (shipped / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
            if args.keep:
                for folder in built:
                    shutil.copytree(folder, args.keep / folder.name)
        except BaseException:
            shutil.rmtree(shipped, ignore_errors=True)
            if aside.is_dir():
                shutil.move(aside, shipped)
            raise
    size = sum(f.stat().st_size for f in shipped.rglob("*") if f.is_file())
    total = sum(f.stat().st_size for f in shipped.parent.rglob("*") if f.is_file())
    print(f"shipped {len(built)} matching sets, {size / 2**20:.1f} MB, built in {time.monotonic() - start:.0f} s; "
          f"the package's resources now take {total / 2**20:.1f} MB", file=sys.stderr)


if __name__ == "__main__":
    main()
