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

from voxanon.atomic import write_texts
from voxanon.errors import DataError  # noqa: F401  (re-exported)

#: genders of speakers (spk2gender) and of trial lists
GENDERS = ("f", "m")
#: every file a data directory may have, in the order they are described above
FILES = ("wav.scp", "utt2spk", "spk2utt", "spk2gender", "text", "utt2dur", "utt2emo", "spk2fold", "trials")
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
    #: file name -> id -> line number, filled by :func:`read_data_dir` for error messages
    lines: dict[str, dict[str, int]] = field(default_factory=dict, repr=False, compare=False)

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


def read_text_file(path: str | os.PathLike) -> str:
    """A UTF-8 text file's content; DataError naming the file (and line) when unreadable, not UTF-8 or with a BOM."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror or exc}); check that it exists and is readable") from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raise DataError(f"{path}:1: starts with a UTF-8 byte-order mark (BOM); save the file as UTF-8 without BOM")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataError(f"{path}:{line}: not valid UTF-8 (byte {raw[exc.start]:#04x}); re-encode the file as UTF-8") from None


def _read_lines(path: Path):
    """Yield (line_number, stripped line) for non-blank lines."""
    for n, line in enumerate(read_text_file(path).split("\n"), start=1):
        line = line.strip()
        if line:
            yield n, line


def _read_map(path: Path, rest_of_line: bool) -> tuple[dict[str, str], dict[str, int]]:
    """Read a ``key value`` file into (table, key -> line number); duplicates and missing values are errors."""
    out: dict[str, str] = {}
    where: dict[str, int] = {}
    for n, line in _read_lines(path):
        parts = line.split(maxsplit=1) if rest_of_line else line.split()
        if len(parts) != 2 and not (rest_of_line and len(parts) == 1 and path.name == "text"):
            raise DataError(
                f"{path}:{n}: malformed line {line!r}: expected '<id> <value>'"
                + ("" if rest_of_line else " (exactly two fields; ids cannot contain spaces)")
            )
        key, value = parts[0], (parts[1] if len(parts) > 1 else "")
        if key in out:
            raise DataError(f"{path}:{n}: duplicate id {key!r} (first seen on line {where[key]})")
        out[key] = value
        where[key] = n
    return out, where


def _read_spk2utt(path: Path) -> tuple[dict[str, list[str]], dict[str, int]]:
    out: dict[str, list[str]] = {}
    where: dict[str, int] = {}
    for n, line in _read_lines(path):
        parts = line.split()
        if len(parts) < 2:
            raise DataError(f"{path}:{n}: malformed line {line!r}: expected '<spk> <utt> [<utt> ...]'")
        if parts[0] in out:
            raise DataError(f"{path}:{n}: duplicate speaker {parts[0]!r} (first seen on line {where[parts[0]]})")
        out[parts[0]] = parts[1:]
        where[parts[0]] = n
    return out, where


def _read_trials(path: Path) -> tuple[list[Trial], dict[str, int]]:
    """Trials in file order; a repeated (speaker, utterance) pair is one trial with the last line's label.

    The VPC kits read ``trials`` into a dict keyed by the pair, which keeps the
    first position and the last label; voxanon scores the same trials.
    """
    trials: dict[tuple[str, str], Trial] = {}
    where: dict[str, int] = {}
    for n, line in _read_lines(path):
        parts = line.split()
        if len(parts) != 3 or parts[2] not in TRIAL_LABELS:
            raise DataError(f"{path}:{n}: malformed trial {line!r}: expected '<enroll_spk> <utt> target|nontarget'")
        where.setdefault(parts[1], n)
        trials[(parts[0], parts[1])] = Trial(parts[0], parts[1], parts[2] == "target")
    return list(trials.values()), where


def read_data_dir(path: str | os.PathLike, *, validate: bool = True) -> DataDir:
    """Read a Kaldi data directory; raise DataError (file, line, problem) if malformed."""
    path = Path(path)
    if not path.is_dir():
        raise DataError(f"{path}: {'not a folder' if path.exists() else 'no such folder'}; give a data directory")
    if not os.access(path, os.R_OK | os.X_OK):
        raise DataError(f"{path}: cannot read the folder (permission denied)")
    if not (path / "wav.scp").is_file():
        raise DataError(f"{path}: not a data directory (no wav.scp)")
    data = DataDir(path=path)
    for name, attr in _MAPS:
        if (path / name).is_file():
            table, data.lines[name] = _read_map(path / name, name in _REST_OF_LINE)
            setattr(data, attr, table)
    if (path / "trials").is_file():
        data.trials, data.lines["trials"] = _read_trials(path / "trials")
    spk2utt = None
    if (path / "spk2utt").is_file():
        spk2utt, data.lines["spk2utt"] = _read_spk2utt(path / "spk2utt")
    if validate:
        validate_data_dir(data, spk2utt)
    return data


def validate_data_dir(data: DataDir, spk2utt: dict[str, list[str]] | None = None) -> None:
    """Check cross-file consistency; raise DataError naming the file, line and id at fault."""
    root = data.path or Path("<data>")

    def at(name: str, key: str) -> str:
        line = data.lines.get(name, {}).get(key)
        return f"{root / name}:{line}" if line else str(root / name)

    utts = data.wav_scp
    for utt in data.utt2spk:
        if utt not in utts:
            raise DataError(f"{at('utt2spk', utt)}: utterance {utt!r} is in utt2spk but not in wav.scp")
    if data.utt2spk:
        for utt in utts:
            if utt not in data.utt2spk:
                raise DataError(f"{at('wav.scp', utt)}: utterance {utt!r} has no speaker in utt2spk")
    for name, table in (("text", data.text), ("utt2dur", data.utt2dur), ("utt2emo", data.utt2emo)):
        for utt in table:
            if utt not in utts:
                raise DataError(f"{at(name, utt)}: utterance {utt!r} is not in wav.scp")
    for utt, dur in data.utt2dur.items():
        try:
            float(dur)
        except ValueError:
            raise DataError(f"{at('utt2dur', utt)}: utterance {utt!r} has a non-numeric duration {dur!r}") from None
    for trial in data.trials:
        if trial.utt not in utts:
            raise DataError(f"{at('trials', trial.utt)}: trial utterance {trial.utt!r} is not in wav.scp")
    speakers = set(data.utt2spk.values())
    for spk, gender in data.spk2gender.items():
        if gender not in GENDERS:
            raise DataError(f"{at('spk2gender', spk)}: speaker {spk!r} has unknown gender {gender!r} (use f or m)")
    if data.spk2gender:
        for utt, spk in data.utt2spk.items():
            if spk not in data.spk2gender:
                raise DataError(f"{at('utt2spk', utt)}: speaker {spk!r} has no gender in spk2gender")
    for spk in data.spk2fold:
        if spk not in speakers:
            raise DataError(f"{at('spk2fold', spk)}: speaker {spk!r} is not in utt2spk")
    if spk2utt is not None:
        derived = data.spk2utt
        for spk, members in spk2utt.items():
            if sorted(members) != derived.get(spk, []):
                raise DataError(f"{at('spk2utt', spk)}: utterances of speaker {spk!r} do not match utt2spk")
        for utt, spk in data.utt2spk.items():
            if spk not in spk2utt:
                raise DataError(f"{at('utt2spk', utt)}: speaker {spk!r} is missing from spk2utt")


def data_dir_texts(data: DataDir) -> dict[str, str]:
    """File name -> content of every non-empty table of ``data`` (``spk2utt`` derived from ``utt2spk``)."""
    texts = {name: "".join(f"{k} {v}\n" for k, v in getattr(data, attr).items())
             for name, attr in _MAPS if getattr(data, attr)}
    if data.utt2spk:
        texts["spk2utt"] = "".join(f"{spk} {' '.join(u)}\n" for spk, u in data.spk2utt.items())
    if data.trials:
        texts["trials"] = "".join(f"{t.enroll_spk} {t.utt} {'target' if t.target else 'nontarget'}\n"
                                  for t in data.trials)
    return texts


def check_trial_labels(trial_dir: DataDir, spk2gender: dict[str, str]) -> None:
    """Raise DataError naming the trial file and gender when a gender has only target or only non-target trials."""
    for gender in GENDERS:
        labels = {t.target for t in trial_dir.trials if spk2gender.get(t.enroll_spk) == gender}
        if len(labels) == 1:
            have = "target" if labels == {True} else "non-target"
            raise DataError(f"{(trial_dir.path or Path('<trials>')) / 'trials'}: gender {gender} has only {have} "
                            "trials; an EER needs both target and non-target trials")


def _check_ids(path: Path, data: DataDir) -> None:
    """Raise DataError when an utterance or speaker id would break the one-record-a-line files."""
    for kind, ids in (("utterance", data.wav_scp), ("speaker", data.spk2gender), ("speaker", set(data.utt2spk.values()))):
        for key in ids:
            if not key or any(c.isspace() for c in key):
                raise DataError(f"{path}: {kind} id {key!r} contains whitespace; ids cannot contain spaces "
                                "(rename the file or speaker it comes from)")


def write_data_dir(data: DataDir, path: str | os.PathLike) -> Path:
    """Write every non-empty table of ``data`` to ``path`` (``spk2utt`` derived from ``utt2spk``).

    The files are written as one step (all to temporaries, then renamed; on an
    error none is replaced); a table that is empty leaves an existing file untouched.
    """
    path = Path(path)
    _check_ids(path, data)
    path.mkdir(parents=True, exist_ok=True)
    write_texts({path / name: text for name, text in data_dir_texts(data).items()})
    return path
