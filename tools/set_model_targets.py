"""Name the target speakers of an acoustic model with a speaker table (the voices `b5` and `b6` draw from).

A model written by ``voxanon train asrbn`` lists its training speakers (``speakers`` in its meta, in table
order); by default the anonymizers draw each utterance's target among all of them. This writes ``targets`` into
the model's meta: the indices of the speakers whose name REGEX finds, with the rule (REGEX and WHY) beside them
as ``targets_rule``. The weights are not touched; the model's summary beside it (``MODEL.json``), when there is
one, gets the same two entries (and the new file size, where it records ``file_bytes``). Usage::

    python tools/set_model_targets.py MODEL.pt --match REGEX --why TEXT
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from voxanon.models.acoustic.inference import AcousticError
from voxanon.models.checkpoint import load_checkpoint, save_atomic


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("--match", required=True, help="regular expression searched in each speaker's name")
    ap.add_argument("--why", required=True, help="the reason for the rule, kept with it")
    args = ap.parse_args()

    saved = load_checkpoint(args.model, f"acoustic model {args.model}", AcousticError)
    speakers = saved.get("meta", {}).get("speakers")
    if not speakers:
        raise SystemExit(f"{args.model}: no speaker names in its meta (a 'voxanon train asrbn' model has them)")
    targets = [i for i, name in enumerate(speakers) if re.search(args.match, name)]
    if not targets:
        raise SystemExit(f"{args.model}: {args.match!r} finds none of its {len(speakers)} speakers")
    entries = {"targets": targets, "targets_rule": {"match": args.match, "why": args.why}}
    saved["meta"].update(entries)
    save_atomic(saved, args.model)
    summary = args.model.with_suffix(".json")
    if summary.is_file():
        meta = json.loads(summary.read_text(encoding="utf-8"))
        meta.update(entries)
        if "file_bytes" in meta:
            meta["file_bytes"] = args.model.stat().st_size
        summary.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(f"{args.model}: {len(targets)} of {len(speakers)} speakers are targets: "
          + ", ".join(speakers[i].rsplit(":", 1)[-1] for i in targets))


if __name__ == "__main__":
    main()
