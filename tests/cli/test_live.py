"""``voxanon stream`` (files and raw PCM pipes) and ``voxanon serve``'s refusals."""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest
import soundfile as sf

from tests.helpers.processes import subprocess_env
from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.mcadams import McAdams
from voxanon.audio.io import resample, to_pcm16
from voxanon.audio.synthetic import speech_like
from voxanon.cli import main
from voxanon.dsp.mcadams import mcadams

SR = 16000


def offline_pcm(wav: np.ndarray, seed: int, key: str) -> np.ndarray:
    """The offline McAdams transform (before peak normalisation) of ``key``'s pseudo-speaker, as 16-bit PCM."""
    return to_pcm16(mcadams(wav, SR, McAdams().draw_alpha(utterance_rng(seed, key))))


def test_stream_a_file_fast_writes_the_offline_transform_and_reports_latency(tmp_path, capsys):
    wav = speech_like(1.0, 22050, seed=4)
    source = tmp_path / "greeting.wav"
    sf.write(source, wav, 22050, subtype="PCM_16")
    assert main(["stream", "--fast", "--seed", "5", "--chunk-ms", "7", str(source), str(tmp_path / "out.wav")]) == 0
    out, sr = sf.read(tmp_path / "out.wav", dtype="int16")
    at_rate = resample(sf.read(source, dtype="float32")[0], 22050, SR)
    assert sr == SR
    np.testing.assert_array_equal(out, offline_pcm(at_rate, 5, "greeting"))  # the key is the file's stem
    err = capsys.readouterr().err
    assert "in 7 ms chunks" in err and "algorithmic latency 19.9 ms" in err and "compute per chunk p50" in err
    assert "end to end" not in err  # not a live source


def test_stream_a_file_in_real_time_measures_end_to_end(tmp_path, capsys):
    source = tmp_path / "a.wav"
    sf.write(source, speech_like(0.5, SR), SR, subtype="PCM_16")
    start = time.perf_counter()
    assert main(["stream", "--key", "call-1", str(source), str(tmp_path / "out.wav")]) == 0
    assert time.perf_counter() - start >= 0.45  # played in real time
    out, _ = sf.read(tmp_path / "out.wav", dtype="int16")
    np.testing.assert_array_equal(out, offline_pcm(sf.read(source, dtype="float32")[0], 0, "call-1"))
    line = [x for x in capsys.readouterr().err.splitlines() if x.startswith("end to end")][0]
    p50 = float(line.split("p50 ")[1].split(" ms")[0])
    assert 10.0 <= p50 < 1000.0  # at least the look-ahead's share


def test_stream_raw_pcm_from_stdin_to_stdout():
    pcm = to_pcm16(speech_like(0.5, SR, seed=2))
    done = subprocess.run([sys.executable, "-m", "voxanon", "stream", "--rate", str(SR), "--quiet", "-", "-"],
                          input=pcm.tobytes(), capture_output=True, env=subprocess_env(), timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    expected = offline_pcm(pcm.astype(np.float32) / 32768, 0, "stdin")
    np.testing.assert_array_equal(np.frombuffer(done.stdout, dtype="<i2"), expected)


@pytest.mark.parametrize("args, message", [
    (["stream", "--method", "f0_scale", "IN", "OUT"], "f0_scale cannot stream: WORLD's F0 trackers"),
    (["stream", "-", "-"], "needs --rate"),
    (["stream", "--rate", "8000", "-", "-"], "mcadams streams at 16000 Hz, got 8000 Hz"),
    (["stream", "--chunk-ms", "0", "IN", "OUT"], "--chunk-ms must be above 0"),
    (["stream", "--param", "alpha=3", "IN", "OUT"], "alpha"),
    (["serve", "--method", "world"], "world cannot stream"),
    (["serve", "--max-sessions", "0"], "--max-sessions must be at least 1"),
])
def test_usage_errors_are_one_line_and_exit_2(tmp_path, capsys, args, message):
    source = tmp_path / "in.wav"
    sf.write(source, speech_like(0.2, SR), SR, subtype="PCM_16")
    args = [str(source) if a == "IN" else str(tmp_path / "out.wav") if a == "OUT" else a for a in args]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err


def test_a_missing_input_file_is_a_data_error(tmp_path, capsys):
    assert main(["stream", str(tmp_path / "none.wav"), str(tmp_path / "out.wav")]) == 3
    assert "none.wav" in capsys.readouterr().err


def test_serve_binds_to_localhost_and_serves_the_page():
    import socket
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "voxanon", "serve", "--seed", "1", "--port", str(port)],
                            env=subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(300):
            try:
                page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read().decode()
                status = urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=5).read().decode()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()
                time.sleep(0.1)
        else:
            raise AssertionError("voxanon serve did not answer within 30 s")
    finally:
        proc.terminate()
        err = proc.communicate(timeout=30)[1].decode()
    assert "<title>voxanon live</title>" in page and '"max_sessions": 8' in status
    assert f"mcadams on http://127.0.0.1:{port}/" in err


def test_list_streaming_names_each_methods_latency_or_why_not(capsys):
    from voxanon.anonymizers.registry import available

    assert main(["list", "--streaming"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert set(lines) == set(available())
    assert "streams: 19.9 ms algorithmic latency at 16000 Hz" in lines["mcadams"]
    assert "offline only: WORLD's F0 trackers" in lines["world"]
    assert "offline only:" in lines["knnvc"]


def _null_sound_device(tmp_path) -> dict[str, str]:
    """An environment whose ALSA configuration has a device 'voxanon_null' (captures zeros, discards what it
    plays), so PortAudio finds a real device on a machine without a sound card."""
    (tmp_path / ".asoundrc").write_text("pcm.voxanon_null {\n  type null\n}\n")
    return {**subprocess_env(), "HOME": str(tmp_path)}


def test_stream_from_and_to_a_sound_device(tmp_path):
    env = _null_sound_device(tmp_path)
    listed = subprocess.run([sys.executable, "-m", "voxanon", "stream", "--devices"], capture_output=True, text=True,
                            env=env, timeout=60)
    assert listed.returncode == 0 and "voxanon_null" in listed.stdout, listed.stderr
    out = tmp_path / "out.wav"
    done = subprocess.run([sys.executable, "-m", "voxanon", "stream", "--seconds", "0.5", "device:voxanon_null",
                           str(out)], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "end to end (capture to output)" in done.stderr
    wav, sr = sf.read(out)
    # the null device hands over PortAudio's buffer as it is (zeros or denormal garbage near 1e-22)
    assert (wav.size, sr) == (SR // 2, SR) and np.isfinite(wav).all()
    source = tmp_path / "in.wav"
    sf.write(source, speech_like(0.3, SR, seed=1), SR)
    played = subprocess.run([sys.executable, "-m", "voxanon", "stream", "--fast", "--quiet", str(source),
                             "device:voxanon_null"], capture_output=True, text=True, env=env, timeout=60)
    assert played.returncode == 0, played.stderr


def test_an_unknown_sound_device_is_one_line_naming_the_devices(tmp_path):
    done = subprocess.run([sys.executable, "-m", "voxanon", "stream", "device:no-such-mic", str(tmp_path / "o.wav")],
                          capture_output=True, text=True, env=_null_sound_device(tmp_path), timeout=60)
    assert done.returncode == 3
    assert done.stderr.count("\n") == 1 and "no sound device 'no-such-mic'" in done.stderr
    assert "voxanon_null" in done.stderr
