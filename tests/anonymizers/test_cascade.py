"""The ASR→TTS cascade: the words survive, the voice and the duration are the cascade's own."""

from __future__ import annotations

import numpy as np
import pytest

from voxanon.anonymizers import cascade as cascade_module
from voxanon.anonymizers.registry import build
from voxanon.audio.io import resample
from voxanon.metrics import wer
from voxanon.models.asr import load_asr
from voxanon.models.tts import TtsError, load_tts
from voxanon.models.tts.cli_engines import engine_available, synthesize

SENTENCE = "the quick brown fox jumps over the lazy dog near the river bank"

pytestmark = pytest.mark.skipif(not (engine_available("flite") and engine_available("espeak-ng")),
                                reason="flite or espeak-ng not installed")


@pytest.fixture(scope="module")
def speech_16k() -> np.ndarray:
    """A known sentence spoken by flite's female "slt" voice (not the cascade's voice), at 16 kHz."""
    wav, sr = synthesize("flite", "slt", SENTENCE)
    return resample(wav, sr, 16000)


@pytest.mark.slow
def test_cascade_keeps_the_words_and_the_duration(speech_16k):
    anon = build("cascade")
    assert anon.needs_model and anon.config.tts == "piper"
    out, sr = anon.anonymize(speech_16k, 16000, np.random.default_rng(0))
    assert sr == 16000 and len(out) == len(speech_16k) and out.dtype == np.float32
    assert np.max(np.abs(out)) == pytest.approx(np.max(np.abs(speech_16k)), rel=1e-3)
    hyp = load_asr("whisper-tiny", threads=1).transcribe([out], sr)[0]
    assert wer([SENTENCE], [hyp]).wer <= 20.0
    assert not np.allclose(out[: len(out) // 2], speech_16k[: len(out) // 2], atol=0.05)
    again, _ = anon.anonymize(speech_16k, 16000, np.random.default_rng(1))
    np.testing.assert_array_equal(out, again)  # one text, one waveform


def test_cascade_native_duration_at_another_rate(speech_16k):
    slow = resample(np.concatenate([speech_16k, np.zeros(32000, np.float32)]), 16000, 8000)
    out, sr = build("cascade", {"match_duration": "false"}).anonymize(slow, 8000, np.random.default_rng(0))
    assert sr == 8000
    assert 0.3 * len(slow) < len(out) < 0.9 * len(slow)  # 2 s of trailing silence are not spoken


def test_silence_gives_silence_of_the_input_length():
    out, sr = build("cascade").anonymize(np.zeros(12345, np.float32), 16000, np.random.default_rng(0))
    assert sr == 16000 and len(out) == 12345 and not np.any(out)


def test_espeak_fallback_when_piper_is_missing(monkeypatch, speech_16k):
    def no_piper(spec, **kwargs):
        if spec == "piper":
            raise TtsError("piper missing")
        return load_tts(spec, **kwargs)

    monkeypatch.setattr(cascade_module, "load_tts", no_piper)
    anon = build("cascade", {"match_duration": "false"})
    with pytest.warns(UserWarning, match="falls back to espeak-ng"):
        _, tts = anon.models()
    assert tts.name == "espeak-ng:en-us"
    with pytest.raises(TtsError, match="unknown TTS voice"):
        load_tts("mary")


SLOT_SENTENCES = ["the quick brown fox", "jumps over the lazy dog", "near the river bank"]


@pytest.mark.slow
def test_long_input_is_spoken_segment_by_segment_cut_at_pauses(monkeypatch, speech_16k):
    """Each sentence in its own 4-s slot; segments of about 4 s cut in the pauses between them."""
    slots = []
    for sentence in SLOT_SENTENCES:
        wav, sr = synthesize("flite", "slt", sentence)
        wav = resample(wav, sr, 16000)[: 3 * 16000]
        slot = np.zeros(4 * 16000, np.float32)
        start = (len(slot) - len(wav)) // 2
        slot[start:start + len(wav)] = wav
        slots.append(slot)
    long = np.concatenate(slots)
    monkeypatch.setattr(cascade_module, "SEGMENTS", cascade_module.Chunking(seconds=4.0, overlap=2.0, fade=0.2))
    anon = build("cascade")
    asr, _ = anon.models()
    heard: list[int] = []
    transcribe = asr.transcribe
    monkeypatch.setattr(asr, "transcribe", lambda wavs, sr: heard.extend(map(len, wavs)) or transcribe(wavs, sr))
    out, sr = anon.process(long, 16000, np.random.default_rng(0))
    assert sr == 16000 and len(out) == len(long) and out.dtype == np.float32
    assert heard and max(heard) <= 5 * 16000  # the recogniser never sees the whole input
    cuts = cascade_module.SEGMENTS.bounds(long, 16000)
    assert len(cuts) == 4 and all(not np.any(long[c - 800:c + 800]) for c in cuts[1:-1])  # in the pauses
    recogniser = load_asr("whisper-tiny", threads=1)
    for (a, b), sentence in zip(zip(cuts, cuts[1:]), SLOT_SENTENCES):  # each sentence stays in its segment
        assert wer([sentence], recogniser.transcribe([out[a:b]], 16000)).wer <= 34.0
        assert np.max(np.abs(out[a:b])) == pytest.approx(np.max(np.abs(long[a:b])), rel=1e-3)
    monkeypatch.undo()
    short, _ = anon.process(speech_16k, 16000, np.random.default_rng(0))  # one segment: exactly anonymize()
    np.testing.assert_array_equal(short, anon.anonymize(speech_16k, 16000, np.random.default_rng(0))[0])
