"""Given turns and labels: Kaldi segments with their utt2spk, speaker maps, recordings the input lacks."""

from __future__ import annotations

import pytest

from voxanon.data.rttm import Turn
from voxanon.errors import DataError
from voxanon.jobs.conversations.sources import check_recordings, read_segments, read_speaker_map


def test_segments_give_turns_by_recording_with_the_utt2spk_speakers(tmp_path) -> None:
    (tmp_path / "segments").write_text("s2 rec1 3.0 4.5\ns1 rec1 0.5 2.0\ns3 rec2 0 1\n")
    (tmp_path / "utt2spk").write_text("s1 alice\ns2 bob\ns3 alice\n")
    turns = read_segments(tmp_path / "segments")
    assert turns == {"rec1": [Turn("rec1", 0.5, 1.5, "alice"), Turn("rec1", 3.0, 1.5, "bob")],
                     "rec2": [Turn("rec2", 0.0, 1.0, "alice")]}


@pytest.mark.parametrize(("segments", "utt2spk", "message"), [
    ("s1 rec1 0.5\n", "s1 a\n", r"segments:1: expected '<segment> <recording> <start> <end>', found 3"),
    ("s1 rec1 2.0 1.0\n", "s1 a\n", r"segments:1: end 1 is not after start 2"),
    ("s1 rec1 x 1.0\n", "s1 a\n", r"segments:1: start 'x' is not a number"),
    ("s1 rec1 0 1\ns2 rec1 1 2\n", "s1 a\n", r"segments:2: segment 's2' has no speaker"),
    ("s1 rec1 0 1\n", None, r"needs the utt2spk beside it"),
])
def test_bad_segments_are_one_line_naming_the_place(tmp_path, segments, utt2spk, message) -> None:
    (tmp_path / "segments").write_text(segments)
    if utt2spk is not None:
        (tmp_path / "utt2spk").write_text(utt2spk)
    with pytest.raises(DataError, match=message):
        read_segments(tmp_path / "segments")


def test_speaker_maps_and_unknown_recordings(tmp_path) -> None:
    (tmp_path / "map").write_text("rec1 spk0 alice\nrec2 ch1 alice\n")
    assert read_speaker_map(tmp_path / "map") == {("rec1", "spk0"): "alice", ("rec2", "ch1"): "alice"}
    (tmp_path / "bad").write_text("rec1 alice\n")
    with pytest.raises(DataError, match=r"bad:1: expected '<recording> <speaker> <label>'"):
        read_speaker_map(tmp_path / "bad")
    with pytest.raises(DataError, match="cannot read"):
        read_speaker_map(tmp_path / "missing")
    turns = {"rec1": [], "ghost": []}
    check_recordings(turns, {"rec1", "ghost"}, "x.rttm")
    with pytest.raises(DataError, match=r"x.rttm: turns for recording\(s\) the input does not have: ghost"):
        check_recordings(turns, {"rec1"}, "x.rttm")
