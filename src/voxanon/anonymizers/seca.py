"""SECA, speech-editing content anonymization: named entities in the speech replaced by others of their type.

Chain ("Anonymization, Not Elimination"): Whisper tiny.en words with timings -> NER (four types:
PER, LOC, ORG, MISC; :mod:`voxanon.models.ner`) -> each entity replaced by a listed name of its type and
similar length (:func:`voxanon.data.entity_lists.replacement`, drawn with the utterance's generator) -> the
entity's time span edited by ``edit``:

``infill``
    the span re-generated to say the replacement in the speaker's own voice (:mod:`.infill`; ``backbone``:
    the shipped conv acoustic model, or the F3-VA flow backbone editing the span's mels in their real
    context), cross-faded at the word boundaries;
``tts``
    the replacement spoken by a Kokoro voice, stretched to the span (WORLD) at the span's level;
``silence``, ``noise``, ``beep``
    the span muted, or covered by white noise or a tone at the span's level (redaction baselines).

Outside the spans (and, for ``infill``, ``crossfade`` s either side) the audio is untouched, and the
output has the input's length and rate. SECA is composable after any voice anonymizer (``chain``).

What was replaced where is :meth:`Seca.report`, written next to each output as JSON: per edit its time
span, type, replacement and word range in ``transcript``, the recognised transcript with the replacements
in place. The original entities' text is never stored.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from voxanon.anonymizers.b3 import spoken
from voxanon.anonymizers.base import Anonymizer, param
from voxanon.audio.io import AudioError, check_waveform, resample
from voxanon.audio.level import trim
from voxanon.data.entity_lists import ENTITY_TYPES, replacement
from voxanon.data.sentences import normalize_transcript
from voxanon.dsp.splice import noise, rms, splice, tone
from voxanon.dsp.world import stretch
from voxanon.errors import ConfigError
from voxanon.models.asr.base import DEFAULT_ASR, WordTiming
from voxanon.ranges import Range

EDITS = ("infill", "tts", "silence", "noise", "beep")


@dataclasses.dataclass(frozen=True)
class Edit:
    """One replaced entity: its time span (s), type, replacement and the replacement's words in the transcript."""

    start: float
    end: float
    type: str
    replacement: str
    words: tuple[int, int]


def entity_word_ranges(words: list[WordTiming], entities) -> list[tuple[int, int, str]]:
    """``(first, last + 1, type)`` word indices of each entity, found in ``" ".join(words)`` by character spans."""
    starts, pos = [], 0
    for w in words:
        starts.append(pos)
        pos += len(w.word) + 1
    out = []
    for e in entities:
        hit = [i for i, s in enumerate(starts) if s < e.end and s + len(words[i].word) > e.start]
        if hit:
            out.append((hit[0], hit[-1] + 1, e.type))
    return out


class Seca(Anonymizer):
    """Replace the named entities of the speech (see the module docstring)."""

    name = "seca"
    needs_model = True
    #: the ASR's and the content encoder's rate; a chain runs SECA on the whole utterance, never in chunks
    sample_rate = 16000

    @dataclasses.dataclass(frozen=True)
    class Config:
        edit: str = param("infill", "how a span is edited: infill, tts, silence, noise or beep")
        types: tuple[str, ...] = param(ENTITY_TYPES, "entity types replaced (of PER, LOC, ORG, MISC)")
        asr: str = param(DEFAULT_ASR, "ASR with word timings (whisper-tiny)")
        ner: str = param("auto", "NER: auto (spaCy + gazetteer, the gazetteer alone without spaCy), spacy, gazetteer")
        voice: str = param("af_heart", "Kokoro voice that speaks the replacements (tts; infill's content)")
        backbone: str = param("acoustic:default", "infill backbone: acoustic[:default|<model.pt>] (the conv model "
                                                  "regenerates the span's neighbourhood) or f3va[:f3va|<model.pt>] "
                                                  "(the flow backbone fills the span in its real context)")
        crossfade: float = param(0.02, "seconds of cross-fade at each span boundary", range=Range(0.0, 0.2))
        pad: float = param(0.02, "seconds added to each side of a recognised entity's span", range=Range(0.0, 0.5))
        beep_hz: float = param(1000.0, "beep: tone frequency (Hz)", range=Range(20.0, 8000.0))
        threads: int = param(0, "threads of the ASR, the voice and torch (0 = each library's default)",
                             range=Range(0))

        def __post_init__(self) -> None:
            if self.edit not in EDITS:
                raise ConfigError(f"parameter edit: {self.edit!r} is not one of {', '.join(EDITS)}")
            bad = [t for t in self.types if t not in ENTITY_TYPES]
            if bad or not self.types:
                raise ConfigError(f"parameter types: give some of {', '.join(ENTITY_TYPES)}, got {list(self.types)}")

    def __init__(self, config=None, **params) -> None:
        super().__init__(config, **params)
        self._models: dict[str, object] = {}
        self._report: dict | None = None

    def model(self, what: str):
        """``asr``, ``ner``, ``voice`` or ``infill``, loaded on first use."""
        if what not in self._models:
            c = self.config
            if what == "asr":
                from voxanon.models.asr import load_asr

                self._models[what] = load_asr(c.asr, threads=c.threads)
            elif what == "ner":
                from voxanon.models.ner import load_ner

                self._models[what] = load_ner(c.ner)
            elif what == "voice":
                from voxanon.models.tts import load_tts

                self._models[what] = load_tts(f"kokoro:{c.voice}", threads=c.threads)
            else:
                from voxanon.anonymizers.infill import Infill

                if c.threads > 0:
                    import torch

                    torch.set_num_threads(c.threads)
                self._models[what] = Infill(c.backbone)
        return self._models[what]

    def find_edits(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[list[Edit], list[str]]:
        """The edits of ``wav`` and the recognised transcript (normalised words) with the replacements in place."""
        words = spoken(self.model("asr").transcribe_with_timings([wav], sr)[0])
        entities = [e for e in self.model("ner").find(" ".join(w.word for w in words)) if e.type in self.config.types]
        ranges = entity_word_ranges(words, entities)
        edits, transcript, done = [], [], 0
        duration = len(wav) / sr
        for a, b, kind in ranges:
            for w in words[done:a]:
                transcript += normalize_transcript(w.word).split()
            original = " ".join(w.word.strip(".,;:!?\"") for w in words[a:b]).removesuffix("'s")
            new = replacement(original, kind, rng)
            first = len(transcript)
            transcript += normalize_transcript(new).split()
            start = max(0.0, words[a].start - self.config.pad)
            end = min(duration, max(words[b - 1].end + self.config.pad, start + 0.05))
            edits.append(Edit(round(start, 3), round(end, 3), kind, new, (first, len(transcript))))
            done = b
        for w in words[done:]:
            transcript += normalize_transcript(w.word).split()
        return edits, transcript

    def anonymize(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        self._report = None
        wav = np.asarray(wav, dtype=np.float32)
        check_waveform(wav, "seca input")
        if not np.any(wav):
            raise AudioError("seca input: the audio is silent (all samples zero); nothing to recognise")
        edits, transcript = self.find_edits(wav, sr, rng)
        out = self.edit(wav, sr, edits, rng) if edits else wav.copy()
        self._report = {
            "method": self.name, "edit": self.config.edit, "asr": self.model("asr").name,
            "ner": self.model("ner").name,
            "edits": [{"start": e.start, "end": e.end, "type": e.type, "replacement": e.replacement,
                       "words": list(e.words)} for e in edits],
            "transcript": " ".join(transcript),
        }
        return out, sr

    def edit(self, wav: np.ndarray, sr: int, edits: list[Edit], rng: np.random.Generator) -> np.ndarray:
        """``wav`` with every edit's span changed by the configured ``edit``."""
        c = self.config
        spans = [(int(round(e.start * sr)), int(round(e.end * sr))) for e in edits]
        fade = int(round(c.crossfade * sr))
        if c.edit in ("infill", "tts"):
            voice = self.model("voice")
            speech = []
            for e in edits:
                said, said_sr = voice.synthesize(e.replacement)
                speech.append(trim(said, said_sr, margin_s=0.0))
            if c.edit == "infill":
                return self.model("infill")(wav, sr, [(e.start, e.end) for e in edits], speech, said_sr, c.crossfade)
        out = wav
        for k, (a, b) in enumerate(spans):
            level = rms(wav[a:b])
            if c.edit == "silence":
                fill = np.zeros(b - a, dtype=np.float32)
            elif c.edit == "noise":
                fill = noise(b - a, level, rng)
            elif c.edit == "beep":
                fill = tone(b - a, sr, c.beep_hz, level)
            else:
                said = stretch(resample(speech[k], said_sr, sr), sr, b - a)
                fill = said * (level / max(rms(said), 1e-9))
            out = splice(out, fill, a, b, fade)
        return out

    def report(self) -> dict | None:
        return self._report
