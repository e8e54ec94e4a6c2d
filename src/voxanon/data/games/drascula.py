"""Drascula: The Vampire Strikes Back (Alcachofa Soft, freeware): 783 speech clips and their English lines.

The clips are ``<prefix><N>.ALS`` files: raw unsigned 8-bit mono PCM at 11,025 Hz, one prefix per character
(none for the hero, John Hacker). The English lines are in ``drascula.dat`` (the engine data file ScummVM ships),
read here from its bytes: the file holds groups of text tables, each a big-endian u16 entry count followed by six
languages (English first), each a big-endian u16 size (itself included) and that many entries; an entry is a
big-endian u32 size (itself included) and Latin-1 text padded with NULs to a multiple of four; two zero bytes
follow each language. The first ten groups are the characters' lines, in the order of :data:`CHARACTERS`; entry
N is what clip N says (entry 0 is empty). Clips whose prefix has no table (``S``, ``F``), whose number is past
their table's end, or whose line is empty are counted and left out.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np

from voxanon.data.games.common import Extraction, GameClip, Package, licence, package_root, vpc_text
from voxanon.errors import DataError

PACKAGE = Package("drascula", "1.0+ds4-2", "ed4af8e2d41ad446e2f3b73533daa1804e2f13f62f596c0b02b8dc39544f22b4",
                  "usr/share/scummvm/drascula/en")
SAMPLE_RATE = 11025
#: clip prefix -> (speaker id, who it is, gender as the game's lines give it); in the order of their text groups
#: in drascula.dat
CHARACTERS = {
    "": ("drascula-john", "John Hacker, the hero", "m"),
    "D": ("drascula-drascula", "Count Drascula", "m"),
    "B": ("drascula-drunk", "the village drunk", "m"),
    "BJ": ("drascula-bj", "B.J. (Billie Jean)", "f"),
    "E": ("drascula-desiderio", "Uncle Desiderio, the drunkard in Drascula's castle", "m"),
    "I": ("drascula-igor", "Igor, Drascula's servant", "m"),
    "L": ("drascula-werewolf", "the werewolf", "m"),
    "P": ("drascula-pianist", "the pianist", "m"),
    "T": ("drascula-bartender", "the bartender", "m"),
    "VB": ("drascula-vonbraun", "Professor Von Braun", "m"),
}
_LANGUAGES = 6
_CLIP = re.compile(r"([A-Z]*)(\d+)\.ALS")


def _entries(data: bytes, pos: int, count: int) -> tuple[list[bytes], int] | None:
    """``count`` entries from ``pos``: (texts, end), or None where the bytes are not entries."""
    texts = []
    for _ in range(count):
        if pos + 4 > len(data):
            return None
        (size,) = struct.unpack_from(">I", data, pos)
        if size < 4 or size % 4 or pos + size > len(data):
            return None
        text = data[pos + 4:pos + size].rstrip(b"\0")
        if b"\0" in text:
            return None
        texts.append(text)
        pos += size
    return texts, pos


def _group(data: bytes, pos: int) -> tuple[list[bytes], int] | None:
    """The group of text tables at ``pos``: (its English texts, end), or None where there is none."""
    (count,) = struct.unpack_from(">H", data, pos)
    english = None
    pos += 2
    for _ in range(_LANGUAGES):
        if count == 0 or pos + 2 > len(data):
            return None
        (size,) = struct.unpack_from(">H", data, pos)
        table = _entries(data, pos + 2, count)
        if table is None or table[1] != pos + size or data[table[1]:table[1] + 2] != b"\0\0":
            return None
        english = table[0] if english is None else english
        pos = table[1] + 2
    return english, pos


def text_tables(data: bytes, name: str = "drascula.dat") -> list[list[str]]:
    """The English text table of each group of ``drascula.dat``, in file order.

    Raises
    ------
    DataError
        Fewer groups than :data:`CHARACTERS` were found (a truncated or different file).
    """
    if not data.startswith(b"DRASCULA"):
        raise DataError(f"{name}: not ScummVM's drascula.dat (no 'DRASCULA' signature): unpack the drascula "
                        f"package again (tools/setup.sh)")
    tables, pos = [], 8
    while pos + 2 <= len(data):
        group = _group(data, pos)
        if group is None:
            pos += 1
            continue
        tables.append([t.decode("latin-1") for t in group[0]])
        pos = group[1]
    if len(tables) < len(CHARACTERS):
        raise DataError(f"{name}: {len(tables)} text groups found, expected at least {len(CHARACTERS)} (the "
                        f"characters' lines): the file is truncated or another version; unpack the drascula "
                        f"package again (tools/setup.sh)")
    return tables


def _reader(path: Path):
    def read() -> tuple[np.ndarray, int]:
        raw = np.frombuffer(path.read_bytes(), dtype=np.uint8)
        if raw.size == 0:
            raise DataError(f"{path}: empty clip")
        return (raw.astype(np.float32) - 128.0) / 128.0, SAMPLE_RATE
    return read


def match_clips(folder: Path, tables: list[list[str]]) -> tuple[list[GameClip], dict[str, int]]:
    """The ``*.ALS`` clips of ``folder`` with their lines; and the clips left out, counted by reason."""
    line_of = dict(zip(CHARACTERS, tables))
    clips, unmatched = [], {}
    for path in sorted(folder.glob("*.ALS")):
        m = _CLIP.fullmatch(path.name)
        prefix, number = (m.group(1), int(m.group(2))) if m else (None, 0)
        if prefix not in line_of:
            reason = "no text table for the clip's prefix"
        elif number >= len(line_of[prefix]):
            reason = "number past the character's text table"
        elif not vpc_text(line_of[prefix][number]):
            reason = "empty line"
        else:
            speaker = CHARACTERS[prefix][0]
            clips.append(GameClip(f"{speaker}-{number:03d}", speaker, path.name,
                                  vpc_text(line_of[prefix][number]), _reader(path)))
            continue
        unmatched[reason] = unmatched.get(reason, 0) + 1
    return sorted(clips, key=lambda c: c.utt), unmatched


def extract(cache: str | Path | None = None) -> Extraction:
    """Drascula's clips matched to their English lines, from the package set-up unpacked into ``cache``."""
    root = package_root(PACKAGE, cache)
    folder = root / PACKAGE.data_path
    dat = folder / "drascula.dat"
    if not dat.is_file():
        raise DataError(f"{dat}: missing from the unpacked package: unpack drascula again (tools/setup.sh)")
    clips, unmatched = match_clips(folder, text_tables(dat.read_bytes(), str(dat)))
    licence(root, PACKAGE)
    return Extraction("drascula", PACKAGE, root, clips, unmatched, {spk: who for spk, who, _ in CHARACTERS.values()},
                      {spk: gender for spk, _, gender in CHARACTERS.values()})
