"""The leaderboard of BENCHMARKS.md: every system of one or more ``voxanon benchmark`` runs as one markdown table.

Each ``results.json`` is read with :func:`voxanon.jobs.benchmark.records.load_results`
and turned into the benchmark's own headline rows (:func:`summarize`), so
the strongest attacker, its EER and the WER are the ones the HTML report shows.
Several files are merged system by system (a later file wins for the same
system label); they must come from the same corpus (its generator
description) and the same seed, otherwise the script stops with an error.
Rows are sorted by privacy: the strongest attacker's mean EER, highest first.

Columns: the strongest attacker and its mean EER %, the bootstrap 95 %
interval of each gender's EER (resampling enrolled speakers), the VPC privacy
category, the VPC semi-informed EER, WER % by the run's recogniser with its
interval, WER % of each second recogniser the run scored (``check_asrs``),
UAR %, DNSMOS and the anonymization RTF. With ``--real-speech`` (the
``results.json`` of ``experiments/bench_real_speech.py``), the WERs of both
recognisers on real read speech are added for the systems that file holds
(pocketsphinx's on the 16 kHz part only: the 8 kHz prompts defeat its wideband models).

Usage::

    python experiments/leaderboard.py runs/benchmark/results.json [more results.json ...]
        [--real-speech runs/real/results.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voxanon.errors import DataError
from voxanon.evaluation.privacy import privacy_result
from voxanon.jobs.benchmark.records import (
    BenchmarkResults,
    SummaryRow,
    load_results,
    summarize,
)
from voxanon.metrics.ranking import privacy_category

#: real-speech columns: header, the bench_real_speech.py key
#: (pocketsphinx: its 16 kHz part, the 8 kHz prompts defeat it)
REAL_COLUMNS = (("real speech WER % whisper-tiny", "wer_whisper-tiny"),
                ("real speech WER % pocketsphinx (16 kHz part)", "wer16k_pocketsphinx"))


@dataclass(frozen=True)
class BoardRow:
    """One system of the leaderboard: its headline row and the interval of each gender's EER."""

    row: SummaryRow
    eer_ci: dict[str, tuple[float, float]]


@dataclass(frozen=True)
class Board:
    """The merged systems, sorted by privacy, and what every row shares."""

    rows: list[BoardRow]
    seed: int
    corpus: dict[str, Any]
    asr: str
    check_asrs: list[str]


def corpus_identity(results: BenchmarkResults) -> tuple[int, str, str]:
    """What two runs must share to sit on one board: seed, corpus description and primary split."""
    return results.settings.seed, json.dumps(results.data.description, sort_keys=True), results.settings.primary.split


def board_rows(results: BenchmarkResults) -> dict[str, BoardRow]:
    """The board rows of one run, by system label."""
    split = results.settings.primary.split
    out = {}
    for row in summarize(results).rows:
        attacker = row.values.get("attacker")
        p = privacy_result(results.systems[row.system], attacker, split) if attacker else None
        ci = {g: (m.eer_ci.low, m.eer_ci.high) for g, m in sorted(p.by_gender.items())} if p else {}
        out[row.system] = BoardRow(row, ci)
    return out


def merge(paths: list[Path]) -> Board:
    """Every system of ``paths`` (a later file wins for the same label); DataError when corpora or seeds differ."""
    if not paths:
        raise DataError("leaderboard: give at least one results.json of `voxanon benchmark`")
    rows: dict[str, BoardRow] = {}
    first = None
    for path in paths:
        results = load_results(path)
        if first is None:
            first = (path, results)
        elif corpus_identity(results) != corpus_identity(first[1]):
            what = [name for name, a, b in zip(("seed", "corpus", "primary split"), corpus_identity(first[1]),
                                               corpus_identity(results)) if a != b]
            raise DataError(f"{path}: its {' and '.join(what)} differ from {first[0]}'s; a leaderboard compares "
                            f"systems on one corpus and seed, so merge only runs made with the same corpus "
                            f"(--data) and --seed")
        for name, row in board_rows(results).items():
            rows.pop(name, None)
            rows[name] = row
    check = list(dict.fromkeys(name.removeprefix("wer_") for r in rows.values() for name in r.row.values
                               if name.startswith("wer_") and name not in ("wer_ci", "wer_learn", "wer_rank")))
    ordered = sorted(rows.values(), key=lambda r: (r.row.values.get("eer") is None, -(r.row.values.get("eer") or 0.0)))
    _, results = first
    return Board(ordered, results.settings.seed, results.data.description, results.settings.asr, check)


def load_real_speech(path: Path) -> dict[str, dict[str, Any]]:
    """The rows of a ``bench_real_speech.py`` results.json, by method label."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return dict(data["rows"])
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise DataError(f"{path}: not a results.json of experiments/bench_real_speech.py ({exc})") from None


def _num(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _eer_ci(ci: dict[str, tuple[float, float]]) -> str:
    return " · ".join(f"{g} [{lo:.1f}, {hi:.1f}]" for g, (lo, hi) in ci.items()) or "–"


#: the strongest attacker's privacy beyond the EER, shown where the run computed it: summary column, title
BEYOND = (("link_rank1", "rank-1 linkability %"), ("singling_out", "singling out %"))


def render(board: Board, real: dict[str, dict[str, Any]] | None = None) -> str:
    """The leaderboard as a markdown table (real-speech columns only with ``real``)."""
    beyond = [(name, title) for name, title in BEYOND if any(br.row.values.get(name) is not None for br in board.rows)]
    head = ["system", "strongest attacker", "EER %", "EER 95 % interval", "category", *(t for _, t in beyond),
            "EER % VPC semi-informed", f"WER % {board.asr} [95 %]", *(f"WER % {b}" for b in board.check_asrs),
            "UAR %", "DNSMOS", "RTF"]
    if real is not None:
        head += [h for h, _ in REAL_COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for br in board.rows:
        r = br.row.values
        wer_ci = r.get("wer_ci")
        wer = _num(r.get("wer")) + (f" [{wer_ci.low:.1f}, {wer_ci.high:.1f}]" if wer_ci else "")
        eer = r.get("eer")
        cells = [br.row.system, r.get("attacker") or "–", _num(eer), _eer_ci(br.eer_ci),
                 "–" if eer is None else str(privacy_category(eer)), *(_num(r.get(n)) for n, _ in beyond),
                 _num(r.get("eer_semi")), wer,
                 *(_num(r.get(f"wer_{b}")) for b in board.check_asrs),
                 _num(r.get("uar")), _num(r.get("dnsmos"), 2), _num(r.get("rtf"), 3)]
        if real is not None:
            row = real.get(br.row.system, {})
            cells += [_num(row.get(key)) for _, key in REAL_COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def describe(board: Board) -> str:
    """One line naming the corpus and seed every row shares."""
    size = board.corpus.get("size", {})
    engine = board.corpus.get("engine", "?")
    name = size.get("name", "?") if isinstance(size, dict) else size
    return f"Corpus: `voxanon data synth` {engine} engine, size {name}, corpus seed {board.corpus.get('seed', '?')}; " \
           f"benchmark seed {board.seed}; {len(board.rows)} systems."


def main(argv: list[str] | None = None) -> int:
    """Print the leaderboard of the given results files."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, nargs="+", help="results.json of `voxanon benchmark` (later wins)")
    ap.add_argument("--real-speech", type=Path, help="results.json of experiments/bench_real_speech.py")
    args = ap.parse_args(argv)
    try:
        board = merge(args.results)
        real = load_real_speech(args.real_speech) if args.real_speech else None
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(describe(board) + "\n")
    print(render(board, real))
    return 0


if __name__ == "__main__":
    sys.exit(main())
