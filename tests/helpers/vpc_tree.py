"""A miniature VPC kit tree: ``data/`` with the kits' set and file names and ``exp/`` with generated checkpoints.

``data/``: ``libri_{dev,test}_enrolls``, ``libri_{dev,test}_trials_{f,m}`` and (2026)
``libri_{dev,test}_trials_mixed``, ``IEMOCAP_{dev,test}`` (one speaker per fold, 1-5),
``train-clean-360`` (six 3 s utterances per dev speaker), and each set's anonymized
copy ``<set><suffix>`` with its own ``wav/<utt>.wav``. Files as the kits have them: ``wav.scp``, ``utt2spk``,
``spk2utt``, ``spk2gender``, ``text`` (upper case, no punctuation), ``utt2dur``,
``trials`` (``<enroll_spk> <utt> target|nontarget``), ``utt2emo``, ``spk2fold``.
LibriSpeech ids (``<spk>-<chapter>-<nnnn>``), IEMOCAP ids (``Ses01F_impro01_F000``).
Audio: speech-like 16 kHz signals, one F0 per speaker (the anonymized copy shifts it).

``exp/``: the kits' model folders with tiny random weights under the real key names:
``asv_orig/embedding_model.ckpt`` (2024), ``asv_ssl/`` (2026), ``asv_anon<suffix>/``,
``asr/`` and ``ser/fold_<k>/CKPT+1/``.
"""

from __future__ import annotations

from pathlib import Path

import torch

from tests.helpers.asv_ssl_checkpoint import write_asv_ssl
from tests.helpers.audio import write_utterance
from tests.helpers.speechbrain_ecapa_checkpoint import speechbrain_state_dict
from tests.helpers.vpc_kit_folders import SENTENCES, write_asr_folder, write_ser_fold

SUFFIX = "_mini"
#: enrolled speakers per split: id -> (gender, F0)
SPEAKERS = {"dev": {"1272": ("m", 105.0), "1462": ("f", 205.0), "2277": ("f", 185.0), "2412": ("m", 125.0)},
            "test": {"121": ("f", 215.0), "1089": ("m", 100.0), "1188": ("m", 130.0), "1284": ("f", 180.0)}}
EMOTIONS = ("neu", "ang", "hap", "sad")
SMALL_ECAPA = {"c": 32, "last": 96, "att": 16, "se": 16}
#: train-clean-360: utterances per speaker (the 10 % validation share rounds to one of each) and the shortest
#: length, long enough for the 2026 fine-tuning's 3 s chunks
TRAIN_UTTS, TRAIN_SECONDS = 6, 3.05


def _write_set(data: Path, name: str, utts: dict[str, tuple[str, str, float]], *, suffix: str = "",
               trials: list[str] | None = None, extra: dict[str, str] | None = None, seconds: float = 0.6) -> None:
    """One set (``utts``: utt -> (speaker, gender, F0)) and, with ``suffix``, its anonymized copy.

    Utterance ``k`` lasts ``seconds + 0.05 * (k % 4)``.
    """
    for anon in (False, True) if suffix else (False,):
        folder = data / (name + (suffix if anon else ""))
        wav, utt2spk, text, dur, gender = [], [], [], [], {}
        for k, (utt, (spk, g, f0)) in enumerate(sorted(utts.items())):
            path = write_utterance(folder / "wav" / f"{utt}.wav", seconds=seconds + 0.05 * (k % 4),
                                   f0=f0 * (1.35 if anon else 1.0), seed=k + (100 if anon else 0))
            wav.append(f"{utt} {path}")
            utt2spk.append(f"{utt} {spk}")
            text.append(f"{utt} {SENTENCES[k % len(SENTENCES)]}")
            dur.append(f"{utt} {seconds + 0.05 * (k % 4):.2f}")
            gender[spk] = g
        spk2utt: dict[str, list[str]] = {}
        for utt, (spk, _, _) in sorted(utts.items()):
            spk2utt.setdefault(spk, []).append(utt)
        files = {"wav.scp": wav, "utt2spk": utt2spk, "text": text, "utt2dur": dur,
                 "spk2gender": [f"{s} {g}" for s, g in sorted(gender.items())],
                 "spk2utt": [f"{s} {' '.join(u)}" for s, u in sorted(spk2utt.items())]}
        if trials:
            files["trials"] = trials
        for fname, content in (extra or {}).items():
            files[fname] = content.splitlines()
        for fname, lines in files.items():
            (folder / fname).write_text("".join(f"{line}\n" for line in lines))


def write_data(data: Path, edition: str, suffix: str = SUFFIX) -> None:
    """The kit's ``data/`` folder of ``edition`` (2026 adds the mixed lists to 2024's sets)."""
    for split, speakers in SPEAKERS.items():
        enroll = {f"{spk}-{1000 + i}-{n:04d}": (spk, g, f0) for i, (spk, (g, f0)) in enumerate(speakers.items())
                  for n in range(2)}
        trial_utts = {f"{spk}-{2000 + i}-{n:04d}": (spk, g, f0) for i, (spk, (g, f0)) in enumerate(speakers.items())
                      for n in range(3)}
        _write_set(data, f"libri_{split}_enrolls", enroll, suffix=suffix)
        lists = {g: [g] for g in ("f", "m")}
        if edition == "2026":
            lists["mixed"] = ["f", "m"]
        for name, genders in lists.items():
            utts = {u: v for u, v in trial_utts.items() if v[1] in genders}
            trials = [f"{spk} {u} {'target' if v[0] == spk else 'nontarget'}"
                      for spk, (g, _) in speakers.items() if g in genders for u, v in sorted(utts.items())]
            _write_set(data, f"libri_{split}_trials_{name}", utts, suffix=suffix, trials=trials)
    for split, gender in (("dev", "F"), ("test", "M")):
        utts, emo, folds = {}, [], []
        for fold in range(1, 6):
            spk = f"Ses0{fold}{gender}"
            folds.append(f"{spk} {fold}")
            for n, e in enumerate(EMOTIONS * 2):
                utt = f"{spk}_impro0{n}_{gender}00{n}"
                utts[utt] = (spk, gender.lower(), 150.0 + 20 * fold + 15 * EMOTIONS.index(e))
                emo.append(f"{utt} {e}")
        _write_set(data, f"IEMOCAP_{split}", utts, suffix=suffix,
                   extra={"utt2emo": "\n".join(emo), "spk2fold": "\n".join(folds)})
    train = {f"{spk}-{3000 + i}-{n:04d}": (spk, g, f0) for i, (spk, (g, f0)) in enumerate(SPEAKERS["dev"].items())
             for n in range(TRAIN_UTTS)}
    _write_set(data, "train-clean-360", train, suffix=suffix, seconds=TRAIN_SECONDS)


def write_exp(exp: Path, edition: str, suffix: str = SUFFIX) -> None:
    """The kit's ``exp/`` with generated checkpoints (the pretrained ASV of ``edition``, its retrained twin, ASR, SER)."""
    if edition == "2024":
        for name, seed in (("asv_orig", 0), (f"asv_anon{suffix}", 1)):
            (exp / name).mkdir(parents=True)
            torch.save(speechbrain_state_dict(**SMALL_ECAPA, seed=seed), exp / name / "embedding_model.ckpt")
    else:
        write_asv_ssl(exp / "asv_ssl", seed=0)
        write_asv_ssl(exp / f"asv_anon{suffix}", seed=1)
    write_asr_folder(exp / "asr")
    for fold in range(1, 6):
        write_ser_fold(exp / "ser" / f"fold_{fold}" / "CKPT+1", seed=fold)


def write_vpc_tree(root: Path, edition: str, suffix: str = SUFFIX) -> tuple[Path, Path]:
    """A miniature kit tree under ``root``; returns its ``data`` and ``exp`` folders."""
    write_data(root / "data", edition, suffix)
    write_exp(root / "exp", edition, suffix)
    return root / "data", root / "exp"
