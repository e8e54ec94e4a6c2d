"""Bark voice prompts: the pseudo-speakers of B4.

A prompt is Bark's voice preset: ``semantic_prompt`` (semantic tokens, 1-D,
0..9999), ``coarse_prompt`` (the first two EnCodec codebooks, ``(2, m)``) and
``fine_prompt`` (all eight, ``(8, p)``), codes 0..1023. A pool comes from

- a folder in the 2024 kit's layout (``suno_voices/v2``, read by coqui TTS's
  ``get_voices``): one subfolder per voice, named after it, holding one
  ``.npz``; or a folder of ``.npz`` files (Bark's ``assets/prompts``), one voice
  per file, named after the file;
- a Bark model folder's ``speaker_embeddings_path.json`` (transformers' layout:
  per voice the three arrays as ``.npy`` files); its ``v2/`` voices when it has
  any, as the kit's pool is Bark's v2 prompts.

Voices are sorted by name, so a draw from an index is the same everywhere.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np

from voxanon.errors import ModelError

KEYS = ("semantic_prompt", "coarse_prompt", "fine_prompt")
SEMANTIC_VOCAB, CODEBOOK_SIZE, N_COARSE, N_FINE = 10_000, 1024, 2, 8
#: coarse frames per semantic token in a prompt (75 / 49.9, to one decimal: Bark's own check)
COARSE_PER_SEMANTIC = round(75 / 49.9, 1)


@dataclasses.dataclass(frozen=True)
class VoicePrompt:
    """One pseudo-speaker: a name and Bark's three prompt arrays (int64)."""

    name: str
    semantic: np.ndarray
    coarse: np.ndarray
    fine: np.ndarray


def check_prompt(name: str, arrays: dict[str, np.ndarray], where: str) -> VoicePrompt:
    """A :class:`VoicePrompt` from the three arrays; ModelError naming ``where`` when one is malformed."""
    for key in KEYS:
        if key not in arrays:
            raise ModelError(f"{where}: voice prompt {name!r} has no {key} (needs {', '.join(KEYS)})")
    semantic, coarse, fine = (np.asarray(arrays[k]) for k in KEYS)
    shapes = {"semantic_prompt": (semantic, 1, None, SEMANTIC_VOCAB), "coarse_prompt": (coarse, 2, N_COARSE,
              CODEBOOK_SIZE), "fine_prompt": (fine, 2, N_FINE, CODEBOOK_SIZE)}
    for key, (arr, ndim, rows, vocab) in shapes.items():
        if arr.ndim != ndim or (rows is not None and arr.shape[0] != rows) or arr.shape[-1] == 0:
            raise ModelError(f"{where}: {key} of voice {name!r} has shape {arr.shape}; expected "
                             f"{'(n,)' if ndim == 1 else f'({rows}, n)'} with n > 0")
        if not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0 or arr.max() >= vocab:
            raise ModelError(f"{where}: {key} of voice {name!r} must hold integers 0..{vocab - 1}")
    if round(coarse.shape[1] / len(semantic), 1) != COARSE_PER_SEMANTIC:
        raise ModelError(f"{where}: voice {name!r} has {coarse.shape[1]} coarse frames for {len(semantic)} "
                         f"semantic tokens; Bark prompts have {COARSE_PER_SEMANTIC} per token")
    return VoicePrompt(name, semantic.astype(np.int64), coarse.astype(np.int64), fine.astype(np.int64))


def _read_npz(path: Path, name: str) -> VoicePrompt:
    try:
        with np.load(path) as data:
            arrays = {k: data[k] for k in KEYS if k in data}
    except (OSError, ValueError) as exc:
        raise ModelError(f"{path}: cannot read the voice prompt ({exc})") from exc
    return check_prompt(name, arrays, str(path))


def folder_pool(folder: Path) -> list[VoicePrompt]:
    """The voices of a prompt folder: subfolders with one ``.npz`` each, or ``.npz`` files (see the module notes)."""
    voices: list[VoicePrompt] = []
    for entry in sorted(folder.iterdir()):
        if entry.is_dir():
            files = sorted(entry.glob("*.npz"))
            if len(files) > 1:
                raise ModelError(f"{entry}: voice {entry.name!r} has {len(files)} prompts; a voice folder holds one "
                                 ".npz (as in the 2024 kit's voice folder)")
            if files:
                voices.append(_read_npz(files[0], entry.name))
        elif entry.suffix == ".npz":
            voices.append(_read_npz(entry, entry.stem))
    if not voices:
        raise ModelError(f"{folder}: no voice prompts (.npz with {', '.join(KEYS)}, one per file or per subfolder)")
    names = [v.name for v in voices]
    if len(set(names)) != len(names):
        raise ModelError(f"{folder}: voice names repeat ({sorted({n for n in names if names.count(n) > 1})}); "
                         "a subfolder and a file share a name")
    return voices


def preset_pool(bark_dir: Path, index: str = "speaker_embeddings_path.json") -> list[VoicePrompt]:
    """The voice presets a Bark model folder lists in ``index`` (its ``v2/`` voices when it has any)."""
    path = bark_dir / index
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"{path}: cannot read the voice presets ({exc})") from exc
    names = sorted(k for k, v in table.items() if isinstance(v, dict))
    if any(n.startswith("v2/") for n in names):
        names = [n for n in names if n.startswith("v2/")]
    if not names:
        raise ModelError(f"{path}: lists no voice presets")
    voices = []
    root = os.path.normpath(bark_dir)
    for name in names:
        arrays = {}
        for key in KEYS:
            rel = table[name].get(key)
            # hub-cache snapshots hold symbolic links into the cache's blobs: check the path, not its target
            file = Path(os.path.normpath(os.path.join(root, rel))) if isinstance(rel, str) else None
            if file is None or not str(file).startswith(root + os.sep) or not file.is_file():
                raise ModelError(f"{path}: {key} of voice {name!r} is not a file inside {bark_dir} ({rel!r})")
            try:
                arrays[key] = np.load(file)
            except (OSError, ValueError) as exc:
                raise ModelError(f"{file}: cannot read {key} of voice {name!r} ({exc})") from exc
        voices.append(check_prompt(name, arrays, str(path)))
    return voices
