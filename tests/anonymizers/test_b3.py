"""The ``b3`` anonymizer (VPC 2024 B3 offline): time warp, phrases, pseudo-speaker, real models end to end."""

from __future__ import annotations

import numpy as np
import pytest

from voxanon.anonymizers.b3 import B3, phrases, spoken, word_anchors
from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.registry import build
from voxanon.audio.io import AudioError, resample
from voxanon.dsp.frames import (
    frames_at,
    interpolate_frames,
    monotone_anchors,
    time_warp,
)
from voxanon.errors import ConfigError
from voxanon.metrics import wer
from voxanon.models.asr.base import WordTiming
from voxanon.models.tts import kokoro


def words(*spec: tuple[str, float, float]) -> list[WordTiming]:
    return [WordTiming(*w) for w in spec]


def test_time_warp_puts_every_anchor_on_its_target_and_stretches_linearly_between():
    src = np.array([0.0, 1.0, 1.5, 4.0])
    dst = np.array([0.0, 0.5, 2.5, 3.0])
    assert np.allclose(time_warp(src, dst, src), dst)
    assert np.allclose(time_warp(src, dst, [0.5, 1.25, 2.75]), [0.25, 1.5, 2.75])
    assert np.allclose(time_warp(src, dst, [-1.0, 9.0]), [0.0, 3.0])  # clamped outside the anchors


def test_anchors_that_would_fold_time_back_are_dropped():
    # a word matched out of order (2.0 -> 0.2) and a repeated anchor are dropped; the rest stay in order
    src, dst = monotone_anchors([0.0, 3.0, 1.0, 2.0, 2.0, 4.0], [0.0, 3.5, 1.0, 0.2, 2.0, 5.0])
    assert src.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0] and dst.tolist() == [0.0, 1.0, 2.0, 3.5, 5.0]
    warped = time_warp(src, dst, np.linspace(0, 4, 41))
    assert np.all(np.diff(warped) > 0)


def test_frames_at_interpolates_and_interpolate_frames_is_it_on_a_grid():
    feats = np.arange(10, dtype=np.float32)[:, None] * [1.0, -2.0]  # frame i at (i + 0.5) / 50 s
    assert np.allclose(frames_at(feats, 50.0, [0.01, 0.02, 0.5]), [[0, 0], [0.5, -1.0], [9, -18]])
    grid = interpolate_frames(feats, 50.0, 7, 35.0)
    assert np.allclose(grid, frames_at(feats, 50.0, (np.arange(7) + 0.5) / 35.0))
    assert np.allclose(grid[:, 0], np.clip((np.arange(7) + 0.5) * 50 / 35 - 0.5, 0, 9))


def test_phrases_are_cut_at_pauses_and_after_max_words():
    ws = words(("a", 0.0, 0.2), ("b", 0.25, 0.5), ("c", 1.0, 1.2), ("d", 1.3, 1.5), ("e", 1.55, 1.7))
    assert [[w.word for w in p] for p in phrases(ws, 0.3)] == [["a", "b"], ["c", "d", "e"]]
    assert [[w.word for w in p] for p in phrases(ws, 0.3, max_words=2)] == [["a", "b"], ["c", "d"], ["e"]]
    assert [len(p) for p in phrases(ws, 0.04)] == [1, 1, 1, 1, 1]


def test_word_anchors_match_by_letters_in_order_and_skip_misheard_words():
    source = words(("The", 0.1, 0.3), ("quick", 0.3, 0.6), ("fox,", 0.6, 1.0), ("ran.", 1.5, 1.9))
    tts = words(("the", 1.1, 1.2), ("quack", 1.2, 1.5), ("Fox", 1.5, 1.8), ("ran", 2.2, 2.5))
    assert word_anchors(source, tts) == [(0.1, 1.1), (0.3, 1.2), (0.6, 1.5), (1.0, 1.8), (1.5, 2.2), (1.9, 2.5)]
    assert word_anchors(source, []) == []


def test_bad_parameters_are_usage_errors():
    with pytest.raises(ConfigError, match="f0"):
        build("b3", {"f0": "flat"})
    with pytest.raises(ConfigError, match="pause"):
        build("b3", {"pause": "0"})
    with pytest.raises(ConfigError, match="solver"):
        build("b3", {"solver": "heun"}).parts()


def test_silent_and_empty_inputs_stay_silent_without_loading_models():
    anon = B3()
    for n in (48000, 0):
        out, sr = anon.process(np.zeros(n, dtype=np.float32), 16000, utterance_rng(0, "u"))
        assert sr == 16000 and len(out) == n and not out.any()
    assert anon._parts is None


class _NoWords:
    def transcribe_with_timings(self, wavs, sr):
        return [[WordTiming("...", 0.0, 0.5)] for _ in wavs]  # punctuation only: nothing to say


class _Speaker:
    def sample(self, rng):
        return rng.standard_normal(4)


def test_no_recognised_words_give_silence_of_the_input_length():
    anon = B3()
    anon._parts = (None, _NoWords(), None, _Speaker())
    wav = (0.3 * np.random.default_rng(0).standard_normal(22050)).astype(np.float32)
    out, sr = anon.process(wav, 22050, utterance_rng(0, "u"))
    assert sr == 22050 and len(out) == len(wav) and not out.any()


def test_the_pseudo_speaker_is_the_flow_sampled_from_noise_per_utterance():
    from voxanon.anonymizers.pseudo.f3va import F3VAGenerator

    generator = F3VAGenerator(w=0.0)
    a, again = generator.sample(utterance_rng(0, "a")), generator.sample(utterance_rng(0, "a"))
    b = generator.sample(utterance_rng(0, "b"))
    np.testing.assert_array_equal(a, again)
    assert np.isclose(np.linalg.norm(a), 1.0, atol=1e-4) and a @ b < 0.99
    # the same draw as the f3va generator at w = 0, whatever the source
    np.testing.assert_allclose(a, generator(np.ones(len(a)) / np.sqrt(len(a)), utterance_rng(0, "a")), atol=1e-6)


# --- real models end to end ------------------------------------------------------------------------------

SENTENCES = ("The quick brown fox jumps over the lazy dog.", "Then it ran into the forest and was never seen again.")
kokoro_installed = pytest.mark.skipif(not {"am_michael", "bf_emma", "af_heart"} <= set(kokoro.available_voices()),
                                      reason="Kokoro voices not installed (tools/setup.sh)")


def kokoro_source(voice: str, sr: int) -> np.ndarray:
    """The two sentences in a Kokoro voice with 0.5 s of silence before, 0.8 s between and 0.3 s after."""
    tts = kokoro.KokoroTts(voice)
    (a, tts_sr), (b, _) = (tts.synthesize(s) for s in SENTENCES)
    gap = lambda s: np.zeros(round(s * tts_sr), dtype=np.float32)  # noqa: E731
    return resample(np.concatenate([gap(0.5), a, gap(0.8), b, gap(0.3)]), tts_sr, sr)


@pytest.fixture(scope="module")
def runs():
    """Sources in two voices (24 and 16 kHz) and b3's outputs: (A, 'u') twice, (B, 'u'), (A, 'v')."""
    anon = build("b3")
    src_a, src_b = kokoro_source("am_michael", 24000), kokoro_source("bf_emma", 16000)
    out = {
        "a_u": anon.process(src_a, 24000, utterance_rng(0, "u")),
        "a_u_again": anon.process(src_a, 24000, utterance_rng(0, "u")),
        "b_u": anon.process(src_b, 16000, utterance_rng(0, "u")),
        "a_v": anon.process(src_a, 24000, utterance_rng(0, "v")),
    }
    return anon, src_a, src_b, out


@pytest.mark.slow
@kokoro_installed
def test_output_has_the_inputs_length_and_rate_and_is_deterministic_per_seed(runs):
    _, src_a, src_b, out = runs
    (a_u, sr_a), (b_u, sr_b) = out["a_u"], out["b_u"]
    assert (sr_a, len(a_u), sr_b, len(b_u)) == (24000, len(src_a), 16000, len(src_b))
    assert a_u.dtype == np.float32 and np.isfinite(a_u).all() and np.abs(a_u).max() > 0.05
    np.testing.assert_array_equal(a_u, out["a_u_again"][0])


@pytest.mark.slow
@kokoro_installed
def test_the_words_land_where_the_source_said_them(runs):
    from voxanon.audio.level import speech_frames
    from voxanon.models.asr import load_asr

    _, src_a, _, out = runs
    heard_src, heard_out = load_asr("whisper-tiny").transcribe_with_timings([src_a, out["a_u"][0]], 24000)
    said = " ".join(SENTENCES)
    assert wer([said], [" ".join(w.word for w in heard_out)]).wer <= 10.0
    # the two sentences' speech starts and ends where the source's does (10-ms energy frames, 0.8-s pause between)
    edges = [speech_segments(speech_frames(x, 24000), 240 / 24000, gap=0.5) for x in (src_a, out["a_u"][0])]
    assert edges[0].shape == edges[1].shape == (2, 2)
    assert np.abs(edges[0] - edges[1]).max() < 0.05
    # inside the sentences, each word's (source, output) start and end as Whisper hears them. Its times for a
    # sentence's first word are up to 0.3 s off next to the pause (on the source too), its ends stretch into the
    # pause after a word (by up to 0.4 s at the end of the audio): so first words are left to the energy check
    # above, ends are looser than starts, and the last word is no measure
    src_words = spoken(heard_src)
    first = {w.start for k, w in enumerate(src_words) if k == 0 or w.start - src_words[k - 1].end > 0.3}
    pairs = np.array(word_anchors(src_words, spoken(heard_out))[:-2]).reshape(-1, 2, 2)  # (word, start/end, s/t)
    pairs = pairs[[p[0, 0] not in first for p in pairs]]
    assert len(pairs) >= 17 - 3
    start_error, end_error = np.abs(pairs[:, 0, 0] - pairs[:, 0, 1]), np.abs(pairs[:, 1, 0] - pairs[:, 1, 1])
    assert start_error.max() < 0.1 and end_error.max() < 0.2
    assert np.median(np.r_[start_error, end_error]) < 0.05


def speech_segments(frames: np.ndarray, step: float, gap: float) -> np.ndarray:
    """(start, end) s of the runs of speech ``frames`` split by at least ``gap`` s of silence."""
    idx = np.flatnonzero(frames)
    cuts = np.flatnonzero(np.diff(idx) * step > gap)
    return np.c_[np.r_[idx[0], idx[cuts + 1]] * step, (np.r_[idx[cuts], idx[-1]] + 1) * step]


@pytest.mark.slow
@kokoro_installed
def test_only_the_words_cross_over_the_voice_is_the_pseudo_speakers(runs):
    from voxanon.models.speaker import load_encoder

    anon, src_a, src_b, out = runs
    encoder = load_encoder("ge2e")
    e_src_a, e_src_b, e_a_u, e_a_v = encoder.embed([src_a, resample(src_b, 16000, 24000), out["a_u"][0],
                                                    out["a_v"][0]], 24000)
    e_b_u = encoder.embed([out["b_u"][0]], 16000)[0]
    pseudo_u, pseudo_v = (anon.pseudo_speaker(src_a, 24000, utterance_rng(0, k)) for k in "uv")
    # two source voices, one rng: one voice out, closer than the sources are to each other
    assert e_a_u @ e_b_u > 0.9 and e_a_u @ e_b_u > e_src_a @ e_src_b + 0.1
    # another utterance seed: another pseudo-speaker, each output nearer its own
    assert e_a_u @ e_a_v < e_a_u @ e_b_u
    assert e_a_u @ pseudo_u > e_a_u @ pseudo_v and e_a_v @ pseudo_v > e_a_v @ pseudo_u
    assert e_a_u @ e_src_a < 0.85


@pytest.mark.slow
@kokoro_installed
def test_nan_input_is_a_data_error_naming_the_samples(runs):
    wav = kokoro_source("af_heart", 16000)
    wav[100] = np.nan
    with pytest.raises(AudioError, match="NaN"):
        runs[0].process(wav, 16000, utterance_rng(0, "u"))
