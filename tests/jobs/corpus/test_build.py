import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.helpers.audio import tree_bytes
from voxanon.data.kaldi import read_data_dir
from voxanon.data.sentences import (
    load_sentences,
    load_topic_sentences,
    normalize_transcript,
    topic_sentences_digest,
)
from voxanon.jobs.corpus.build import _settings, build_corpus
from voxanon.jobs.corpus.render import set_level, trim, warp
from voxanon.jobs.corpus.sets import (
    EMOTIONS,
    FORMANT_SIZES,
    CorpusPlanError,
    SizeSpec,
    assign_formant_speakers,
    data_dirs,
    plan_corpus,
)
from voxanon.jobs.corpus.voices import WARPS, BaseVoice, base_voices, speaker_pool
from voxanon.models.tts import cli_engines as tts
from voxanon.textnorm import number_words

FAKE_VOICES = ([BaseVoice("flite", "slt", "f", "slt")] + [BaseVoice("espeak-ng", f"en-us+f{i}", "f") for i in range(9)]
               + [BaseVoice("flite", "awb", "m", "awb")] + [BaseVoice("espeak-ng", f"en-us+m{i}", "m") for i in range(9)])
TINY = SizeSpec("tiny", speakers=3, enrolled=2, n_enroll=1, n_trial=1, train_speakers=1, train_utts=2,
                emo_speakers=1, emo_sentences=1)


def _plan_dirs(spec=FORMANT_SIZES["small"], seed=0):
    plan = plan_corpus(assign_formant_speakers(FAKE_VOICES, spec, seed), load_sentences(), spec, seed)
    return plan, data_dirs(plan, "/corpus", {j.utt: 1.0 for j in plan.jobs})


def test_sentences_are_vpc_normalised():
    sentences = load_sentences()
    assert len(sentences) >= 300
    assert len({s.transcript for s in sentences}) == len(sentences)
    for s in sentences:
        assert s.transcript == s.transcript.upper()
        assert all(c.isalpha() or c in " '" for c in s.transcript), s.transcript
    assert normalize_transcript("At 7, it's Bob's turn!") == "AT SEVEN IT'S BOB'S TURN"
    assert number_words(40) == "forty" and number_words(305) == "three hundred and five"
    # any size (a Whisper word such as "1990" or "10,000" used to raise), as it is said
    assert normalize_transcript("In 1990, 10,000 people") == "IN NINETEEN NINETY TEN THOUSAND PEOPLE"
    assert number_words(2024) == "two thousand and twenty four"


def test_speaker_pool_spreads_voices_and_keeps_gender_side():
    pool = speaker_pool(FAKE_VOICES, "f", seed=3)
    assert len(pool) == 10 * len(WARPS["f"]) and len({s.spk for s in pool}) == len(pool)
    assert [s.base.voice for s in pool[:4]] == ["slt"] * 4  # recorded voice first, all its warps
    assert len({s.base.voice for s in pool[4:13]}) == 9  # then one per formant voice
    assert all(s.warp >= 0.95 for s in pool)
    assert all(s.warp <= 1.05 for s in speaker_pool(FAKE_VOICES, "m", seed=3))
    assert [s.spk for s in pool] == [s.spk for s in speaker_pool(FAKE_VOICES, "f", seed=3)]
    assert [s.spk for s in pool] != [s.spk for s in speaker_pool(FAKE_VOICES, "f", seed=4)]


def test_trials_follow_vpc_construction():
    plan, dirs = _plan_dirs()
    spec = FORMANT_SIZES["small"]
    for name in ("dev", "test"):
        enroll = dirs[f"{name}_enrolls"]
        enrolled = set(enroll.utt2spk.values())
        assert len(enrolled) == 2 * spec.enrolled
        for g in ("f", "m"):
            td = dirs[f"{name}_trials_{g}"]
            assert set(td.spk2gender.values()) == {g}
            assert len(set(td.utt2spk.values())) == spec.speakers
            models = {s for s in enrolled if enroll.spk2gender[s] == g}
            assert {(t.enroll_spk, t.utt) for t in td.trials} == {(s, u) for s in models for u in td.utts}
            assert all(t.target == (td.utt2spk[t.utt] == t.enroll_spk) for t in td.trials)
            assert sum(t.target for t in td.trials) == spec.enrolled * spec.n_trial
            impostors = set(td.utt2spk.values()) - enrolled
            assert len(impostors) == spec.speakers - spec.enrolled
            assert not set(td.utts) & set(enroll.utts)
            for spk in models:  # enrollment and trial sentences of a speaker differ
                said = [enroll.text[u] for u in enroll.spk2utt[spk]] + [td.text[u] for u in td.spk2utt[spk]]
                assert len(set(said)) == len(said)
    train = set(dirs["train"].utt2spk.values())
    others = {s for n, d in dirs.items() if n != "train" for s in d.utt2spk.values()}
    assert len(train) == 2 * spec.train_speakers and not train & others


def test_emotion_set_balanced_with_iemocap_like_folds():
    _, dirs = _plan_dirs()
    emo = dirs["emo"]
    counts = {e: list(emo.utt2emo.values()).count(e) for e in EMOTIONS}
    assert set(counts) == {"neu", "sad", "ang", "hap"} and len(set(counts.values())) == 1
    assert len(emo.utt2emo) == len(emo.utts)
    folds = {}
    for spk, fold in emo.spk2fold.items():
        folds.setdefault(fold, []).append(emo.spk2gender[spk])
    assert sorted(folds) == ["1", "2", "3", "4", "5"]
    assert all(sorted(g) == ["f", "m"] for g in folds.values())


def test_plan_is_seeded_and_order_free():
    a, _ = _plan_dirs(seed=1)
    b, _ = _plan_dirs(seed=1)
    c, _ = _plan_dirs(seed=2)
    assert a.jobs == b.jobs
    assert {j.utt: j.text for j in a.jobs} != {j.utt: j.text for j in c.jobs}


def test_topic_corpus_gives_each_speaker_one_topic_dealt_evenly():
    topics = load_topic_sentences()
    assert len(topics) == 12 and all(len(v) == 20 for v in topics.values())
    general = {s.transcript for s in load_sentences()}
    assert not general & {s.transcript for v in topics.values() for s in v}
    spec = FORMANT_SIZES["small"]
    speakers = assign_formant_speakers(FAKE_VOICES, spec, 0)
    plan = plan_corpus(speakers, load_sentences(), spec, 0, topics)
    by_topic = {t: {s.transcript for s in v} for t, v in topics.items()}
    for job in plan.jobs:
        if job.set == "emo":
            assert job.spk not in plan.topics and job.transcript in general
        else:
            assert job.transcript in by_topic[plan.topics[job.spk]], job
    for set_name in ("dev", "test", "train"):
        for g in ("f", "m"):
            dealt = [plan.topics[s.spk] for s in speakers[set_name] if s.gender == g]
            counts = [dealt.count(t) for t in set(dealt)]
            assert max(counts) - min(counts) <= 1 and len(set(dealt)) == min(len(dealt), len(topics))
    assert plan.jobs == plan_corpus(speakers, load_sentences(), spec, 0, topics).jobs
    plain = plan_corpus(speakers, load_sentences(), spec, 0)
    assert plain.topics == {} and "topics" not in _settings(plain)
    assert _settings(plan)["topics"] == topic_sentences_digest()   # other topic sentences: another folder
    big = SizeSpec("big", n_enroll=15, n_trial=10)
    with pytest.raises(CorpusPlanError, match=r"size 'big': topic '\w+' has only \d+ sentences"):
        plan_corpus(assign_formant_speakers(FAKE_VOICES, big, 0), load_sentences(), big, 0, topics)


def test_too_few_voices_is_a_clear_error():
    with pytest.raises(CorpusPlanError, match="speakers"):
        assign_formant_speakers(FAKE_VOICES[:2] + FAKE_VOICES[6:8], FORMANT_SIZES["small"], 0)


def test_warp_scales_duration_and_level_is_set():
    sr = 16000
    wav = np.sin(2 * np.pi * 200 * np.arange(sr) / sr).astype(np.float32) * 0.5
    assert len(warp(wav, sr, 1.1)) == pytest.approx(sr / 1.1, abs=2)
    padded = np.concatenate([np.zeros(sr), wav, np.zeros(sr)])
    assert len(trim(padded, sr, margin_s=0.1)) == pytest.approx(1.2 * sr, abs=0.02 * sr)
    out = set_level(wav, sr, 0.05)
    assert np.sqrt(np.mean(out ** 2)) == pytest.approx(0.05, rel=0.01)
    assert np.max(np.abs(set_level(wav, sr, 2.0))) <= 0.98 + 1e-6


needs_engines = pytest.mark.skipif(
    not (tts.engine_available("flite") and tts.engine_available("espeak-ng")),
    reason="needs the Debian packages flite and espeak-ng")


def _tiny_voices():
    return [v for v in base_voices() if v.engine in ("flite", "espeak-ng")]


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("synth") / "a"
    desc = build_corpus(root, size=TINY, seed=5, jobs=2, quiet=True, real=False, voices=_tiny_voices())
    return root, desc


@needs_engines
@pytest.mark.slow
def test_tiny_corpus_is_consistent(tiny_corpus):
    root, desc = tiny_corpus
    names = ["dev_enrolls", "dev_trials_f", "dev_trials_m", "test_enrolls", "test_trials_f", "test_trials_m",
             "train", "emo"]
    for name in names:
        data = read_data_dir(root / "data" / name)  # validates
        assert (root / "data" / name / "SYNTHETIC").is_file() and (root / "data" / name / "spk2utt").is_file()
        for utt, path in data.wav_scp.items():
            assert Path(path).is_absolute() and Path(path).is_relative_to(root / "wav")
            info = sf.info(path)
            assert info.samplerate == 16000 and info.subtype == "PCM_16"
            assert float(data.utt2dur[utt]) == pytest.approx(info.duration, abs=1e-3)
        assert set(data.text) == set(data.utts)
    saved = json.loads((root / "corpus.json").read_text())
    assert saved == json.loads(json.dumps(desc)) and saved["synthetic"] is True and saved["seed"] == 5
    assert saved["sets"]["dev_trials_f"]["trials"] == {"target": 2, "nontarget": 4}
    assert saved["sets"]["emo"]["emotions"] == {e: 2 for e in EMOTIONS}
    assert saved["sets"]["train"]["speakers"] == {"f": 1, "m": 1}


@needs_engines
@pytest.mark.slow
def test_build_is_deterministic_resumable_and_guarded(tiny_corpus, tmp_path):
    root, _ = tiny_corpus
    other = tmp_path / "b"
    build_corpus(other, size=TINY, seed=5, jobs=1, quiet=True, real=False, voices=_tiny_voices())
    assert tree_bytes(other) == tree_bytes(root)
    victim = next((other / "wav/dev").rglob("*.wav"))
    victim.unlink()
    build_corpus(other, size=TINY, seed=5, jobs=1, quiet=True, real=False, voices=_tiny_voices())
    assert tree_bytes(other) == tree_bytes(root)
    with pytest.raises(CorpusPlanError, match="other settings"):
        build_corpus(other, size=TINY, seed=6, jobs=1, quiet=True, real=False, voices=_tiny_voices())


@needs_engines
@pytest.mark.slow
def test_topic_build_records_each_speakers_topic_and_refuses_a_plain_rebuild(tiny_corpus, tmp_path):
    root = tmp_path / "topics"
    desc = build_corpus(root, size=TINY, seed=5, jobs=2, quiet=True, real=False, voices=_tiny_voices(), topics=True)
    pools = {t: {s.transcript for s in v} for t, v in load_topic_sentences().items()}
    train = read_data_dir(root / "data" / "train")
    for utt, spk in train.utt2spk.items():
        assert train.text[utt] in pools[desc["speakers"][spk]["topic"]]
    assert "topic_sentences_en.txt" in desc["sentences"]
    assert all(("topic" in s) == (s["set"] != "emo") for s in desc["speakers"].values())
    # the emo set says what it says in the plain corpus
    emo = read_data_dir(root / "data" / "emo")
    assert emo.text == read_data_dir(tiny_corpus[0] / "data" / "emo").text
    with pytest.raises(CorpusPlanError, match="other settings"):
        build_corpus(root, size=TINY, seed=5, jobs=1, quiet=True, real=False, voices=_tiny_voices())
