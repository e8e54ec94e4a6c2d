"""The corpus runner ``anonymize_corpus``: layout, determinism, resumption, failures, safety."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.helpers.audio import make_data_dir, read_pcm, write_utterance
from tests.helpers.toys import ToyGain, ToyGain8k, ToyRaises, ToyWeights
from voxanon.audio.io import load_audio
from voxanon.data.kaldi import DataError, read_data_dir
from voxanon.jobs.runner.anonymize import anonymize_corpus, output_dir_for
from voxanon.jobs.runner.runstate import RunError, output_lock


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Relative path -> content of every wav under ``root``."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.wav"))}


def gains(data_dir: Path, out: Path) -> dict[str, float]:
    """Per utterance, the gain the toy anonymizer applied (output / input, least squares)."""
    result = {}
    for utt, source in read_data_dir(data_dir).wav_scp.items():
        x, y = load_audio(source)[0], load_audio(out / "wav" / f"{utt}.wav")[0]
        result[utt] = float(np.dot(x, y) / np.dot(x, x))
    return result


def test_data_dir_layout_and_metadata(data_dir: Path, tmp_path: Path) -> None:
    (data_dir / "trials").write_text("spk1 spk2-utt000 nontarget\nspk1 spk1-utt001 target\n")
    (data_dir / "utt2emo").write_text("".join(f"{spk}-utt00{i} neu\n" for spk in ("spk1", "spk2", "spk3")
                                              for i in range(2)))
    (data_dir / "spk2fold").write_text("spk1 1\nspk2 2\nspk3 1\n")
    out = tmp_path / "anon"
    summary = anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    assert (summary.done, summary.skipped, summary.failed, summary.output) == (6, 0, 0, out)
    assert summary.audio_seconds == pytest.approx(1.8) and summary.rtf > 0
    anon, orig = read_data_dir(out), read_data_dir(data_dir)
    assert anon.utts == orig.utts
    assert anon.wav_scp["spk1-utt000"] == str((out / "wav" / "spk1-utt000.wav").resolve())
    assert (anon.utt2spk, anon.spk2gender, anon.text) == (orig.utt2spk, orig.spk2gender, orig.text)
    assert {float(d) for d in anon.utt2dur.values()} == {0.3}
    for name in ("spk2utt", "trials", "utt2emo", "spk2fold"):
        assert (out / name).read_text() == (data_dir / name).read_text()
    assert not (out / "failures.tsv").exists()
    settings = json.loads((out / "voxanon_run.json").read_text())
    assert settings["method"] == "toy-gain" and settings["seed"] == 0 and settings["level"] == "utterance"
    assert settings["class"] == "tests.helpers.toys:ToyGain" and settings["params"] == {"delay": 0.0}


def test_same_bytes_with_one_or_two_workers_and_seed_matters(data_dir: Path, tmp_path: Path) -> None:
    anonymize_corpus(data_dir, tmp_path / "j1", ToyGain(), jobs=1, quiet=True)
    anonymize_corpus(data_dir, tmp_path / "j2", ToyGain(), jobs=2, quiet=True)
    anonymize_corpus(data_dir, tmp_path / "s1", ToyGain(), seed=1, jobs=1, quiet=True)
    j1 = tree_bytes(tmp_path / "j1")
    assert len(j1) == 6 and j1 == tree_bytes(tmp_path / "j2")
    assert all(j1[k] != v for k, v in tree_bytes(tmp_path / "s1").items())
    assert (tmp_path / "j1" / "utt2dur").read_text() == (tmp_path / "j2" / "utt2dur").read_text()


def test_speaker_level_gives_one_rng_per_speaker(data_dir: Path, tmp_path: Path) -> None:
    anonymize_corpus(data_dir, tmp_path / "spk", ToyGain(), level="speaker", jobs=1, quiet=True)
    anonymize_corpus(data_dir, tmp_path / "utt", ToyGain(), jobs=1, quiet=True)
    by_spk, by_utt = gains(data_dir, tmp_path / "spk"), gains(data_dir, tmp_path / "utt")
    for spk in ("spk1", "spk2", "spk3"):
        assert by_spk[f"{spk}-utt000"] == pytest.approx(by_spk[f"{spk}-utt001"], abs=1e-3)
        assert by_utt[f"{spk}-utt000"] != pytest.approx(by_utt[f"{spk}-utt001"], abs=1e-3)
    assert len({round(g, 3) for g in by_spk.values()}) == 3


def test_speaker_level_needs_utt2spk(data_dir: Path, audio_folder: Path, tmp_path: Path) -> None:
    with pytest.raises(DataError, match="--level speaker needs a data directory"):
        anonymize_corpus(audio_folder, tmp_path / "o1", ToyGain(), level="speaker", quiet=True)
    for name in ("utt2spk", "spk2utt", "spk2gender"):
        (data_dir / name).unlink()
    with pytest.raises(DataError, match="--level speaker needs utt2spk"):
        anonymize_corpus(data_dir, tmp_path / "o2", ToyGain(), level="speaker", quiet=True)
    assert not (tmp_path / "o2").exists()


def test_input_is_resampled_to_the_method_rate(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "anon"
    anonymize_corpus(data_dir, out, ToyGain8k(), jobs=1, quiet=True)
    info = sf.info(out / "wav" / "spk1-utt000.wav")
    assert (info.samplerate, info.frames) == (8000, 2400)
    assert read_data_dir(out).utt2dur["spk1-utt000"] == "0.3000"


def test_plain_folder_is_mirrored(audio_folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "mirror"
    summary = anonymize_corpus(audio_folder, out, ToyGain(), jobs=1, quiet=True)
    assert summary.done == 3
    assert sorted(tree_bytes(out)) == ["a.wav", "sub/b.wav", "sub/deeper/c.wav"]
    assert sf.info(out / "sub" / "b.wav").samplerate == 22050  # the toy takes any rate
    assert sf.info(out / "sub" / "deeper" / "c.wav").subtype == "PCM_16"
    assert not (out / "wav.scp").exists()
    first = tree_bytes(out)
    anonymize_corpus(audio_folder, out, ToyGain(), seed=5, jobs=1, force=True, quiet=True)
    second = tree_bytes(out)
    assert sorted(second) == sorted(first) and all(second[k] != first[k] for k in first)


def test_one_run_at_a_time_per_output(data_dir: Path, tmp_path: Path) -> None:
    with output_lock(tmp_path / "o"):
        with pytest.raises(RunError, match="another voxanon run is writing"):
            anonymize_corpus(data_dir, tmp_path / "o", ToyGain(), jobs=1, quiet=True)
    assert anonymize_corpus(data_dir, tmp_path / "o", ToyGain(), jobs=1, quiet=True).done == 6


def test_silent_input_comes_out_silent(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    sf.write(tmp_path / "in" / "quiet.wav", np.zeros(1600, dtype=np.int16), 16000)
    anonymize_corpus(tmp_path / "in", tmp_path / "out", ToyGain8k(), jobs=1, quiet=True)
    out = read_pcm(tmp_path / "out" / "quiet.wav")
    assert len(out) == 800 and not np.any(out)


def test_an_empty_data_dir_gives_an_empty_data_dir(tmp_path: Path) -> None:
    """The empty trial set of a gender a language corpus has no speakers of is anonymized like any other set."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "wav.scp").write_text("")
    summary = anonymize_corpus(tmp_path / "in", tmp_path / "out", ToyGain(), jobs=1, quiet=True)
    assert summary.done == 0 and summary.failed == 0
    assert read_data_dir(tmp_path / "out").utts == []


def test_failures_are_isolated_recorded_and_retried(data_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "corrupt.wav").write_bytes(b"not audio at all")
    nan = np.full(100, 0.1, dtype=np.float32)
    nan[5] = np.nan
    sf.write(bad / "nan.wav", nan, 16000, subtype="FLOAT")
    with open(data_dir / "wav.scp", "a") as fh:
        fh.write(f"x-corrupt {bad / 'corrupt.wav'}\nx-missing {bad / 'missing.wav'}\nx-nan {bad / 'nan.wav'}\n"
                 f"x-pipe cat {bad / 'missing.wav'} |\n")
    for name in ("utt2spk", "spk2utt", "spk2gender", "text", "utt2dur"):
        (data_dir / name).unlink()
    out = tmp_path / "anon"
    summary = anonymize_corpus(data_dir, out, ToyGain(), jobs=2, quiet=True)
    assert (summary.done, summary.failed) == (6, 4)
    rows = [line.split("\t") for line in (out / "failures.tsv").read_text().splitlines()]
    assert rows[0] == ["utterance", "source", "reason"]
    reasons = {row[0]: row[2] for row in rows[1:]}
    assert set(reasons) == {"x-corrupt", "x-missing", "x-nan", "x-pipe"}
    assert "cannot read audio" in reasons["x-corrupt"] and "not found" in reasons["x-missing"]
    assert "NaN/inf" in reasons["x-nan"] and "pipe command failed" in reasons["x-pipe"]
    assert all(len(row) == 3 for row in rows)
    assert sorted(read_data_dir(out).utts) == sorted(u for u in read_data_dir(data_dir).utts if "x-" not in u)

    write_utterance(bad / "missing.wav")  # repairs x-missing and x-pipe
    summary = anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    assert (summary.done, summary.skipped, summary.failed) == (2, 6, 2)
    assert "x-pipe" in read_data_dir(out).wav_scp
    assert {line.split("\t")[0] for line in (out / "failures.tsv").read_text().splitlines()[1:]} == \
        {"x-corrupt", "x-nan"}


def test_anonymizer_exceptions_are_failures(data_dir: Path, tmp_path: Path) -> None:
    summary = anonymize_corpus(data_dir, tmp_path / "o", ToyRaises(), jobs=1, quiet=True)
    assert (summary.done, summary.failed) == (0, 6)
    assert "RuntimeError: toy failure" in (tmp_path / "o" / "failures.tsv").read_text()
    assert not (tmp_path / "o" / "wav.scp").exists()


def test_rerun_skips_finished_and_cleans_temporaries(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "anon"
    anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    reference = tree_bytes(out)
    (out / "wav" / "spk2-utt001.wav").unlink()
    (out / "wav" / ".spk3-utt000.wav.abc123.tmp").write_bytes(b"half a wav")
    summary = anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    assert (summary.done, summary.skipped) == (1, 5)
    assert tree_bytes(out) == reference
    assert sorted(os.listdir(out / "wav")) == sorted(Path(k).name for k in reference)


def test_refuses_to_write_into_the_input(data_dir: Path, audio_folder: Path, tmp_path: Path) -> None:
    for inp, out in ((data_dir, data_dir), (data_dir, data_dir / "anon"), (audio_folder, audio_folder / "x"),
                     (audio_folder, audio_folder.parent)):
        with pytest.raises(RunError, match="inside"):
            anonymize_corpus(inp, out, ToyGain(), quiet=True)
    # a source file that lies inside the output folder
    elsewhere = make_data_dir(tmp_path / "other")
    with pytest.raises(RunError, match="lies inside the output"):
        anonymize_corpus(elsewhere, tmp_path / "other" / "audio", ToyGain(), quiet=True)
    assert not (data_dir / "anon").exists() and not (audio_folder / "x").exists()


def test_outputs_of_other_weights_are_refused(data_dir: Path, tmp_path: Path) -> None:
    weights, out = tmp_path / "model.pt", tmp_path / "anon"
    weights.write_bytes(b"first training run")
    anonymize_corpus(data_dir, out, ToyWeights(weights=str(weights)), jobs=1, quiet=True)
    anonymize_corpus(data_dir, out, ToyWeights(weights=str(weights)), jobs=1, quiet=True)   # same weights: resumes
    weights.write_bytes(b"retrained")
    with pytest.raises(RunError, match=r"differ in: models"):
        anonymize_corpus(data_dir, out, ToyWeights(weights=str(weights)), jobs=1, quiet=True)


def test_settings_mismatch_is_refused_unless_forced(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "anon"
    anonymize_corpus(data_dir, out, ToyGain(), jobs=1, quiet=True)
    seed0 = tree_bytes(out)
    with pytest.raises(RunError, match=r"other settings \(differ in: seed\).*--force"):
        anonymize_corpus(data_dir, out, ToyGain(), seed=1, jobs=1, quiet=True)
    with pytest.raises(RunError, match=r"differ in: class, method"):
        anonymize_corpus(data_dir, out, ToyGain8k(), jobs=1, quiet=True)
    assert tree_bytes(out) == seed0

    # --force on a smaller input: stale outputs of the old settings must all go
    small = make_data_dir(tmp_path / "small", utts_per_speaker=1)
    (out / "wav" / "stray.wav").write_bytes(b"x")
    summary = anonymize_corpus(small, out, ToyGain(), seed=1, jobs=1, force=True, quiet=True)
    assert summary.done == 3
    anonymize_corpus(small, tmp_path / "fresh", ToyGain(), seed=1, jobs=1, quiet=True)
    assert tree_bytes(out) == tree_bytes(tmp_path / "fresh")
    assert json.loads((out / "voxanon_run.json").read_text())["seed"] == 1


def test_refuses_a_foreign_non_empty_output(data_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("precious")
    for force in (False, True):
        with pytest.raises(RunError, match="not a voxanon output folder"):
            anonymize_corpus(data_dir, tmp_path / "mine", ToyGain(), force=force, quiet=True)
    assert os.listdir(tmp_path / "mine") == ["thesis.tex"]


def test_bad_input_is_reported_before_writing(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="does not exist"):
        anonymize_corpus(tmp_path / "nothing", tmp_path / "o", ToyGain(), quiet=True)
    bad = make_data_dir(tmp_path / "c")
    (bad / "spk2gender").write_text("spk1 q\n")
    with pytest.raises(DataError, match="spk2gender:1"):
        anonymize_corpus(bad, tmp_path / "o", ToyGain(), quiet=True)
    (bad / "segments").write_text("")
    with pytest.raises(DataError, match="segments"):
        anonymize_corpus(bad, tmp_path / "o", ToyGain(), quiet=True)
    with pytest.raises(ValueError, match="jobs"):
        anonymize_corpus(bad, tmp_path / "o", ToyGain(), jobs=0, quiet=True)
    assert not (tmp_path / "o").exists()


def test_output_dir_rule(tmp_path: Path) -> None:
    assert output_dir_for("data/libri_dev/", "data", "_mcadams") == Path("data/libri_dev_mcadams")
    assert output_dir_for("data/libri_dev", "out/x", None) == Path("out/x")


def test_progress_reports_rate_and_rtf(data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    anonymize_corpus(data_dir, tmp_path / "o", ToyGain(), jobs=1)
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("anonymize toy-gain: 6/6 | ") and "it/s" in err[-1] and "RTF" in err[-1]
    assert len(err) == len(set(err))
    shutil.rmtree(tmp_path / "o")
    anonymize_corpus(data_dir, tmp_path / "o", ToyGain(), jobs=1, quiet=True)
    assert capsys.readouterr().err == ""


class ToyPrepared(ToyGain):
    """ToyGain that counts its :meth:`prepare` calls in a file (workers are other processes)."""

    name = "toy-prepared"

    def prepare(self, *, quiet=False):
        with open(os.environ["TOY_PREPARED"], "a") as fh:
            fh.write(f"{os.getpid()}\n")


def test_prepare_runs_once_in_the_runner_before_workers_and_not_when_all_is_done(
        data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "prepared.txt"
    monkeypatch.setenv("TOY_PREPARED", str(log))
    anonymize_corpus(data_dir, tmp_path / "anon", ToyPrepared(), jobs=2, quiet=True)
    assert log.read_text().split() == [str(os.getpid())]
    anonymize_corpus(data_dir, tmp_path / "anon", ToyPrepared(), jobs=2, quiet=True)   # nothing left to do
    assert log.read_text().split() == [str(os.getpid())]


class ToyThreads(ToyGain):
    """Writes, per utterance, the intra-op threads its worker process was given (torch and the env)."""

    name = "toy-threads"

    def anonymize(self, wav, sr, rng):
        import torch

        with open(os.environ["TOY_THREADS"], "a") as fh:
            fh.write(f"{os.environ.get('OMP_NUM_THREADS')} {torch.get_num_threads()}\n")
        return wav, sr


def test_workers_share_the_cores_instead_of_each_taking_all(
        data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "threads.txt"
    monkeypatch.setenv("TOY_THREADS", str(log))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    anonymize_corpus(data_dir, tmp_path / "anon", ToyThreads(), jobs=2, quiet=True)
    share = str(max(1, len(os.sched_getaffinity(0)) // 2))
    assert log.read_text().split("\n")[:-1] == [f"{share} {share}"] * 6
    assert "OMP_NUM_THREADS" not in os.environ  # the runner's own process is left as it was
