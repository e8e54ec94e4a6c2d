"""The partition of a recording among its speakers: every sample to one speaker, pauses split, overlap to the
longest turn, long pieces cut."""

from __future__ import annotations

import numpy as np

from voxanon.data.rttm import Turn
from voxanon.jobs.conversations.timeline import owners, partition, speech_of

SR = 1000


def _turn(start: float, end: float, speaker: str) -> Turn:
    return Turn("r", start, end - start, speaker)


def test_pieces_cover_the_whole_recording_and_split_pauses_in_the_middle() -> None:
    pieces = partition([_turn(0.5, 2.0, "a"), _turn(3.0, 4.0, "b"), _turn(4.0, 5.0, "a")], 6 * SR, SR)
    assert [(p.start, p.stop, p.speaker) for p in pieces] == [(0, 2500, "a"), (2500, 4000, "b"), (4000, 6000, "a")]


def test_overlap_goes_to_the_speaker_with_the_longest_turn() -> None:
    long_a, short_b = _turn(0.0, 3.0, "a"), _turn(2.0, 2.5, "b")
    assert {p.speaker for p in partition([long_a, short_b], 3 * SR, SR)} == {"a"}
    owner, names = owners([_turn(0.0, 1.0, "a"), _turn(0.8, 3.0, "b")], 3.0)
    assert names == ["a", "b"] and set(owner[80:100]) == {1} and set(owner[:80]) == {0}


def test_long_pieces_are_cut_into_equal_parts_of_one_speaker() -> None:
    pieces = partition([_turn(0.0, 100.0, "a")], 100 * SR, SR, max_seconds=30.0)
    assert [p.stop - p.start for p in pieces] == [25000] * 4 and {p.speaker for p in pieces} == {"a"}
    assert pieces[0].start == 0 and pieces[-1].stop == 100 * SR


def test_no_turns_no_pieces_and_speech_of_one_speaker_is_capped() -> None:
    assert partition([], SR, SR) == []
    wav = np.arange(10 * SR, dtype=np.float32)
    sample = speech_of([_turn(1.0, 2.0, "a"), _turn(5.0, 9.0, "a"), _turn(2.0, 5.0, "b")], "a", wav, SR, 2.5)
    assert np.array_equal(sample, np.concatenate([wav[1000:2000], wav[5000:6500]]))
