"""Recording conditions: the signal properties each one promises (band, codec error, SNR, reverberation tail),
levels that never clip, determinism per (seed, utterance), and short, silent and empty input."""

from __future__ import annotations

import numpy as np
import pytest

from voxanon.anonymizers.base import utterance_rng
from voxanon.dsp import conditions as c
from voxanon.errors import ConfigError

SR = 16000


def _band_energy_db(y: np.ndarray, sr: int, lo: float, hi: float) -> float:
    power = np.abs(np.fft.rfft(y)) ** 2
    f = np.fft.rfftfreq(len(y), 1 / sr)
    return float(10 * np.log10(power[(f >= lo) & (f < hi)].sum() / power.sum()))


def _burst(amplitude: float = 0.1, sr: int = SR) -> tuple[np.ndarray, slice]:
    """2 s: silence, 1 s of a vowel-like harmonic tone from 0.5 s (frame-aligned), silence."""
    t = np.arange(2 * sr) / sr
    x = np.zeros(2 * sr, dtype=np.float32)
    active = slice(sr // 2, sr // 2 + sr)
    tone = sum(np.sin(2 * np.pi * k * 150 * t[active]) / k for k in range(1, 8))
    x[active] = amplitude * tone / np.max(np.abs(tone))
    return x, active


def _snr(x: np.ndarray, noise: np.ndarray, active: slice) -> float:
    """SNR (dB) over the known active stretch."""
    x64, n64 = x[active].astype(np.float64), noise[active].astype(np.float64)
    return float(10 * np.log10(np.mean(x64 ** 2) / np.mean(n64 ** 2)))


# -- G.711 mu-law ------------------------------------------------------------------------------------
def test_mulaw_matches_the_g711_reference_points():
    codes = c.mulaw_encode(np.array([0.0, 32124 / 32768, -32124 / 32768, 1.0, -1.0]))
    assert list(codes) == [0xFF, 0x80, 0x00, 0x80, 0x00]  # full scale saturates at the top code
    decoded = c.mulaw_decode(np.array([0xFF, 0x7F, 0x80, 0x00, 0xF0, 0x70], dtype=np.uint8)) * 32768
    # the ends of the G.711 decoding table: 0x80 and 0x00 are the extremes, 0xF0 and 0x70 segment 0, mantissa 15
    assert list(np.round(decoded)) == [0, 0, 32124, -32124, 120, -120]


def test_mulaw_round_trip_error_is_half_a_step_of_the_segment():
    pcm = np.arange(-32635, 32636)
    decoded = np.round(c.mulaw_decode(c.mulaw_encode(pcm / 32768)) * 32768)
    segment = np.floor(np.log2(np.abs(pcm) + 132)) - 7
    assert np.all(np.abs(decoded - pcm) <= 2 ** (segment + 2))  # step 2^(segment+3); decoding gives the centre
    assert np.all(decoded[pcm > 0] >= 0) and np.all(decoded[pcm < 0] <= 0)
    x, active = _burst(0.3)  # on a speech-level signal: about 38 dB SNR, G.711's nominal quality
    y = c.mulaw_decode(c.mulaw_encode(x))
    snr = 10 * np.log10(np.sum(x[active] ** 2) / np.sum((y - x)[active] ** 2))
    assert 33 < snr < 45


# -- telephone ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("codec", ["mulaw", "gsm"])
def test_telephone_keeps_the_telephone_band_only(codec):
    rng = np.random.default_rng(0)
    white = (0.1 * rng.standard_normal(SR)).astype(np.float32)
    y, gain = c.telephone(white, SR, codec)
    assert len(y) == len(white) and gain == 1.0
    assert _band_energy_db(y, SR, 4000, SR / 2) < -50  # nothing above 8 kHz's Nyquist frequency
    assert _band_energy_db(y, SR, 0, 150) < -20
    assert _band_energy_db(y, SR, 500, 3000) > -1.5  # the band itself passes
    t = np.arange(SR) / SR
    tone = (0.3 * np.sin(2 * np.pi * 1000 * t)).astype(np.float32)
    out, _ = c.telephone(tone, SR, codec)
    level_db = 20 * np.log10(np.std(out[SR // 4:]) / np.std(tone[SR // 4:]))
    assert abs(level_db) < (0.5 if codec == "mulaw" else 2.0)


@pytest.mark.parametrize("sr, n", [(8000, 8001), (16000, 12345), (22050, 7), (44100, 44101)])
def test_telephone_keeps_length_at_any_rate(sr, n):
    x = (0.1 * np.random.default_rng(1).standard_normal(n)).astype(np.float32)
    for codec in c.CODECS:
        assert len(c.telephone(x, sr, codec)[0]) == n


def test_telephone_scales_a_too_loud_input_instead_of_clipping():
    t = np.arange(SR) / SR
    square = np.sign(np.sin(2 * np.pi * 200 * t)).astype(np.float32)  # full scale; the band-pass overshoots it
    y, gain = c.telephone(square, SR)
    assert gain < 1.0 and np.max(np.abs(y)) <= c.PEAK + 1e-6
    with pytest.raises(ConfigError, match="8000 Hz or more"):
        c.telephone(square, 4000)
    with pytest.raises(ConfigError, match="codec"):
        c.telephone(square, SR, "opus")


# -- noise ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("snr", [20, 10, 5])
def test_noise_gives_the_speech_active_snr_within_half_a_db(snr):
    x, active = _burst()
    y, gain = c.add_noise(x, SR, snr, np.random.default_rng(snr))
    assert gain == 1.0 and len(y) == len(x)
    noise = y - x
    assert abs(_snr(x, noise, active) - snr) < 0.5  # pauses do not count: over the whole signal it would read 3 dB lower
    assert np.std(noise[: SR // 2]) > 0  # the noise runs through the pauses too
    assert abs(c.speech_active_snr(x, y, SR) - snr) < 0.5


def test_noise_on_a_loud_input_is_scaled_down_with_the_snr_kept():
    x, active = _burst(amplitude=0.98)
    y, gain = c.add_noise(x, SR, 5, np.random.default_rng(0))
    assert gain < 1.0 and np.max(np.abs(y)) <= c.PEAK + 1e-6
    noise = y / gain - x
    assert abs(_snr(x, noise, active) - 5) < 0.5


def test_pink_noise_falls_3_db_per_octave():
    n = 2 ** 18
    power = np.abs(np.fft.rfft(c.pink_noise(n, np.random.default_rng(0)))) ** 2
    f = np.fft.rfftfreq(n, 1 / SR)
    octave = [power[(f >= lo) & (f < 2 * lo)].mean() for lo in (250, 500, 1000, 2000)]
    slopes = 10 * np.log10(np.array(octave[1:]) / np.array(octave[:-1]))
    assert np.all(np.abs(slopes + 3.0) < 0.5)


# -- reverberation --------------------------------------------------------------------------------------
def test_reverberation_tail_energy_grows_with_rt60():
    x = np.zeros(SR, dtype=np.float32)
    x[:160] = 0.5 * np.hanning(160)  # a 10 ms click, then silence
    tails, measured = [], []
    for rt60 in (0.3, 0.6, 0.9):
        rir = c.room_impulse_response(c.pooled_room(rt60, 0), SR)
        y, gain = c.reverberate(x, SR, rir)
        assert len(y) == len(x) and gain == 1.0
        energy = np.square(y.astype(np.float64))
        tails.append(energy[int(0.1 * SR):].sum() / energy.sum())  # after the click and the early reflections
        measured.append(c.measured_rt60(rir, SR))
    assert tails[0] < tails[1] < tails[2]
    assert measured[0] < measured[1] < measured[2]
    for target, got in zip((0.3, 0.6, 0.9), measured):
        assert 0.7 * target < got < 2.0 * target  # image sources alone decay somewhat slower than Sabine's formula


def test_reverberation_keeps_the_active_level():
    x, active = _burst(0.2)
    y, gain = c.reverberate(x, SR, c.room_impulse_response(c.pooled_room(0.6, 3), SR))
    mask = c.active_mask(x, SR)
    assert gain == 1.0 and np.isclose(np.mean(y[mask] ** 2), np.mean(x[mask] ** 2), rtol=1e-3)
    assert not np.allclose(y, x)


def test_rooms_are_fixed_by_rt60_and_index():
    assert c.pooled_room(0.6, 2) == c.pooled_room(0.6, 2) != c.pooled_room(0.6, 3)
    room = c.pooled_room(0.9, 5)
    assert 1.0 <= np.linalg.norm(np.subtract(room.source, room.mic)) <= 3.0
    assert all(0.5 <= p <= d - 0.5 for p, d in zip(room.source[:2], room.size[:2]))
    with pytest.raises(ConfigError, match="RT60"):
        c.draw_room(5.0, np.random.default_rng(0))


# -- named conditions -----------------------------------------------------------------------------------
def test_condition_names():
    assert c.parse_condition("telephone") == c.Condition("telephone", "telephone", codec="mulaw")
    assert c.parse_condition("telephone-gsm").codec == "gsm"
    assert c.parse_condition("noise10") == c.Condition("noise10", "noise", snr_db=10.0)
    assert c.parse_condition("noise2.5").name == "noise2.5"
    assert c.parse_condition("reverb") == c.parse_condition("reverb600") == c.Condition("reverb600", "reverb",
                                                                                          rt60=0.6)
    assert [c.parse_condition(n).name for n in c.PRESETS] == list(c.PRESETS)
    for bad, match in (("phone", "unknown recording condition"), ("noise99", "SNR"), ("reverb5000", "RT60")):
        with pytest.raises(ConfigError, match=match):
            c.parse_condition(bad)


@pytest.mark.parametrize("name", ["telephone", "telephone-gsm", "noise10", "reverb300"])
def test_each_condition_is_fixed_by_seed_and_utterance(name):
    cond = c.parse_condition(name)
    x, _ = _burst()

    def run(seed, utt):
        return cond.apply(x, SR, utterance_rng(f"{seed}/condition/{name}", utt))[0]

    same = run(0, "u1")
    assert np.array_equal(same, run(0, "u1"))
    if cond.kind == "noise":  # the draws differ by utterance and by seed
        assert not np.array_equal(same, run(0, "u2")) and not np.array_equal(same, run(1, "u1"))
    if cond.kind == "reverb":  # each utterance draws one of the rooms
        rooms = {cond.apply(x, SR, utterance_rng(0, f"u{i}"))[2]["room"] for i in range(40)}
        assert len(rooms) > 8


@pytest.mark.parametrize("name", ["telephone", "telephone-gsm", "noise5", "reverb300"])
def test_short_silent_and_empty_input(name):
    cond = c.parse_condition(name)
    rng = np.random.default_rng(0)
    for n in (0, 1, 10, 200):
        tiny = (0.1 * rng.standard_normal(n)).astype(np.float32)
        y, gain, _ = cond.apply(tiny, SR, rng)
        assert len(y) == n and np.all(np.isfinite(y)) and gain <= 1.0
    silent = np.zeros(SR, dtype=np.float32)
    y, gain, _ = cond.apply(silent, SR, rng)
    assert len(y) == SR and gain == 1.0
    assert np.max(np.abs(y)) < 1e-3  # no SNR reference and nothing to reverberate: silence stays silence
