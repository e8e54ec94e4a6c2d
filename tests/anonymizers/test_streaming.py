"""The streaming contract: same pseudo-speaker as offline, any chunking gives the same output, clear refusals."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.audio import LIBRIVOX
from voxanon.anonymizers import registry
from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.mcadams import McAdams
from voxanon.audio.io import load_audio, resample
from voxanon.dsp.mcadams import mcadams, normalization_gain
from voxanon.errors import ConfigError

SR = 16000


@pytest.fixture(scope="module")
def speech() -> np.ndarray:
    """3 s of real read speech (float32, 16 kHz)."""
    wav, sr = load_audio(sorted(LIBRIVOX.glob("*.flac"))[0])
    return resample(wav, sr, SR)[: 3 * SR].astype(np.float32)


def streamed(session, wav: np.ndarray, sizes: list[int]) -> np.ndarray:
    """Feed ``wav`` in chunks of the given sizes (cycled), then flush; the concatenated output."""
    out, pos, k = [], 0, 0
    while pos < wav.size:
        out.append(session.process(wav[pos : pos + sizes[k % len(sizes)]]))
        pos += sizes[k % len(sizes)]
        k += 1
    out.append(session.flush())
    return np.concatenate(out)


def test_mcadams_stream_draws_the_offline_alpha_and_equals_the_offline_transform(speech):
    method = McAdams()
    session = method.open_stream(SR, 7, "utt-a")
    assert session.alpha == method.draw_alpha(utterance_rng(7, "utt-a"))
    assert session.alpha != method.open_stream(SR, 7, "utt-b").alpha  # a pseudo-speaker per utterance key
    out = streamed(session, speech, [320])
    assert out.shape == speech.shape
    np.testing.assert_array_equal(out, mcadams(speech, SR, session.alpha))


def test_mcadams_stream_scaled_by_its_own_peak_is_the_offline_output_exactly(speech):
    """The only difference from offline is the utterance's peak normalisation, which a stream cannot know."""
    method = McAdams()
    offline, _ = method.process(speech, SR, utterance_rng(3, "utt"))
    out = streamed(method.open_stream(SR, 3, "utt"), speech, [160]).astype(np.float32)
    assert not np.array_equal(out, offline)
    np.testing.assert_array_equal(out * np.float32(normalization_gain(out)), offline)


@pytest.mark.parametrize("seed", range(4))
def test_any_random_chunking_gives_the_same_output(speech, seed):
    rng = np.random.default_rng(seed)
    sizes = [int(s) for s in rng.integers(0, 700, size=50)]  # empty chunks included
    reference = streamed(McAdams().open_stream(SR, 1, "u"), speech, [speech.size])
    np.testing.assert_array_equal(streamed(McAdams().open_stream(SR, 1, "u"), speech, sizes), reference)


def test_mcadams_latency_is_one_window_less_a_sample_and_is_what_it_waits(speech):
    session = McAdams().open_stream(SR, 0, "u")
    assert session.latency_ms == pytest.approx(1000 * 319 / SR)
    lag = 0
    got = 0
    for i in range(SR // 10):  # sample by sample: the output never lags more than the declared latency
        got += session.process(speech[i : i + 1]).size
        lag = max(lag, i + 1 - got)
    assert lag == 319


def test_mcadams_streams_only_at_its_rate():
    with pytest.raises(ConfigError, match="streams at 16000 Hz, got 48000 Hz"):
        McAdams().open_stream(48000, 0, "u")


def test_process_after_flush_is_refused(speech):
    session = McAdams().open_stream(SR, 0, "u")
    session.flush()
    with pytest.raises(RuntimeError, match="after flush"):
        session.process(speech[:10])


@pytest.mark.parametrize("name, reason", [
    ("world", "median F0"),
    ("f0_scale", "DIO, Harvest"),
    ("f0_noise", "DIO, Harvest"),
    ("f0_mean_reversion", "DIO, Harvest"),
    ("segment_scaling", "how many segments"),
    ("chain", "no streaming form"),
])
def test_methods_that_cannot_stream_say_why(name, reason):
    cls = registry.available()[name]
    assert not cls.streams()
    params = {"steps": [{"method": "mcadams"}]} if name == "chain" else {}
    with pytest.raises(ConfigError, match=f"{name} cannot stream: .*{reason}"):
        cls(**params).open_stream(16000, 0, "u")


def test_mcadams_is_the_streaming_method():
    assert [name for name, cls in registry.available().items() if cls.streams()] == ["mcadams"]
