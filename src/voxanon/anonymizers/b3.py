"""VPC 2024 baseline B3 in its offline form: recognised words, re-spoken, in the source's timing and F0 contour.

The VPC's B3 recognises the source's phones, and a FastSpeech2-style TTS speaks
them with the source's phone durations and normalised F0 in the voice of a
pseudo-speaker, an x-vector drawn per utterance from a WGAN. Only text and
prosody cross from input to output. Offline, the same chain is:

1. words and their timings from Whisper tiny.en (:meth:`AsrBackend.transcribe_with_timings`);
2. the words spoken by one fixed Kokoro voice, phrase by phrase (phrases cut
   at the source's pauses, :func:`phrases`), so that nothing of the source but
   the words reaches the TTS;
3. durations: the same ASR times the words of the TTS speech, and the TTS's
   content frames (the acoustic model's Whisper layer) are warped piecewise
   linearly so that every word starts and ends where the source's did; each
   phrase's speech is pinned by its energy edges in both (Whisper's word times
   are up to 0.3 s off next to a pause), and the source's pauses become
   silence frames of the TTS (:meth:`B3.tts_timeline`);
4. F0: the source's normalised pitch contour (F3-VA's relative pitch, what the
   acoustic model reads anyway), so the pitch *level* is the pseudo-speaker's;
5. speaker: a GE2E embedding sampled per utterance from the shipped speaker flow
   (F3-VA's conditional flow matching, ``z ~ N(0, I)`` through ODE-2: the ``f3va``
   generator at ``w = 0``), the analogue of B3's WGAN sampling. Not a WGAN on
   Kokoro's style vectors: there are only 28 English base voices to fit it to,
   while the flow is trained on the 210-speaker GE2E pool, and GE2E embeddings
   are what drives the speaker-conditioned synthesizer;
6. synthesis: the speaker-conditioned acoustic model (mels) and HiFi-GAN universal,
   resampled to the input's rate, as in :mod:`voxanon.anonymizers.embedding`.

The output has the input's length; an input with no recognised words becomes
silence. Long inputs are converted in chunks with one pseudo-speaker (as ``embedding``).
"""

from __future__ import annotations

import dataclasses
import difflib
from pathlib import Path

import numpy as np

from voxanon.anonymizers.base import param
from voxanon.anonymizers.embedding import F0_MODES, Embedding, resynthesis_files
from voxanon.audio.io import resample
from voxanon.audio.level import speech_edges, speech_frames
from voxanon.dsp.frames import frames_at, time_warp
from voxanon.errors import ConfigError
from voxanon.models.asr.base import DEFAULT_ASR, WordTiming
from voxanon.ranges import Range

#: seconds of silence put around each phrase's TTS speech (the silence frames the source's pauses map to)
PAD_SECONDS = 0.3
#: a phrase is cut after this many words even without a pause (Kokoro speaks at most 508 phonemes per call)
MAX_PHRASE_WORDS = 30
#: rate the TTS timeline is analysed at (the ASR's and the content encoder's)
TIMELINE_RATE = 16000


def spoken(words: list[WordTiming]) -> list[WordTiming]:
    """The words with at least one letter or digit (Whisper also returns bare punctuation)."""
    return [w for w in words if any(c.isalnum() for c in w.word)]


def phrases(words: list[WordTiming], pause: float, max_words: int = MAX_PHRASE_WORDS) -> list[list[WordTiming]]:
    """``words`` in runs cut where the gap to the next word is at least ``pause`` s, or after ``max_words``."""
    out: list[list[WordTiming]] = []
    for word in words:
        if out and word.start - out[-1][-1].end < pause and len(out[-1]) < max_words:
            out[-1].append(word)
        else:
            out.append([word])
    return out


def _token(word: str) -> str:
    return "".join(c for c in word.lower() if c.isalnum())


def word_anchors(source: list[WordTiming], tts: list[WordTiming]) -> list[tuple[float, float]]:
    """``(source time, TTS time)`` pairs at the start and end of every word of ``source`` matched in ``tts``.

    Words are matched by their letters and digits, in order (longest matching blocks, as difflib finds them).
    """
    matcher = difflib.SequenceMatcher(None, [_token(w.word) for w in source], [_token(w.word) for w in tts],
                                      autojunk=False)
    pairs = []
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            s, t = source[block.a + k], tts[block.b + k]
            pairs += [(s.start, t.start), (s.end, t.end)]
    return pairs


class B3(Embedding):
    """VPC 2024 B3 offline: ASR words, one Kokoro voice, the source's word timing and F0 contour, a flow speaker.

    See the module docstring for the chain and why the pseudo-speaker comes from the speaker flow.
    """

    name = "b3"

    @dataclasses.dataclass(frozen=True)
    class Config:
        asr: str = param(DEFAULT_ASR, "ASR with word timings (whisper-tiny) for the source and the TTS speech")
        voice: str = param("af_heart", "Kokoro voice spec that speaks the recognised words (af_heart, a*0.5+b*0.5)")
        model: str = param("default", "acoustic model: default (shipped) or a checkpoint of voxanon train acoustic")
        flow: str = param("", "speaker flow checkpoint (voxanon train speaker-flow); empty = the shipped flow")
        solver: str = param("euler", "ODE solver of the flow (euler, midpoint, rk4)")
        steps: int = param(16, "ODE steps of the flow", range=Range(1, 1000))
        pause: float = param(0.3, "seconds of silence between words that start a new TTS phrase",
                             range=Range(0.05, 10.0))
        f0: str = param("model", "model (the source's normalised contour at the pseudo-speaker's level; VPC B3) "
                                 "or source (the source's own F0, imposed by WORLD)")
        threads: int = param(0, "threads of the ASR, the voice and torch (0 = each library's default)",
                             range=Range(0))

        def __post_init__(self) -> None:  # the solver is checked when the flow loads (it imports torch)
            if self.f0 not in F0_MODES:
                raise ConfigError(f"parameter f0: {self.f0!r} is not one of {', '.join(F0_MODES)}")

    def model_files(self) -> dict[str, Path]:
        return resynthesis_files(self.config.model, "f3va", "", self.config.flow)

    def parts(self):
        """(acoustic model, ASR, voice, speaker generator), loaded on first use."""
        if self._parts is None:
            from voxanon.anonymizers.pseudo.f3va import F3VAGenerator
            from voxanon.models.acoustic import load_acoustic
            from voxanon.models.asr import load_asr
            from voxanon.models.tts import load_tts

            c = self.config
            if c.threads > 0:
                import torch

                torch.set_num_threads(c.threads)
            flow = None
            if c.flow:
                from voxanon.models.flow import load_flow

                flow = load_flow(c.flow)
            generator = F3VAGenerator(flow, w=0.0, solver=c.solver, steps=c.steps)
            self._parts = (load_acoustic(c.model), load_asr(c.asr, threads=c.threads),
                           load_tts(f"kokoro:{c.voice}", threads=c.threads), generator)
        return self._parts

    def pseudo_speaker(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> np.ndarray:
        """A GE2E embedding sampled from the speaker flow (the source does not enter)."""
        return self.parts()[3].sample(rng)

    def tts_timeline(self, words: list[WordTiming], wav: np.ndarray, sr: int) -> tuple[np.ndarray, np.ndarray,
                                                                                       np.ndarray]:
        """The recognised ``words`` of the source ``wav`` spoken phrase by phrase, with their anchors.

        Each phrase's speech lies between :data:`PAD_SECONDS` of silence in the timeline (at
        :data:`TIMELINE_RATE`). Anchors (source times, timeline times) pin both ends, the middle of every
        pause between phrases (to the middle of the silence between their speech, so each phrase stays in its
        own span whatever the ASR hears), the energy edges of every phrase's speech in both (the ASR's times
        are up to 0.3 s off next to a pause) and, inside those edges, the start and end of every word the ASR
        finds again in the timeline (:func:`word_anchors`).
        """
        _, asr, voice, _ = self.parts()
        duration, source_frames = len(wav) / sr, speech_frames(wav, sr)
        pad = np.zeros(round(PAD_SECONDS * TIMELINE_RATE), dtype=np.float32)
        groups, pieces, anchors, spans = phrases(words, self.config.pause), [], [(0.0, 0.0)], []
        for k, phrase in enumerate(groups):
            lo = 0.5 * (groups[k - 1][-1].end + phrase[0].start) if k else 0.0
            hi = 0.5 * (phrase[-1].end + groups[k + 1][0].start) if k + 1 < len(groups) else duration
            offset = sum(map(len, pieces)) / TIMELINE_RATE
            if k:
                anchors.append((lo, offset))
            speech = resample(*voice.synthesize(" ".join(w.word for w in phrase)), TIMELINE_RATE)
            pieces += [pad, speech, pad]
            said = speech_edges(source_frames, sr, lo, hi)
            spoke = speech_edges(speech_frames(speech, TIMELINE_RATE), TIMELINE_RATE, 0.0, len(speech) / TIMELINE_RATE)
            if said and spoke:
                said = (min(said[0], phrase[0].end), max(said[1], phrase[-1].start))
                spoke = (offset + PAD_SECONDS + spoke[0], offset + PAD_SECONDS + spoke[1])
                anchors += list(zip(said, spoke))
            else:
                said, spoke = (lo, hi), (offset, sum(map(len, pieces)) / TIMELINE_RATE)
            spans.append((said, spoke))
        timeline = np.concatenate(pieces)
        anchors.append((duration, len(timeline) / TIMELINE_RATE))
        anchors += [(s, t) for s, t in word_anchors(words, spoken(asr.transcribe_with_timings([timeline],
                                                                                             TIMELINE_RATE)[0]))
                    if any(a < s < b and c < t < d for (a, b), (c, d) in spans)]
        src, dst = np.array(anchors).T
        return timeline, src, dst

    def resynthesize(self, wav: np.ndarray, sr: int, speaker: np.ndarray) -> tuple[np.ndarray, int]:
        """The recognised words of ``wav`` in its word timing and pitch contour, in the voice of ``speaker``."""
        from voxanon.models.acoustic.features import (
            SourceFeatures,
            n_vocoder_frames,
            pitch_frames,
        )

        model, asr, _, _ = self.parts()
        words = spoken(asr.transcribe_with_timings([wav], sr)[0])
        if not words:
            return np.zeros(len(wav), dtype=np.float32), sr
        vocoder = model.vocoder()
        timeline, src, dst = self.tts_timeline(words, wav, sr)
        n, frame_rate = n_vocoder_frames(len(wav), sr, vocoder.sample_rate, vocoder.hop_length), \
            vocoder.sample_rate / vocoder.hop_length
        encoder = model.encoder()
        content = frames_at(encoder.encode(timeline, TIMELINE_RATE), encoder.frame_rate,
                            time_warp(src, dst, (np.arange(n) + 0.5) / frame_rate))
        pitch = pitch_frames(resample(wav, sr, 16000), 16000, n, frame_rate)
        features = SourceFeatures(content.astype(np.float32), pitch)
        return vocoder.synthesize(model.mel(features, speaker)), vocoder.sample_rate
