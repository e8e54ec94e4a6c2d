"""RTTM reading and writing: round trip, other line types, and one clear line per fault."""

import pytest

from voxanon.data.rttm import Turn, read_rttm, write_rttm
from voxanon.errors import DataError


def test_round_trip_sorts_by_recording_and_start(tmp_path):
    turns = [Turn("b", 0.5, 1.25, "spk2"), Turn("a", 2.0, 0.5, "x"), Turn("a", 0.0, 1.0, "y", channel=2)]
    path = write_rttm(tmp_path / "ref.rttm", turns)
    lines = path.read_text().splitlines()
    assert lines[0] == "SPEAKER a 2 0.000 1.000 <NA> <NA> y <NA> <NA>"
    assert read_rttm(path) == {"a": [Turn("a", 0.0, 1.0, "y", 2), Turn("a", 2.0, 0.5, "x")],
                               "b": [Turn("b", 0.5, 1.25, "spk2")]}
    assert read_rttm(path)["b"][0].end == pytest.approx(1.75)


def test_other_line_types_and_blank_lines_are_skipped(tmp_path):
    path = tmp_path / "r.rttm"
    path.write_text("SPKR-INFO rec 1 <NA> <NA> <NA> unknown A <NA> <NA>\n\n"
                    "SPEAKER rec 1 1.5 2 <NA> <NA> A <NA> <NA>\n")
    assert read_rttm(path) == {"rec": [Turn("rec", 1.5, 2.0, "A")]}


@pytest.mark.parametrize("line, message", [
    ("SPEAKER rec 1 1.0 2.0 <NA>", "needs 10 fields"),
    ("SPEAKER rec x 1.0 2.0 <NA> <NA> A <NA> <NA>", "channel 'x'"),
    ("SPEAKER rec 1 one 2.0 <NA> <NA> A <NA> <NA>", "start 'one' is not a number"),
    ("SPEAKER rec 1 1.0 -2 <NA> <NA> A <NA> <NA>", "duration '-2' must be"),
    ("SPEAKER rec 1 1.0 nan <NA> <NA> A <NA> <NA>", "duration 'nan' must be"),
    ("SPEAKER rec 1 1.0 0 <NA> <NA> A <NA> <NA>", "zero duration"),
])
def test_a_bad_line_names_file_line_and_fault(tmp_path, line, message):
    path = tmp_path / "bad.rttm"
    path.write_text("SPEAKER rec 1 0 1 <NA> <NA> A <NA> <NA>\n" + line + "\n")
    with pytest.raises(DataError, match=rf"bad\.rttm:2: .*{message}"):
        read_rttm(path)


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(DataError, match="cannot read"):
        read_rttm(tmp_path / "none.rttm")
    (tmp_path / "empty.rttm").write_text("\n")
    with pytest.raises(DataError, match="no SPEAKER lines"):
        read_rttm(tmp_path / "empty.rttm")
