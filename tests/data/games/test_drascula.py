"""Drascula: drascula.dat's text tables read from made-up bytes and from the real package (when set-up unpacked
it), clips matched to lines, and the fault paths."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from voxanon.data.games import drascula
from voxanon.data.games.common import DataError, games_dir, package_root


def _entry(text: bytes) -> bytes:
    padded = text + b"\0" * (-len(text) % 4)
    return struct.pack(">I", 4 + len(padded)) + padded


def _group(lines: list[bytes]) -> bytes:
    """One group of text tables: the same lines in all six languages."""
    out = struct.pack(">H", len(lines))
    for _ in range(6):
        body = b"".join(_entry(t) for t in lines)
        out += struct.pack(">H", 2 + len(body)) + body + b"\0\0"
    return out


def _dat(groups: list[list[bytes]]) -> bytes:
    return b"DRASCULA\x06\x00\xff" + b"".join(_group(g) for g in groups)


def _tables(n: int = len(drascula.CHARACTERS)) -> list[list[bytes]]:
    return [[b"", f"LINE ONE OF TABLE {i}".encode(), b"I'M 21, OK?", b"ABCD"] for i in range(n)]


def test_text_tables_reads_every_group_in_order():
    tables = drascula.text_tables(_dat(_tables()))
    assert len(tables) == len(drascula.CHARACTERS)
    assert tables[3] == ["", "LINE ONE OF TABLE 3", "I'M 21, OK?", "ABCD"]   # "ABCD" fills its entry: no NUL


def test_text_tables_refuses_a_truncated_file():
    data = _dat(_tables())
    with pytest.raises(DataError, match="text groups found, expected at least 10"):
        drascula.text_tables(data[: len(data) // 2], "x.dat")
    with pytest.raises(DataError, match="no 'DRASCULA' signature"):
        drascula.text_tables(b"NOTDRASC" + data[8:], "x.dat")


def test_match_clips_pairs_file_n_with_line_n_and_counts_the_rest(tmp_path):
    tables = [[t.decode() for t in g] for g in _tables()]
    for name, size in (("2.ALS", 400), ("BJ1.ALS", 300), ("VB3.ALS", 200), ("S1.ALS", 100), ("D9.ALS", 100),
                       ("0.ALS", 100)):
        (tmp_path / name).write_bytes(bytes([128, 255, 0]) * size)
    clips, unmatched = drascula.match_clips(tmp_path, tables)
    assert [(c.utt, c.text) for c in clips] == [
        ("drascula-bj-001", "LINE ONE OF TABLE THREE"), ("drascula-john-002", "I'M TWENTY ONE OK"),
        ("drascula-vonbraun-003", "ABCD")]
    assert unmatched == {"no text table for the clip's prefix": 1, "number past the character's text table": 1,
                         "empty line": 1}
    wav, sr = clips[0].read()
    assert sr == 11025 and wav[:3].tolist() == [0.0, 127 / 128, -1.0]


def test_an_empty_clip_does_not_decode(tmp_path):
    (tmp_path / "1.ALS").write_bytes(b"")
    clips, _ = drascula.match_clips(tmp_path, [[t.decode() for t in g] for g in _tables()])
    with pytest.raises(DataError, match="empty clip"):
        clips[0].read()


def test_a_missing_package_says_to_run_setup(tmp_path):
    with pytest.raises(DataError, match="run tools/setup.sh"):
        drascula.extract(tmp_path)


def _real_root():
    try:
        return package_root(drascula.PACKAGE)
    except DataError:
        pytest.skip(f"drascula {drascula.PACKAGE.version} is not unpacked in {games_dir()} (tools/setup.sh does it)")


def test_the_real_package_gives_742_clips_of_ten_characters():
    extraction = drascula.extract()
    assert _real_root() == extraction.root
    assert len(extraction.clips) == 742
    assert extraction.unmatched == {"empty line": 21, "no text table for the clip's prefix": 18,
                                    "number past the character's text table": 2}
    by_utt = {c.utt: c for c in extraction.clips}
    assert by_utt["drascula-werewolf-031"].text == ("I'LL JUST RETIRE TO THE TIBET AND THINK ABOUT THE MEANING "
                                                    "OF LIFE")
    assert by_utt["drascula-john-001"].text == "THAT'S THE SECOND BIGGEST DOOR I'VE SEEN IN MY LIFE"
    assert "drascula-werewolf-019" not in by_utt          # its line is empty and the package has no L19.ALS
    wav, sr = by_utt["drascula-john-001"].read()
    assert sr == 11025 and 1.0 < len(wav) / sr < 6.0 and np.abs(wav).max() > 0.1


def test_the_command_writes_a_data_directory_and_reruns_the_same(tmp_path, capsys):
    from voxanon.cli import main

    root = tmp_path / "cache" / drascula.PACKAGE.folder
    folder = root / drascula.PACKAGE.data_path
    folder.mkdir(parents=True)
    (root / "SOURCE").write_text(f"drascula {drascula.PACKAGE.version} {drascula.PACKAGE.sha256}\n")
    (root / "usr/share/doc/drascula").mkdir(parents=True)
    (root / "usr/share/doc/drascula/copyright").write_text("Alcachofa Soft freeware licence\n")
    (folder / "drascula.dat").write_bytes(_dat(_tables()))
    tone = (128 + 60 * np.sin(2 * np.pi * 120 * np.arange(11025) / 11025)).astype(np.uint8).tobytes()
    for name in ("1.ALS", "2.ALS", "BJ2.ALS", "VB3.ALS"):
        (folder / name).write_bytes(tone)
    (folder / "D1.ALS").write_bytes(b"")                                   # does not decode: skipped, counted
    out = tmp_path / "out"
    assert main(["data", "games", str(out), "--game", "drascula", "--cache", str(tmp_path / "cache"), "--quiet"]) == 0
    manifest = json.loads((out / "drascula/manifest.json").read_text())
    assert manifest["clips"] == 4 and manifest["skipped_undecodable"] == {"D1.ALS": f"{folder / 'D1.ALS'}: empty clip"}
    assert manifest["package"]["copyright"] == "Alcachofa Soft freeware licence\n"
    assert manifest["characters"]["drascula-bj"]["gender"] == "f"
    assert (out / "drascula/spk2gender").read_text() == "drascula-bj f\ndrascula-john m\ndrascula-vonbraun m\n"
    assert (out / "drascula/text").read_text().splitlines()[1] == "drascula-john-001 LINE ONE OF TABLE ZERO"
    before = {p.name: p.read_text() for p in (out / "drascula").iterdir() if p.is_file()}
    assert main(["data", "games", str(out), "--game", "drascula", "--cache", str(tmp_path / "cache"), "--quiet"]) == 0
    assert {p.name: p.read_text() for p in (out / "drascula").iterdir() if p.is_file()} == before
    assert main(["data", "games", str(out), "--game", "drascula", "--cache", str(tmp_path), "--quiet"]) == 3
    assert "run tools/setup.sh" in capsys.readouterr().err


@pytest.mark.slow
def test_the_whole_real_game_is_written(tmp_path):
    from voxanon.data.games.write import write_game

    _real_root()
    manifest = write_game(drascula.extract(), tmp_path / "drascula", quiet=True)
    assert manifest["clips"] == 742 and manifest["skipped_undecodable"] == {}
    assert manifest["hours"] == pytest.approx(0.774, abs=0.002)
    assert manifest["characters"]["drascula-john"]["clips"] == 446
    assert "Alcachofa Soft" in manifest["package"]["copyright"]
