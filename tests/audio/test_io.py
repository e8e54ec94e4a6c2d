"""Audio I/O: loading (files and wav.scp pipes), mixdown, resampling, atomic 16-bit writes."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.helpers.audio import write_utterance
from voxanon.audio import io as audio_io
from voxanon.audio.io import (
    AudioError,
    check_waveform,
    duration,
    load_audio,
    resample,
    to_pcm16,
    write_wav,
)

needs_sox = pytest.mark.skipif(shutil.which("sox") is None, reason="sox not installed")
needs_flac = pytest.mark.skipif(shutil.which("flac") is None, reason="flac not installed")


def test_stereo_is_mixed_down_by_averaging(tmp_path: Path) -> None:
    left = np.linspace(-0.5, 0.5, 1000, dtype=np.float32)
    right = np.full(1000, 0.25, dtype=np.float32)
    sf.write(tmp_path / "st.wav", np.stack([left, right], axis=1), 16000, subtype="FLOAT")
    wav, sr = load_audio(tmp_path / "st.wav")
    assert sr == 16000 and wav.dtype == np.float32 and wav.shape == (1000,)
    np.testing.assert_allclose(wav, (left + right) / 2, atol=1e-7)


@needs_sox
def test_sox_pipe_entry(tmp_path: Path) -> None:
    flac = write_utterance(tmp_path / "a b.flac", seconds=0.25)
    wav, sr = load_audio(f"sox '{flac}' -t wav - |")
    np.testing.assert_array_equal(wav, load_audio(flac)[0])
    assert sr == 16000
    assert duration(f"sox '{flac}' -t wav - |") == pytest.approx(0.25)


@needs_flac
def test_flac_pipe_entry(tmp_path: Path) -> None:
    flac = write_utterance(tmp_path / "a.flac", seconds=0.25, sr=8000)
    wav, sr = load_audio(f"flac -c -d -s {flac} |")
    np.testing.assert_array_equal(wav, load_audio(flac)[0])
    assert sr == 8000 and len(wav) == 2000


def test_failing_and_empty_pipes(tmp_path: Path) -> None:
    with pytest.raises(AudioError, match=r"pipe command failed \(exit 3\)"):
        load_audio("echo oops >&2; exit 3 |")
    with pytest.raises(AudioError, match="produced no audio"):
        load_audio("true |")


def test_resample_keeps_duration_and_frequency() -> None:
    t = np.arange(22050) / 22050
    wav = np.sin(2 * np.pi * 440 * t).astype(np.float32)
    out = resample(wav, 22050, 16000)
    assert out.dtype == np.float32 and len(out) == 16000
    spectrum = np.abs(np.fft.rfft(out))
    assert np.argmax(spectrum) == 440  # 1 s at 16 kHz: bin = Hz
    assert resample(wav, 16000, 16000) is wav


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_samples_are_errors(tmp_path: Path, bad: float) -> None:
    wav = np.zeros(100, dtype=np.float32)
    wav[[10, 20]] = bad
    sf.write(tmp_path / "bad.wav", wav, 16000, subtype="FLOAT")
    with pytest.raises(AudioError, match=r"bad\.wav: 2 NaN/inf samples"):
        load_audio(tmp_path / "bad.wav")


def test_empty_corrupt_and_missing_files_are_errors(tmp_path: Path) -> None:
    sf.write(tmp_path / "empty.wav", np.zeros(0, dtype=np.float32), 16000)
    with pytest.raises(AudioError, match="empty"):
        load_audio(tmp_path / "empty.wav")
    (tmp_path / "corrupt.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk" + os.urandom(100))
    with pytest.raises(AudioError, match="cannot read audio .*corrupt.wav"):
        load_audio(tmp_path / "corrupt.wav")
    with pytest.raises(AudioError, match="not found"):
        load_audio(tmp_path / "missing.wav")


def test_silence_is_valid_unless_refused(tmp_path: Path) -> None:
    write_wav(tmp_path / "s.wav", np.zeros(800, dtype=np.float32), 16000)
    wav, _ = load_audio(tmp_path / "s.wav")
    assert not np.any(wav)
    with pytest.raises(AudioError, match="silent"):
        load_audio(tmp_path / "s.wav", allow_silent=False)


def test_write_wav_is_16bit_clipped_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "o.wav"
    write_wav(path, np.array([0.0, 0.5, -1.0, 2.0, -3.0], dtype=np.float64), 8000)
    info = sf.info(path)
    assert (info.subtype, info.samplerate, info.channels) == ("PCM_16", 8000, 1)
    np.testing.assert_array_equal(sf.read(path, dtype="int16")[0], [0, 16384, -32767, 32767, -32767])
    assert os.listdir(path.parent) == ["o.wav"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_umask()  # not mkstemp's 0600


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_write_wav_refuses_bad_audio_without_touching_the_target(tmp_path: Path) -> None:
    path = tmp_path / "o.wav"
    write_wav(path, np.full(10, 0.1), 16000)
    before = path.read_bytes()
    for bad in (np.array([0.1, np.nan]), np.zeros(0), np.zeros((2, 5, 1)), np.array([[0.1, np.inf]])):
        with pytest.raises(AudioError):
            write_wav(path, bad, 16000)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["o.wav"]


def test_write_wav_keeps_channels_and_load_audio_gives_them_back(tmp_path: Path) -> None:
    stereo = np.stack([np.full(8, 0.5), np.full(8, -0.25)], axis=1)
    write_wav(tmp_path / "s.wav", stereo, 8000)
    channels, sr = load_audio(tmp_path / "s.wav", mono=False)
    assert sr == 8000 and channels.shape == (8, 2)
    np.testing.assert_allclose(channels, stereo, atol=1e-4)
    mono, _ = load_audio(tmp_path / "s.wav")
    np.testing.assert_allclose(mono, 0.125, atol=1e-4)


def test_pcm16_rounds_to_nearest() -> None:
    np.testing.assert_array_equal(to_pcm16(np.array([0.4 / 32767, 0.6 / 32767, -0.6 / 32767])), [0, 1, -1])


def test_pcm16_and_wav_writing_in_blocks_equal_one_piece(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.random.default_rng(0).uniform(-1.2, 1.2, 1000).astype(np.float32)
    whole = np.round(np.clip(x, -1.0, 1.0) * 32767.0).astype(np.int16)
    reference = tmp_path / "ref.wav"
    sf.write(reference, whole, 16000, subtype="PCM_16", format="WAV")
    monkeypatch.setattr(audio_io, "PCM_BLOCK", 7)
    np.testing.assert_array_equal(to_pcm16(x), whole)
    write_wav(tmp_path / "blocks.wav", x, 16000)
    assert (tmp_path / "blocks.wav").read_bytes() == reference.read_bytes()


def test_check_waveform_names_the_source() -> None:
    with pytest.raises(AudioError, match="utt7: expected mono"):
        check_waveform(np.zeros((3, 2)), "utt7")
