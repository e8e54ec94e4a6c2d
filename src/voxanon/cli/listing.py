"""``voxanon list``: every registered anonymizer with its parameters and defaults."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    from voxanon.anonymizers.base import describe_config
    from voxanon.anonymizers.registry import available, broken

    for name, cls in available().items():
        flags = [f"rate {cls.sample_rate} Hz" if cls.sample_rate else "any rate"]
        flags.append("needs model" if cls.needs_model else "no model")
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


def register(commands) -> None:
    p = commands.top.add_parser("list", help="list anonymizers with their parameters")
    p.set_defaults(handler=run)
