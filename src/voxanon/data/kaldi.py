"""Kaldi-style data directories as the VPC uses them.

Files (all optional except ``wav.scp``): ``wav.scp``, ``utt2spk``,
``spk2utt``, ``spk2gender``, ``text``, ``utt2dur``, ``utt2emo``,
``spk2fold``, ``trials``. Each is UTF-8, one record a line, fields separated
by whitespace; blank lines are ignored. Ids are matched exactly, never by
substring. Every validation error names the file, the line and the problem.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

GENDERS = ("f", "m")
TRIAL_LABELS = ("target", "nontarget")

#: files whose second field is the rest of the line (may contain spaces)
_REST_OF_LINE = {"wav.scp", "text"}
#: (file, attribute) pairs of the simple ``key value`` maps
_MAPS = (
    ("wav.scp", "wav_scp"),
    ("utt2spk", "utt2spk"),
    ("spk2gender", "spk2gender"),
    ("text", "text"),
    ("utt2dur", "utt2dur"),
    ("utt2emo", "utt2emo"),
    ("spk2fold", "spk2fold"),
)


class DataError(Exception):
    """A malformed or inconsistent data directory."""


@dataclass(frozen=True)
class Trial:
    """One verification trial: enrolled speaker vs trial utterance."""

    enroll_spk: str
    utt: str
    target: bool


@dataclass
class DataDir:
    """In-memory view of a Kaldi data directory (dicts keep file order)."""

    wav_scp: dict[str, str] = field(default_factory=dict)
    utt2spk: dict[str, str] = field(default_factory=dict)
    spk2gender: dict[str, str] = field(default_factory=dict)
    text: dict[str, str] = field(default_factory=dict)
    utt2dur: dict[str, str] = field(default_factory=dict)
    utt2emo: dict[str, str] = field(default_factory=dict)
    spk2fold: dict[str, str] = field(default_factory=dict)
    trials: list[Trial] = field(default_factory=list)
    path: Path | None = None

    @property
    def utts(self) -> list[str]:
        """Utterance ids in ``wav.scp`` order."""
        return list(self.wav_scp)

    @property
    def spk2utt(self) -> dict[str, list[str]]:
        """Speaker → utterances, derived from ``utt2spk`` (sorted ids, like Kaldi)."""
        out: dict[str, list[str]] = {}
        for utt, spk in self.utt2spk.items():
            out.setdefault(spk, []).append(utt)
        return {spk: sorted(utts) for spk, utts in sorted(out.items())}

    def gender_of_utt(self, utt: str) -> str:
        """Gender of an utterance's speaker."""
        return self.spk2gender[self.utt2spk[utt]]

    def subset(self, utts: list[str]) -> "DataDir":
        """A data directory restricted to ``utts`` (trials kept when their utterance is)."""
        keep = set(utts)
        spks = {self.utt2spk[u] for u in utts if u in self.utt2spk}

        def pick(d: dict[str, str], keys: set[str]) -> dict[str, str]:
            return {k: v for k, v in d.items() if k in keys}

        return DataDir(
            wav_scp=pick(self.wav_scp, keep),
            utt2spk=pick(self.utt2spk, keep),
            spk2gender=pick(self.spk2gender, spks),
            text=pick(self.text, keep),
            utt2dur=pick(self.utt2dur, keep),
            utt2emo=pick(self.utt2emo, keep),
            spk2fold=pick(self.spk2fold, spks),
            trials=[t for t in self.trials if t.utt in keep],
        )


def _read_lines(path: Path):
    """Yield (line_number, stripped line) for non-blank lines."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not valid UTF-8 ({exc})") from exc
    for n, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if line:
            yield n, line


def _read_map(path: Path, rest_of_line: bool) -> dict[str, str]:
    """Read a ``key value`` file; duplicate keys and missing values are errors."""
    out: dict[str, str] = {}
    for n, line in _read_lines(path):
        parts = line.split(maxsplit=1) if rest_of_line else line.split()
        if len(parts) != 2 and not (rest_of_line and len(parts) == 1 and path.name == "text"):
            raise DataError(
                f"{path}:{n}: malformed line {line!r}: expected '<id> <value>'"
                + ("" if rest_of_line else " (exactly two fields)")
            )
        key, value = parts[0], (parts[1] if len(parts) > 1 else "")
        if key in out:
            raise DataError(f"{path}:{n}: duplicate id {key!r} (first seen earlier in the file)")
        out[key] = value
    return out


def _read_spk2utt(path: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for n, line in _read_lines(path):
        parts = line.split()
        if len(parts) < 2:
            raise DataError(f"{path}:{n}: malformed line {line!r}: expected '<spk> <utt> [<utt> ...]'")
        if parts[0] in out:
            raise DataError(f"{path}:{n}: duplicate speaker {parts[0]!r}")
        out[parts[0]] = parts[1:]
    return out


def _read_trials(path: Path) -> list[Trial]:
    trials: list[Trial] = []
    seen: set[tuple[str, str]] = set()
    for n, line in _read_lines(path):
        parts = line.split()
        if len(parts) != 3 or parts[2] not in TRIAL_LABELS:
            raise DataError(f"{path}:{n}: malformed trial {line!r}: expected '<enroll_spk> <utt> target|nontarget'")
        if (parts[0], parts[1]) in seen:
            raise DataError(f"{path}:{n}: duplicate trial {parts[0]} {parts[1]}")
        seen.add((parts[0], parts[1]))
        trials.append(Trial(parts[0], parts[1], parts[2] == "target"))
    return trials


def read_data_dir(path: str | os.PathLike, *, validate: bool = True) -> DataDir:
    """Read a Kaldi data directory; raise DataError (file, line, problem) if malformed."""
    path = Path(path)
    if not (path / "wav.scp").is_file():
        raise DataError(f"{path}: not a data directory (no wav.scp)")
    data = DataDir(path=path)
    for name, attr in _MAPS:
        if (path / name).is_file():
            setattr(data, attr, _read_map(path / name, name in _REST_OF_LINE))
    if (path / "trials").is_file():
        data.trials = _read_trials(path / "trials")
    spk2utt = _read_spk2utt(path / "spk2utt") if (path / "spk2utt").is_file() else None
    if validate:
        validate_data_dir(data, spk2utt)
    return data


def validate_data_dir(data: DataDir, spk2utt: dict[str, list[str]] | None = None) -> None:
    """Check cross-file consistency; raise DataError naming the file and id at fault."""
    where = data.path or Path("<data>")
    utts = data.wav_scp
    for utt in data.utt2spk:
        if utt not in utts:
            raise DataError(f"{where / 'utt2spk'}: utterance {utt!r} is in utt2spk but not in wav.scp")
    if data.utt2spk:
        for utt in utts:
            if utt not in data.utt2spk:
                raise DataError(f"{where / 'wav.scp'}: utterance {utt!r} has no speaker in utt2spk")
    for name, table in (("text", data.text), ("utt2dur", data.utt2dur), ("utt2emo", data.utt2emo)):
        for utt in table:
            if utt not in utts:
                raise DataError(f"{where / name}: utterance {utt!r} is not in wav.scp")
    for utt, dur in data.utt2dur.items():
        try:
            float(dur)
        except ValueError:
            raise DataError(f"{where / 'utt2dur'}: utterance {utt!r} has a non-numeric duration {dur!r}") from None
    speakers = set(data.utt2spk.values())
    for spk, gender in data.spk2gender.items():
        if gender not in GENDERS:
            raise DataError(f"{where / 'spk2gender'}: speaker {spk!r} has unknown gender {gender!r} (use f or m)")
    if data.spk2gender:
        for spk in speakers:
            if spk not in data.spk2gender:
                raise DataError(f"{where / 'spk2gender'}: speaker {spk!r} (from utt2spk) has no gender")
    for spk in data.spk2fold:
        if spk not in speakers:
            raise DataError(f"{where / 'spk2fold'}: speaker {spk!r} is not in utt2spk")
    if spk2utt is not None:
        derived = data.spk2utt
        for spk, members in spk2utt.items():
            if sorted(members) != derived.get(spk, []):
                raise DataError(f"{where / 'spk2utt'}: speaker {spk!r} does not match utt2spk")
        missing = set(derived) - set(spk2utt)
        if missing:
            raise DataError(f"{where / 'spk2utt'}: speaker {sorted(missing)[0]!r} from utt2spk is missing")


def _write_map(path: Path, table: dict[str, str]) -> None:
    path.write_text("".join(f"{k} {v}\n" for k, v in table.items()), encoding="utf-8")


def write_data_dir(data: DataDir, path: str | os.PathLike) -> Path:
    """Write every non-empty table of ``data`` to ``path`` (``spk2utt`` derived from ``utt2spk``)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    for name, attr in _MAPS:
        table = getattr(data, attr)
        if table:
            _write_map(path / name, table)
    if data.utt2spk:
        (path / "spk2utt").write_text(
            "".join(f"{spk} {' '.join(u)}\n" for spk, u in data.spk2utt.items()), encoding="utf-8"
        )
    if data.trials:
        (path / "trials").write_text(
            "".join(f"{t.enroll_spk} {t.utt} {'target' if t.target else 'nontarget'}\n" for t in data.trials),
            encoding="utf-8",
        )
    return path
