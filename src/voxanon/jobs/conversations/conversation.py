"""Anonymize one multi-speaker recording: every speaker with a pseudo-speaker of their own, timing kept.

Mono recordings
    The turns (diarized, or given) partition the timeline among the speakers
    (:mod:`.timeline`: pauses split, overlap to the dominant speaker). Each
    piece goes through the anonymizer with its speaker's key, with
    ``margin`` seconds of context on both sides; neighbouring anonymized
    pieces are cross-faded over ``fade`` seconds around their boundary. Pieces
    are at most ``max_piece`` seconds, so memory stays bounded however long
    the recording; every piece of a speaker starts from the same rng, so the
    pseudo-speaker is the same in all of them.
One speaker
    The whole recording goes through the anonymizer as ``voxanon anonymize``
    would send it (key: the recording id, or the speaker's label across
    recordings), so the output is the single-speaker one, byte for byte.
No speech found
    Nobody to tell apart, but the voice activity detector may have missed
    speech: the whole recording is anonymized as one speaker (as above).
    In target-speaker mode it is left as it is (no speaker matched).
One speaker per channel
    Each channel is one speaker (``ch1``, ``ch2``, ...), anonymized whole
    (pieces of ``max_piece`` seconds, cross-faded) with its own key; the
    output keeps the channels.
Target-speaker mode
    Only the speakers whose speech matches an enrollment embedding (cosine at
    least ``target_threshold``) are anonymized; the others' pieces are copied
    from the input unchanged (a hard cut at their boundaries, so no fade mixes
    a target's original voice in).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from voxanon.anonymizers.base import Anonymizer, utterance_rng
from voxanon.audio.io import fit_length, resample
from voxanon.data.rttm import Turn
from voxanon.errors import DataError
from voxanon.jobs.conversations.pseudo import TARGET_THRESHOLD, KeyChoice, choose_keys, target_scores
from voxanon.jobs.conversations.timeline import Piece, partition, speech_of
from voxanon.models.speaker import SpeakerEncoder

#: the rate speech samples are embedded at
EMBED_RATE = 16000
#: how far (seconds) a turn may reach past the end of the audio before the turns are refused (rounding)
END_TOLERANCE = 0.05
#: a speaker encoder, or a function that builds it when first needed
EncoderSource = SpeakerEncoder | Callable[[], SpeakerEncoder]
OVERLAP_RULE = "overlapped speech goes through the anonymizer of the speaker with the longest turn there"


@dataclass(frozen=True)
class ConversationSettings:
    """How a conversation is anonymized (seconds, except ``candidates`` and ``target_threshold``)."""

    candidates: int = 4
    sample_seconds: float = 8.0
    margin: float = 0.25
    fade: float = 0.02
    max_piece: float = 30.0
    target_threshold: float = TARGET_THRESHOLD


@dataclass
class ConversationResult:
    """The anonymized recording (``(n,)``, or ``(n, channels)``), its rate, the turns used and a JSON report."""

    wav: np.ndarray
    sr: int
    turns: list[Turn]
    report: dict[str, Any] = field(default_factory=dict)


def check_turns(turns: list[Turn], seconds: float, where: str) -> None:
    """DataError naming ``where`` when a turn ends after the audio (beyond :data:`END_TOLERANCE`)."""
    late = [t for t in turns if t.end > seconds + END_TOLERANCE]
    if late:
        t = late[0]
        raise DataError(f"{where}: turn of {t.speaker} at {t.start:.2f}-{t.end:.2f} s ends after the audio of "
                        f"{t.recording} ({seconds:.2f} s; {len(late)} such turn(s)); give the turns of this audio")


class _Pieces:
    """Runs one anonymizer over pieces of one signal and joins them (see the module notes)."""

    def __init__(self, anonymizer: Anonymizer, wav: np.ndarray, sr: int, seed: int | str,
                 settings: ConversationSettings) -> None:
        self.anonymizer, self.wav, self.sr, self.seed, self.settings = anonymizer, wav, sr, seed, settings

    def anonymize(self, wav: np.ndarray, key: str) -> tuple[np.ndarray, int]:
        out, out_sr = self.anonymizer.process(wav, self.sr, utterance_rng(self.seed, key))
        return np.asarray(out), int(out_sr)

    def render(self, pieces: list[Piece], keys: dict[str, str]) -> tuple[np.ndarray, int]:
        """The signal with every piece of a speaker in ``keys`` anonymized, the others copied; at the output rate.

        Each anonymized piece is added to the output as soon as it is made, so only one piece's output is held.
        """
        n, margin = len(self.wav), round(self.settings.margin * self.sr)
        anonymized = [piece.speaker in keys for piece in pieces]
        result, out_sr = None, self.sr
        for k, piece in enumerate(pieces):
            if not anonymized[k]:
                continue
            lo, hi = max(0, piece.start - margin), min(n, piece.stop + margin)
            out, rate = self.anonymize(self.wav[lo:hi], keys[piece.speaker])
            if result is None:
                result, out_sr = np.zeros(round(n * rate / self.sr), dtype=np.float32), rate
            elif rate != out_sr:
                raise RuntimeError(f"{self.anonymizer.name} gave {rate} Hz and {out_sr} Hz for pieces of one recording")
            scale = out_sr / self.sr
            start = round(lo * scale)
            out = fit_length(out, round(hi * scale) - start)
            a, b = round(piece.start * scale), round(piece.stop * scale)
            fade_in = k > 0 and anonymized[k - 1]
            fade_out = k + 1 < len(pieces) and anonymized[k + 1]
            half = max(1, round(self.settings.fade * out_sr / 2))
            ramp = (np.sin(0.5 * np.pi * (np.arange(2 * half) + 0.5) / (2 * half)) ** 2).astype(np.float32)
            x0, x1 = max(a - half if fade_in else a, start), min(b + half if fade_out else b, start + len(out))
            weight = np.ones(x1 - x0, dtype=np.float32)
            if fade_in:
                weight[: 2 * half] *= ramp[: len(weight[: 2 * half])]
            if fade_out:
                tail = weight[len(weight) - 2 * half:]
                tail *= ramp[::-1][-len(tail):]
            result[x0:x1] += out[x0 - start:x1 - start] * weight
        if result is None:
            result = np.zeros(n, dtype=np.float32)
        scale = out_sr / self.sr
        for piece, done in zip(pieces, anonymized):
            if not done:
                a, b = round(piece.start * scale), round(piece.stop * scale)
                result[a:b] = fit_length(resample(self.wav[piece.start:piece.stop], self.sr, out_sr), b - a)
        return result, out_sr


def _getter(encoder: EncoderSource) -> Callable[[], SpeakerEncoder]:
    """A function giving the encoder: ``encoder`` itself when it is one, else the builder it is."""
    return (lambda: encoder) if isinstance(encoder, SpeakerEncoder) else encoder


def _speech_samples(turns: list[Turn], speakers: list[str], wav: np.ndarray, sr: int,
                    seconds: float) -> dict[str, np.ndarray]:
    return {s: speech_of(turns, s, wav, sr, seconds) for s in speakers}


def _choose(runner: _Pieces, samples: dict[str, np.ndarray], base: dict[str, str], fixed: set[str],
            encoder: SpeakerEncoder, settings: ConversationSettings) -> KeyChoice:
    def anonymized_sample(speaker: str, key: str) -> np.ndarray:
        out, out_sr = runner.anonymize(samples[speaker], key)
        return resample(out, out_sr, EMBED_RATE)

    return choose_keys(base, fixed, anonymized_sample, EMBED_RATE, encoder, settings.candidates)


def _targets(samples: dict[str, np.ndarray], enrollments: np.ndarray | None, sr: int, encoder: SpeakerEncoder,
             settings: ConversationSettings) -> tuple[set[str], dict[str, float] | None]:
    """The speakers to anonymize (all, or those matching an enrollment) and their target scores."""
    if enrollments is None:
        return set(samples), None
    scores = target_scores(samples, enrollments, sr, encoder)
    return {s for s, c in scores.items() if c >= settings.target_threshold}, scores


def _speaker_report(speakers: list[str], keys: dict[str, str], scores: dict[str, float] | None,
                    seconds: dict[str, float]) -> dict[str, dict[str, Any]]:
    return {s: {"anonymized": s in keys, "key": keys.get(s), "speech_seconds": round(seconds.get(s, 0.0), 3),
                **({"target_score": scores[s]} if scores is not None else {})} for s in speakers}


def anonymize_conversation(anonymizer: Anonymizer, wav: np.ndarray, sr: int, turns: list[Turn], *, recording: str,
                           seed: int | str = 0, labels: dict[str, str] | None = None,
                           enrollments: np.ndarray | None = None, encoder: EncoderSource,
                           settings: ConversationSettings = ConversationSettings()) -> ConversationResult:
    """Anonymize a mono recording speaker by speaker (see the module notes).

    Parameters
    ----------
    anonymizer : any registered anonymizer; its draws come from ``utterance_rng(seed, key)``
    wav, sr : the recording (mono float32) and its rate
    turns : its speaker turns (diarized or given); checked to lie within the audio
    recording : its id: the base of every speaker's key (``<recording>/<speaker>``)
    labels : speaker -> label across recordings; such a speaker's key is the label (same pseudo-speaker everywhere)
    enrollments : target-speaker mode: enrollment embeddings (rows); only the speakers matching one are anonymized
    encoder : speaker encoder (or a function building it when first needed) for the key choice and target matching
    """
    labels = labels or {}
    wav = original = np.asarray(wav, dtype=np.float32)
    original_sr = sr
    check_turns(turns, len(wav) / sr, recording)
    if anonymizer.sample_rate and sr != anonymizer.sample_rate:
        wav, sr = resample(wav, sr, anonymizer.sample_rate), anonymizer.sample_rate
    runner = _Pieces(anonymizer, wav, sr, seed, settings)
    get_encoder = _getter(encoder)
    speakers = sorted({t.speaker for t in turns})
    seconds = {s: sum(t.duration for t in turns if t.speaker == s) for s in speakers}
    samples = _speech_samples(turns, speakers, wav, sr, settings.sample_seconds)
    chosen, scores = (_targets(samples, enrollments, sr, get_encoder(), settings) if enrollments is not None
                      else (set(speakers), None))
    report: dict[str, Any] = {"mode": "conversation", "recording": recording, "method": anonymizer.name,
                              "speakers_found": len(speakers)}
    if enrollments is not None:
        report["target_threshold"] = settings.target_threshold
    if len(speakers) <= 1 and enrollments is None:
        key = labels.get(speakers[0], recording) if speakers else recording
        out, out_sr = runner.anonymize(wav, key)
        report["decision"] = ("one speaker: the whole recording anonymized as one utterance" if speakers else
                              "no speech found: the whole recording anonymized as one speaker")
        report["speakers"] = _speaker_report(speakers, dict.fromkeys(speakers, key), None, seconds)
        return ConversationResult(out, out_sr, turns, report)
    if not chosen:
        report["decision"] = "target-speaker mode: no speaker matched an enrollment clip; recording left unchanged"
        report["speakers"] = _speaker_report(speakers, {}, scores, seconds)
        return ConversationResult(original, original_sr, turns, report)
    base = {s: labels.get(s, f"{recording}/{s}") for s in chosen}
    fixed = {s for s in chosen if s in labels}
    choice = _choose(runner, {s: samples[s] for s in chosen}, base, fixed, get_encoder(), settings)
    pieces = partition(turns, len(wav), sr, settings.max_piece)
    out, out_sr = runner.render(pieces, choice.keys)
    report.update({
        "decision": "each speaker anonymized with a pseudo-speaker of their own",
        "speakers": _speaker_report(speakers, choice.keys, scores, seconds),
        "keys_tried": choice.tried,
        "min_pseudo_distance": choice.min_distance,
        "overlap_seconds": round(_overlap_seconds(turns, len(wav) / sr), 3),
        "overlap_rule": OVERLAP_RULE,
        "pieces": len(pieces),
    })
    return ConversationResult(out, out_sr, turns, report)


def _overlap_seconds(turns: list[Turn], seconds: float, step: float = 0.01) -> float:
    """Seconds during which two or more turns run at once."""
    count = np.zeros(max(1, int(np.ceil(seconds / step))), dtype=np.int32)
    for t in turns:
        count[int(round(t.start / step)):int(round(t.end / step))] += 1
    return float(np.count_nonzero(count > 1) * step)


def anonymize_channels(anonymizer: Anonymizer, channels: np.ndarray, sr: int, *, recording: str,
                       seed: int | str = 0, labels: dict[str, str] | None = None,
                       enrollments: np.ndarray | None = None, encoder: EncoderSource,
                       settings: ConversationSettings = ConversationSettings()) -> ConversationResult:
    """Anonymize a recording of one speaker per channel (``(n, channels)``), each channel whole with its own
    pseudo-speaker; the turns reported are each channel's voice activity."""
    from voxanon.evaluation.diarization import SAMPLE_RATE, speech_regions

    labels = labels or {}
    channels = np.asarray(channels, dtype=np.float32)
    if channels.ndim != 2 or channels.shape[1] < 2:
        raise DataError(f"{recording}: one speaker per channel needs at least two channels, "
                        f"got {1 if channels.ndim == 1 else channels.shape[1]}; drop --per-channel for mono audio")
    if anonymizer.sample_rate and sr != anonymizer.sample_rate:
        channels = np.stack([resample(c, sr, anonymizer.sample_rate) for c in channels.T], axis=1)
        sr = anonymizer.sample_rate
    get_encoder = _getter(encoder)
    names = [f"ch{c + 1}" for c in range(channels.shape[1])]
    turns = []
    for c, name in enumerate(names):
        for a, b in speech_regions(resample(channels[:, c], sr, SAMPLE_RATE)):
            turns.append(Turn(recording, round(a / SAMPLE_RATE, 3), round((b - a) / SAMPLE_RATE, 3), name, c + 1))
    turns.sort()
    seconds = {s: sum(t.duration for t in turns if t.speaker == s) for s in names}
    samples = {s: (speech_of(turns, s, channels[:, c], sr, settings.sample_seconds)
                   if seconds[s] else channels[: round(settings.sample_seconds * sr), c])
               for c, s in enumerate(names)}
    chosen, scores = _targets(samples, enrollments, sr, get_encoder(), settings) if enrollments is not None \
        else (set(names), None)
    base = {s: labels.get(s, f"{recording}/{s}") for s in chosen}
    runners = {s: _Pieces(anonymizer, channels[:, c], sr, seed, settings) for c, s in enumerate(names)}
    choice = (_choose(runners[names[0]], {s: samples[s] for s in chosen}, base, {s for s in chosen if s in labels},
                      get_encoder(), settings) if chosen else KeyChoice({}, {}, None))
    whole = [Turn(recording, 0.0, channels.shape[0] / sr, "all")]
    outs = []
    for s in names:
        pieces = [Piece(p.start, p.stop, s) for p in partition(whole, channels.shape[0], sr, settings.max_piece)]
        outs.append(runners[s].render(pieces, {s: choice.keys[s]} if s in choice.keys else {}))
    out_sr = max((rate for (_, rate), s in zip(outs, names) if s in choice.keys), default=sr)
    length = round(channels.shape[0] * out_sr / sr)
    out = np.stack([fit_length(resample(o, rate, out_sr), length) for o, rate in outs], axis=1)
    report = {"mode": "per-channel", "recording": recording, "method": anonymizer.name,
              "decision": "each channel is one speaker, anonymized whole with a pseudo-speaker of its own",
              "speakers": _speaker_report(names, choice.keys, scores, seconds),
              "keys_tried": choice.tried, "min_pseudo_distance": choice.min_distance}
    if enrollments is not None:
        report["target_threshold"] = settings.target_threshold
    return ConversationResult(out, out_sr, turns, report)
