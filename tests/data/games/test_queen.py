"""Flight of the Amazon Queen: the archive table, dialogue records and the key each dialogue file gets, on
made-up archives (and a truncated one, a missing line, a clip that does not decode) and on the real package."""

from __future__ import annotations

import io
import json
import struct

import numpy as np
import pytest
import soundfile as sf

from voxanon.data.games import queen
from voxanon.data.games.common import DataError, Extraction, games_dir, package_root
from voxanon.data.games.write import write_game


def _archive(members: dict[str, bytes]) -> bytes:
    table = b""
    offset = 15 + 21 * len(members)
    for name, data in members.items():
        table += name.encode().ljust(12, b"\0") + b"\x01" + struct.pack(">II", offset, len(data))
        offset += len(data)
    return b"QTBLCEM10" + struct.pack(">I", 1)[:4] + struct.pack(">H", len(members)) + table + \
        b"".join(members.values())


def _record(line_id: int, text: str) -> bytes:
    return struct.pack(">HB", line_id, len(text)) + text.encode() + b"\0\0"


def _wav(seconds: float = 0.5) -> bytes:
    buf = io.BytesIO()
    t = np.arange(int(11025 * seconds)) / 11025
    sf.write(buf, 0.3 * np.sin(2 * np.pi * 140 * t), 11025, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def _dialogue() -> bytes:
    """Joe's lines 5 and 0x1E, then the replies: line 5's in two segments."""
    return (b"AmBk\0\0header\0" + _record(5, "Hello there.*03") + _record(0x1E, "*FLAre you 21?*02")
            + _record(5, "Go away.*02I'm busy.*05") + _record(0x1E, "No.*01"))


def _members(clip: bytes = None) -> dict[str, bytes]:
    clip = clip or _wav()
    return {"ANNA1.DOG": _dialogue(), "070005J1.SB": clip, "070005P1.SB": clip, "070005P2.SB": _wav(0.3),
            "07001EJ1.SB": clip, "07001EP1.SB": clip, "070009J1.SB": clip,
            "C11A.CUT": b"AmBk", "C11A_011.SB": clip, "JOE00011.SB": clip, "03SSSSJ1.SB": clip}


def test_segments_split_at_gesture_codes():
    assert queen.segments("*FRHey Sparky...*15") == ["Hey Sparky..."]
    assert queen.segments("Go away.*02I'm busy.*05") == ["Go away.", "I'm busy."]


def test_dialogue_clips_get_their_lines_and_the_rest_is_counted(tmp_path):
    data = _archive(_members())
    clips, unmatched = queen.match_clips(tmp_path / "queen.1c", data)
    assert [(c.utt, c.speaker, c.text) for c in clips] == [
        ("queen-anna-070005p1", "queen-anna", "GO AWAY"), ("queen-anna-070005p2", "queen-anna", "I'M BUSY"),
        ("queen-anna-07001ep1", "queen-anna", "NO"), ("queen-joe-070005j1", "queen-joe", "HELLO THERE"),
        ("queen-joe-07001ej1", "queen-joe", "ARE YOU TWENTY ONE")]
    assert unmatched == {"dialogue clip no dialogue file's lines name": 1,                # 070009J1: no line 9
                         "cut-scene clip: its speaker is not read": 1, "other clip: no text file names it": 1,
                         "Joe's descriptions (JOE*.SB): their lines are not read": 1}


def test_a_dialogue_file_whose_lines_cover_no_key_well_gets_none(tmp_path):
    members = _members()
    members["ANNA1.DOG"] = b"AmBk" + _record(0x40, "Elsewhere.*01")
    clips, unmatched = queen.match_clips(tmp_path / "queen.1c", _archive(members))
    assert clips == [] and unmatched["dialogue clip no dialogue file's lines name"] == 6


def test_a_truncated_archive_is_refused(tmp_path):
    data = _archive(_members())
    with pytest.raises(DataError, match="archive is truncated"):
        queen.read_table(data[:-100], "queen.1c")
    with pytest.raises(DataError, match="archive is truncated"):
        queen.read_table(data[:200], "queen.1c")
    with pytest.raises(DataError, match="not a Queen archive"):
        queen.read_table(b"RIFF" + data[4:], "queen.1c")


def test_a_clip_that_does_not_decode_is_skipped_and_counted(tmp_path):
    members = _members()
    members["070005P2.SB"] = b"\xff\xfe not audio at all" * 4
    path = tmp_path / "queen.1c"
    path.write_bytes(_archive(members))
    clips, unmatched = queen.match_clips(path, path.read_bytes())
    (tmp_path / "usr/share/doc/flight-of-the-amazon-queen").mkdir(parents=True)
    (tmp_path / "usr/share/doc/flight-of-the-amazon-queen/copyright").write_text("freeware\n")
    extraction = Extraction("queen", queen.PACKAGE, tmp_path, clips, unmatched, {}, {queen.JOE: "m"})
    manifest = write_game(extraction, tmp_path / "out", quiet=True)
    assert manifest["clips"] == 4 and list(manifest["skipped_undecodable"]) == ["070005P2.SB"]
    assert manifest["characters"]["queen-joe"] | {"minutes": 0} == {
        "who": "", "clips": 2, "minutes": 0, "median_f0_hz": pytest.approx(140, abs=3), "gender": "m",
        "gender_from": "game"}
    assert manifest["characters"]["queen-anna"]["gender_from"] == "pitch"
    assert (tmp_path / "out/text").read_text().splitlines()[0] == "queen-anna-070005p1 GO AWAY"
    wav, sr = sf.read((tmp_path / "out/wav/queen-joe/queen-joe-070005j1.wav"))
    assert sr == 16000 and abs(len(wav) - 8000) <= 1
    before = (tmp_path / "out/wav.scp").read_text()
    assert write_game(extraction, tmp_path / "out", quiet=True) == json.loads((tmp_path / "out/manifest.json")
                                                                                .read_text())
    assert (tmp_path / "out/wav.scp").read_text() == before


def test_the_real_archive_matches_thousands_of_dialogue_clips():
    try:
        package_root(queen.PACKAGE)
    except DataError:
        pytest.skip(f"flight-of-the-amazon-queen {queen.PACKAGE.version} is not unpacked in {games_dir()} "
                    f"(tools/setup.sh does it)")
    extraction = queen.extract()
    assert len(extraction.clips) + sum(extraction.unmatched.values()) == 6745
    assert len(extraction.clips) >= 3300
    by_utt = {c.utt: c for c in extraction.clips}
    assert by_utt["queen-and-020006p2"].text == "I'M GOING TO RUN YOU OUT OF TOWN"
    assert by_utt["queen-joe-02001ej1"].text == "I'VE HEARD THAT YOU'RE A PRETTY FAST RUNNER"
    wav, sr = by_utt["queen-joe-02001ej1"].read()
    assert sr == 11025 and 1.0 < len(wav) / sr < 6.0


def test_characters_are_named_after_their_dialogue_files():
    assert queen.character("BOB3.DOG") == "queen-bob" and queen.character("TALLPYG.DOG") == "queen-tallpyg"
    assert queen.character("MAN1.DOG") == "queen-man1" and queen.character("MAN2.DOG") == "queen-man2"
