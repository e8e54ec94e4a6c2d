"""The conversation corpus: speakers, turns, overlap, held-out enrollment, determinism, bad settings."""

import json

import numpy as np
import pytest

from tests.helpers.conversation_corpus import make_source_corpus
from voxanon.audio.io import load_audio
from voxanon.data.kaldi import read_data_dir
from voxanon.data.rttm import read_rttm
from voxanon.data.stm import read_stm
from voxanon.errors import ConfigError, DataError
from voxanon.jobs.corpus.conversations import (
    ConversationSettings,
    SourceUtt,
    build_conversations,
    overlap_ratio,
    place_turns,
    plan_conversations,
)

SETTINGS = ConversationSettings(conversations=3, max_speakers=3, turns_per_speaker=3, enroll_per_speaker=1)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return make_source_corpus(tmp_path_factory.mktemp("source"))


@pytest.fixture(scope="module")
def built(source, tmp_path_factory):
    out = tmp_path_factory.mktemp("conv")
    return out, build_conversations(source, out, SETTINGS, quiet=True)


def test_layout_reference_and_held_out_enrollment(built):
    out, desc = built
    conv = read_data_dir(out / "data/conversations")
    enroll = read_data_dir(out / "data/enrolls")
    rttm, stm = read_rttm(out / "data/conversations/reference.rttm"), read_stm(out / "data/conversations/reference.stm")
    assert sorted(conv.wav_scp) == sorted(rttm) == sorted(stm) == sorted(desc["recordings"])
    speakers = [s for r in desc["recordings"].values() for s in r["speakers"]]
    assert len(speakers) == len(set(speakers)), "each speaker in one conversation only"
    assert sorted(speakers) == sorted(enroll.spk2utt) and set(enroll.spk2gender) == set(speakers)
    used = {seg.text for segs in stm.values() for seg in segs}
    assert not used & set(enroll.text.values()), "enrollment utterances never appear in a conversation"
    for rec, info in desc["recordings"].items():
        assert 2 <= len(info["speakers"]) <= 3
        assert {t.speaker for t in rttm[rec]} == set(info["speakers"])
        wav, sr = load_audio(conv.wav_scp[rec])
        assert sr == 16000 and len(wav) / sr == pytest.approx(float(conv.utt2dur[rec]), abs=1e-3)
        assert max(t.end for t in rttm[rec]) < len(wav) / sr
        assert [(t.start, t.speaker) for t in rttm[rec]] == [(s.start, s.speaker) for s in stm[rec]]


def test_overlap_ratios_cycle_and_are_reached(built):
    _, desc = built
    targets = [r["overlap_target"] for r in desc["recordings"].values()]
    assert targets == [0.0, 0.1, 0.2]
    for r in desc["recordings"].values():
        assert r["overlap"] == pytest.approx(r["overlap_target"], abs=0.03)


def test_speech_is_where_the_reference_says(built):
    out, _ = built
    conv = read_data_dir(out / "data/conversations")
    rttm = read_rttm(out / "data/conversations/reference.rttm")
    rec = sorted(conv.wav_scp)[0]
    wav, sr = load_audio(conv.wav_scp[rec])
    first = rttm[rec][0]
    silence = wav[:int(first.start * sr) - 10]
    speech = wav[int(first.start * sr):int(first.end * sr)]
    assert np.sqrt(np.mean(silence ** 2)) < 1e-4 < np.sqrt(np.mean(speech ** 2))


def test_the_build_is_deterministic_and_the_seed_matters(source, built, tmp_path):
    out, desc = built
    again = build_conversations(source, tmp_path / "again", SETTINGS, quiet=True)
    assert (tmp_path / "again/data/conversations/reference.rttm").read_bytes() == \
        (out / "data/conversations/reference.rttm").read_bytes()
    assert again["recordings"] == desc["recordings"]
    other = json.dumps(build_conversations(source, tmp_path / "other",
                                           ConversationSettings(**{**SETTINGS.__dict__, "seed": 1}),
                                           quiet=True)["recordings"])
    assert other != json.dumps(desc["recordings"])


def test_nobody_overlaps_themselves_and_three_never_talk_at_once():
    utts = [SourceUtt(f"u{i}", spk, "", "", d) for i, (spk, d) in
            enumerate([("a", 2.0), ("b", 1.0), ("a", 3.0), ("a", 1.5), ("b", 2.5), ("c", 1.2)])]
    conv = place_turns("r", utts, 0.3, ConversationSettings())
    turns = conv.turns
    for x, y in zip(turns, turns[1:]):
        if x.source.speaker == y.source.speaker:
            assert y.start >= x.end
    for i, t in enumerate(turns[2:], 2):
        assert t.start >= turns[i - 2].end - 1e-9
    assert conv.overlap == pytest.approx(overlap_ratio(list(turns)))


def test_too_few_speakers_and_bad_settings_are_one_clear_line(source):
    from voxanon.jobs.corpus.conversations import read_sources, source_sets

    speakers, _ = read_sources(source_sets(source))
    with pytest.raises(DataError, match="need more speakers"):
        plan_conversations(speakers, ConversationSettings(conversations=10, enroll_per_speaker=1))
    with pytest.raises(ConfigError, match="overlap"):
        plan_conversations(speakers, ConversationSettings(overlaps=(1.5,)))
    with pytest.raises(ConfigError, match="speakers per conversation"):
        plan_conversations(speakers, ConversationSettings(min_speakers=1))


def test_a_folder_without_a_corpus_is_refused(tmp_path):
    with pytest.raises(DataError, match="voxanon data synth"):
        build_conversations(tmp_path, tmp_path / "out", quiet=True)
