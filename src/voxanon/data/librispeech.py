"""VPC LibriSpeech preparation: ``libri_{dev,test}_{enrolls,trials_f,trials_m}`` and ``train-clean-360``.

Reads a local LibriSpeech tree (``<subset>/<spk>/<chapter>/<spk>-<chapter>-<n>.flac``,
``<spk>-<chapter>.trans.txt``, ``SPEAKERS.TXT`` for gender) and writes Kaldi
data directories whose ``wav.scp`` decodes on the fly (``flac -c -d -s x.flac |``).

With official VPC lists (``<lists>/libri_dev_enrolls/enrolls``: one utterance
per line; ``<lists>/libri_dev_trials_f/trials``: ``spk utt target|nontarget``)
they are used exactly. Otherwise the VPC construction is followed: in each
gender a share of the speakers is enrolled with some of their utterances; the
remaining utterances of all speakers (enrolled or not) are trial utterances,
and every same-gender enrolled speaker is tried against every trial
utterance, so speakers who are not enrolled appear only as impostors.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import numpy as np

from voxanon.data import layout
from voxanon.data.kaldi import (
    GENDERS,
    DataDir,
    DataError,
    Trial,
    read_text_file,
    write_data_dir,
)
from voxanon.errors import ConfigError
from voxanon.ranges import Range

SUBSETS = {"dev": "dev-clean", "test": "test-clean"}
TRAIN_SUBSET = layout.TRAIN_360
#: trial constructions: the VPC's full grid, or that of "Anonymization, Not Elimination" (:func:`build_paper_sets`)
TRIAL_MODES = ("vpc", "paper")
#: utterance durations (s) of the paper's acoustic trials
PAPER_MIN_DUR, PAPER_MAX_DUR = 5.0, 15.0


def _find(root: Path, name: str) -> Path | None:
    for base in (root, root / "LibriSpeech"):
        if (base / name).exists():
            return base / name
    return None


def read_speakers(path: Path) -> dict[str, str]:
    """Speaker id → gender (f/m) from ``SPEAKERS.TXT`` (``ID | SEX | SUBSET | MINUTES | NAME``)."""
    out = {}
    for n, line in enumerate(read_text_file(path).splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith(";"):
            continue
        fields = [f.strip() for f in line.split("|")]
        if len(fields) < 2 or fields[1].lower() not in GENDERS:
            raise DataError(f"{path}:{n}: malformed speaker line {line!r}: expected 'ID | F/M | ...'")
        out[fields[0]] = fields[1].lower()
    return out


def read_subset(subset_dir: Path, spk2gender_all: dict[str, str], speakers_file: Path, *,
                durations: bool = False) -> DataDir:
    """One LibriSpeech subset as a data directory (pipe ``wav.scp``, text, genders; ``utt2dur`` when asked)."""
    data = DataDir(path=subset_dir)
    flacs = sorted(subset_dir.glob("*/*/*.flac"))
    if not flacs:
        raise DataError(f"{subset_dir}: no .flac files in <speaker>/<chapter>/ folders")
    transcripts: dict[Path, dict[str, str]] = {}
    for flac in flacs:
        utt, chapter_dir = flac.stem, flac.parent
        spk = chapter_dir.parent.name
        trans = chapter_dir / f"{spk}-{chapter_dir.name}.trans.txt"
        if chapter_dir not in transcripts:
            if not trans.is_file():
                raise DataError(f"{trans}: transcript missing (needed for {flac})")
            transcripts[chapter_dir] = dict(
                line.split(maxsplit=1) if " " in line.strip() else (line.strip(), "")
                for line in read_text_file(trans).splitlines() if line.strip())
        if utt not in transcripts[chapter_dir]:
            raise DataError(f"{trans}: no transcript line for utterance {utt} ({flac})")
        if spk not in spk2gender_all:
            raise DataError(f"{speakers_file}: speaker {spk} (from {flac}) is not listed; its gender is unknown")
        data.wav_scp[utt] = f"flac -c -d -s {shlex.quote(str(flac.resolve()))} |"
        data.utt2spk[utt] = spk
        data.text[utt] = transcripts[chapter_dir][utt]
        data.spk2gender[spk] = spk2gender_all[spk]
        if durations:
            import soundfile

            try:
                data.utt2dur[utt] = f"{soundfile.info(str(flac)).duration:.3f}"
            except RuntimeError as exc:
                raise DataError(f"{flac}: cannot read its duration ({exc})") from None
    return data


def _read_list(path: Path) -> list[str]:
    if not path.is_file():
        raise DataError(f"{path}: official list missing")
    return [line.split()[0] for line in read_text_file(path).splitlines() if line.strip()]


def _read_trials(path: Path) -> list[Trial]:
    if not path.is_file():
        raise DataError(f"{path}: official trial list missing")
    trials = []
    for n, line in enumerate(read_text_file(path).splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 3 or parts[2] not in ("target", "nontarget"):
            raise DataError(f"{path}:{n}: malformed trial {line!r}")
        trials.append(Trial(parts[0], parts[1], parts[2] == "target"))
    return trials


def build_sets(data: DataDir, enroll_fraction: float, enroll_utts: int, seed: int
               ) -> tuple[list[str], dict[str, list[Trial]]]:
    """VPC construction: enrollment utterances and per-gender trial lists."""
    rng = np.random.default_rng(seed)
    spk2utt = data.spk2utt
    enroll, trials = [], {}
    for g in GENDERS:
        speakers = sorted(s for s in spk2utt if data.spk2gender[s] == g)
        n_enrolled = max(1, int(round(enroll_fraction * len(speakers)))) if speakers else 0
        enrolled = sorted(rng.permutation(speakers)[:n_enrolled].tolist())
        trial_utts = []
        for spk in speakers:
            utts = spk2utt[spk]
            if spk in enrolled:
                if len(utts) < 2:
                    raise DataError(f"{data.path}: enrolled speaker {spk} has {len(utts)} utterance(s); "
                                    "needs enrollment and trial utterances")
                chosen = set(rng.permutation(utts)[:min(enroll_utts, len(utts) - 1)].tolist())
                enroll += sorted(chosen)
                trial_utts += [u for u in utts if u not in chosen]
            else:
                trial_utts += utts
        trials[g] = [Trial(s, u, data.utt2spk[u] == s) for s in enrolled for u in sorted(trial_utts)]
    return sorted(enroll), trials


def build_paper_sets(data: DataDir, enroll_fraction: float, enroll_utts: int, seed: int, *,
                     min_dur: float = PAPER_MIN_DUR, max_dur: float = PAPER_MAX_DUR
                     ) -> tuple[list[str], dict[str, list[Trial]]]:
    """The trial construction of "Anonymization, Not Elimination": 2 target and 2 non-target trials per enrollment.

    Only utterances of ``min_dur``-``max_dur`` seconds (``utt2dur``) are used.
    In each gender a share of the speakers with at least three such utterances
    is enrolled with up to ``enroll_utts`` of them (two are kept for trials);
    every enrollment utterance then adds two target trials (the speaker's
    other utterances, drawn without replacement while they last) and two
    non-target trials, one utterance of another female and one of another male
    speaker. Trials are written in the VPC form (enrolled speaker, utterance),
    so a trial drawn twice counts once; the list of the enrolled speaker's
    gender holds both non-target genders.
    """
    rng = np.random.default_rng(seed)
    ok = {u for u in data.utts if min_dur <= float(data.utt2dur[u]) <= max_dur}
    spk2utt = {s: [u for u in us if u in ok] for s, us in data.spk2utt.items()}
    enroll, pool = [], {s: list(us) for s, us in spk2utt.items()}
    for g in GENDERS:
        candidates = sorted(s for s, us in spk2utt.items() if data.spk2gender[s] == g and len(us) >= 3)
        n = max(1, int(round(enroll_fraction * len(candidates)))) if candidates else 0
        for spk in sorted(rng.permutation(candidates)[:n].tolist()):
            chosen = set(rng.permutation(spk2utt[spk])[:min(enroll_utts, len(spk2utt[spk]) - 2)].tolist())
            enroll += sorted(chosen)
            pool[spk] = [u for u in spk2utt[spk] if u not in chosen]
    trials: dict[str, set[tuple[str, str, bool]]] = {g: set() for g in GENDERS}
    by_gender = {g: sorted(s for s in pool if pool[s] and data.spk2gender[s] == g) for g in GENDERS}
    for spk, utts in sorted(data.subset(enroll).spk2utt.items()):
        g = data.spk2gender[spk]
        own = rng.permutation(pool[spk]).tolist()
        for k in range(len(utts)):
            trials[g].update((spk, u, True) for u in own[2 * k:2 * k + 2] or own[:2])
            for other_g in GENDERS:
                others = [s for s in by_gender[other_g] if s != spk]
                if not others:
                    raise DataError(f"{data.path}: no other {other_g} speaker with {min_dur:g}-{max_dur:g} s "
                                    f"utterances for the non-target trials of {spk}")
                other = others[rng.integers(len(others))]
                trials[g].add((spk, pool[other][rng.integers(len(pool[other]))], False))
    return sorted(enroll), {g: [Trial(*t) for t in sorted(ts)] for g, ts in trials.items()}


def _stats(data: DataDir, enroll: list[str], trials: dict[str, list[Trial]]) -> dict:
    out = {"enrolls": {}, "trials": {}}
    for g in GENDERS:
        eu = [u for u in enroll if data.gender_of_utt(u) == g]
        out["enrolls"][g] = {"speakers": len({data.utt2spk[u] for u in eu}), "utterances": len(eu)}
        tr = trials.get(g, [])
        tu = {t.utt for t in tr}
        out["trials"][g] = {"speakers": len({data.utt2spk[u] for u in tu}), "utterances": len(tu),
                            "target": sum(t.target for t in tr), "nontarget": sum(not t.target for t in tr)}
    return out


def prepare_librispeech(root: str | os.PathLike, out: str | os.PathLike, *, lists: str | os.PathLike | None = None,
                        enroll_fraction: float = 0.75, enroll_utts: int = 12, seed: int = 0,
                        trials: str = "vpc") -> dict:
    """Write the VPC LibriSpeech data directories for the subsets present; returns their statistics.

    ``trials`` picks the construction when no official ``lists`` are given
    (:data:`TRIAL_MODES`): ``vpc`` (:func:`build_sets`) or ``paper``
    (:func:`build_paper_sets`, which also writes ``utt2dur``).
    """
    if trials not in TRIAL_MODES:
        raise ConfigError(f"unknown trial construction {trials!r}; choose from {', '.join(TRIAL_MODES)}")
    if trials != "vpc" and lists is not None:
        raise ConfigError("official lists (--lists) fix the trials; leave out --trials")
    Range(0, 1, lo_open=True).check("enroll_fraction", enroll_fraction)
    Range(1).check("enroll_utts", enroll_utts)
    root, out = Path(root), Path(out)
    speakers_file = _find(root, "SPEAKERS.TXT")
    if speakers_file is None:
        raise DataError(f"{root}: SPEAKERS.TXT not found (needed for speaker genders)")
    spk2gender = read_speakers(speakers_file)
    stats = {}
    for part, subset in SUBSETS.items():
        subset_dir = _find(root, subset)
        if subset_dir is None:
            continue
        data = read_subset(subset_dir, spk2gender, speakers_file, durations=trials == "paper")
        if lists is not None:
            enroll = _read_list(Path(lists) / layout.libri(layout.enrolls(part)) / "enrolls")
            trial_lists = {g: _read_trials(Path(lists) / layout.libri(layout.trials(part, g)) / "trials")
                           for g in GENDERS}
            unknown = [u for u in enroll + [t.utt for g in GENDERS for t in trial_lists[g]]
                       if u not in data.wav_scp]
            if unknown:
                raise DataError(f"{lists}: utterance {unknown[0]} of the official lists is not in {subset_dir} "
                                f"({len(set(unknown))} missing)")
        else:
            build = build_paper_sets if trials == "paper" else build_sets
            enroll, trial_lists = build(data, enroll_fraction, enroll_utts, seed)
        write_data_dir(data.subset(enroll), out / layout.libri(layout.enrolls(part)))
        (out / layout.libri(layout.enrolls(part)) / "enrolls").write_text("".join(f"{u}\n" for u in enroll), encoding="utf-8")
        for g in GENDERS:
            sub = data.subset(sorted({t.utt for t in trial_lists[g]}))
            sub.trials = trial_lists[g]
            write_data_dir(sub, out / layout.libri(layout.trials(part, g)))
        stats[layout.libri(part)] = _stats(data, enroll, trial_lists)
    train_dir = _find(root, TRAIN_SUBSET)
    if train_dir is not None:
        train = read_subset(train_dir, spk2gender, speakers_file)
        write_data_dir(train, out / TRAIN_SUBSET)
        stats[TRAIN_SUBSET] = {"speakers": {g: sum(1 for s in train.spk2utt if train.spk2gender[s] == g)
                                            for g in GENDERS}, "utterances": len(train.wav_scp)}
    if not stats:
        raise DataError(f"{root}: none of {', '.join([*SUBSETS.values(), TRAIN_SUBSET])} found")
    return stats


def format_stats(stats: dict) -> str:
    """Statistics as in the VPC tables: speakers, utterances, target / non-target trials per gender."""
    from voxanon.table import format_table

    rows = []
    for name, s in stats.items():
        if name == TRAIN_SUBSET:
            rows += [[name, g, s["speakers"][g], "", "", ""] for g in GENDERS]
            rows.append([name, "all", "", s["utterances"], "", ""])
            continue
        for g in GENDERS:
            e = s["enrolls"][g]
            rows.append([layout.enrolls(name), g, e["speakers"], e["utterances"], "", ""])
        for g in GENDERS:
            t = s["trials"][g]
            rows.append([layout.trials(name, g), g, t["speakers"], t["utterances"], t["target"], t["nontarget"]])
    return format_table(["set", "gender", "speakers", "utts", "target", "nontarget"], rows, align="llrrrr")
