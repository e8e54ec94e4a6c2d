"""Speech-editing infill: the spans of an utterance re-generated with new words in the utterance's own voice.

What SECA's paper does with F5-TTS is done here by a *backbone*: a model that turns content frames, the
normalised pitch contour and a speaker embedding into vocoder mels (:mod:`voxanon.models.acoustic`):
``f3va[:<model.pt>]``, the F3-VA DiT flow backbone (shipped ``f3va``), or ``acoustic[:<model.pt>]``, the conv
acoustic model (shipped ``default``).

For each span: the content frames (the backbone's Whisper tiny.en layer) of the replacement words, spoken
by a Kokoro voice and trimmed, are warped onto the span's frames of the utterance's content sequence; the
pitch in the span is the TTS's contour (its voicing and its movement around its mean) at a level bridged
linearly between the voiced frames just before and just after the span. The backbone regenerates the mels
with the utterance's own speaker embedding (GE2E): the conv model all of them, the flow backbone only the
spans' frames, its ODE holding every other frame on its path to the original's own mels (speech editing in
context). HiFi-GAN universal vocodes them (around the spans only), the result is brought to
the level of the original around the spans, and only the spans (and ``crossfade`` seconds either side, where
the regenerated neighbours fade into the original) are spliced into the original audio.
"""

from __future__ import annotations

import numpy as np

from voxanon.audio.io import resample
from voxanon.dsp.frames import frames_at
from voxanon.dsp.splice import rms, splice
from voxanon.errors import ConfigError

#: seconds each side of a span whose voiced pitch sets the bridge's end points
BRIDGE_SECONDS = 0.15
#: seconds each side of a span that are vocoded with it, and over which its level is matched to the original
LEVEL_SECONDS = 0.3
CONTENT_RATE = 16000
#: infill backbone kind -> its shipped model
BACKBONES = {"f3va": "f3va", "acoustic": "default"}


def load_backbone(spec: str):
    """The infill backbone: ``f3va[:<model>]`` (the flow backbone, shipped ``f3va`` when no model is named) or
    ``acoustic[:<model>]`` (the conv acoustic model, shipped ``default`` when no model is named)."""
    from voxanon.models.acoustic import load_acoustic

    kind, _, model = spec.partition(":")
    if kind not in BACKBONES:
        raise ConfigError(f"infill backbone {spec!r}: use f3va[:f3va|<model.pt>] or acoustic[:default|<model.pt>]")
    loaded = load_acoustic(model or BACKBONES[kind])
    if (loaded.kind == "dit") != (kind == "f3va"):
        raise ConfigError(f"infill backbone {spec!r}: {model} is a {loaded.kind} model; name it as "
                          f"{'f3va' if loaded.kind == 'dit' else 'acoustic'}:{model}")
    return loaded


def bridge(semitones: np.ndarray, voiced: np.ndarray, a: int, b: int, context: int) -> tuple[float, float]:
    """Mean pitch (semitones) of the voiced frames in ``context`` frames before ``a`` and after ``b``.

    A side with no voiced frame takes the other side's value; with none on either, 0 (the utterance median).
    """
    left = semitones[max(0, a - context):a][voiced[max(0, a - context):a] > 0]
    right = semitones[b:b + context][voiced[b:b + context] > 0]
    lo = float(left.mean()) if len(left) else None
    hi = float(right.mean()) if len(right) else None
    lo, hi = (lo if lo is not None else hi), (hi if hi is not None else lo)
    return (lo or 0.0), (hi or 0.0)


class Infill:
    """Re-generate time spans of an utterance with replacement speech (see the module docstring)."""

    def __init__(self, backbone: str = "acoustic:default") -> None:
        self.model = load_backbone(backbone)
        self.name = backbone

    def __call__(self, wav: np.ndarray, sr: int, spans: list[tuple[float, float]], speech: list[np.ndarray],
                 speech_sr: int, crossfade: float) -> np.ndarray:
        """``wav`` with each span ``(start s, end s)`` re-generated to say the matching ``speech`` (trimmed TTS)."""
        from voxanon.models.acoustic.features import SourceFeatures, pitch_frames

        model, vocoder, encoder = self.model, self.model.vocoder(), self.model.encoder()
        features = model.features(wav, sr)
        content, pitch = features.content.copy(), features.pitch.copy()
        frame_rate = vocoder.sample_rate / vocoder.hop_length
        context = max(1, round(BRIDGE_SECONDS * frame_rate))
        ranges = []                  # each span's frames [a, b)
        for start, end in spans:
            a = int(round(start * frame_rate))
            ranges.append((a, min(len(content), max(int(round(end * frame_rate)), a + 1))))
        for (a, b), words in zip(ranges, speech):
            n, seconds = b - a, len(words) / speech_sr
            words16 = resample(words, speech_sr, CONTENT_RATE)
            times = (np.arange(n) + 0.5) / n * seconds
            content[a:b] = frames_at(encoder.encode(words16, CONTENT_RATE), encoder.frame_rate, times)
            tts_pitch = pitch_frames(words16, CONTENT_RATE, n, n / seconds)
            lo, hi = bridge(pitch[:, 0], pitch[:, 1], a, b, context)
            voiced = tts_pitch[:, 1] > 0
            movement = tts_pitch[:, 0] - (tts_pitch[voiced, 0].mean() if voiced.any() else 0.0)
            pitch[a:b, 0] = np.where(voiced, np.linspace(lo, hi, n) + movement, 0.0)
            pitch[a:b, 1] = voiced
        speaker = model.speaker_encoder().embed([wav], sr)[0]
        known = None
        if model.kind == "dit":      # flow editing: only the spans' frames are generated, in their real context
            keep = np.ones(len(content), dtype=bool)
            for a, b in ranges:
                keep[a:b] = False
            original = vocoder.analyze(wav, sr)[: len(content)]
            known = (np.pad(original, ((0, len(content) - len(original)), (0, 0)), mode="edge"), keep)
        mel = model.mel(SourceFeatures(content.astype(np.float32), pitch.astype(np.float32)), speaker, known=known)
        regenerated = np.zeros(len(wav), dtype=np.float32)
        margin = round(LEVEL_SECONDS * frame_rate)
        for start, end in spans:  # vocode only the neighbourhood of each span: the vocoder is the costly part
            a, b = max(0, round(start * frame_rate) - margin), min(len(mel), round(end * frame_rate) + margin)
            piece = resample(vocoder.synthesize(mel[a:b]), vocoder.sample_rate, sr)
            first = round(a / frame_rate * sr)
            piece = piece[: len(wav) - first]
            regenerated[first:first + len(piece)] = piece
        regenerated *= self.gain(wav, regenerated, sr, spans)
        fade, out = int(round(crossfade * sr)), wav
        for start, end in spans:
            a, b = int(round(start * sr)) - fade, int(round(end * sr)) + fade
            a, b = max(0, a), min(len(wav), b)
            out = splice(out, regenerated[a:b], a, b, fade)
        return out

    @staticmethod
    def gain(original: np.ndarray, regenerated: np.ndarray, sr: int, spans: list[tuple[float, float]]) -> float:
        """Factor that brings ``regenerated`` to ``original``'s level over the neighbourhoods of the spans."""
        mask = np.zeros(len(original), dtype=bool)
        for start, end in spans:
            mask[max(0, int((start - LEVEL_SECONDS) * sr)):int((end + LEVEL_SECONDS) * sr)] = True
        for start, end in spans:
            mask[int(start * sr):int(end * sr)] = False
        if not mask.any():
            mask[:] = True
        level = rms(regenerated[mask])
        return rms(original[mask]) / level if level > 0 else 1.0
