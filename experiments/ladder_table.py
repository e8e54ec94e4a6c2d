"""Markdown tables of a benchmark's attacker ladder: every system x every attacker, per split, 95 % intervals.

    python experiments/ladder_table.py OUT/privacy.csv [--split dev --split test] [--real-voices OUT/results.json]

Each cell is the mean EER of the two genders followed by (female [CI] / male [CI]);
the strongest attacker of a row (lowest mean, OO aside, ties to the attacker
that knows less) is bold, by the benchmark's own rule. ``--real-voices`` adds
the trained rungs' real-voice check (EER on the corpus's real recordings, every
pair a trial), one row per system's training set, the pretrained encoders first.
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict

from voxanon.evaluation.scenarios import ATTACKER_ORDER, OO, strongest_attacker


def load(path: str) -> dict:
    """{split: {system: {scenario: {gender: row}}}} from a benchmark's privacy.csv."""
    table: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(dict)))
    with open(path, newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            table[r["split"]][r["system"]][r["scenario"]][r["gender"]] = r
    return table


def _cell(genders: dict, bold: bool) -> str:
    f, m = genders["f"], genders["m"]
    mean = (float(f["eer"]) + float(m["eer"])) / 2
    ci = " / ".join(f"{float(g['eer']):.1f} [{float(g['eer_ci_low']):.0f}–{float(g['eer_ci_high']):.0f}]"
                    for g in (f, m))
    head = f"**{mean:.1f}**" if bold else f"{mean:.1f}"
    return f"{head} ({ci})"


def markdown(systems: dict, split: str) -> str:
    """One split's table: a row per system (in file order), a column per attacker that ran."""
    scenarios = [s for s in ATTACKER_ORDER if any(s in row for row in systems.values())]
    lines = [f"{split} EER % (mean of f and m; f [95 % CI] / m [95 % CI]); **bold** = strongest attacker, OO aside",
             "", "| system | " + " | ".join(scenarios) + " |", "|---" * (len(scenarios) + 1) + "|"]
    for system, row in systems.items():
        best = strongest_attacker({s: (float(g["f"]["eer"]) + float(g["m"]["eer"])) / 2
                                   for s, g in row.items() if s != OO})
        best = best[0] if best else None
        cells = [_cell(row[s], s == best) if s in row else "–" for s in scenarios]
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def real_voices(results_json: str) -> str:
    """The trained rungs' real-voice checks of a run (as the report's "Trained attackers on real voices")."""
    from voxanon.evaluation.ladder import real_voice_checks
    from voxanon.jobs.benchmark.records import load_results

    rungs, reference, checks = real_voice_checks(load_results(results_json))
    if not rungs:
        return "no trained rung has a real-voice check in this run\n"
    cell = lambda v: "–" if v is None else f"{v:.1f}"  # noqa: E731
    lines = ["| trained on | " + " | ".join(rungs) + " |", "|---" * (len(rungs) + 1) + "|",
             "| pretrained encoder (reference) | " + " | ".join(cell(reference[r]) for r in rungs) + " |"]
    lines += [f"| {label} | " + " | ".join(cell(c[r].eer if r in c else None) for r in rungs) + " |"
              for label, c in checks.items()]
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("privacy_csv")
    p.add_argument("--split", action="append", help="splits to print (default: every split in the file)")
    p.add_argument("--real-voices", metavar="RESULTS_JSON", help="also the trained rungs' real-voice checks")
    args = p.parse_args()
    table = load(args.privacy_csv)
    for split in args.split or sorted(table):
        print(markdown(table[split], split))
    if args.real_voices:
        print(real_voices(args.real_voices))


if __name__ == "__main__":
    main()
