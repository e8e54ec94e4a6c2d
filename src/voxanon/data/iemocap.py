"""IEMOCAP preparation for the VPC 2024 emotion (SER) protocol.

Layout read (the official release)::

    IEMOCAP_ROOT/Session{1..5}/dialog/EmoEvaluation/<dialog>.txt
    IEMOCAP_ROOT/Session{1..5}/sentences/wav/<dialog>/<utt>.wav

In a label file each utterance has one summary line
``[start - end]<TAB><utt><TAB><label><TAB>[V, A, D]``; the other lines are the
individual annotators' votes and are ignored. Four classes are kept, as in the
VPC: ``neu``, ``sad``, ``ang`` and ``hap`` with ``exc`` (excitement) merged into
``hap``. Every other label (``fru``, ``sur``, ``fea``, ``dis``, ``oth``, ``xxx``)
is excluded and counted in the report.

Speakers. An utterance id such as ``Ses01F_impro01_F000`` or
``Ses03M_script02_1_M017`` names the session (``Ses01``), the actor wearing
the markers in that dialog (the letter after the session) and, in the last
field, the actor speaking the turn (the letter before the index). The speaker
is the session plus that last letter (``Ses01F``); the gender is that letter.

Folds (VPC 2024). Fold k holds out session k: the SER model of fold k is
trained on the other four sessions; one speaker of session k is in the
development set and the other in the evaluation set. ``spk2fold`` maps each
speaker to the fold whose model did not train on it. Which of the two speakers
of a session goes to development is chosen by gender (``dev_gender``, female by
default). Three data directories are written: ``IEMOCAP_all`` (all ten
speakers, used to train the fold models), ``IEMOCAP_dev`` and ``IEMOCAP_test``.

Bad input. A dialog whose label file is missing is skipped and reported (the
rest of the session is still usable); a wav file that is missing or whose
header cannot be read is skipped and reported; a session directory that is
missing or yields no utterance is an error, because its fold would have no
speakers.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import soundfile as sf

from voxanon.data import layout
from voxanon.data.kaldi import DataDir, DataError, write_data_dir
from voxanon.errors import ConfigError

#: the VPC emotion classes, in the order used for confusion matrices
EMOTIONS = ("neu", "sad", "ang", "hap")
#: label spellings (IEMOCAP codes and SER model labels) → VPC class; excitement merges into ``hap``
EMOTION_ALIASES = {
    "neu": "neu", "neutral": "neu",
    "hap": "hap", "happy": "hap", "happiness": "hap", "exc": "hap", "excited": "hap",
    "ang": "ang", "angry": "ang", "anger": "ang",
    "sad": "sad", "sadness": "sad",
}
#: every class voxanon's SER can learn, in table order: the VPC's four, then fear (EmoFilm has it; the VPC
#: leaves IEMOCAP's out, and so does `voxanon data iemocap`). A model learns the classes its training data has.
CLASSES = EMOTIONS + ("fea",)
CLASS_ALIASES = {**EMOTION_ALIASES, "fea": "fea", "fear": "fea", "fearful": "fea"}
SESSIONS = (1, 2, 3, 4, 5)

_UTT_ID = re.compile(r"^Ses(0[1-5])[FM]_\S+_([FM])\d+$")
_SUMMARY = re.compile(r"^\[\s*[\d.]+\s*-\s*[\d.]+\s*\]\s+(\S+)\s+(\S+)")


@dataclass
class PrepReport:
    """What the preparation kept and skipped, with reasons."""

    kept: dict[str, int] = field(default_factory=dict)
    excluded_labels: dict[str, int] = field(default_factory=dict)
    missing_label_files: list[str] = field(default_factory=list)
    bad_audio: list[str] = field(default_factory=list)
    bad_ids: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-serialisable form."""
        return {
            "kept_per_class": dict(self.kept),
            "excluded_labels": dict(self.excluded_labels),
            "missing_label_files": list(self.missing_label_files),
            "bad_audio": list(self.bad_audio),
            "bad_ids": list(self.bad_ids),
        }

    def summary(self) -> str:
        """Human-readable lines."""
        lines = [f"kept {sum(self.kept.values())} utterances: "
                 + ", ".join(f"{k} {self.kept.get(k, 0)}" for k in EMOTIONS)]
        if self.excluded_labels:
            lines.append("excluded (not one of the 4 classes): "
                         + ", ".join(f"{k} {v}" for k, v in sorted(self.excluded_labels.items())))
        for path in self.missing_label_files:
            lines.append(f"skipped dialog, label file missing: {path}")
        for item in self.bad_audio:
            lines.append(f"skipped utterance, audio unusable: {item}")
        for item in self.bad_ids:
            lines.append(f"skipped utterance, id not in IEMOCAP form: {item}")
        return "\n".join(lines)


def speaker_of(utt: str) -> tuple[str, str, int]:
    """Speaker id, gender (``f``/``m``) and session number of an IEMOCAP utterance id.

    Raises
    ------
    DataError
        The id does not have the ``SesNN[FM]_<dialog>_[FM]NNN`` form.
    """
    m = _UTT_ID.match(utt)
    if not m:
        raise DataError(f"{utt!r} is not an IEMOCAP utterance id (expected e.g. Ses01F_impro01_F000)")
    session, letter = m.group(1), m.group(2)
    return f"Ses{session}{letter}", letter.lower(), int(session)


def vpc_emotion(label: str) -> str | None:
    """The VPC class of an emotion label (case-insensitive), or None if it is not one of the four."""
    return EMOTION_ALIASES.get(label.strip().lower())


def emotion_class(label: str) -> str | None:
    """The SER class (one of :data:`CLASSES`) of an emotion label (case-insensitive), or None."""
    return CLASS_ALIASES.get(label.strip().lower())


def classes_of(labels: Iterable[str]) -> tuple[str, ...]:
    """The classes among ``labels`` (SER classes), in :data:`CLASSES` order."""
    present = set(labels)
    return tuple(c for c in CLASSES if c in present)


def read_labels(path: str | os.PathLike) -> dict[str, str]:
    """Utterance → raw IEMOCAP label from one ``EmoEvaluation`` file (summary lines only)."""
    out: dict[str, str] = {}
    for line in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        m = _SUMMARY.match(line.strip())
        if m:
            out[m.group(1)] = m.group(2).lower()
    return out


def _session_utterances(root: Path, session: int, report: PrepReport) -> list[tuple[str, str, str]]:
    """(utt, wav path, VPC class) for the 4-class utterances of one session."""
    sdir = root / f"Session{session}"
    wav_root = sdir / "sentences" / "wav"
    label_dir = sdir / "dialog" / "EmoEvaluation"
    if not wav_root.is_dir():
        raise DataError(f"{wav_root}: missing; IEMOCAP root must hold Session1..Session5 "
                        f"(fold {session} would have no speakers)")
    out = []
    for dialog_dir in sorted(p for p in wav_root.iterdir() if p.is_dir()):
        label_file = label_dir / f"{dialog_dir.name}.txt"
        if not label_file.is_file():
            report.missing_label_files.append(str(label_file))
            continue
        for utt, raw in read_labels(label_file).items():
            emo = vpc_emotion(raw)
            if emo is None:
                report.excluded_labels[raw] = report.excluded_labels.get(raw, 0) + 1
                continue
            wav = dialog_dir / f"{utt}.wav"
            try:
                speaker_of(utt)
            except DataError:
                report.bad_ids.append(f"{utt} ({label_file})")
                continue
            try:
                if sf.info(str(wav)).frames <= 0:
                    raise RuntimeError("no samples")
            except Exception as exc:  # missing or unreadable header
                report.bad_audio.append(f"{utt}: {wav}: {exc}")
                continue
            out.append((utt, str(wav.resolve()), emo))
    if not out:
        raise DataError(f"{sdir}: no usable 4-class utterance found (fold {session} would have no speakers)")
    return out


def prepare_iemocap(root: str | os.PathLike, out: str | os.PathLike, *,
                    dev_gender: str = "f") -> PrepReport:
    """Write ``IEMOCAP_all``, ``IEMOCAP_dev`` and ``IEMOCAP_test`` data directories under ``out``.

    Parameters
    ----------
    root : path
        The IEMOCAP release folder (holding ``Session1`` … ``Session5``).
    out : path
        Where the data directories (and ``prep_report.json``) are written.
    dev_gender : {"f", "m"}
        The speaker of each session put in the development set; the other one
        goes to the evaluation set.
    """
    if dev_gender not in ("f", "m"):
        raise ConfigError(f"dev_gender must be 'f' or 'm', got {dev_gender!r}")
    root, out = Path(root), Path(out)
    if not root.is_dir():
        raise DataError(f"{root}: IEMOCAP root not found")
    report = PrepReport()
    data = DataDir()
    for session in SESSIONS:
        for utt, wav, emo in _session_utterances(root, session, report):
            spk, gender, _ = speaker_of(utt)
            data.wav_scp[utt] = wav
            data.utt2spk[utt] = spk
            data.utt2emo[utt] = emo
            data.spk2gender[spk] = gender
            data.spk2fold[spk] = str(session)
            report.kept[emo] = report.kept.get(emo, 0) + 1
    for session in SESSIONS:
        genders = {g for s, g in data.spk2gender.items() if data.spk2fold[s] == str(session)}
        if genders != {"f", "m"}:
            raise DataError(f"Session{session}: expected one female and one male speaker, "
                            f"found genders {sorted(genders)}")
    write_data_dir(data, out / layout.IEMOCAP_ALL)
    for name, wanted in ((layout.IEMOCAP_DEV, dev_gender), (layout.IEMOCAP_TEST, "m" if dev_gender == "f" else "f")):
        write_data_dir(data.subset([u for u in data.utts if data.gender_of_utt(u) == wanted]), out / name)
    (out / "prep_report.json").write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
    return report
