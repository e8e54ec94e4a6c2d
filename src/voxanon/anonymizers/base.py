"""The anonymizer contract: ``(waveform, sample_rate, rng) -> (waveform, sample_rate)``.

Every anonymizer is a class with a ``name``, a typed ``Config`` dataclass
(fields with defaults and a one-line ``help`` in the field metadata), and an
``anonymize`` method. Randomness comes only from the ``rng`` argument, which the
runner derives per utterance with :func:`utterance_rng`, so the output never
depends on processing order, worker count or resumption.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import typing
from abc import ABC, abstractmethod
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from voxanon.anonymizers.streaming import StreamSession
from voxanon.digest import content_digest
from voxanon.errors import ConfigError
from voxanon.heap import release_free_memory
from voxanon.ranges import Range


def seed_digest(seed: int | str, key: str) -> bytes:
    """``sha256(f"{seed}/{key}")``: every order-free random choice voxanon makes starts from it.

    The separator keeps ``(1, "2a")`` and ``(12, "a")`` apart.
    """
    return hashlib.sha256(f"{seed}/{key}".encode("utf-8")).digest()


def utterance_rng(seed: int | str, key: str) -> np.random.Generator:
    """Generator seeded from :func:`seed_digest`; ``key`` is the utterance id (utterance-level mode) or the speaker
    id (speaker-level mode)."""
    return np.random.default_rng(np.frombuffer(seed_digest(seed, key), dtype=np.uint64))


def param(default: Any, help: str, *, range: Range | None = None, **kwargs: Any) -> Any:
    """A config field with a default, a help text and a valid range, all shown by ``voxanon list``.

    ``range`` applies to a number, or to each element of a ``(lo, hi)`` pair
    (which must also have ``lo <= hi``); :func:`check_config` enforces it.
    """
    metadata = {"help": help, "range": range}
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=metadata, **kwargs)
    return dataclasses.field(default=default, metadata=metadata, **kwargs)


def check_config(config: Any) -> None:
    """Raise ConfigError naming the first field outside its declared range (pairs: each value, and lo <= hi)."""
    for f in dataclasses.fields(config):
        valid = f.metadata.get("range")
        value = getattr(config, f.name)
        if valid is None or value is None:
            continue
        if isinstance(value, tuple):
            if len(value) != 2:
                raise ConfigError(f"{f.name} must be a pair [lo, hi] with values in {valid}, got {list(value)}")
            for v in value:
                if v not in valid:
                    raise ConfigError(f"{f.name} must be a pair [lo, hi] with values in {valid}, got {list(value)}")
            if value[0] > value[1]:
                raise ConfigError(f"{f.name} must be a pair [lo, hi] with lo <= hi, got {list(value)}")
        else:
            valid.check(f.name, value)


@dataclasses.dataclass(frozen=True)
class NoConfig:
    """An anonymizer without parameters."""


@dataclasses.dataclass(frozen=True)
class Chunking:
    """How a method processes long inputs: chunks of about ``seconds``, each with ``overlap`` seconds of context.

    Cuts fall every ``seconds``, each moved to the quietest ``fade``-long
    stretch of the input within ``overlap / 2`` of it (a pause, where one
    exists). Each chunk is processed with ``overlap`` seconds of extra input on
    both sides, and neighbours are cross-faded (raised cosine, ``fade``
    seconds) around their cut, so a chunk's own edges never reach the output.
    Inputs up to ``seconds + 2 * overlap`` run in one piece.
    """

    seconds: float = 20.0
    overlap: float = 1.0
    fade: float = 0.05

    def __post_init__(self) -> None:
        if not 0 < self.fade <= self.overlap <= self.seconds / 2:
            raise ConfigError(f"chunking: need 0 < fade <= overlap <= seconds / 2, got {self}")

    def bounds(self, wav: np.ndarray, sr: int) -> list[int]:
        """Cut points ``[0, ..., len(wav)]``; a last chunk under half ``seconds`` joins its neighbour."""
        n, core, context = len(wav), round(self.seconds * sr), round(self.overlap * sr)
        if n <= core + 2 * context:
            return [0, n]
        nominal = list(range(core, n, core))
        if n - nominal[-1] < core // 2:
            nominal.pop()
        width, reach = max(1, round(self.fade * sr)), context // 2
        cuts = []
        for cut in nominal:  # the quietest fade-long window near the nominal cut
            segment = wav[cut - reach - width // 2 : cut + reach + width // 2]
            power = np.concatenate([[0.0], np.cumsum(np.square(segment, dtype=np.float64))])
            energy = power[width:] - power[:-width]  # energy[j]: segment[j : j + width], centred at cut - reach + j
            cuts.append(cut - reach + int(np.argmin(energy)) if energy.size else cut)
        return [0, *cuts, n]

    def spans(self, cuts: list[int], sr: int) -> list[tuple[int, int]]:
        """``(start, stop)`` of each chunk between ``cuts`` with its context."""
        context = round(self.overlap * sr)
        return [(max(0, lo - context), min(cuts[-1], hi + context)) for lo, hi in zip(cuts, cuts[1:])]

    def join(self, pieces: Iterable[np.ndarray], cuts: list[int], sr: int) -> np.ndarray:
        """Cross-fade the outputs of the :meth:`spans` of ``cuts`` (each as long as its span) into one signal."""
        n, spans = cuts[-1], self.spans(cuts, sr)
        half = round(self.fade * sr) // 2
        fade = (np.sin(0.5 * np.pi * (np.arange(2 * half) + 0.5) / (2 * half)) ** 2).astype(np.float32)
        out = np.zeros(n, dtype=np.float32)
        for k, ((a, b), piece) in enumerate(zip(spans, pieces, strict=True)):
            if len(piece) != b - a:
                raise RuntimeError(f"chunk {k} gave {len(piece)} samples for {b - a}; the method cannot be chunked")
            first, last = k == 0, k == len(spans) - 1
            lo, hi = cuts[k] - (0 if first else half), cuts[k + 1] + (0 if last else half)  # its share of the output
            weight = np.ones(hi - lo, dtype=np.float32)
            if not first:
                weight[: 2 * half] = fade
            if not last:
                weight[len(weight) - 2 * half :] = fade[::-1]
            out[lo:hi] += piece[lo - a : hi - a] * weight
        return out


def copy_rng(rng: np.random.Generator) -> np.random.Generator:
    """A generator in the same state as ``rng`` (every chunk of an utterance makes the same draws)."""
    clone = np.random.Generator(type(rng.bit_generator)())
    clone.bit_generator.state = rng.bit_generator.state
    return clone


class Anonymizer(ABC):
    """Base class of all anonymizers.

    Class attributes
    ----------------
    name : registry name (``voxanon anonymize --method NAME``)
    Config : frozen dataclass of parameters
    sample_rate : preferred input rate; the runner resamples to it (None: any)
    needs_model : True when the method loads model weights
    offline : True when it runs with what this machine has (no downloads)
    chunking : set by a method whose working memory grows with the input's
        length: :meth:`process` then runs long inputs in overlapping chunks
        (None: the method bounds its memory itself, or cannot be chunked)
    stream_limit : why the method cannot stream (shown when :meth:`stream` is
        asked for); a method that streams overrides :meth:`stream` instead
    """

    name: ClassVar[str]
    Config: ClassVar[type] = NoConfig
    sample_rate: ClassVar[int | None] = None
    needs_model: ClassVar[bool] = False
    offline: ClassVar[bool] = True
    chunking: ClassVar[Chunking | None] = None
    stream_limit: ClassVar[str] = "it transforms whole utterances only and has no streaming form"

    def __init__(self, config: Any | None = None, **params: Any) -> None:
        if config is None:
            config = make_config(self.Config, params)
        elif params:
            raise TypeError("pass either a Config or keyword parameters, not both")
        check_config(config)
        self.config = config

    @abstractmethod
    def anonymize(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        """Anonymize one mono float32 waveform; return (waveform, sample_rate)."""

    def prepare(self, *, quiet: bool = False) -> None:
        """Build, once and before any worker starts, what the method caches on disk (none by default).

        Runners call it in their own process, so that parallel workers find the cache built instead of
        each building it; a method that builds something slow says what and why, with progress.
        """

    def process(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        """:meth:`anonymize` for an utterance of any length: in chunks when the method declares ``chunking``.

        This is what runners call. Every chunk starts from the utterance's rng
        in the same state, so the draws (the pseudo-speaker) are the same for
        every chunk; chunk outputs must keep the chunk's rate and length.
        """
        if self.chunking is None:
            return self.anonymize(wav, sr, rng)
        cuts = self.chunking.bounds(wav, sr)
        if len(cuts) == 2:
            return self.anonymize(wav, sr, rng)
        return self.anonymize_in_chunks(wav, sr, rng, cuts), sr

    def anonymize_in_chunks(self, wav: np.ndarray, sr: int, rng: np.random.Generator, cuts: list[int]) -> np.ndarray:
        """Anonymize each chunk between ``cuts`` with a copy of ``rng``; join them cross-faded."""
        pieces = (self._chunk(wav[a:b], sr, copy_rng(rng)) for a, b in self.chunking.spans(cuts, sr))
        return self.chunking.join(pieces, cuts, sr)

    def _chunk(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> np.ndarray:
        out, out_sr = self.anonymize(wav, sr, rng)
        release_free_memory()  # each chunk's working memory goes back, whatever its shape (see voxanon.heap)
        if out_sr != sr:
            raise RuntimeError(f"{self.name}: chunk output at {out_sr} Hz for input at {sr} Hz; cannot be chunked")
        return out

    @classmethod
    def streams(cls) -> bool:
        """True when the method has a streaming form (:meth:`stream`)."""
        return cls.stream is not Anonymizer.stream

    def open_stream(self, sample_rate: int, seed: int | str, key: str) -> StreamSession:
        """A live session whose pseudo-speaker is the offline one for ``seed`` and utterance ``key``.

        The rng is :func:`utterance_rng(seed, key) <utterance_rng>`, as the offline runner derives it.
        Raises ConfigError when the method cannot stream (naming why) or wants another sample rate.
        """
        self.require_streaming()
        if self.sample_rate is not None and sample_rate != self.sample_rate:
            raise ConfigError(f"{self.name} streams at {self.sample_rate} Hz, got {sample_rate} Hz; "
                              f"send audio at {self.sample_rate} Hz")
        return self.stream(sample_rate, utterance_rng(seed, key))

    def require_streaming(self) -> None:
        """Raise ConfigError saying why when the method has no streaming form."""
        if not self.streams():
            raise ConfigError(f"{self.name} cannot stream: {self.stream_limit}")

    def stream(self, sr: int, rng: np.random.Generator) -> StreamSession:
        """The streaming form of :meth:`anonymize` at ``sr`` with the utterance's ``rng`` (see
        :mod:`voxanon.anonymizers.streaming`); a method that streams overrides it."""
        self.require_streaming()
        raise NotImplementedError

    def report(self) -> dict[str, Any] | None:
        """What the last :meth:`process` call did, JSON-serialisable; the runner writes it next to the output
        as ``<utt>.json`` (None: nothing to report, the default)."""
        return None

    def model_files(self) -> dict[str, Path]:
        """The files (or folders) beyond the parameters that the output depends on, by role: weights, pools,
        shipped target sets. By default every string parameter that names an existing file or folder; a method
        that loads shipped files by default adds them."""
        return {f.name: Path(v) for f in dataclasses.fields(self.config)
                if isinstance(v := getattr(self.config, f.name), str) and v and Path(v).exists()}

    def settings(self) -> dict[str, Any]:
        """Name, parameters and the content digests of :meth:`model_files` (``models``, when there are any),
        JSON-serialisable: recorded next to every output, so outputs made with other weights are never taken
        for this run's."""
        found = {"method": self.name, "params": dataclasses.asdict(self.config)}
        files = self.model_files()
        if files:
            found["models"] = {role: content_digest(path) for role, path in sorted(files.items())}
        return found


def _coerce(value: Any, annotation: Any, name: str) -> Any:
    """Convert a CLI string (or JSON value) to the field's annotated type."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if value is None or (isinstance(value, str) and value.lower() == "none"):
            return None
        return _coerce(value, args[0], name)
    if annotation is bool and isinstance(value, str):
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"parameter {name}: expected true/false, got {value!r}")
    if annotation is int and isinstance(value, float) and not value.is_integer():
        raise ConfigError(f"parameter {name}: expected int, got {value!r}")
    if annotation in (int, float, str) and not isinstance(value, annotation):
        try:
            return annotation(value)
        except (TypeError, ValueError):
            raise ConfigError(f"parameter {name}: expected {annotation.__name__}, got {value!r}") from None
    if origin in (tuple, list) and isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ConfigError(f"parameter {name}: expected a JSON list such as [1, 2], got {value!r}") from None
    if origin in (tuple, list) and not isinstance(value, (list, tuple)):
        raise ConfigError(f"parameter {name}: expected a list such as [1, 2], got {value!r}")
    if origin is tuple:
        args = typing.get_args(annotation)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(v, args[0], name) for v in value)
        if args and len(args) != len(value):
            raise ConfigError(f"parameter {name}: expected a list of {len(args)} values, got {list(value)!r}")
        return tuple(_coerce(v, a, name) for v, a in zip(value, args)) if args else tuple(value)
    return value


def make_config(config_cls: type, params: dict[str, Any]) -> Any:
    """Build a Config from a dict of (possibly string) values; unknown names are errors."""
    fields = {f.name: f for f in dataclasses.fields(config_cls)}
    unknown = sorted(set(params) - set(fields))
    if unknown:
        raise ConfigError(f"unknown parameter(s) {', '.join(unknown)}; known: {', '.join(fields) or 'none'}")
    hints = typing.get_type_hints(config_cls)
    values = {}
    for k, v in params.items():
        try:
            values[k] = _coerce(v, hints[k], k)
        except ConfigError as exc:
            valid = fields[k].metadata.get("range")
            raise ConfigError(f"{exc}; valid values: {valid}" if valid is not None else str(exc)) from None
    return config_cls(**values)


def describe_config(config_cls: type) -> list[tuple[str, str, Any, str, Range | None]]:
    """(name, type, default, help, valid range) for each parameter, for ``voxanon list``."""
    hints = typing.get_type_hints(config_cls)
    rows = []
    for f in dataclasses.fields(config_cls):
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            default = f.default_factory()  # type: ignore[misc]
        else:
            default = None
        type_name = getattr(hints[f.name], "__name__", str(hints[f.name]))
        rows.append((f.name, type_name, default, f.metadata.get("help", ""), f.metadata.get("range")))
    return rows
