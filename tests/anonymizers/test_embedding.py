"""The ``embedding`` anonymizer: one pseudo-speaker per utterance, chunked conversion, real models end to end."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.audio import LIBRIVOX
from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.embedding import Embedding
from voxanon.anonymizers.registry import build
from voxanon.audio.io import load_audio
from voxanon.audio.synthetic import speech_like
from voxanon.errors import ConfigError

CLIP = LIBRIVOX / "sense_and_sensibility_01_austen_64kb-0880.flac"


def test_unknown_generator_and_bad_weights_are_usage_errors():
    with pytest.raises(ConfigError, match="generator"):
        build("embedding", {"generator": "nearest"})
    with pytest.raises(ConfigError, match="w"):
        build("embedding", {"generator": "f3va", "w": 1.5})


def test_silence_stays_silence_without_loading_models():
    anon = Embedding()
    out, sr = anon.process(np.zeros(16000 * 3, dtype=np.float32), 16000, utterance_rng(0, "u"))
    assert sr == 16000 and len(out) == 48000 and not out.any()
    assert anon._parts is None


def test_a_long_input_draws_one_pseudo_speaker_and_converts_it_chunk_by_chunk(monkeypatch):
    draws, chunks = [], []

    def pseudo_speaker(self, wav, sr, rng):
        draws.append(len(wav))
        return rng.standard_normal(4)

    def convert(self, wav, sr, speaker):
        chunks.append(tuple(speaker))
        return 0.5 * wav

    monkeypatch.setattr(Embedding, "pseudo_speaker", pseudo_speaker)
    monkeypatch.setattr(Embedding, "convert", convert)
    wav = (0.3 * speech_like(50.0, 16000, seed=1)).astype(np.float32)
    out, sr = Embedding().process(wav, 16000, utterance_rng(0, "u"))
    assert draws == [len(wav)]                       # drawn once, from the whole utterance
    assert len(chunks) == 3 and len(set(chunks)) == 1  # every chunk speaks with that one voice
    assert sr == 16000 and len(out) == len(wav)
    assert np.allclose(out[16000:17000], 0.5 * wav[16000:17000], atol=1e-6)


@pytest.mark.slow
def test_real_speech_takes_the_pseudo_speakers_voice():
    from voxanon.models.speaker import load_encoder

    wav, sr = load_audio(CLIP)
    anon = build("embedding", {"generator": "pool"})
    rng_a, rng_b = utterance_rng(0, "a"), utterance_rng(0, "b")
    pseudo_a = anon.pseudo_speaker(wav, sr, utterance_rng(0, "a"))
    pseudo_b = anon.pseudo_speaker(wav, sr, utterance_rng(0, "b"))
    out_a, out_sr = anon.process(wav, sr, rng_a)
    out_b, _ = anon.process(wav, sr, rng_b)
    assert out_sr == sr and len(out_a) == len(wav) and np.isfinite(out_a).all() and np.abs(out_a).max() > 0.01
    encoder = load_encoder("ge2e")
    src, emb_a, emb_b = encoder.embed([wav, out_a, out_b], sr)
    # each output sounds more like its own pseudo-speaker than like the other one, and leaves the source
    assert emb_a @ pseudo_a > emb_a @ pseudo_b and emb_b @ pseudo_b > emb_b @ pseudo_a
    assert emb_a @ src < 0.9


def test_source_f0_mode_imposes_the_sources_own_pitch():
    from voxanon.dsp.world import estimate_f0, transfer_f0

    sr = 16000
    source = (0.5 * speech_like(1.5, sr, f0=110.0, seed=1)).astype(np.float32)
    converted = (0.5 * speech_like(1.5, sr, f0=210.0, seed=2)).astype(np.float32)
    out = transfer_f0(converted, source, sr)
    f0, _ = estimate_f0(out.astype(np.float64), sr)
    assert abs(np.median(f0[f0 > 0]) - 110.0) < 8.0
    shifted, _ = estimate_f0(transfer_f0(converted, source, sr, np.log(160.0)).astype(np.float64), sr)
    assert abs(np.median(shifted[shifted > 0]) - 160.0) < 10.0


def test_b1_is_the_vpc_pool_rule_with_the_source_f0():
    config = build("b1").config
    assert (config.generator, config.n_far, config.n_avg, config.f0) == ("pool", 200, 100, "source")
