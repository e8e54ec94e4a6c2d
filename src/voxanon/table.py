"""One plain-text table formatter for every command that prints a table.

Usable from any layer (it imports nothing from voxanon): cells are
converted with ``str`` (``None`` shows as ``-``); columns are padded to
their widest cell, left- or right-aligned.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence


def cell(value: Any, digits: int = 2, missing: str = "-") -> str:
    """A number with ``digits`` decimals, ``missing`` for None/NaN, anything else as ``str``."""
    if value is None:
        return missing
    if isinstance(value, float):
        return missing if value != value else f"{value:.{digits}f}"
    return str(value)


def format_table(header: Sequence[str], rows: Iterable[Sequence[Any]], *, align: str | None = None,
                 sep: str = "  ", rule: bool = False, indent: str = "") -> str:
    """Rows under a header, each column padded to its widest cell.

    Parameters
    ----------
    header : column titles
    rows : cells (converted with :func:`cell` when not strings)
    align : one ``l`` or ``r`` per column (default: first column left, the others right)
    sep : text between columns
    rule : draw a ``-`` line under the header
    indent : text before every line
    """
    body = [[c if isinstance(c, str) else cell(c) for c in row] for row in rows]
    n = len(header)
    align = align or ("l" + "r" * (n - 1))
    if len(align) != n or any(len(r) != n for r in body):
        raise ValueError(f"table of {n} columns got a row or alignment of another length")
    widths = [max(len(str(r[c])) for r in [list(header), *body]) for c in range(n)]

    def line(cells: Sequence[str]) -> str:
        parts = [c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(cells, widths, align)]
        return (indent + sep.join(parts)).rstrip()

    lines = [line(list(header))]
    if rule:
        lines.append(indent + "-" * (sum(widths) + len(sep) * (n - 1)))
    lines += [line(r) for r in body]
    return "\n".join(lines)
