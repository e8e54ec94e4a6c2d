"""Evaluation of conversations on speech-like speakers: verification, DER, cpWER, overlap leak, results files."""

import csv
import json

import numpy as np
import pytest

from tests.helpers.conversation_corpus import make_source_corpus
from voxanon.audio.io import load_audio, write_wav
from voxanon.data.conversations import read_conversation_corpus
from voxanon.data.rttm import Turn, read_rttm
from voxanon.data.stm import Segment
from voxanon.errors import DataError
from voxanon.evaluation.conversations import (
    evaluate_conversations,
    overlap_regions,
    read_recordings,
    trial_pieces,
)
from voxanon.jobs.corpus.conversations import ConversationSettings, build_conversations
from voxanon.metrics.cpwer import cpwer, speaker_texts
from voxanon.metrics.diarization import DiarizationErrors, corpus_diarization_errors
from voxanon.models.asr.base import AsrBackend
from voxanon.models.speaker import SpeakerEncoder


class SpectrumEncoder(SpeakerEncoder):
    """Test double: the mean log power in 32 bands (the speech-like speakers differ in F0 and formants)."""

    name = "spectrum"
    sample_rate = 16000
    dim = 32

    def embed(self, wavs, sr):
        out = []
        for w in wavs:
            frames = np.lib.stride_tricks.sliding_window_view(np.pad(w, (0, 512)), 512)[::256]
            power = np.abs(np.fft.rfft(frames * np.hanning(512), axis=1)) ** 2
            bands = np.array_split(power.mean(axis=0)[1:], self.dim)
            v = np.log(np.array([b.mean() for b in bands]) + 1e-8)
            out.append(v - v.mean())
        return np.stack(out).astype(np.float32)


class DurationAsr(AsrBackend):
    """Test double: one word naming the length in tenths of a second, nothing for silence."""

    name = "duration-asr"

    def _transcribe(self, wavs):
        return ["" if np.abs(w).max() < 1e-3 else f"len{round(len(w) / 1600)}" for w in wavs]


def one_speaker(wav, sr, *, recording, num_speakers=None):
    """A wrong diarizer: the whole recording is one speaker."""
    return [Turn(recording, 0.0, len(wav) / sr, "everyone")]


def noise(wav, sr, key):
    """An anonymizer that hides every voice under the same loud noise (timing kept)."""
    return wav + np.random.default_rng(0).normal(0, 0.3, len(wav)).astype(np.float32), sr


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    source = make_source_corpus(tmp_path_factory.mktemp("source"), n_spk=10)
    out = tmp_path_factory.mktemp("conv")
    build_conversations(source, out, ConversationSettings(conversations=3, max_speakers=3, enroll_per_speaker=1,
                                                          overlaps=(0.0, 0.2, 0.2)), quiet=True)
    return out


@pytest.fixture(scope="module")
def identity(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("identity")
    return out, evaluate_conversations(corpus, out, anonymize=lambda w, sr, key: (w, sr), system="identity",
                                       encoders=(SpectrumEncoder(),), asr=DurationAsr(), n_boot=10, quiet=True)


def test_an_identity_anonymizer_changes_nothing(identity):
    _, r = identity
    assert set(r.attacks) == {"OO spectrum", "OA spectrum", "AA-lazy spectrum"}
    oo, oa = r.attacks["OO spectrum"], r.attacks["OA spectrum"]
    assert oo.eer_mean < 20, "the test encoder tells the speech-like speakers apart"
    assert oa.eer_mean == pytest.approx(oo.eer_mean)
    assert r.strongest in ("OA spectrum", "AA-lazy spectrum")
    orig, same = r.sides["original"], r.sides["identity"]
    assert orig.diarization.der == same.diarization.der == 0
    assert same.cpwer.cpwer == pytest.approx(orig.cpwer.cpwer)
    leak = orig.overlap["spectrum"]
    assert leak.regions > 0 and leak.cosine_talking > leak.cosine_others
    assert same.overlap["spectrum"] == leak


def test_cpwer_attributes_each_turn_to_its_reference_speaker(corpus, identity):
    _, r = identity
    ref = read_conversation_corpus(corpus).reference
    total = None
    for rec, segs in ref.items():
        hyp = speaker_texts((s.speaker, s.start, f"len{round((s.end - s.start) * 10)}") for s in segs)
        one = cpwer(speaker_texts((s.speaker, s.start, s.text) for s in segs), hyp, normalization="spoken")
        total = one if total is None else total + one
    assert r.sides["original"].cpwer.cpwer == pytest.approx(total.cpwer)
    assert r.sides["original"].cpwer.words == total.n_reference_words


def test_a_noise_anonymizer_hides_the_speakers(corpus, identity, tmp_path):
    r = evaluate_conversations(corpus, tmp_path, anonymize=noise, system="noise", encoders=(SpectrumEncoder(),),
                               n_boot=10, quiet=True)
    assert r.attacks["OA spectrum"].eer_mean > r.attacks["OO spectrum"].eer_mean + 20
    leak, orig = r.sides["noise"].overlap["spectrum"], r.sides["original"].overlap["spectrum"]
    assert leak.regions == orig.regions and leak.cosine_talking < orig.cosine_talking - 0.3


def test_a_wrong_diarizer_is_scored_against_the_reference(corpus, tmp_path):
    r = evaluate_conversations(corpus, tmp_path, diarizer=one_speaker, diarizer_name="one-speaker",
                               encoders=(SpectrumEncoder(),), n_boot=10, quiet=True)
    data = read_conversation_corpus(corpus)
    hyp = read_rttm(tmp_path / "original" / "hypothesis.rttm")
    expected = sum(corpus_diarization_errors(data.turns, hyp).values(), DiarizationErrors(0, 0, 0, 0))
    d = r.sides["original"].diarization
    assert d.diarizer == "one-speaker" and d.der == pytest.approx(expected.der) and d.der > 30
    n = [len({t.speaker for t in turns}) for turns in data.turns.values()]
    assert d.count_error == pytest.approx(np.mean(n) - 1) and d.count_exact == 0
    assert list(r.sides) == ["original"] and set(r.attacks) == {"OO spectrum"}


def test_results_files_name_the_models_and_lead_with_the_strongest_attack(identity):
    out, r = identity
    saved = json.loads((out / "results.json").read_text())
    assert saved["settings"]["encoders"] == ["spectrum"] and saved["settings"]["asr"] == "duration-asr"
    assert saved["strongest"] == r.strongest
    rows = list(csv.DictReader((out / "privacy.csv").open()))
    assert rows[0]["attack"] == r.strongest and rows[0]["encoder"] == "spectrum"
    diar = list(csv.DictReader((out / "diarization.csv").open()))
    assert {d["side"] for d in diar} == {"original", "identity"} and diar[-1]["recording"] == "all"
    assert list(csv.DictReader((out / "overlap.csv").open()))[0]["encoder"] == "spectrum"


def test_anonymized_recordings_must_all_be_there_and_keep_their_length(corpus, tmp_path):
    original = read_conversation_corpus(corpus).recordings
    recs = sorted(original.wav_scp)
    for rec in recs[1:]:
        wav, sr = load_audio(original.wav_scp[rec])
        write_wav(tmp_path / "anon" / f"{rec}.wav", wav[: len(wav) // 2] if rec == recs[-1] else wav, sr)
    with pytest.raises(DataError, match=f"recording '{recs[0]}' is missing"):
        read_recordings(tmp_path / "anon", original)
    wav, sr = load_audio(original.wav_scp[recs[0]])
    write_wav(tmp_path / "anon" / f"{recs[0]}.wav", wav, sr)
    with pytest.raises(DataError, match=f"{recs[-1]}.*timing kept"):
        read_recordings(tmp_path / "anon", original)


def test_trials_are_the_stretches_where_nobody_else_talks():
    segs = [Segment("r", 0.0, 3.0, "a", ""), Segment("r", 2.5, 5.0, "b", ""), Segment("r", 5.2, 5.9, "a", "")]
    assert trial_pieces(segs) == [("r-t000-0", "a", 0.0, 2.5), ("r-t001-0", "b", 3.0, 5.0)]
    assert overlap_regions(segs, min_s=0.5) == [("r-ov000", ("a", "b"), 2.5, 3.0)]
    assert overlap_regions(segs, min_s=0.6) == []


def test_bad_input_to_the_commands_is_one_line(corpus, tmp_path, capsys):
    from voxanon.cli import main

    assert main(["data", "conversations", str(tmp_path / "nothing"), str(tmp_path / "x")]) == 3
    assert "voxanon data synth" in capsys.readouterr().err
    assert main(["evaluate", "conversations", str(corpus), "--out", str(tmp_path / "r"), "--diarizer", "nope",
                 "--asr", "none"]) == 2
    assert "unknown diarizer 'nope'" in capsys.readouterr().err
    assert main(["evaluate", "conversations", str(corpus), "--out", str(tmp_path / "r"), "--asr", "none",
                 "--anonymized", str(tmp_path / "missing"), "--n-boot", "10", "--quiet"]) == 3
    assert "no such folder" in capsys.readouterr().err


@pytest.mark.slow
def test_the_command_runs_the_evaluation_with_ge2e(corpus, tmp_path, capsys):
    from voxanon.cli import main

    assert main(["evaluate", "conversations", str(corpus), "--out", str(tmp_path / "r"), "--asr", "none",
                 "--anonymized", str(corpus / "data/conversations"), "--anon-enroll", str(corpus / "data/enrolls"),
                 "--n-boot", "10", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("strongest attacker: ") and "AA-lazy ge2e" in out and "OO ge2e" in out
    saved = json.loads((tmp_path / "r/results.json").read_text())
    assert saved["settings"]["diarizer"] == "oracle" and saved["sides"]["anonymized"]["diarization"]["der"] == 0
