"""Where B4's weights are: folders and files given by the user, or the Hugging Face hub cache.

Nothing here imports torch: the anonymizer finds its weights when it is built
(before a run writes anything), and a missing one is a :class:`ConfigError`
(exit code 2) that lists every missing part and where to put it. Loading the
weights found here is :mod:`voxanon.models.nac.model`'s job (a corrupt or
mis-shaped file is a :class:`ModelError` there).

A *spec* is a folder or file that exists, or a hub repository id
(``org/name``) looked up in the hub cache: ``$HF_HUB_CACHE``, else
``$HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``, else
``~/.cache/huggingface/hub``, in the layout ``models--org--name/snapshots/<commit>/``
(the snapshot ``refs/main`` names first, then the others in name order).
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

from voxanon.errors import ConfigError

#: the Bark weights of the 2024 kit (its ``text_2.pt``/``coarse_2.pt``/``fine_2.pt`` are the full Bark models,
#: ``suno/bark`` in transformers' layout; ``suno/bark-small`` is the smaller release)
BARK_REPO = "suno/bark"
#: the HuBERT of the kit's semantic-token extractor (transformers ``HubertModel``)
HUBERT_REPO = "facebook/hubert-base-ls960"
#: the quantiser the kit downloads (``HubertManager.make_sure_tokenizer_installed``): repository and file
QUANTIZER_REPO, QUANTIZER_FILE = "GitMylo/bark-voice-cloning", "quantifier_hubert_base_ls960_14.pth"
#: a transformers model folder: its config and one of its weight files (or shard indexes)
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json",
                "pytorch_model.bin.index.json")
#: the voice presets' index in a Bark model folder (transformers' ``BarkProcessor`` layout)
SPEAKER_INDEX = "speaker_embeddings_path.json"

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def hub_cache() -> Path:
    """The Hugging Face hub cache folder, from the environment as ``huggingface_hub`` reads it."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return Path(os.environ[var]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    base = Path(os.environ["XDG_CACHE_HOME"]).expanduser() if os.environ.get("XDG_CACHE_HOME") \
        else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def snapshots(repo_id: str) -> list[Path]:
    """Snapshot folders of ``repo_id`` in the hub cache: the one ``refs/main`` names first."""
    root = hub_cache() / f"models--{repo_id.replace('/', '--')}"
    folder = root / "snapshots"
    if not folder.is_dir():
        return []
    found = sorted(p for p in folder.iterdir() if p.is_dir())
    try:
        main = folder / (root / "refs" / "main").read_text(encoding="utf-8").strip()
    except OSError:
        return found
    return [main, *(p for p in found if p != main)] if main in found else found


def is_model_dir(path: Path) -> bool:
    """Whether ``path`` holds a transformers model: ``config.json`` and a weight file."""
    return (path / "config.json").is_file() and any((path / name).is_file() for name in WEIGHT_FILES)


def _is_repo_id(spec: str) -> bool:
    return bool(_REPO_ID.match(spec)) and not spec.startswith((".", "~"))


def find_model_dir(spec: str) -> Path | None:
    """The model folder ``spec`` names (a folder, or a repository in the hub cache); None when absent.

    Raises ConfigError when ``spec`` is an existing folder that is no transformers model folder.
    """
    path = Path(spec).expanduser()
    if path.exists():
        if not is_model_dir(path):
            raise ConfigError(f"{path} is not a transformers model folder: it needs config.json and one of "
                              f"{', '.join(WEIGHT_FILES)} (as save_pretrained writes them)")
        return path
    if _is_repo_id(spec):
        return next((p for p in snapshots(spec) if is_model_dir(p)), None)
    return None


def find_file(spec: str, repo_id: str, filename: str, fallbacks: tuple[Path, ...] = ()) -> Path | None:
    """The file ``spec`` names; with an empty ``spec``, ``filename`` in ``repo_id``'s cache, then ``fallbacks``."""
    if spec:
        path = Path(spec).expanduser()
        return path if path.is_file() else None
    candidates = [p / filename for p in snapshots(repo_id)] + list(fallbacks)
    return next((p for p in candidates if p.is_file()), None)


def coqui_quantizer() -> Path:
    """Where the 2024 kit's Bark (coqui TTS) keeps the quantiser: its user data folder's ``tokenizer.pth``."""
    base = Path(os.environ["XDG_DATA_HOME"]).expanduser() if os.environ.get("XDG_DATA_HOME") \
        else Path.home() / ".local" / "share"
    return base / "tts" / "suno" / "bark_v0" / "tokenizer.pth"


@dataclasses.dataclass(frozen=True)
class NacWeights:
    """The located parts of B4: Bark (coarse, fine, EnCodec) folder, HuBERT folder, quantiser file, voice pool.

    ``voices`` is a folder of prompts, or None for the presets of the Bark folder (``speaker_embeddings_path.json``).
    """

    bark: Path
    hubert: Path
    quantizer: Path
    voices: Path | None


def locate(model: str, hubert: str, quantizer: str, voices: str, who: str = "b4") -> NacWeights:
    """Find every part of B4; ConfigError listing each missing one, what it is and where to put it."""
    missing: list[str] = []
    bark_dir = find_model_dir(model or BARK_REPO)
    if bark_dir is None:
        missing.append(f"Bark ({model or BARK_REPO}): the BarkModel folder of suno/bark (config.json and "
                       "model.safetensors or pytorch_model.bin, as transformers' save_pretrained or the hub "
                       f"writes it): pass --param model=<folder>, or put the hub repository in {_cache_hint(BARK_REPO)}")
    hubert_dir = find_model_dir(hubert or HUBERT_REPO)
    if hubert_dir is None:
        missing.append(f"HuBERT ({hubert or HUBERT_REPO}): the HubertModel folder of {HUBERT_REPO}: pass "
                       f"--param hubert=<folder>, or put the hub repository in {_cache_hint(HUBERT_REPO)}")
    quantizer_path = find_file(quantizer, QUANTIZER_REPO, QUANTIZER_FILE, (coqui_quantizer(),))
    if quantizer_path is None:
        where = quantizer if quantizer else (f"{_cache_hint(QUANTIZER_REPO)} (file {QUANTIZER_FILE}) or "
                                             f"{coqui_quantizer()}")
        missing.append(f"quantiser ({quantizer or QUANTIZER_FILE}): the HuBERT-to-semantic-token LSTM of "
                       f"{QUANTIZER_REPO}: pass --param quantizer=<file.pth>, or put it at {where}")
    voices_dir = None
    if voices:
        voices_dir = Path(voices).expanduser()
        if not voices_dir.is_dir():
            missing.append(f"voices ({voices}): no such folder; give a folder of Bark voice prompts (.npz with "
                           "semantic_prompt, coarse_prompt, fine_prompt), one per file or per subfolder")
    elif bark_dir is not None and not (bark_dir / SPEAKER_INDEX).is_file():
        missing.append(f"voices: the Bark folder {bark_dir} has no {SPEAKER_INDEX} (its voice presets); pass "
                       "--param voices=<folder of Bark voice prompts (.npz)>")
    if missing:
        raise ConfigError(f"{who} needs pretrained weights that were not found (none can be downloaded here): "
                          + "; ".join(missing) + " (docs/baselines.md, B4)")
    return NacWeights(bark_dir, hubert_dir, quantizer_path, voices_dir)


def _cache_hint(repo_id: str) -> str:
    return f"{hub_cache() / ('models--' + repo_id.replace('/', '--'))}/snapshots/<commit>/"
