"""The VPC kits' ``results_summary`` text: written from :mod:`voxanon.evaluation.vpc` rows, and read back.

The kits write ``exp/results_summary/eval_orig<suffix>/results_orig.txt`` (SER,
``ASV_eval`` with the pretrained ASV, ASR) and ``.../eval_anon<suffix>/results_anon.txt``
(``ASV_eval^anon``, the attacker retrained on anonymized data); their
``results/result_for_rank_*`` files are the two one after the other. Each block is
a pandas ``DataFrame.to_string()``; :func:`frame_text` lays tables out the same
way (index left-aligned, every cell right-aligned with one leading space, floats
with the fewest decimals up to 6 that show every value), so voxanon's file and
the kit's can be compared line by line. Which ASV rows each file keeps is the
kits' rule: 2024's ``results_orig`` keeps original/original, 2026's (with an
anonymized suffix) anon/anon of the mixed list; ``results_anon`` keeps anon/anon.
"""

from __future__ import annotations

import math
from datetime import datetime

from voxanon.evaluation.vpc import AsrRow, AsvRow, SerRow

Cell = str | float
Column = str | tuple[str, str]


def _floats(values: list[float]) -> list[str]:
    """pandas' float column: 6 decimals, trailing zeros trimmed while every value has one (one decimal kept)."""
    texts = [f"{v:.6f}" for v in values if not math.isnan(v)]
    while texts and all(t.endswith("0") and not t.endswith(".0") for t in texts):
        texts = [t[:-1] for t in texts]
    it = iter(texts)
    return ["NaN" if math.isnan(v) else next(it) for v in values]


def frame_text(columns: list[Column], rows: list[tuple[int, list[Cell]]]) -> str:
    """A table as pandas ``DataFrame.to_string()`` prints it (``(top, bottom)`` column names: a two-level header)."""
    cells = [[r[1][c] for r in rows] for c in range(len(columns))]
    texts = [_floats(col) if col and isinstance(col[0], float) else [str(v) for v in col] for col in cells]
    levels = [[c if isinstance(c, tuple) else (c,) for c in columns]]
    depth = max(len(c) for c in levels[0])
    names = [(c + ("",) * depth)[:depth] for c in levels[0]]
    widths = [max([*(len(n) for n in name), *(len(t) + 1 for t in col)]) for name, col in zip(names, texts)]
    index = [str(i) for i, _ in rows]
    iw = max(len(i) for i in index) if index else 0
    lines = [" " * iw + "".join(" " + name[k].rjust(w) for name, w in zip(names, widths)) for k in range(depth)]
    lines += [idx.ljust(iw) + "".join(" " + col[r].rjust(w) for col, w in zip(texts, widths))
              for r, idx in enumerate(index)]
    return "\n".join(lines)


def _sorted(rows: list) -> list:
    """Rows as the kits' ``sort_values(by=['dataset', 'split'])`` orders them (stable)."""
    return sorted(rows, key=lambda r: (r.dataset, r.split))


def asv_table(rows: list[AsvRow]) -> str:
    """The ASV block's table."""
    return frame_text(["dataset", "split", "gender", "enrollment", "trial", "EER"],
                      [(r.index, [r.dataset, r.split, r.gender, r.enrollment, r.trial, r.eer]) for r in _sorted(rows)])


def asr_table(rows: list[AsrRow]) -> str:
    """The ASR block's table."""
    return frame_text(["dataset", "split", "asr", "WER"],
                      [(r.index, [r.dataset, r.split, r.asr, r.wer]) for r in _sorted(rows)])


def ser_table(rows: list[SerRow]) -> str:
    """The SER block's table (two header lines: the kit's ``groupby().agg(mean)`` columns)."""
    emotions = list(rows[0].acc)
    columns = ["dataset", "split", "ser", ("UAR", "mean"), *((f"ACC_{e}", "mean") for e in emotions)]
    return frame_text(columns, [(r.index, [r.dataset, r.split, r.ser, r.uar, *(r.acc[e] for e in emotions)])
                                for r in _sorted(rows)])


def _time(now: datetime | None) -> str:
    return f"---- Time: {(now or datetime.now()).strftime('%d-%m-%y_%H:%M')} ----\n"


def _block(title: str, table: str) -> str:
    return f"\n---- {title} results ----\n{table}\n"


def orig_asv_rows(rows: list[AsvRow], edition: str, suffix: str) -> list[AsvRow]:
    """The pretrained ASV's rows that ``results_orig`` keeps (the kits' filter)."""
    if edition == "2026" and suffix:
        return [r for r in rows if r.gender == "mixed" and r.enrollment == r.trial == "anon"]
    return [r for r in rows if r.enrollment == r.trial == "original"]


def results_orig(*, edition: str, suffix: str, asv: list[AsvRow] | None = None, asr: list[AsrRow] | None = None,
                 ser: list[SerRow] | None = None, now: datetime | None = None) -> str:
    """The kit's ``results_orig.txt``: SER, ``ASV_eval`` and ASR blocks of the rows given."""
    text = _time(now)
    if ser:
        text += _block("SER", ser_table(ser))
    if asv:
        text += _block("ASV_eval", asv_table(orig_asv_rows(asv, edition, suffix)))
    if asr:
        text += _block("ASR", asr_table(asr))
    return text


def results_anon(asv: list[AsvRow], *, now: datetime | None = None) -> str:
    """The kit's ``results_anon.txt``: the retrained attacker's anon/anon rows."""
    return _time(now) + _block("ASV_eval^anon", asv_table([r for r in asv if r.enrollment == r.trial == "anon"]))


def parse_summary(text: str) -> dict[str, list[dict[str, str]]]:
    """Tables of a ``results_summary`` / ``result_for_rank`` file: block title -> rows (column -> cell, with ``index``).

    A two-level header (the SER block) names columns by their top level.
    """
    blocks: dict[str, list[dict[str, str]]] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not (line.startswith("---- ") and line.endswith(" results ----")):
            continue
        title = line[len("---- "):-len(" results ----")]
        header = lines[i].split()
        i += 1
        if i < len(lines) and lines[i].startswith(" ") and lines[i].split() and set(lines[i].split()) == {"mean"}:
            i += 1  # second header level
        rows = []
        while i < len(lines) and lines[i].strip():
            cells = lines[i].split()
            rows.append({"index": cells[0], **dict(zip(header, cells[1:]))})
            i += 1
        blocks[title] = rows
    return blocks
