"""``voxanon evaluate utility --asr`` on tiny data directories built from the shipped LibriVox clips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.audio import LIBRIVOX
from voxanon.audio.io import load_audio, write_wav
from voxanon.cli import main
from voxanon.data.kaldi import DataDir, read_data_dir, write_data_dir
from voxanon.evaluation.asr import evaluate_asr
from voxanon.models.asr import AsrBackend

UTTS = sorted(p.stem for p in LIBRIVOX.glob("*.flac"))


def make_dir(path: Path, *, shuffle: bool = False) -> Path:
    """Data dir: 3 real clips, one with no transcript, one empty reference, one unreadable file.

    With ``shuffle`` each transcript is paired with the next clip's audio (a stand-in for a
    destructive anonymizer).
    """
    refs = dict(line.split(maxsplit=1) for line in (LIBRIVOX / "text").read_text().splitlines())
    data = DataDir()
    for i, utt in enumerate(UTTS):
        wav, sr = load_audio(LIBRIVOX / f"{UTTS[(i + shuffle) % len(UTTS)]}.flac")
        write_wav(path / "wav" / f"{utt}.wav", wav, sr)
        data.wav_scp[utt] = str(path / "wav" / f"{utt}.wav")
        data.text[utt] = refs[utt]
    untranscribed = str(path / "wav" / f"{UTTS[0]}.wav")
    data.wav_scp.update({"no_text": untranscribed, "empty_ref": untranscribed, "broken": str(path / "missing.wav")})
    data.text.update({"empty_ref": "", "broken": "he was"})
    data.utt2spk = {u: "spk" for u in data.wav_scp}
    return write_data_dir(data, path)


def test_utility_asr_side_by_side_with_bad_input(tmp_path, capsys):
    orig, anon = make_dir(tmp_path / "orig"), make_dir(tmp_path / "anon", shuffle=True)
    out = tmp_path / "res"
    status = main(["evaluate", "utility", "--asr", "--threads", "1", "--n-boot", "200",
                   "--quiet", "--out", str(out), str(orig), str(anon)])
    assert status == 5  # some utterances failed (listed): partial
    results = json.loads((out / "asr_results.json").read_text())
    original, anonymized = results["sets"]
    assert results["asr_backend"].startswith("whisper-tiny")
    for s in (original, anonymized):
        assert s["n_scored"] == 3
        assert s["missing_transcript"] == ["no_text"]
        assert s["empty_reference"] == ["empty_ref"]
        assert list(s["failed"]) == ["broken"] and "not found" in s["failed"]["broken"]
        assert s["wer_ci"]["low"] <= s["wer"] <= s["wer_ci"]["high"]
    assert original["wer"] <= 25.0
    assert anonymized["wer"] >= 70.0
    table = capsys.readouterr().out
    rows = [line.split() for line in table.splitlines()]
    # one row per set, numbered in the order given and named by its folder (not "original"/"anonymized N")
    assert [r[:2] for r in rows if r and r[0] in ("1", "2")] == [["1", str(orig)], ["2", str(anon)]]
    assert "no transcript (skipped)" in table
    assert (out / "asr_utterances.tsv").read_text().count("\n") == 7
    assert original["decoded_now"] == 3


class CountingAsr(AsrBackend):
    """A fixed transcript, counting decoded utterances (to check the cache)."""

    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def _transcribe(self, wavs):
        self.calls += len(wavs)
        return ["He was not." for _ in wavs]


def test_hypothesis_cache_reused_across_normalisations(tmp_path):
    data = read_data_dir(make_dir(tmp_path / "d"))
    asr = CountingAsr()
    first = evaluate_asr(data, asr, tmp_path / "cache", quiet=True, n_boot=50)
    assert asr.calls == 3 and first.decoded == 3
    again = evaluate_asr(data, asr, tmp_path / "cache", normalization="none", quiet=True, n_boot=50)
    assert asr.calls == 3 and again.decoded == 0
    assert again.hypotheses == first.hypotheses
    assert again.result.wer > first.result.wer  # case and punctuation now count


class ChineseAsr(AsrBackend):
    """A fixed Chinese transcript: one character wrong."""

    name = "chinese"

    def _transcribe(self, wavs):
        return ["他没有恶意。" for _ in wavs]


def test_character_error_rate_for_a_language_without_spaces(tmp_path, capsys):
    data = read_data_dir(make_dir(tmp_path / "d"))
    data.text.update({u: "他 没有 恶意" for u in UTTS})
    result = evaluate_asr(data, ChineseAsr(), tmp_path / "cache", normalization="basic", unit="char", quiet=True,
                          n_boot=50).to_result()
    assert result.unit == "char" and result.n_reference_words == 15          # 5 characters x 3 utterances
    assert result.wer == result.cer == 0.0
    data.text.update({u: "他没有敌意" for u in UTTS})
    result = evaluate_asr(data, ChineseAsr(), tmp_path / "cache", normalization="basic", unit="char", quiet=True,
                          n_boot=50).to_result()
    assert result.wer == 20.0                                                 # 1 of 5 characters


def test_utility_scores_french_with_the_multilingual_asr(tmp_path):
    from voxanon.data.debian_clips import prompt_clips

    clips = [c for c in prompt_clips(language="fr") if c.utt in ("asterisk-june-agent-loggedoff",
                                                                  "asterisk-june-agent-loginok")]
    if not clips:
        pytest.skip("asterisk-core-sounds-fr-wav is not installed (tools/setup.sh installs it)")
    data = DataDir(wav_scp={c.utt: str(c.path) for c in clips}, text={c.utt: c.text for c in clips},
                   utt2spk={c.utt: c.speaker for c in clips})
    out = tmp_path / "res"
    status = main(["evaluate", "utility", "--asr", "--asr-backend", "whisper-base:fr", "--normalization", "basic",
                   "--threads", "1", "--n-boot", "50", "--quiet", "--out", str(out),
                   str(write_data_dir(data, tmp_path / "fr"))])
    results = json.loads((out / "asr_results.json").read_text())
    assert status == 0 and results["asr_backend"] == "whisper-base-ct2-int8-beam5-fr"
    assert results["unit"] == "word" and results["sets"][0]["wer"] == 0.0     # measured: both prompts exact


def test_utility_needs_a_part(tmp_path, capsys):
    assert main(["evaluate", "utility", str(make_dir(tmp_path / "d"))]) == 2
    assert "choose --asr, --ser or both" in capsys.readouterr().err


def test_ser_part_is_handed_the_same_arguments(tmp_path, monkeypatch):
    import voxanon.cli.handlers.evaluate as handlers

    seen = []
    monkeypatch.setattr(handlers, "utility_ser", lambda args: seen.append(args) or 0)
    data = str(make_dir(tmp_path / "d"))
    assert main(["evaluate", "utility", "--ser", "--ser-models", "m", "--out", str(tmp_path / "o"), data]) == 0
    assert seen[0].data_dirs == [data] and seen[0].ser_models == "m" and not (tmp_path / "o").exists()
