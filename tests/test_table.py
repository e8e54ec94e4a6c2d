"""The one text-table formatter."""

from __future__ import annotations

import pytest

from voxanon.table import cell, format_table


def test_columns_are_padded_and_aligned():
    text = format_table(["system", "EER %"], [["original", 4.567], ["mcadams", None]], rule=True)
    assert text.splitlines() == ["system    EER %",
                                 "---------------",
                                 "original   4.57",
                                 "mcadams       -"]


def test_alignment_indent_and_separator():
    text = format_table(["a", "b"], [["x", "long"]], align="rl", sep=" | ", indent="  ")
    assert text.splitlines() == ["  a | b", "  x | long"]


def test_cells():
    assert cell(float("nan")) == "-" and cell(None, missing="n/a") == "n/a"
    assert cell(1.23456, 3) == "1.235" and cell(7) == "7" and cell("x") == "x"


def test_ragged_rows_are_refused():
    with pytest.raises(ValueError, match="3 columns"):
        format_table(["a", "b", "c"], [["1", "2"]])
