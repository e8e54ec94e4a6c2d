"""Held-out speech for the studies of the speaker-conditioned models, and their tables.

The studies of the acoustic model, F3-VA and LTF (``experiments/bench_acoustic.py``, ``bench_f3va.py``,
``bench_ltf.py``) score each system on the same speech: utterances of unseen speakers from a ``voxanon data
synth`` corpus's test sets and the real Debian clips of chosen speakers (:mod:`voxanon.data.debian_clips`),
held out of the shipped models' training. This module gives them the options that pick that speech, the
utterances with their audio, and one writer of their results (JSON plus a markdown table).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from voxanon.audio.io import load_audio
from voxanon.data.kaldi import read_data_dir


def unit(x: np.ndarray) -> np.ndarray:
    """``x`` scaled to unit length along its last axis (one embedding or a row per embedding)."""
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def load_utterances(dirs: list[Path], n: int | None, speakers: set[str] | None = None) -> list[dict]:
    """Utterances of the data directories ``dirs`` (of ``speakers`` only, when given), ``n`` of them evenly
    spaced or all, each a dict: ``utt``, ``spk``, ``gender`` (``?`` where unknown), ``text``, ``wav``, ``sr``."""
    rows = []
    for d in dirs:
        data = read_data_dir(d)
        for utt in data.utts:
            spk = data.utt2spk[utt]
            if speakers is None or spk in speakers:
                rows.append({"utt": utt, "spk": spk, "gender": data.spk2gender.get(spk, "?"),
                             "text": data.text.get(utt, ""), "entry": data.wav_scp[utt]})
    if n is not None and len(rows) > n:
        rows = [rows[i] for i in np.linspace(0, len(rows) - 1, n).round().astype(int)]
    for r in rows:
        r["wav"], r["sr"] = load_audio(r.pop("entry"))
    return rows


def add_heldout_args(ap: argparse.ArgumentParser, n: int) -> None:
    """The options that pick the held-out speech (read by :func:`heldout_groups`); ``n``: the default count."""
    ap.add_argument("--corpus", required=True, help="Kokoro corpus folder (data/test_trials_f, ...)")
    ap.add_argument("--sets", default="test_trials_f,test_trials_m")
    ap.add_argument("--n", type=int, default=n, help="Kokoro utterances (0: none, e.g. to run --real-dir alone)")
    ap.add_argument("--real-dir", help="real Debian clips data dir (data/real)")
    ap.add_argument("--real-speakers", default="librivox-ss01,pocketsphinx-cards")


def corpus_sets(args: argparse.Namespace) -> list[Path]:
    """The corpus test sets named by the options of :func:`add_heldout_args`."""
    return [Path(args.corpus) / "data" / s for s in args.sets.split(",")]


def heldout_groups(args: argparse.Namespace) -> dict[str, list[dict]]:
    """The held-out speech the options of :func:`add_heldout_args` pick: ``kokoro`` (``--n`` utterances of the
    corpus sets; absent when ``--n`` is 0) and ``real`` (every clip of ``--real-speakers``; with ``--real-dir``)."""
    groups = {"kokoro": load_utterances(corpus_sets(args), args.n)} if args.n else {}
    if args.real_dir:
        groups["real"] = load_utterances([Path(args.real_dir)], None, set(args.real_speakers.split(",")))
    return groups


def write_results(results: dict, out: str, groups: list[str], key: str, label: str,
                  columns: list[tuple[str, str]]) -> None:
    """Write ``results`` to ``out`` (JSON) and print each group's ``results[group][key]`` rows as a markdown
    table: the group with its utterance count, the row's name (headed ``label``) and ``columns`` (header,
    field; empty where a row has no such field)."""
    Path(out).write_text(json.dumps(results, indent=1) + "\n")
    print("| set | " + label + " | " + " | ".join(h for h, _ in columns) + " |")
    print("|---" * (len(columns) + 2) + "|")
    for name in groups:
        for row_name, row in results[name][key].items():
            cells = " | ".join(str(row.get(field, "")) for _, field in columns)
            print(f"| {name} ({results[name]['utterances']}) | {row_name} | {cells} |")
