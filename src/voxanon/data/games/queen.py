"""Flight of the Amazon Queen (John Passfield and Steven Stamatiadis, freeware): speech clips and dialogue lines
from the game's archive ``queen.1c``.

The archive, read here from its bytes: ``QTBL``, a 5-byte version, a big-endian u32, a big-endian u16 entry
count, then per entry a 12-byte NUL-padded name, a u8 data-file number and big-endian u32 offset and size of
the member in the archive. Speech clips are ``*.SB`` members (MP3, 11,025 Hz mono).

A dialogue file (``*.DOG``) holds its lines as records: a big-endian u16 line id, a u8 length and that many
ASCII characters, then a NUL. The first record of a line id is what Joe, the hero, says; the second is the
other character's reply. Gesture codes (``*FL``, ``*FR``, ``*NN``) split a line into segments, one clip each.
A dialogue clip is named ``<key><id><J|P><segment>`` (key: two characters; id: four hex digits; J: Joe,
P: the other character). The archive does not say which key belongs to which dialogue file: each file gets the
key whose clips best cover the clips its lines call for (:func:`assign_keys`: one file per key, Jaccard index
at least :data:`MIN_JACCARD`, no other free key as good); clips that no dialogue file names, that two files give
different lines, or whose text is empty, are counted and left out. Cut-scene clips (``*.CUT``) and Joe's
descriptions (``JOE*.SB``) are not matched (their speakers and lines are kept in formats not read here) and are
counted as such; so are the other clips (dialogue openings ``..SSSS..``, ``..XXXX..`` and the like), whose
lines no file read here names.
"""

from __future__ import annotations

import io
import re
import struct
from collections import defaultdict
from pathlib import Path

import numpy as np

from voxanon.data.games.common import Extraction, GameClip, Package, licence, package_root, vpc_text
from voxanon.errors import DataError

PACKAGE = Package("flight-of-the-amazon-queen", "1.0.0-9",
                  "40c08fd258d6fe95c46c1eaf5e9137f84ba330657995a281bd887c94a560a0f1",
                  "usr/share/scummvm/flight-of-the-amazon-queen")
ARCHIVE = "queen.1c"
#: the least Jaccard index between a dialogue file's expected clips and a key's clips for the file to get the key
MIN_JACCARD = 0.5
JOE = "queen-joe"
_ENTRY = 21
_DIALOGUE_CLIP = re.compile(r"([0-9A-Z]{2})([0-9A-F]{4})([JP])([1-9])")
_CODE = re.compile(r"\*(?:F[LR]|[0-9]{2})")


def read_table(data: bytes, name: str = ARCHIVE) -> dict[str, tuple[int, int]]:
    """The archive's members: name -> (offset, size).

    Raises
    ------
    DataError
        Not a ``QTBL`` archive, or its table or a member runs past the end (a truncated file).
    """
    if not data.startswith(b"QTBL") or len(data) < 15:
        raise DataError(f"{name}: not a Queen archive (no 'QTBL' table): unpack flight-of-the-amazon-queen again "
                        f"(tools/setup.sh)")
    (count,) = struct.unpack_from(">H", data, 13)
    if 15 + count * _ENTRY > len(data):
        raise DataError(f"{name}: its table of {count} members runs past the end of the file ({len(data)} bytes): "
                        f"the archive is truncated; unpack flight-of-the-amazon-queen again (tools/setup.sh)")
    members = {}
    for i in range(count):
        pos = 15 + i * _ENTRY
        member = data[pos:pos + 12].split(b"\0")[0].decode("ascii", errors="replace")
        offset, size = struct.unpack_from(">II", data, pos + 13)
        if offset + size > len(data):
            raise DataError(f"{name}: member {member} ends at byte {offset + size}, past the end of the file "
                            f"({len(data)} bytes): the archive is truncated; unpack flight-of-the-amazon-queen "
                            f"again (tools/setup.sh)")
        members[member] = (offset, size)
    return members


def dialogue_records(data: bytes) -> list[tuple[int, str]]:
    """The (line id, text) records of a dialogue file, in file order."""
    records, pos = [], 0
    while pos + 3 < len(data):
        length = data[pos + 2]
        end = pos + 3 + length
        if length and end < len(data) and data[end] == 0 and all(32 <= c < 127 for c in data[pos + 3:end]):
            records.append((struct.unpack_from(">H", data, pos)[0], data[pos + 3:end].decode("ascii")))
            pos = end
        else:
            pos += 1
    return records


def segments(line: str) -> list[str]:
    """A line's spoken segments: the text between gesture codes, empty pieces dropped."""
    return [s.strip() for s in _CODE.split(line) if s.strip()]


def expected_clips(records: list[tuple[int, str]]) -> dict[str, tuple[str, str]]:
    """The clips a dialogue file's lines call for: ``<id><J|P><segment>`` -> (role, text)."""
    seen: dict[int, int] = defaultdict(int)
    out = {}
    for line_id, text in records:
        role = "J" if seen[line_id] == 0 else "P" if seen[line_id] == 1 else None
        seen[line_id] += 1
        if role:
            for n, segment in enumerate(segments(text), 1):
                if n <= 9:
                    out[f"{line_id:04X}{role}{n}"] = (role, segment)
    return out


def assign_keys(expected: dict[str, dict[str, tuple[str, str]]], clips_by_key: dict[str, set[str]]
                ) -> dict[str, str]:
    """Dialogue file -> key, one file per key: the files with the best covers first, each takes the free key
    whose clips best cover its expected clips (Jaccard index at least :data:`MIN_JACCARD` and strictly better
    than any other free key's); a file without such a key is left out."""
    def ranked(want: dict, free: set[str]) -> list[tuple[float, str]]:
        return sorted(((len(want.keys() & clips_by_key[k]) / len(want.keys() | clips_by_key[k]), k)
                       for k in free), reverse=True)

    free, keys = set(clips_by_key), {}
    pending = {dog: want for dog, want in expected.items() if want}
    while pending:
        dog = max(pending, key=lambda d: (ranked(pending[d], free) or [(0.0, "")])[0])
        scores = ranked(pending.pop(dog), free)
        if scores and scores[0][0] >= MIN_JACCARD and (len(scores) == 1 or scores[1][0] < scores[0][0]):
            keys[dog] = scores[0][1]
            free.discard(scores[0][1])
    return keys


#: dialogue files whose other characters differ although their names differ only in digits: MAN2's man
#: introduces himself as Ernest Wilkins, and GE2E puts the centroids of the two files' replies 0.84 apart (each
#: character with 20 clips or more is at least 0.977 from itself)
DISTINCT_FILES = {"MAN1.DOG", "MAN2.DOG"}


def character(dog: str) -> str:
    """The speaker id of a dialogue file's other character: its name without digits (``AND1.DOG`` ->
    ``queen-and``), except for :data:`DISTINCT_FILES` (``MAN2.DOG`` -> ``queen-man2``)."""
    stem = dog.rsplit(".", 1)[0]
    return "queen-" + (stem if dog in DISTINCT_FILES else re.sub(r"\d+$", "", stem)).lower()


def _reader(path: Path, offset: int, size: int, name: str):
    def read() -> tuple[np.ndarray, int]:
        import soundfile as sf

        with open(path, "rb") as fh:
            fh.seek(offset)
            raw = fh.read(size)
        try:
            wav, sr = sf.read(io.BytesIO(raw), dtype="float32", always_2d=True)
        except (sf.LibsndfileError, RuntimeError, ValueError) as exc:
            raise DataError(f"{path}: member {name} does not decode as MP3 ({exc})") from None
        return wav.mean(axis=1), sr
    return read


def _unmatched_reason(name: str, cut_scenes: set[str]) -> str:
    """Why the clip ``name`` has no line: a cut-scene clip is named after its ``.CUT`` file (padded with ``_`` to
    five characters), then a two-digit line and a segment digit."""
    if name.startswith("JOE"):
        return "Joe's descriptions (JOE*.SB): their lines are not read"
    if _DIALOGUE_CLIP.fullmatch(name[:-3]):
        return "dialogue clip no dialogue file's lines name"
    if name[:-6].rstrip("_") in cut_scenes:
        return "cut-scene clip: its speaker is not read"
    return "other clip: no text file names it"


def match_clips(path: Path, data: bytes) -> tuple[list[GameClip], dict[str, int]]:
    """The archive's speech clips matched to dialogue lines; and the clips left out, counted by reason."""
    members = read_table(data, str(path))
    clips_by_key: dict[str, set[str]] = defaultdict(set)
    for name in members:
        m = _DIALOGUE_CLIP.fullmatch(name[:-3]) if name.endswith(".SB") else None
        if m:
            clips_by_key[m.group(1)].add(name[2:-3])
    expected = {}
    for name, (offset, size) in sorted(members.items()):
        if name.endswith(".DOG"):
            expected[name] = expected_clips(dialogue_records(data[offset:offset + size]))
    lines: dict[str, tuple[str, str]] = {}
    conflicts: set[str] = set()
    for dog, key in sorted(assign_keys(expected, clips_by_key).items()):
        for stem, (role, text) in expected[dog].items():
            clip = f"{key}{stem}.SB"
            speaker = JOE if role == "J" else character(dog)
            if clip in members and lines.setdefault(clip, (speaker, text)) != (speaker, text):
                conflicts.add(clip)
    clips, unmatched = [], defaultdict(int)
    cut_scenes = {n[:-4] for n in members if n.endswith(".CUT")}
    for name in sorted(n for n in members if n.endswith(".SB")):
        if name in conflicts:
            unmatched["two dialogue files give different lines"] += 1
        elif name not in lines:
            unmatched[_unmatched_reason(name, cut_scenes)] += 1
        elif not vpc_text(lines[name][1]):
            unmatched["empty line"] += 1
        else:
            speaker, text = lines[name]
            offset, size = members[name]
            clips.append(GameClip(f"{speaker}-{name[:-3].lower()}", speaker, name, vpc_text(text),
                                  _reader(path, offset, size, name)))
    return sorted(clips, key=lambda c: c.utt), dict(unmatched)


def extract(cache: str | Path | None = None) -> Extraction:
    """The Queen's dialogue clips matched to their lines, from the package set-up unpacked into ``cache``."""
    root = package_root(PACKAGE, cache)
    path = root / PACKAGE.data_path / ARCHIVE
    if not path.is_file():
        raise DataError(f"{path}: missing from the unpacked package: unpack flight-of-the-amazon-queen again "
                        f"(tools/setup.sh)")
    clips, unmatched = match_clips(path, path.read_bytes())
    licence(root, PACKAGE)
    speakers = sorted({c.speaker for c in clips})
    return Extraction("queen", PACKAGE, root, clips, unmatched,
                      {s: "Joe King, the hero" if s == JOE else f"the character of the dialogue files "
                       f"{s.removeprefix('queen-').upper()}*.DOG" for s in speakers}, {JOE: "m"})
