"""The public Python API (voxanon.api, re-exported by voxanon) on real speech and real models."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import voxanon
from tests.helpers.speaker_corpus import make_corpus, trial_dirs
from voxanon.anonymizers.registry import available
from voxanon.data.kaldi import DataDir, write_data_dir
from voxanon.errors import ConfigError, DataError

LIBRIVOX = Path(__file__).parent / "fixtures" / "librivox"
CLIPS = sorted(LIBRIVOX.glob("*.flac"))


def _ge2e_cosine(a: np.ndarray, b: np.ndarray, sr: int) -> float:
    from voxanon.models.speaker import load_encoder

    emb = load_encoder("ge2e").embed([a.astype(np.float32), b.astype(np.float32)], sr)
    return float(emb[0] @ emb[1] / np.linalg.norm(emb[0]) / np.linalg.norm(emb[1]))


def test_import_voxanon_loads_no_api_and_no_numpy():
    code = "import sys, voxanon; print('voxanon.api' in sys.modules, 'numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_names_are_reexported_lazily():
    from voxanon import api

    assert set(api.__all__) <= set(dir(voxanon))
    assert voxanon.build_anonymizer is api.build_anonymizer
    with pytest.raises(AttributeError, match="no_such_name"):
        voxanon.no_such_name  # noqa: B018


def test_list_anonymizers_is_the_cli_registry():
    infos = {i.name: i for i in voxanon.list_anonymizers()}
    assert list(infos) == list(available())
    mcadams = infos["mcadams"]
    params = {p.name: p for p in mcadams.params}
    assert mcadams.sample_rate == 16000 and not mcadams.needs_model
    assert params["alpha_min"].default == 0.5 and params["alpha_min"].type == "float"
    assert "McAdams" in params["alpha_min"].help and params["lp_order"].valid is not None


def test_build_anonymizer_types_and_validates_parameters():
    a = voxanon.build_anonymizer("mcadams", alpha_min="0.6", lp_order="16")  # strings as --param gives them
    assert a.config.alpha_min == 0.6 and a.config.lp_order == 16 and isinstance(a, voxanon.Anonymizer)
    with pytest.raises(ConfigError, match="unknown anonymizer 'mcadam'"):
        voxanon.build_anonymizer("mcadam")
    with pytest.raises(ConfigError, match="unknown parameter.*alpha_range"):
        voxanon.build_anonymizer("mcadams", alpha_range=(0.6, 0.8))
    with pytest.raises(ConfigError, match="lp_order"):
        voxanon.build_anonymizer("mcadams", lp_order=0)
    with pytest.raises(ConfigError, match="expected int"):
        voxanon.build_anonymizer("mcadams", lp_order="twenty")


def test_mcadams_on_real_speech_changes_the_voice_keeps_length_and_rate():
    wav, sr = sf.read(CLIPS[0], dtype="float32")
    other, _ = sf.read(CLIPS[1], dtype="float32")  # the same reader
    mcadams = voxanon.build_anonymizer("mcadams", alpha_min=0.6, alpha_max=0.7)
    out, out_sr = voxanon.anonymize_waveform(mcadams, wav, sr, key="0880")
    assert out_sr == sr == 16000 and out.shape == wav.shape and out.dtype == np.float32
    assert np.sqrt(np.mean((out - wav) ** 2)) > 0.3 * np.sqrt(np.mean(wav**2))
    # the same reader's other clip is closer to the original clip than to its anonymized version
    assert _ge2e_cosine(other, out, sr) < _ge2e_cosine(other, wav, sr) - 0.05
    again, _ = voxanon.anonymize_waveform(mcadams, wav, sr, key="0880")
    elsewhere, _ = voxanon.anonymize_waveform(mcadams, wav, sr, key="0890")
    assert np.array_equal(out, again) and not np.array_equal(out, elsewhere)


def test_anonymize_waveform_resamples_to_the_method_rate_and_refuses_stereo():
    wav, sr = sf.read(CLIPS[0], dtype="float32")
    from voxanon.audio.io import resample

    wav44 = resample(wav, sr, 44100)
    out, out_sr = voxanon.anonymize_waveform(voxanon.build_anonymizer("mcadams"), wav44, 44100)
    assert out_sr == 16000 and abs(len(out) - len(wav)) <= 2
    with pytest.raises(DataError, match="mono"):
        voxanon.anonymize_waveform(voxanon.build_anonymizer("mcadams"), np.stack([wav, wav], axis=1), sr)


def test_anonymize_dir_mirrors_a_folder_and_resumes(tmp_path):
    summary = voxanon.anonymize_dir(LIBRIVOX, tmp_path / "out", "mcadams", jobs=1, quiet=True)
    outs = sorted((tmp_path / "out").glob("*.wav"))
    assert summary.done == 3 and summary.failed == 0 and [p.stem for p in outs] == [c.stem for c in CLIPS]
    for clip, out in zip(CLIPS, outs):
        assert sf.info(out).frames == sf.info(clip).frames and sf.info(out).samplerate == 16000
    again = voxanon.anonymize_dir(LIBRIVOX, tmp_path / "out", voxanon.build_anonymizer("mcadams"), jobs=1, quiet=True)
    assert again.done == 0 and again.skipped == 3


def _librivox_data_dir(root: Path) -> Path:
    """A data directory of the three LibriVox clips with their transcripts."""
    text = dict(line.split(" ", 1) for line in (LIBRIVOX / "text").read_text().splitlines())
    wav_scp = {c.stem: str(c) for c in CLIPS}
    write_data_dir(DataDir(wav_scp=wav_scp, utt2spk=dict.fromkeys(wav_scp, "austen"), text=text), root)
    return root


def test_evaluate_wer_of_real_speech_before_and_after(tmp_path):
    orig = _librivox_data_dir(tmp_path / "orig")
    voxanon.anonymize_dir(orig, tmp_path / "anon", "mcadams", jobs=1, quiet=True)
    before, after = voxanon.evaluate_wer([orig, tmp_path / "anon"], n_boot=50, cache_dir=tmp_path / "cache",
                                           normalization="spoken")
    assert before.n_scored == after.n_scored == 3 and before.asr_backend.startswith("whisper")
    assert before.wer < 15 and before.wer < after.wer  # Whisper hears real read speech; McAdams costs words
    assert sorted(p.name for p in (tmp_path / "cache").iterdir())  # the hypothesis cache was written


def test_evaluate_privacy_runs_the_attacks_the_inputs_allow(tmp_path):
    enroll, trials = trial_dirs(tmp_path, make_corpus(tmp_path / "corpus", n_spk=4, n_utt=4))
    anon = {}
    for d in (enroll, trials):
        anon[d.name] = tmp_path / f"{d.name}_mcadams"
        voxanon.anonymize_dir(d, anon[d.name], "mcadams", jobs=1, quiet=True)
    only_oo = voxanon.evaluate_privacy(enroll, [trials], n_boot=20)
    assert list(only_oo) == ["OO"]
    res = voxanon.evaluate_privacy(enroll, [trials], anon_enroll=anon["enroll"], anon_trials=[anon["trials"]],
                                   n_boot=20)
    assert list(res) == ["OO", "OA", "AA-lazy"]
    assert all(r.encoder.startswith("ge2e") and 0 <= r.eer_mean <= 100 for r in res.values())
    assert res["OA"].trials == [str(anon["trials"])]
    with pytest.raises(ConfigError, match="checkpoint"):
        voxanon.evaluate_privacy(enroll, [trials], anon_enroll=anon["enroll"], anon_trials=[anon["trials"]],
                                 scenarios=["AA-semi"])
