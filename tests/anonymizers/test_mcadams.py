"""McAdams anonymizer (VPC B2): batched LPC kernels, the vectorised transform, streaming, the anonymizer."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import sliding_window_view
from scipy.signal import lfilter

from tests.helpers.audio import LIBRIVOX
from tests.helpers.mcadams_reference import burg_reference, mcadams_reference
from voxanon.anonymizers import registry
from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.mcadams import McAdams
from voxanon.audio.io import load_audio, write_wav
from voxanon.audio.synthetic import speech_like
from voxanon.dsp.lpc import (
    FEW_ROWS,
    aberth_roots,
    allpole_filter,
    burg,
    fir_filter,
    poly_from_roots,
    poly_roots,
    poly_roots_fast,
)
from voxanon.dsp.mcadams import (
    LPC_EPS,
    VPC_PEAK,
    McAdamsStream,
    mcadams,
    mcadams_window,
)

SR = 16000
CLIP = LIBRIVOX / "sense_and_sensibility_01_austen_64kb-0880.flac"


@pytest.fixture(scope="module")
def speech() -> np.ndarray:
    """1 s of the speech-like signal (formants 500/1500/2500/3500 Hz), float64."""
    return speech_like(1.0, SR).astype(np.float64)


@pytest.fixture(scope="module")
def frames() -> np.ndarray:
    """40 windowed frames of a resonant AR(2) process."""
    rng = np.random.default_rng(0)
    return lfilter([1.0], [1.0, -1.6, 0.9], rng.standard_normal((40, 320)), axis=1) * np.hanning(320)


def snr_db(ref: np.ndarray, test: np.ndarray) -> float:
    return float(10 * np.log10(np.sum(ref**2) / np.sum((ref - test) ** 2)))


# --- batched LPC kernels against their one-frame counterparts -------------------------------------


def test_burg_matches_per_frame_burg(frames):
    got = burg(frames, 20)
    want = np.stack([burg_reference(f, 20) for f in frames])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_burg_rows_are_independent_of_the_stack(frames):
    """A frame's coefficients are bit-identical alone, in any sub-stack and at any position."""
    x = np.concatenate([frames, frames[::-1] * 1e-3])
    whole = burg(x, 20)
    for lo in range(9):
        for width in (1, 2, 3, 5, 8, 9, 17, 33):
            assert np.array_equal(burg(x[lo : lo + width], 20), whole[lo : lo + width])


def test_burg_on_recorded_speech_frames_matches_per_frame_burg():
    """Windowed speech frames (with the VPC eps): same recursion, summed in another order.

    Both round differently from exact arithmetic by up to ~3e-10 of the largest coefficient on the
    most resonant frames (measured against a long-double run of the recursion), so they agree to 1e-9.
    """
    wav, _ = load_audio(CLIP)
    window = mcadams_window(320, 160)
    x = sliding_window_view(wav.astype(np.float64), 320)[::160] * window + LPC_EPS
    got = burg(x, 20)
    want = np.stack([burg_reference(f, 20) for f in x])
    scale = np.abs(want).max(axis=1, keepdims=True)
    assert np.all(np.abs(got - want) <= 1e-9 * scale)
    assert np.median(np.abs(got - want).max(axis=1) / scale[:, 0]) <= 1e-11


def test_burg_of_zero_frame_is_finite():
    a = burg(np.zeros((3, 320)), 20)
    assert np.array_equal(a, np.tile(np.r_[1.0, np.zeros(20)], (3, 1)))


def test_poly_roots_equal_np_roots(frames):
    a = burg(frames, 20)
    assert np.array_equal(poly_roots(a), np.stack([np.roots(row) for row in a]))


def _match_error(got: np.ndarray, want: np.ndarray) -> float:
    """Largest distance from a root of ``want`` to the nearest unused root of ``got`` (greedy matching)."""
    got, worst = list(got), 0.0
    for w in want:
        j = int(np.argmin([abs(g - w) for g in got]))
        worst = max(worst, abs(got.pop(j) - w))
    return worst


def _lpc_polys(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random order-20 polynomials with roots inside the unit circle: near it, real, near-repeated."""
    rows = []
    for i in range(n):
        kind = i % 4
        n_real = 2 * rng.integers(0, 3) if kind != 2 else 4
        r = rng.uniform(0.2, 0.999 if kind == 1 else 0.95, 10 - n_real // 2)
        if kind == 1:
            r[:3] = 1 - 10.0 ** rng.uniform(-6, -3, 3)  # poles within 1e-6..1e-3 of the unit circle
        phi = rng.uniform(0.01, np.pi - 0.01, r.size)
        pairs = r * np.exp(1j * phi)
        if kind == 3:  # two pairs 1e-4 apart
            pairs[1] = pairs[0] + 1e-4
        reals = rng.uniform(-0.95, 0.95, n_real)
        if kind == 2:
            reals[1] = reals[0] + 1e-5  # two close real roots
        rows.append(np.real(np.poly(np.concatenate([pairs, pairs.conj(), reals]))))
    return np.array(rows)


def test_aberth_roots_agree_with_eigvals_on_random_lpc_polynomials():
    a = _lpc_polys(np.random.default_rng(3), 400)
    got, fallback = poly_roots_fast(a)
    want = poly_roots(a)
    kinds = np.arange(len(a)) % 4
    assert fallback[kinds < 2].mean() < 0.05  # separated roots: the iteration settles almost every row
    assert fallback[kinds >= 2].any()  # close roots converge slowly: some fall back to eigvals
    for g, w in zip(got, want):
        assert _match_error(g, w) <= 1e-6  # close roots: both methods only resolve them to ~sqrt(eps)
        assert np.sum(g.imag == 0) == np.sum(w.imag == 0)  # same real roots
        assert np.array_equal(np.sort_complex(g[g.imag > 0]).conj(), np.sort_complex(g[g.imag < 0].conj()).conj())
    # forward errors follow the roots' conditioning; most rows agree to rounding
    assert np.median([_match_error(g, w) for g, w in zip(got, want)]) <= 1e-10


def test_aberth_roots_on_speech_frames_match_eigvals(frames):
    a = burg(frames, 20)
    roots, converged = aberth_roots(a)
    assert converged.all()
    for g, w in zip(roots, poly_roots(a)):
        assert _match_error(g, w) <= 1e-12


def test_poly_roots_fast_falls_back_to_eigvals_when_not_converged(frames):
    a = burg(frames, 20)
    roots, converged = aberth_roots(a, max_iter=3)
    assert not converged.any() and np.all(np.isnan(roots))
    got, fallback = poly_roots_fast(a, max_iter=3)
    assert fallback.all() and np.array_equal(got, poly_roots(a))
    # silence: a double root at 0 of multiplicity 20 is never settled by the cubic iteration in time
    got, fallback = poly_roots_fast(np.tile(np.r_[1.0, np.zeros(20)], (2, 1)))
    assert fallback.all() and np.array_equal(got, np.zeros((2, 20)))
    # a row checked against the wrong polynomial fails the coefficient check
    got, fallback = poly_roots_fast(a, check=0.0)
    assert fallback.all()


def test_poly_from_roots_matches_np_poly(frames):
    roots = poly_roots(burg(frames, 20))
    want = np.stack([np.real(np.poly(r)) for r in roots])
    np.testing.assert_allclose(poly_from_roots(roots), want, rtol=0, atol=1e-11)


def test_filters_match_lfilter(frames):
    a = burg(frames, 20)
    residual = fir_filter(a, frames)
    np.testing.assert_allclose(residual, np.stack([lfilter(c, [1.0], f) for c, f in zip(a, frames)]), atol=1e-14)
    synth = allpole_filter(a, residual)
    assert np.array_equal(synth, np.stack([lfilter([1.0], c, r) for c, r in zip(a, residual)]))
    np.testing.assert_allclose(synth, frames, atol=1e-9)
    for rows in (1, 2, FEW_ROWS, FEW_ROWS + 1):  # lfilter per row below FEW_ROWS, the stepped loop above
        assert np.array_equal(allpole_filter(a[:rows], residual[:rows]), synth[:rows])


# --- the transform --------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 50, 159, 160, 161, 319, 320, 321, 1000, 4817])
def test_output_length_equals_input_length(speech, n):
    out = mcadams(speech[:n], SR, 0.7)
    assert out.shape == (n,) and np.all(np.isfinite(out))


def test_alpha_one_reconstructs_input(speech):
    # the only loss is the ripple of the symmetric Hann window's overlap-add (VPC's window)
    assert snr_db(speech, mcadams(speech, SR, 1.0)) > 50.0


def test_alpha_below_one_pulls_formants_towards_one_radian():
    """phi -> phi^0.7: 500 Hz -> 815, 1500 -> 1757, 2500 -> 2514, 3500 -> 3181 Hz at 16 kHz."""

    def formants(x: np.ndarray) -> np.ndarray:
        roots = poly_roots(burg(x[None], 8))[0]
        return np.sort(np.angle(roots[roots.imag > 0])) * SR / (2 * np.pi)

    x = speech_like(2.0, SR).astype(np.float64)
    before, after = formants(x), formants(mcadams(x, SR, 0.7))
    np.testing.assert_allclose(before, [500, 1500, 2500, 3500], atol=30)
    expected = SR / (2 * np.pi) * (2 * np.pi * before / SR) ** 0.7
    np.testing.assert_allclose(after, expected, atol=60)
    assert after[0] > before[0] + 250 and after[3] < before[3] - 250


@pytest.mark.parametrize("alpha", [0.5, 0.8, 1.0])
def test_matches_per_frame_reference_on_recorded_speech(alpha):
    wav, sr = load_audio(CLIP)
    wav = wav[: 2 * sr].astype(np.float64)
    got, want = mcadams(wav, sr, alpha), mcadams_reference(wav, sr, alpha)
    # the roots come from the Aberth iteration (exact to rounding, but rounded differently from
    # np.roots); the pole warp amplifies that on frames with close poles: 1.6e-8 at alpha = 0.5
    assert np.max(np.abs(got - want)) <= 1e-7 * np.max(np.abs(want))


def test_interior_equals_vpc_frame_grid(speech):
    """Where VPC's complete frames overlap fully, the extra edge frames change nothing."""
    x = speech[:5037]
    vpc = mcadams_reference(x, SR, 0.7, vpc_frames=True)
    got = mcadams(x, SR, 0.7)
    n_frames = 1 + (len(x) - 320) // 160
    inner = slice(160, n_frames * 160)
    np.testing.assert_allclose(got[inner], vpc[inner], rtol=0, atol=1e-9 * np.max(np.abs(vpc)))
    assert np.all(vpc[n_frames * 160 + 160 :] == 0) and np.any(got[n_frames * 160 + 160 :] != 0)


@pytest.mark.parametrize("n", [1, 50, 321])
def test_matches_reference_on_inputs_shorter_than_a_few_frames(speech, n):
    np.testing.assert_allclose(mcadams(speech[:n], SR, 0.6), mcadams_reference(speech[:n], SR, 0.6), atol=1e-12)


def test_silence_stays_silent():
    out = mcadams(np.zeros(5000), SR, 0.7)
    assert np.array_equal(out, np.zeros(5000))


def test_a_signal_far_below_the_analysis_eps_passes_through_finite():
    # a sound card's uninitialised capture buffer: denormal-sized values; Burg's recursion on eps plus this
    # overflows to NaN (the VPC kit's output is NaN); such frames pass through unchanged
    tiny = np.random.default_rng(0).normal(0, 1e-22, 4000)
    out = mcadams(tiny, SR, 0.7)
    np.testing.assert_allclose(out[400:-400], tiny[400:-400], rtol=0.02)  # overlap-add of the windows: gain ~1
    stream = McAdamsStream(0.7, SR)
    streamed = np.concatenate([stream.process(tiny[:1000]), stream.process(tiny[1000:]), stream.flush()])
    assert np.array_equal(streamed, out)


def test_constant_offset_frames_stay_finite(speech):
    # -2 LSB of DC padding (as around some Kokoro utterances) makes Burg return a pole at radius ~40:
    # without stabilisation the all-pole re-synthesis overflows to inf and the utterance is lost
    pad = np.full(1600, -2 / 32768)
    x = np.concatenate([pad, speech[:8000], pad])
    a = burg(sliding_window_view(x, 320)[::160][:3] * mcadams_window(320, 160) + LPC_EPS, 20)
    assert np.abs(poly_roots(a)).max() > 1.0  # the premise: the padding's LPC is unstable
    for alpha in (0.5, 0.8):
        assert np.all(np.isfinite(mcadams(x, SR, alpha)))
    assert snr_db(x, mcadams(x, SR, 1.0)) > 50.0
    # speech frames are untouched: the middle equals the transform of the speech alone
    np.testing.assert_allclose(mcadams(x, SR, 0.7)[4000:7600], mcadams(speech[:8000], SR, 0.7)[2400:6000], atol=1e-12)


def test_other_frame_settings(speech):
    kw = dict(winlen=0.025, shift=0.01, lp_order=12)
    got = mcadams(speech[:3000], SR, 0.8, **kw)
    np.testing.assert_allclose(got, mcadams_reference(speech[:3000], SR, 0.8, **kw), atol=1e-9)


# --- streaming ------------------------------------------------------------------------------------


def stream_through(x: np.ndarray, sizes: list[int], max_frames: int, alpha: float = 0.75) -> np.ndarray:
    stream = McAdamsStream(alpha, SR, max_frames=max_frames)
    parts, pos = [], 0
    for size in sizes:
        parts.append(stream.process(x[pos : pos + size]))
        pos += size
    parts.append(stream.process(x[pos:]))
    parts.append(stream.flush())
    return np.concatenate(parts)


@settings(max_examples=25, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=1200), max_size=12),
    max_frames=st.integers(min_value=1, max_value=40),
)
def test_stream_equals_one_shot_for_any_chunking(speech, sizes, max_frames):
    x = speech[:4000]
    assert np.array_equal(stream_through(x, sizes, max_frames), mcadams(x, SR, 0.75))


def test_stream_sample_by_sample_and_empty_chunks(speech):
    x = speech[:700]
    sizes = [1] * 400 + [0, 0, 17]
    assert np.array_equal(stream_through(x, sizes, 3), mcadams(x, SR, 0.75))


def test_stream_emits_with_bounded_latency(speech):
    stream = McAdamsStream(0.8, SR)
    emitted = sum(stream.process(speech[i : i + 1000]).size for i in range(0, 8000, 1000))
    assert 8000 - emitted <= stream.n  # at most about one window held back
    assert emitted + stream.flush().size == 8000


def test_stream_refuses_use_after_flush():
    stream = McAdamsStream(0.8, SR)
    stream.process(np.zeros(10))
    assert stream.flush().size == 10
    with pytest.raises(RuntimeError):
        stream.process(np.zeros(10))


# --- the registered anonymizer --------------------------------------------------------------------


def test_registered_and_configurable_from_strings():
    assert registry.get("mcadams") is McAdams
    anon = registry.build("mcadams", {"alpha": "0.8", "lp_order": "16"})
    assert anon.config.alpha == 0.8 and anon.config.lp_order == 16
    with pytest.raises(ValueError):
        McAdams(alpha_min=0.9, alpha_max=0.5)


def test_alpha_drawn_per_utterance_in_range():
    anon = McAdams()
    alphas = [anon.draw_alpha(utterance_rng(7, f"utt{i}")) for i in range(50)]
    assert all(0.5 <= a <= 0.9 for a in alphas) and len(set(alphas)) == 50
    assert McAdams(alpha=0.66).draw_alpha(utterance_rng(7, "x")) == 0.66


def test_anonymize_is_deterministic_and_normalised_like_vpc(speech, tmp_path):
    anon = McAdams()
    wav = speech.astype(np.float32)
    out1, sr1 = anon.anonymize(wav, SR, utterance_rng(1, "utt-a"))
    out2, _ = anon.anonymize(wav, SR, utterance_rng(1, "utt-a"))
    out3, _ = anon.anonymize(wav, SR, utterance_rng(1, "utt-b"))
    assert sr1 == SR and out1.dtype == np.float32 and out1.shape == wav.shape
    assert np.array_equal(out1, out2) and not np.array_equal(out1, out3)
    assert np.isclose(np.max(np.abs(out1)), VPC_PEAK, rtol=1e-6)
    write_wav(tmp_path / "a.wav", out1, SR)
    pcm, _ = sf.read(tmp_path / "a.wav", dtype="int16")
    assert np.max(np.abs(pcm.astype(int))) == 32766


@pytest.mark.parametrize("n", [1, 50, 16037])
def test_anonymize_keeps_length_and_silence(n):
    anon = McAdams()
    out, _ = anon.anonymize(np.zeros(n, dtype=np.float32), SR, utterance_rng(0, "silent"))
    assert out.shape == (n,) and np.array_equal(out, np.zeros(n, dtype=np.float32))
    short, _ = anon.anonymize(speech_like(1.1, SR)[:n], SR, utterance_rng(0, "short"))
    assert short.shape == (n,) and np.all(np.isfinite(short))
