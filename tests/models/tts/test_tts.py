import numpy as np
import pytest

from voxanon.models.tts import cli_engines as tts
from voxanon.models.tts.prosody import shift_pitch

TEXT = "Seven green boats sailed home."

VOICES = [("espeak-ng", "en-us+f3"), ("flite", "slt"), ("flite", "kal16"), ("festival", "ked_diphone"),
          ("festival", "cmu_us_slt_arctic_hts")]


def _need(engine, voice):
    if not tts.engine_available(engine):
        pytest.skip(f"{engine} missing: apt-get install {tts.ENGINE_PACKAGES[engine]}")
    if engine == "festival" and voice not in tts.festival_voices():
        pytest.skip(f"festival voice {voice} missing (festvox-* Debian package)")


@pytest.mark.parametrize("engine,voice", VOICES)
def test_engine_produces_finite_speech(engine, voice):
    _need(engine, voice)
    wav, sr = tts.synthesize(engine, voice, TEXT)
    assert sr in (8000, 16000, 22050, 32000, 44100, 48000)
    assert wav.dtype == np.float32 and wav.ndim == 1
    assert np.all(np.isfinite(wav))
    assert 0.8 < len(wav) / sr < 5.0
    assert np.sqrt(np.mean(wav ** 2)) > 1e-3


@pytest.mark.parametrize("engine,voice", VOICES[:3] + VOICES[4:])
def test_rate_changes_duration(engine, voice):
    _need(engine, voice)
    slow, sr = tts.synthesize(engine, voice, TEXT, rate=0.7)
    fast, _ = tts.synthesize(engine, voice, TEXT, rate=1.4)
    assert len(slow) > 1.4 * len(fast)


def test_volume_is_a_gain_and_deterministic():
    _need("flite", "slt")
    a, _ = tts.synthesize("flite", "slt", TEXT)
    b, _ = tts.synthesize("flite", "slt", TEXT, volume=0.5)
    np.testing.assert_allclose(b, a * 0.5, atol=1e-6)
    np.testing.assert_array_equal(a, tts.synthesize("flite", "slt", TEXT)[0])


def test_shift_pitch_scales_f0():
    import pyworld

    sr = 16000
    t = np.arange(sr) / sr
    f0 = 120 + 20 * np.sin(2 * np.pi * 2 * t)
    wav = (0.3 * np.sin(2 * np.pi * np.cumsum(f0) / sr)).astype(np.float32)
    out = shift_pitch(wav, sr, 1.5, range_factor=1.0)
    assert len(out) == len(wav)
    est = pyworld.dio(out.astype(np.float64), sr)[0]
    assert np.median(est[est > 0]) == pytest.approx(1.5 * 120, rel=0.08)


def test_missing_engine_and_voice_are_named(monkeypatch):
    monkeypatch.setattr(tts.shutil, "which", lambda name: None)
    with pytest.raises(tts.TTSError, match="apt-get install flite"):
        tts.synthesize("flite", "slt", TEXT)
    monkeypatch.undo()
    if tts.engine_available("flite"):
        with pytest.raises(tts.TTSError, match="no voice"):
            tts.synthesize("flite", "nobody", TEXT)
    with pytest.raises(tts.TTSError, match="unknown TTS engine"):
        tts.synthesize("sam", "x", TEXT)


@pytest.mark.parametrize("engine,voice", [("espeak-ng", "en-us+m3"), ("flite", "kal16")])
def test_pitch_factor_moves_f0(engine, voice):
    import pyworld

    _need(engine, voice)

    def median_f0(pitch):
        wav, sr = tts.synthesize(engine, voice, TEXT, pitch=pitch)
        f0 = pyworld.dio(wav.astype(np.float64), sr)[0]
        return np.median(f0[f0 > 0])

    assert median_f0(1.25) / median_f0(1.0) == pytest.approx(1.25, rel=0.1)
