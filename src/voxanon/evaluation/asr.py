"""Content preservation: WER / CER of an ASR backend on a data directory with ``text``.

Hypotheses are cached per utterance under ``cache_dir/<backend name>/``, keyed
by a digest of the audio samples and rate, so scoring again (another
normalisation, another bootstrap) or rerunning after an interruption decodes
nothing twice, and changed audio is decoded again.

Utterances that cannot be scored are listed, never dropped silently: no line
in ``text`` (``missing_transcript``), a reference with no words after
normalisation (``empty_reference``; WER is undefined for it) and audio that
cannot be loaded or decoded (``failed``, with the reason).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from voxanon.atomic import write_text
from voxanon.audio.io import AudioError, load_audio
from voxanon.data import layout
from voxanon.data.kaldi import DataDir, read_data_dir
from voxanon.evaluation.evaluator import (
    UTILITY,
    Column,
    Env,
    Evaluator,
    NoOptions,
    Rank,
    RunSettings,
    SystemData,
    option,
)
from voxanon.evaluation.results import AsrResult, from_dict
from voxanon.metrics import ConfidenceInterval, WERResult, wer, wer_ci
from voxanon.metrics.text import NORMALIZERS
from voxanon.models.asr import AsrBackend
from voxanon.progress import Progress


class HypothesisCache:
    """One text file per (backend, audio digest) under ``root``; writes are atomic."""

    def __init__(self, root: str | os.PathLike, backend_name: str) -> None:
        safe = "".join(c if c.isalnum() or c in "-_.@" else "_" for c in backend_name)
        self.dir = Path(root) / safe

    @staticmethod
    def key(wav: np.ndarray, sr: int) -> str:
        """Digest of the samples and their rate."""
        return hashlib.sha256(np.ascontiguousarray(wav, dtype=np.float32).tobytes() + str(sr).encode()).hexdigest()

    def get(self, key: str) -> str | None:
        """The cached hypothesis, or None."""
        path = self.dir / f"{key}.txt"
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def put(self, key: str, text: str) -> None:
        """Store a hypothesis."""
        write_text(self.dir / f"{key}.txt", text)


@dataclass
class AsrEvaluation:
    """WER / CER of one data directory with everything that was left out and why."""

    data: str
    backend: str
    normalization: str
    result: WERResult | None
    wer_interval: ConfidenceInterval | None
    unit: str = "word"
    hypotheses: dict[str, str] = field(default_factory=dict)
    missing_transcript: list[str] = field(default_factory=list)
    empty_reference: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    decoded: int = 0

    def to_result(self) -> AsrResult:
        """The typed result, with per-utterance details."""
        res = self.result
        return from_dict(AsrResult, {
            "data": self.data, "asr_backend": self.backend, "normalization": self.normalization,
            "n_scored": len(res.utterances) if res else 0,
            "wer": res.wer if res else None, "cer": res.cer if res else None,
            "wer_ci": asdict(self.wer_interval) if self.wer_interval else None,
            "substitutions": res.substitutions if res else None, "deletions": res.deletions if res else None,
            "insertions": res.insertions if res else None,
            "n_reference_words": res.n_reference_words if res else None,
            "missing_transcript": self.missing_transcript, "empty_reference": self.empty_reference,
            "failed": self.failed, "decoded_now": self.decoded,
            "utterances": [asdict(u) for u in res.utterances] if res else [], "unit": self.unit,
        })


def _decode(asr: AsrBackend, batch: list[tuple[str, str, np.ndarray, int]], cache: HypothesisCache,
            failed: dict[str, str]) -> dict[str, str]:
    """Transcribe a batch (same rate); when the batch fails, retry one by one to find the culprit."""
    sr = batch[0][3]
    try:
        texts = asr.transcribe([wav for _, _, wav, _ in batch], sr)
    except Exception as exc:
        if len(batch) == 1:
            failed[batch[0][0]] = f"ASR failed: {type(exc).__name__}: {exc}"
            return {}
        out: dict[str, str] = {}
        for item in batch:
            out.update(_decode(asr, [item], cache, failed))
        return out
    for (_, key, _, _), text in zip(batch, texts):
        cache.put(key, text)
    return {utt: text for (utt, _, _, _), text in zip(batch, texts)}


def transcribe(data: DataDir, utts: list[str], asr: AsrBackend, cache_dir: str | os.PathLike, *,
               batch_size: int = 8, quiet: bool = False) -> tuple[dict[str, str], dict[str, str], int]:
    """Hypotheses of ``utts`` of ``data``, read from the cache or decoded (and cached) in batches.

    Returns the hypotheses by utterance, the utterances that failed (audio or
    ASR) with the reason, and how many were decoded now.
    """
    cache = HypothesisCache(cache_dir, asr.name)
    hypotheses: dict[str, str] = {}
    failed: dict[str, str] = {}
    decoded = 0
    progress = Progress(len(utts), f"ASR {Path(str(data.path)).name}", quiet=quiet)
    pending: list[tuple[str, str, np.ndarray, int]] = []

    def flush() -> None:
        nonlocal decoded
        hypotheses.update(_decode(asr, pending, cache, failed))
        decoded += len(pending)
        progress.update(len(pending), audio_seconds=sum(len(w) / s for _, _, w, s in pending))
        pending.clear()

    for utt in utts:
        try:
            wav, sr = load_audio(data.wav_scp[utt])
        except AudioError as exc:
            failed[utt] = str(exc)
            progress.update(failed=True)
            continue
        key = HypothesisCache.key(wav, sr)
        cached = cache.get(key)
        if cached is not None:
            hypotheses[utt] = cached
            progress.update()
            continue
        if pending and pending[0][3] != sr:
            flush()
        pending.append((utt, key, wav, sr))
        if len(pending) >= batch_size:
            flush()
    if pending:
        flush()
    progress.close()
    return hypotheses, failed, decoded


def evaluate_asr(data: DataDir, asr: AsrBackend, cache_dir: str | os.PathLike, *, normalization: str = "vpc",
                 unit: str = "word", batch_size: int = 8, n_boot: int = 1000, seed: int = 0,
                 quiet: bool = False) -> AsrEvaluation:
    """Transcribe (or read from the cache) and score every utterance of ``data`` that has a transcript.

    Parameters
    ----------
    data : data directory with ``wav.scp`` and ``text``
    asr : the recogniser
    cache_dir : root of the per-utterance hypothesis cache
    normalization : name in :data:`voxanon.metrics.text.NORMALIZERS`
    unit : ``word`` (WER) or ``char`` (CER, for languages written without spaces:
        :func:`voxanon.metrics.text.error_unit`)
    batch_size : utterances per ASR call
    n_boot, seed : bootstrap replicates and seed of the WER confidence interval
    quiet : no progress lines
    """
    normalize = NORMALIZERS[normalization]
    ev = AsrEvaluation(str(data.path), asr.name, normalization, None, None, unit)
    todo = []
    for utt in data.utts:
        if utt not in data.text:
            ev.missing_transcript.append(utt)
        elif not normalize(data.text[utt]):
            ev.empty_reference.append(utt)
        else:
            todo.append(utt)
    ev.hypotheses, ev.failed, ev.decoded = transcribe(data, todo, asr, cache_dir, batch_size=batch_size, quiet=quiet)
    scored = [u for u in todo if u in ev.hypotheses]
    if scored:
        ev.result = wer({u: data.text[u] for u in scored}, {u: ev.hypotheses[u] for u in scored}, normalization,
                        unit)
        ev.wer_interval = wer_ci(ev.result, n_boot=n_boot, seed=seed)
    return ev


def merge_dirs(dirs: list[Path], name: str) -> DataDir:
    """One data directory holding the utterances (audio and text) of several, e.g. female + male trials."""
    merged = DataDir(path=Path(name))
    for d in dirs:
        data = read_data_dir(d)
        merged.wav_scp.update(data.wav_scp)
        merged.text.update(data.text)
    return merged


@dataclass(frozen=True)
class AsrOptions:
    """The splits whose trials get the WER (none, or none the run attacks: its last split)."""

    splits: tuple[str, ...] = option((), profile="wer_splits")


@dataclass(frozen=True)
class CheckAsrOptions:
    """The second recognisers whose WER is measured beside the run's (English only: pocketsphinx knows no other
    language), on the WER's splits."""

    backends: tuple[str, ...] = option((), profile="check_asrs")
    splits: tuple[str, ...] = option((), profile="wer_splits")


@dataclass(frozen=True)
class AsrSettings:
    """WER (or CER: ``unit``) of ``backend`` on one split's trial sets (female and male merged)."""

    split: str
    backend: str
    normalization: str
    n_boot: int
    unit: str = "word"


class AsrEvaluator(Evaluator):
    """Content preservation: WER / CER of the offline ASR on a system's trial utterances."""

    kind = "wer"
    Settings = AsrSettings
    Options = AsrOptions
    under_conditions = True

    @classmethod
    def plan(cls, run: RunSettings, options: AsrOptions) -> list[Evaluator]:
        return [cls(AsrSettings(s, run.asr, run.wer_normalization, run.n_boot, run.asr_unit))
                for s in wer_splits(run, options.splits)]

    @property
    def slot(self) -> tuple[str, ...]:
        return (self.settings.split,)

    def inputs(self, data: SystemData) -> dict[str, Path]:
        return {g: data.sets[layout.trials(self.settings.split, g)] for g in layout.GENDERS}

    def models(self, data: SystemData) -> dict[str, str]:
        return {"asr": self.settings.backend}

    def key(self, data: SystemData, seed: int) -> dict[str, Any]:
        """The evaluator's key; word-scored results keep the key they had before the unit was a setting."""
        key = super().key(data, seed)
        if self.settings.unit == "word":
            del key["settings"]["unit"]
        return key

    @classmethod
    def columns(cls, results) -> list[Column]:
        """``wer``: the run's WER (CER in a language scored by characters) on the primary split (``wer_ci`` its
        interval, report only); it ranks systems (lower is better) and a system without it is not ranked."""
        def result(record, results) -> AsrResult | None:
            return record.get(cls.kind, results.settings.primary.split)

        rate = results.settings.error_rate
        return [Column("wer", lambda record, results: (w := result(record, results)) and w.wer,
                       header=f"{rate} % [95% CI]", cli=f"{rate} %", ci="wer_ci",
                       rank=Rank(UTILITY, higher_better=False, label=rate, what="content", required=True)),
                Column("wer_ci", lambda record, results: (w := result(record, results)) and w.wer_ci, csv=False)]

    @classmethod
    def section(cls, results, page) -> tuple[str, str] | None:
        """Every WER / CER of the run (each split and the real-speech check, the run's recogniser and each second
        one) with its interval and what was left out (the "Utility" section)."""
        rate = results.settings.error_rate
        body = []
        for name, s in results.systems.items():
            asrs = [(slot, results.settings.asr, w) for (slot,), w in s.of_kind(AsrEvaluator.kind).items()]
            asrs += [(split, backend, w) for (backend, split), w in s.of_kind(CheckAsrEvaluator.kind).items()]
            for split, backend, w in asrs:
                ci = w.wer_ci
                body.append([page.fmt(name), page.fmt(split), page.fmt(backend),
                             page.fmt_ci(w.wer, (ci.low, ci.high) if ci else None), page.fmt(w.cer),
                             page.fmt(w.n_scored), f"{len(w.missing_transcript)} / {len(w.failed)}"])
        if not body:
            return None
        return "Utility", page.table(["system", "split", "recogniser", f"{rate} % [95% CI]", "CER %", "utts scored",
                                      "missing text / failed"], body)

    def run(self, data: SystemData, env: Env) -> AsrResult:
        from voxanon.models.asr import load_asr

        s = self.settings
        merged = merge_dirs(list(self.inputs(data).values()), f"{data.label}/{s.split}_trials")
        ev = evaluate_asr(merged, env.model(s.backend, load_asr), env.cache_dir / "asr",
                          normalization=s.normalization, unit=s.unit, n_boot=s.n_boot, quiet=env.quiet)
        return ev.to_result().summary()


class RealSpeechAsrEvaluator(AsrEvaluator):
    """The run's recogniser on the system's anonymization of real read speech (a language corpus's
    ``real_speech`` set: recorded prompts no model here was trained on), slot ``real-speech`` of the ``wer`` results:
    the real-speech check beside the synthetic trials' WER / CER."""

    #: the slot of its results among the ``wer`` results (beside the splits)
    SLOT = "real-speech"
    Options = NoOptions

    @classmethod
    def plan(cls, run: RunSettings, options) -> list[Evaluator]:
        return [cls(AsrSettings(cls.SLOT, run.asr, run.wer_normalization, run.n_boot, run.asr_unit))]

    def applies(self, data: SystemData) -> bool:
        return layout.REAL_SPEECH in data.sets

    def inputs(self, data: SystemData) -> dict[str, Path]:
        return {"real": data.sets[layout.REAL_SPEECH]}

    @classmethod
    def section(cls, results, page) -> tuple[str, str] | None:
        return None  # its results are rows of AsrEvaluator's table

    @classmethod
    def columns(cls, results) -> list[Column]:
        """``wer_real``: the WER (CER) on the real-speech check, in runs that have one."""
        rate = results.settings.error_rate
        return [Column("wer_real", lambda record, results: (w := record.get(cls.kind, cls.SLOT)) and w.wer,
                       header=f"real speech {rate} %", cli=f"real {rate} %", omit_missing=True)]


class CheckAsrEvaluator(AsrEvaluator):
    """The WER of each second recogniser of the run (:class:`CheckAsrOptions`), by backend and split.

    A model trained against one recogniser's encoder (LTF against Whisper's) can learn speech that only that
    recogniser hears; a recogniser of another kind (pocketsphinx) is the judge it cannot have fooled.
    """

    kind = "wer_check"
    Options = CheckAsrOptions

    @classmethod
    def plan(cls, run: RunSettings, options: CheckAsrOptions) -> list[Evaluator]:
        if run.language != "en":  # pocketsphinx, the profiles' second recogniser, knows English only
            return []
        return [cls(AsrSettings(s, b, run.wer_normalization, run.n_boot, run.asr_unit)) for b in options.backends
                for s in wer_splits(run, options.splits)]

    @property
    def slot(self) -> tuple[str, ...]:
        return (self.settings.backend, self.settings.split)

    @classmethod
    def section(cls, results, page) -> tuple[str, str] | None:
        return None  # its results are rows of AsrEvaluator's table

    @classmethod
    def columns(cls, results) -> list[Column]:
        """``wer_<backend>``: each second recogniser's WER on the primary split, in order of first appearance."""
        split = results.settings.primary.split
        backends = dict.fromkeys(b for s in results.systems.values() for b, sp in s.of_kind(cls.kind) if sp == split)

        def wer_of(backend: str):
            return lambda record, results: (w := record.get(cls.kind, backend, split)) and w.wer

        rate = results.settings.error_rate
        return [Column(f"wer_{b}", wer_of(b), header=f"{rate} {b} %", cli=f"{rate} {b} %") for b in backends]


def wer_splits(run: RunSettings, splits: tuple[str, ...]) -> list[str]:
    """The splits whose trials get the WER: those of ``splits`` the run attacks, else its last split."""
    return [s for s in run.splits if s in splits] or list(run.splits[-1:])
