"""STM reading and writing: round trip, turns, one clear line per fault."""

import pytest

from voxanon.data.rttm import Turn
from voxanon.data.stm import Segment, read_stm, write_stm
from voxanon.errors import DataError


def test_round_trip_sorted_by_recording_and_start(tmp_path):
    segs = [Segment("b", 1.0, 2.5, "s2", "hello there"), Segment("a", 3.0, 4.0, "s1", "yes"),
            Segment("a", 0.5, 2.0, "s2", "one two three")]
    path = write_stm(tmp_path / "ref.stm", segs)
    back = read_stm(path)
    assert list(back) == ["a", "b"]
    assert back["a"] == sorted(s for s in segs if s.recording == "a")
    assert back["a"][0].turn == Turn("a", 0.5, 1.5, "s2")


def test_comments_and_empty_words_are_accepted(tmp_path):
    (tmp_path / "x.stm").write_text(";; a comment\n\nrec 1 spk 0 1.5\n", encoding="utf-8")
    assert read_stm(tmp_path / "x.stm")["rec"][0].text == ""


@pytest.mark.parametrize("line, message", [
    ("rec 1 spk 0", "expected '<recording>"),
    ("rec A spk 0 1 words", "must be numbers"),
    ("rec 1 spk 2 1 words", "start < end"),
])
def test_faults_name_the_line(tmp_path, line, message):
    (tmp_path / "x.stm").write_text(f"rec 1 spk 0 1 ok\n{line}\n", encoding="utf-8")
    with pytest.raises(DataError, match=f"x.stm:2: .*{message}"):
        read_stm(tmp_path / "x.stm")


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(DataError, match="cannot read"):
        read_stm(tmp_path / "none.stm")
    (tmp_path / "e.stm").write_text("\n", encoding="utf-8")
    with pytest.raises(DataError, match="no segments"):
        read_stm(tmp_path / "e.stm")
