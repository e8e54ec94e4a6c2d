"""Quality and prosody measures on signal pairs with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.audio import LIBRIVOX
from voxanon.audio.io import load_audio
from voxanon.audio.synthetic import speech_like
from voxanon.dsp import world
from voxanon.errors import DataError
from voxanon.evaluation.quality import (
    diagonal_dominance,
    dnsmos,
    f0_correlation,
    similarity_matrix,
    voice_distinctiveness,
    voice_distinctiveness_from_audio,
)

CLIP = LIBRIVOX / "sense_and_sensibility_01_austen_64kb-0880.flac"


@pytest.fixture(scope="module")
def voice() -> tuple[np.ndarray, int]:
    return speech_like(3.0, 16000, seed=3), 16000


def test_f0_correlation_identity_scaling_and_unrelated(voice):
    wav, sr = voice
    assert f0_correlation(wav, wav, sr) == pytest.approx(1.0)
    feats = world.analyze(wav, sr)
    voiced = feats.f0 > 0
    scaled = world.synthesize(feats.replace(f0=feats.f0 * 1.5))
    assert f0_correlation(wav, scaled, sr) > 0.9  # a pitch shift keeps the contour
    rng = np.random.default_rng(0)
    unrelated = world.synthesize(feats.replace(f0=np.where(voiced, rng.uniform(90, 170, len(feats.f0)), 0.0)))
    assert abs(f0_correlation(wav, unrelated, sr)) < 0.3
    assert f0_correlation(wav, scaled[::2].copy(), sr, sr_anonymized=8000) > 0.9


def test_f0_correlation_undefined_without_common_voicing(voice):
    wav, sr = voice
    assert np.isnan(f0_correlation(wav, np.zeros_like(wav), sr))


def _embeddings(n_spk: int, per_spk: int, spread: float, seed: int) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((n_spk, 32))
    emb = np.repeat(centres, per_spk, axis=0) + spread * rng.standard_normal((n_spk * per_spk, 32))
    return emb, [f"s{k}" for k in range(n_spk) for _ in range(per_spk)]


def test_gvd_identity_and_collapse():
    emb, spk = _embeddings(6, 4, 0.5, 0)
    same = voice_distinctiveness(emb, emb.copy(), spk)
    assert same.gvd == pytest.approx(0.0, abs=1e-9) and same.deid == pytest.approx(0.0, abs=1e-9)
    assert same.m_oo.shape == (6, 6) and same.speakers[0] == "s0"
    assert np.all(np.diag(same.m_oo) > same.m_oo[~np.eye(6, dtype=bool)].max())

    rng = np.random.default_rng(1)
    one_voice = rng.standard_normal((1, 32)) + 0.05 * rng.standard_normal(emb.shape)
    collapsed = voice_distinctiveness(emb, one_voice, spk)
    assert collapsed.gvd < -10.0  # every utterance in one voice: distinctiveness gone
    assert collapsed.deid > 0.8


def test_gvd_of_a_consistent_mapping_is_near_zero():
    emb, spk = _embeddings(6, 4, 0.5, 0)
    rotation, _ = np.linalg.qr(np.random.default_rng(5).standard_normal((32, 32)))
    mapped = voice_distinctiveness(emb, emb @ rotation, spk)
    assert abs(mapped.gvd) < 1e-6  # new voices, each as distinct as before
    assert mapped.deid > 0.8  # and not linkable to the originals


def test_similarity_matrix_input_checks():
    emb, _ = _embeddings(2, 2, 0.5, 0)
    with pytest.raises(DataError, match="fewer than 2 utterances"):
        similarity_matrix(emb, emb, ["a", "a", "a", "b"])
    with pytest.raises(DataError, match="at least 2 speakers"):
        similarity_matrix(emb, emb, ["a"] * 4)
    assert diagonal_dominance(np.array([[1.0, 0.2], [0.4, 0.8]])) == pytest.approx(0.6)


def test_gvd_from_audio_with_an_encoder():
    class Formants:
        """A toy encoder: the log spectrum in 16 bands (speech_like speakers differ by formants)."""

        def embed(self, wavs, sr):
            return np.stack([np.log(np.abs(np.fft.rfft(w, 4096))[:2048].reshape(16, -1).mean(axis=1)) for w in wavs])

    speakers = [((400.0 + 150 * k, 80.0), (1200.0 + 300 * k, 100.0)) for k in range(3)]
    wavs = [speech_like(0.5, 16000, formants=f, seed=s) for f in speakers for s in range(2)]
    spk = [f"s{k}" for k in range(3) for _ in range(2)]
    result = voice_distinctiveness_from_audio(wavs, list(wavs), spk, 16000, Formants())
    assert result.gvd == pytest.approx(0.0, abs=1e-9)


@pytest.mark.slow
def test_dnsmos_in_range_and_noise_lowers_it():
    wav, sr = load_audio(CLIP)
    clean = dnsmos(wav, sr)
    assert set(clean) == {"ovrl", "sig", "bak", "p808"}
    assert all(1.0 <= v <= 5.0 for v in clean.values())
    noisy = dnsmos(wav + 0.1 * np.random.default_rng(0).standard_normal(len(wav)).astype(np.float32), sr)
    assert noisy["bak"] < clean["bak"] - 1.0 and noisy["ovrl"] < clean["ovrl"]
