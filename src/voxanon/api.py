"""voxanon's public Python API: build an anonymizer, run it on a waveform or a corpus, evaluate the result.

Every name here is also importable from ``voxanon`` itself (loaded on first use,
so ``import voxanon`` stays fast). The functions are thin: they call the same
registry, corpus runner and evaluation code as ``voxanon list``, ``voxanon
anonymize`` and ``voxanon evaluate``, and raise the same errors
(:class:`~voxanon.errors.ConfigError` for a bad name or parameter,
:class:`~voxanon.errors.DataError` for bad input, ...).

Examples
--------
>>> import voxanon
>>> anonymizer = voxanon.build_anonymizer("mcadams", alpha_min=0.6, alpha_max=0.8)
>>> out, out_sr = voxanon.anonymize_waveform(anonymizer, wav, sr, key="utt1")  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from voxanon.anonymizers.base import Anonymizer, describe_config, utterance_rng
from voxanon.anonymizers.registry import available, build
from voxanon.errors import DataError
from voxanon.ranges import Range

if TYPE_CHECKING:
    from voxanon.data.rttm import Turn
    from voxanon.evaluation.results import AsrResult, PrivacyResult
    from voxanon.jobs.conversations.conversation import ConversationResult
    from voxanon.jobs.runner.anonymize import RunSummary

__all__ = [
    "Anonymizer",
    "AnonymizerInfo",
    "ParamInfo",
    "anonymize_conversation",
    "anonymize_dir",
    "anonymize_waveform",
    "build_anonymizer",
    "evaluate_privacy",
    "evaluate_wer",
    "list_anonymizers",
]

PathLike = str | os.PathLike


@dataclass(frozen=True)
class ParamInfo:
    """One parameter of an anonymizer: name, type name, default, help text and valid range (None: any)."""

    name: str
    type: str
    default: Any
    help: str
    valid: Range | None


@dataclass(frozen=True)
class AnonymizerInfo:
    """A registered anonymizer: its name, one-line summary, preferred input rate (None: any) and parameters."""

    name: str
    summary: str
    sample_rate: int | None
    needs_model: bool
    params: tuple[ParamInfo, ...]


def list_anonymizers() -> list[AnonymizerInfo]:
    """Every registered anonymizer (built-in and plug-in), sorted by name, as ``voxanon list`` shows them."""
    return [AnonymizerInfo(name, (cls.__doc__ or "").strip().partition("\n")[0], cls.sample_rate, cls.needs_model,
                           tuple(ParamInfo(*row) for row in describe_config(cls.Config)))
            for name, cls in available().items()]


def build_anonymizer(name: str, **params: Any) -> Anonymizer:
    """The anonymizer registered as ``name`` (or at import path ``package.module:Class``) with ``params``.

    Parameters are checked against their declared types and ranges; strings are
    converted as ``--param NAME=VALUE`` converts them. An unknown name, unknown
    parameter or value out of range raises :class:`~voxanon.errors.ConfigError`.
    """
    return build(name, params)


def anonymize_waveform(anonymizer: Anonymizer, wav: np.ndarray, sample_rate: int, *, seed: int | str = 0,
                       key: str = "utterance") -> tuple[np.ndarray, int]:
    """Anonymize one mono waveform as the corpus runner does (without writing or peak-limiting it).

    Parameters
    ----------
    anonymizer : from :func:`build_anonymizer`
    wav : mono float waveform in [-1, 1]
    sample_rate : its rate in Hz; resampled first to the method's preferred rate, if it has one
    seed, key : the random draws (the pseudo-speaker) come from ``sha256(f"{seed}/{key}")``, so the same
        ``(seed, key)`` gives the same output; the runner's key is the utterance id (or the speaker id)

    Returns
    -------
    (waveform, sample_rate)
        float32 waveform at the method's output rate (may exceed full scale; the runner limits such peaks)
    """
    from voxanon.audio.io import resample

    wav = np.asarray(wav, dtype=np.float32)
    if wav.ndim != 1:
        raise DataError(f"anonymize_waveform: expected a mono (1-D) waveform, got shape {wav.shape}; "
                        "mix the channels down first (e.g. wav.mean(axis=1))")
    if anonymizer.sample_rate and sample_rate != anonymizer.sample_rate:
        wav, sample_rate = resample(wav, sample_rate, anonymizer.sample_rate), anonymizer.sample_rate
    out, out_sr = anonymizer.process(wav, sample_rate, utterance_rng(seed, key))
    return np.asarray(out, dtype=np.float32), int(out_sr)


def anonymize_conversation(anonymizer: Anonymizer, wav: np.ndarray, sample_rate: int, *, seed: int | str = 0,
                           recording: str = "recording", turns: Sequence[Turn] | None = None,
                           num_speakers: int | None = None, labels: dict[str, str] | None = None,
                           targets: Sequence[tuple[np.ndarray, int]] = ()) -> ConversationResult:
    """Anonymize a recording of several speakers, each with a pseudo-speaker of their own (conversation mode).

    Parameters
    ----------
    anonymizer : from :func:`build_anonymizer`
    wav : mono float waveform (diarized, or split by ``turns``), or ``(samples, channels)`` with one speaker per
        channel
    sample_rate : its rate in Hz
    seed, recording : speaker ``S`` draws its pseudo-speaker from the key ``<recording>/<S>`` (or a variant of it
        chosen to keep the speakers apart; the report names it)
    turns : the speaker turns (:class:`voxanon.data.rttm.Turn`); default: found by the diarizer
    num_speakers : the number of speakers, when known (diarizer)
    labels : speaker -> label across recordings: the same label gives the same pseudo-speaker in every recording
    targets : enrollment clips ``(waveform, rate)``: only the speakers matching one are anonymized

    Returns
    -------
    ConversationResult
        ``wav`` (as long as the input), ``sr``, ``turns`` (those used) and ``report`` (speakers, keys, separation)
    """
    from voxanon.audio.io import resample
    from voxanon.evaluation.diarization import diarize
    from voxanon.jobs.conversations.conversation import EMBED_RATE, anonymize_channels
    from voxanon.jobs.conversations.conversation import anonymize_conversation as conversation
    from voxanon.jobs.conversations.pseudo import ENCODER
    from voxanon.models.speaker import load_encoder

    wav = np.asarray(wav, dtype=np.float32)
    if wav.ndim not in (1, 2):
        raise DataError(f"anonymize_conversation: expected (samples,) or (samples, channels), got shape {wav.shape}")
    encoder = functools.cache(lambda: load_encoder(ENCODER))  # built only when needed (not for one speaker)
    enrollments = (encoder().embed([resample(np.asarray(w, dtype=np.float32), r, EMBED_RATE) for w, r in targets],
                                   EMBED_RATE) if targets else None)
    if wav.ndim == 2:
        return anonymize_channels(anonymizer, wav, sample_rate, recording=recording, seed=seed, labels=labels,
                                  enrollments=enrollments, encoder=encoder)
    if turns is None:
        turns = diarize(wav, sample_rate, recording=recording, num_speakers=num_speakers)
    return conversation(anonymizer, wav, sample_rate, list(turns), recording=recording, seed=seed, labels=labels,
                        enrollments=enrollments, encoder=encoder)


def anonymize_dir(input_path: PathLike, output_path: PathLike, anonymizer: Anonymizer | str, *,
                  seed: int | str = 0, level: str = "utterance", jobs: int | None = None, force: bool = False,
                  quiet: bool = False, limiter: bool = True) -> RunSummary:
    """Anonymize a Kaldi data directory or a folder of audio files, as ``voxanon anonymize`` does.

    Parameters
    ----------
    input_path : data directory (has ``wav.scp``) or folder of audio files (searched recursively)
    output_path : output folder (resumable: a rerun keeps finished outputs)
    anonymizer : from :func:`build_anonymizer`, or a name (default parameters)
    seed : global seed of the per-utterance random draws
    level : ``"utterance"`` (VPC) or ``"speaker"`` (draws keyed by the speaker; needs ``utt2spk``)
    jobs : worker processes (default: all cores; 1 runs in this process). Workers are started with
        ``spawn`` and import the calling script again: in a script, call this under
        ``if __name__ == "__main__":``
    force : replace an output folder made with other settings
    quiet : no progress output
    limiter : limit output peaks above full scale instead of clipping them

    Returns
    -------
    RunSummary
        counts and timing; ``failed > 0`` means ``failures.tsv`` in the output folder lists them
    """
    from voxanon.jobs.runner.anonymize import anonymize_corpus

    if isinstance(anonymizer, str):
        anonymizer = build_anonymizer(anonymizer)
    return anonymize_corpus(input_path, output_path, anonymizer, seed=seed, level=level, jobs=jobs, force=force,
                            quiet=quiet, limiter=limiter)


def evaluate_privacy(enroll: PathLike, trials: Sequence[PathLike], *, anon_enroll: PathLike | None = None,
                     anon_trials: Sequence[PathLike] | None = None, scenarios: Sequence[str] | None = None,
                     encoder: str = "ge2e", attacker: PathLike | None = None, cache_dir: PathLike | None = None,
                     device: str = "cpu", n_boot: int = 1000, quiet: bool = True) -> dict[str, PrivacyResult]:
    """Speaker-verification attacks (EER) on original and anonymized data directories (``voxanon evaluate privacy``).

    Parameters
    ----------
    enroll, trials : original enrollment data directory and trial data directories (with a ``trials`` file)
    anon_enroll, anon_trials : their anonymized versions (for OA, AA-lazy and AA-semi)
    scenarios : names among ``OO``, ``OA``, ``AA-lazy``, ``AA-semi`` (default: every one the arguments allow)
    encoder : pretrained speaker encoder of OO, OA and AA-lazy (``ge2e``, ``ecapa:CKPT``, ``speechbrain:CKPT``)
    attacker : checkpoint of ``voxanon train attacker`` (``best.pt``), the retrained AA-semi attacker
    cache_dir : embedding cache (default: none)
    device : ``cpu`` or ``cuda``
    n_boot : bootstrap replicates of the EER confidence interval
    quiet : no progress output

    Returns
    -------
    dict
        scenario name -> :class:`~voxanon.evaluation.results.PrivacyResult` (``eer_mean`` in %, ``by_gender``)
    """
    from voxanon.evaluation.privacy import run_scenarios
    from voxanon.evaluation.scenarios import applicable

    if scenarios is None:
        scenarios = applicable(bool(anon_trials), attacker is not None)
    return run_scenarios(list(scenarios), orig_enroll=enroll, orig_trials=list(trials), anon_enroll=anon_enroll,
                         anon_trials=list(anon_trials or []), pretrained=encoder,
                         attacker=f"ecapa:{attacker}" if attacker is not None else None, cache_dir=cache_dir,
                         device=device, n_boot=n_boot, quiet=quiet)


def evaluate_wer(data_dirs: Sequence[PathLike], *, asr: str = "whisper-tiny", normalization: str = "vpc",
                 cache_dir: PathLike | None = None, device: str = "cpu", n_boot: int = 1000,
                 quiet: bool = True) -> list[AsrResult]:
    """Word and character error rates of an ASR on data directories with a ``text`` file
    (``voxanon evaluate utility --asr``).

    Parameters
    ----------
    data_dirs : data directories, each scored on its own (e.g. the original, then the anonymized)
    asr : ASR spec: ``whisper-tiny``, ``pocketsphinx``, ``wav2vec2:<dir>``, ``ctc:<model.pt>``
    normalization : ``vpc`` (the VPC's) or ``spoken`` (also numbers spelt out: for Whisper)
    cache_dir : hypothesis cache, so that reruns decode nothing twice (default: a temporary folder)
    device : ``cpu`` or ``cuda``
    n_boot : bootstrap replicates of the WER confidence interval
    quiet : no progress output

    Returns
    -------
    list
        one :class:`~voxanon.evaluation.results.AsrResult` per directory (``wer``, ``cer`` in %, ``wer_ci``)
    """
    from voxanon.data.kaldi import read_data_dir
    from voxanon.evaluation.asr import evaluate_asr
    from voxanon.models.asr import load_asr

    recogniser = load_asr(asr, device=device)
    with tempfile.TemporaryDirectory(prefix="voxanon-asr-") as scratch:
        cache = Path(cache_dir) if cache_dir is not None else Path(scratch)
        return [evaluate_asr(read_data_dir(d), recogniser, cache, normalization=normalization, n_boot=n_boot,
                             quiet=quiet).to_result() for d in data_dirs]
