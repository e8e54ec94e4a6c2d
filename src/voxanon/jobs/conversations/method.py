"""Conversation mode inside the corpus runner: one recording in, its anonymized conversation and RTTM out.

:class:`ConversationMethod` is what ``voxanon anonymize --conversation`` hands
to :func:`voxanon.jobs.runner.anonymize.anonymize_corpus` in place of an
anonymizer. The runner's workers rebuild it from ``(class, config)`` like an
anonymizer and call :meth:`~ConversationMethod.process_recording` with each
recording's source and id (the runner's crash safety, resumption and failure
list stay as they are). Beside each output wav go ``<utt>.json`` (the report:
speakers, chosen keys, separation, decisions) and ``<utt>.rttm`` (the turns used).

Turns come, in this order, from the given turns (RTTM or ``segments``), from
one speaker per channel, or from :func:`voxanon.evaluation.diarization.diarize`.
A recording the given turns do not cover fails (listed in ``failures.tsv``) and
the corpus goes on. A stereo recording without ``per_channel`` is mixed down
and diarized like a mono one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from voxanon.anonymizers.base import Anonymizer
from voxanon.audio.io import load_audio, resample
from voxanon.data.folder import scan_audio_folder
from voxanon.data.kaldi import read_data_dir
from voxanon.data.rttm import Turn, format_turn, read_rttm
from voxanon.errors import ConfigError, DataError
from voxanon.jobs.conversations.conversation import (
    EMBED_RATE,
    ConversationResult,
    ConversationSettings,
    anonymize_channels,
    anonymize_conversation,
    check_turns,
)
from voxanon.jobs.conversations.pseudo import ENCODER
from voxanon.jobs.conversations.sources import check_recordings, read_segments, read_speaker_map
from voxanon.models.speaker import SpeakerEncoder, load_encoder


@dataclass(frozen=True)
class ConversationConfig:
    """Everything a worker needs: the anonymizer (class and config) and the conversation options.

    ``turns``: given turns by recording (None: diarize); ``turns_file``: where they came from (messages);
    ``global_speakers``: the given turns' speaker names are labels across recordings (``segments``);
    ``speaker_map``: ``(recording, speaker) -> label``; ``enrollments``: target-speaker mode's embeddings;
    ``num_speakers``: known number of speakers for the diarizer.
    """

    method: type[Anonymizer]
    method_config: Any
    turns: dict[str, tuple[Turn, ...]] | None = None
    turns_file: str | None = None
    global_speakers: bool = False
    speaker_map: dict[tuple[str, str], str] | None = None
    per_channel: bool = False
    enrollments: np.ndarray | None = None
    num_speakers: int | None = None
    settings: ConversationSettings = ConversationSettings()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class ConversationMethod:
    """An anonymizer applied speaker by speaker to whole recordings (see the module notes)."""

    sample_rate = None  # reads its recordings itself

    def __init__(self, config: ConversationConfig) -> None:
        self.config = config
        self.anonymizer = config.method(config.method_config)
        self.name = self.anonymizer.name
        self._encoders: dict[str, SpeakerEncoder] = {}
        self._last: ConversationResult | None = None

    def _encoder(self, spec: str) -> SpeakerEncoder:
        if spec not in self._encoders:
            self._encoders[spec] = load_encoder(spec)
        return self._encoders[spec]

    def encoder(self) -> SpeakerEncoder:
        """The speaker encoder of the key choice and the target matching (the d-vector), built once."""
        return self._encoder(ENCODER)

    def prepare(self, *, quiet: bool = False) -> None:
        """The anonymizer's preparation (see :meth:`voxanon.anonymizers.base.Anonymizer.prepare`)."""
        self.anonymizer.prepare(quiet=quiet)

    def settings(self) -> dict[str, Any]:
        """The anonymizer's settings plus the conversation options, recorded with the outputs."""
        c = self.config
        turns = None if c.turns is None else "\n".join(sorted(format_turn(t) for ts in c.turns.values() for t in ts))
        speaker_map = None if c.speaker_map is None else "\n".join(sorted(" ".join((*k, v))
                                                                         for k, v in c.speaker_map.items()))
        conversation = {  # digests of the contents: outputs made from other turns are never taken for these
            "turns_file": c.turns_file, "turns": turns and _digest(turns), "global_speakers": c.global_speakers,
            "speaker_map": speaker_map and _digest(speaker_map), "per_channel": c.per_channel,
            "num_speakers": c.num_speakers,
            "enrollments": None if c.enrollments is None else _digest(repr(np.round(c.enrollments, 5).tolist())),
            "settings": dataclasses.asdict(c.settings)}
        return {**self.anonymizer.settings(), "conversation": conversation}

    def _labels(self, recording: str, turns: list[Turn]) -> dict[str, str]:
        speakers = {t.speaker for t in turns}
        if self.config.global_speakers:
            return {s: s for s in speakers}
        mapping = self.config.speaker_map or {}
        return {s: mapping[(recording, s)] for s in speakers if (recording, s) in mapping}

    def process_recording(self, source: str, recording: str, seed: int | str) -> tuple[np.ndarray, int, float]:
        """Anonymize one recording; returns ``(output, rate, input seconds)`` (see :meth:`report`, :meth:`sidecars`)."""
        c = self.config
        if c.per_channel:
            channels, sr = load_audio(source, mono=False)
            labels = {f"ch{k + 1}": c.speaker_map[(recording, f"ch{k + 1}")] for k in range(channels.shape[1])
                      if c.speaker_map and (recording, f"ch{k + 1}") in c.speaker_map}
            self._last = anonymize_channels(self.anonymizer, channels, sr, recording=recording, seed=seed,
                                            labels=labels, enrollments=c.enrollments, encoder=self.encoder,
                                            settings=c.settings)
            return self._last.wav, self._last.sr, channels.shape[0] / sr
        wav, sr = load_audio(source)
        if c.turns is not None:
            if recording not in c.turns:
                raise DataError(f"{c.turns_file}: no turns for recording {recording!r}; add them, or leave the "
                                "turns out to diarize")
            turns = list(c.turns[recording])
            check_turns(turns, len(wav) / sr, f"{c.turns_file}: recording {recording}")
        else:
            from voxanon.evaluation.diarization import ENCODER as DIARIZER_ENCODER
            from voxanon.evaluation.diarization import diarize

            turns = diarize(wav, sr, recording=recording, num_speakers=c.num_speakers,
                            encoder=self._encoder(DIARIZER_ENCODER))
        self._last = anonymize_conversation(self.anonymizer, wav, sr, turns, recording=recording, seed=seed,
                                            labels=self._labels(recording, turns), enrollments=c.enrollments,
                                            encoder=self.encoder, settings=c.settings)
        return self._last.wav, self._last.sr, len(wav) / sr

    def report(self) -> dict[str, Any] | None:
        """The last recording's report (speakers, keys, separation, decisions), with the anonymizer's own."""
        if self._last is None:
            return None
        inner = self.anonymizer.report()
        return {**self._last.report, **({"method_report": inner} if inner is not None else {})}

    def sidecars(self) -> dict[str, str]:
        """Files written beside the last output: ``.rttm``, the turns used."""
        if self._last is None:
            return {}
        return {".rttm": "".join(format_turn(t) + "\n" for t in sorted(self._last.turns))}


def recording_ids(input_path: str | os.PathLike) -> set[str]:
    """The recording ids of a corpus as the runner names them: ``wav.scp``'s ids, or a folder's relative paths."""
    input_path = Path(input_path)
    if (input_path / "wav.scp").is_file():
        return set(read_data_dir(input_path).wav_scp)
    return set(scan_audio_folder(input_path))


def enrollment_embeddings(paths: Sequence[str | os.PathLike], encoder: SpeakerEncoder) -> np.ndarray:
    """Embeddings (rows) of the target speakers' enrollment clips."""
    wavs = []
    for path in paths:
        wav, sr = load_audio(path, allow_silent=False)
        wavs.append(resample(wav, sr, EMBED_RATE))
    return encoder.embed(wavs, EMBED_RATE)


def conversation_method(anonymizer: Anonymizer, input_path: str | os.PathLike, *, rttm: str | None = None,
                        segments: str | None = None, per_channel: bool = False, speaker_map: str | None = None,
                        targets: Sequence[str] = (), num_speakers: int | None = None,
                        settings: ConversationSettings = ConversationSettings()) -> ConversationMethod:
    """The conversation method for a corpus run, its files read and checked before any work.

    Raises
    ------
    ConfigError
        Options that exclude each other.
    DataError
        A turns file, speaker map or enrollment clip that cannot be used (named, with the line at fault).
    """
    if rttm and segments:
        raise ConfigError("give the turns either as --rttm or as --segments, not both")
    if per_channel and (rttm or segments):
        raise ConfigError("--per-channel takes each channel as one speaker: it needs no --rttm or --segments")
    if num_speakers is not None and (num_speakers < 1 or rttm or segments or per_channel):
        raise ConfigError("--num-speakers (at least 1) is for the diarizer: not with --rttm, --segments or "
                          "--per-channel")
    turns = None
    if rttm or segments:
        turns = read_rttm(rttm) if rttm else read_segments(segments)
        check_recordings(turns, recording_ids(input_path), rttm or segments)
    encoder = load_encoder(ENCODER) if targets else None
    config = ConversationConfig(
        type(anonymizer), anonymizer.config,
        turns=None if turns is None else {r: tuple(ts) for r, ts in turns.items()},
        turns_file=rttm or segments, global_speakers=bool(segments),
        speaker_map=read_speaker_map(speaker_map) if speaker_map else None, per_channel=per_channel,
        enrollments=enrollment_embeddings(targets, encoder) if targets else None, num_speakers=num_speakers,
        settings=settings)
    return ConversationMethod(config)
