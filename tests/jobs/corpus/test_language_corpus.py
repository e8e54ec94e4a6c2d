"""Kokoro corpora in other languages: speakers from the language's packs, its sentences, a missing gender."""

import json

import pytest

from tests.jobs.corpus.test_kokoro_speakers import PACKS, installed
from voxanon.data import layout
from voxanon.data.debian_clips import find_clips, prompt_clips, prompt_sentences
from voxanon.data.kaldi import read_data_dir
from voxanon.data.sentences import WRITTEN_LANGUAGES, load_written_sentences
from voxanon.jobs.corpus.build import build_corpus
from voxanon.jobs.corpus.kokoro_speakers import assign_speakers, split_packs, voice_name
from voxanon.jobs.corpus.sets import (
    KOKORO_SIZES,
    CorpusPlanError,
    data_dirs,
    plan_corpus,
    speaker_needs,
)
from voxanon.jobs.corpus.voices import WARPS
from voxanon.metrics.text import error_unit, normalize_basic

prompts = pytest.mark.skipif(not prompt_clips(language="es"), reason="asterisk-core-sounds-es-wav not installed")


def _by_set(speakers):
    return {name: [s.spk for s in spks] for name, spks in speakers.items()}


@pytest.mark.parametrize("language, own", [("es", {"f": ["ef_dora"], "m": ["em_alex", "em_santa"]}),
                                           ("fr", {"f": ["ff_siwis"], "m": []}),
                                           ("it", {"f": ["if_sara"], "m": ["im_nicola"]}),
                                           ("zh", {"f": ["zf_xiaobei", "zf_xiaoni", "zf_xiaoxiao", "zf_xiaoyi"],
                                                   "m": ["zm_yunjian", "zm_yunxi", "zm_yunxia", "zm_yunyang"]}),
                                           ("ja", {"f": ["jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro"],
                                                   "m": ["jm_kumo"]})])
def test_a_languages_packs_are_its_evaluation_voices_and_every_other_voice_trains(language, own):
    # packs of a voice of the language under another language's prefix (the rule is by name: Hindi's hf_alpha is
    # kept out of the Japanese corpus's training side for jf_alpha's name, whatever it sounds like)
    same_voice = {"es": {"pf_dora", "pm_alex", "pm_santa", "am_santa"}, "ja": {"hf_alpha"}}.get(language, set())
    for gender in ("f", "m"):
        evaluation, training = split_packs(PACKS, gender, 0, language)
        assert evaluation == own[gender]
        # the Portuguese (and English) packs of the Spanish voices are the same voices: neither side has them
        assert set(training) == {p for p in PACKS if p[1] == gender} - set(evaluation) - same_voice


def test_spanish_speakers_are_disjoint_warped_same_gender_and_keep_train_apart():
    need = speaker_needs(KOKORO_SIZES["small"])
    speakers = assign_speakers(PACKS, need, 0, "es")
    ids = [s.spk for spks in speakers.values() for s in spks]
    assert len(ids) == len(set(ids))                                      # no speaker in two sets
    dev_test = speakers["dev"] + speakers["test"]
    for gender, per_split in (("f", 2), ("m", 6)):                       # 1 pack x 4 warps; (2 + 1 mixture) x 4
        for split in ("dev", "test"):
            assert sum(s.gender == gender for s in speakers[split]) == per_split
    for s in dev_test:
        assert s.warp in WARPS[s.gender] and s.spk.endswith(f"-w{round(s.warp * 100):03d}")
        assert all(p[0] == "e" and p[1] == s.gender for p in s.parents)   # Spanish packs of its own gender
    assert {s.spk for s in dev_test if len(s.parents) == 2} <= {f"m-em_alex-em_santa-w{w}" for w in
                                                                ("090", "095", "100", "105")}  # one mix a pair
    train_parents = {p for name in ("train", "emo") for s in speakers[name] for p in s.parents}
    assert not train_parents & {p for s in dev_test for p in s.parents}
    assert all(s.warp == 1.0 for name in ("train", "emo") for s in speakers[name])
    assert len(speakers["train"]) == 2 * need["train"]


def test_french_has_no_male_dev_or_test_speakers_and_a_language_without_packs_is_refused():
    speakers = assign_speakers(PACKS, speaker_needs(KOKORO_SIZES["small"]), 0, "fr")
    assert {s.gender for s in speakers["dev"] + speakers["test"]} == {"f"}
    assert {s.gender for s in speakers["train"]} == {"f", "m"}            # the attacker still trains on both
    with pytest.raises(CorpusPlanError, match="'fr' voice packs \\(none installed\\)"):
        assign_speakers([p for p in PACKS if p[0] != "f"], speaker_needs(KOKORO_SIZES["small"]), 0, "fr")
    with pytest.raises(CorpusPlanError, match="choose one of en, es, fr, it, zh, ja"):
        assign_speakers(PACKS, speaker_needs(KOKORO_SIZES["small"]), 0, "de")


@pytest.mark.parametrize("language", ["es", "fr", "ja"])
def test_accented_speakers_fill_dev_and_test_after_the_languages_own_and_train_on_other_voices(language):
    need = speaker_needs(KOKORO_SIZES["small"])
    native = assign_speakers(PACKS, need, 0, language)
    speakers = assign_speakers(PACKS, need, 0, language, accented=True)
    own, _ = zip(*(split_packs(PACKS, g, 0, language) for g in ("f", "m")))
    own = {p for packs in own for p in packs}
    for gender in ("f", "m"):
        for split in ("dev", "test"):
            mine = [s for s in speakers[split] if s.gender == gender]
            assert len(mine) == need[split]                              # the size's count, whatever the packs
            before = [s.spk for s in native[split] if s.gender == gender]
            assert [s.spk for s in mine[:len(before)]] == before         # the language's own speakers come first
            for s in mine[len(before):]:                                 # then other languages' voices, unwarped
                assert s.warp == 1.0 and not set(s.parents) & own and all(p[1] == gender for p in s.parents)
    dev_test = {voice_name(p) for name in ("dev", "test") for s in speakers[name] for p in s.parents}
    trained = {voice_name(p) for name in ("train", "emo") for s in speakers[name] for p in s.parents}
    assert not dev_test & trained                                        # by voice: pf_dora is ef_dora
    assert len(speakers["train"]) == 2 * need["train"]
    assert assign_speakers(PACKS, need, 0, language, accented=True) == speakers  # seeded
    assert assign_speakers(PACKS, need, 1, language, accented=True) != speakers


def test_accented_speakers_need_another_language_and_enough_training_voices(tmp_path, capsys):
    from voxanon.cli import main

    with pytest.raises(CorpusPlanError, match="English corpus's speakers are English voices"):
        build_corpus(tmp_path / "a", engine="kokoro", accented=True)
    assert main(["data", "synth", str(tmp_path / "b"), "--accented", "--size", "tiny"]) == 3  # the CLI passes it
    assert "English corpus's speakers are English voices" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
    with pytest.raises(CorpusPlanError, match="without accented speakers"):   # large: 130 training speakers
        assign_speakers(PACKS, speaker_needs(KOKORO_SIZES["large"]), 0, "es", accented=True)


def test_english_speakers_are_not_warped():
    speakers = assign_speakers(PACKS, speaker_needs(KOKORO_SIZES["small"]), 0)
    assert all(s.warp == 1.0 and "-w" not in s.spk for spks in speakers.values() for s in spks)


@prompts
def test_prompt_sentences_are_each_text_once_with_their_licence():
    sentences, info = prompt_sentences("es")
    keys = [normalize_basic(s.text) for s in sentences]
    assert len(keys) == len(set(keys)) and info["prompts"] - info["duplicates_dropped"] == len(sentences)
    assert info["duplicates_dropped"] > 0 and info["licence"] == "CC-BY-SA-3.0"
    assert all(s.text == s.transcript and not any(c.isdigit() for c in s.text) for s in sentences)
    assert any(s.words < 5 for s in sentences)  # every length: the corpus size chooses


@pytest.mark.parametrize("language", WRITTEN_LANGUAGES)
def test_written_sentences_are_spoken_without_spaces_and_fill_every_size(language):
    sentences, info = load_written_sentences(language)
    assert len({s.text for s in sentences}) == len(sentences) and info["sentences"] == len(sentences)
    assert info["licence"] == "CC0-1.0" and f"sentences_{language}.txt" in info["source"]
    for s in sentences:
        assert " " not in s.text and s.transcript.replace(" ", "") == s.text and s.words >= 2
        assert not any(c.isascii() and c.isalnum() for c in s.text)        # no digits or Latin letters
    for spec in KOKORO_SIZES.values():                                    # each speaker's sentences are distinct
        fit = [s for s in sentences if spec.min_words <= s.words <= spec.max_words]
        assert len(fit) >= max(spec.n_enroll + spec.n_trial, spec.train_utts, spec.emo_sentences)
    with pytest.raises(ValueError, match="not 'es'"):
        load_written_sentences("es")


def test_a_chinese_plan_reads_chinese_by_both_genders(tmp_path):
    spec = KOKORO_SIZES["small"]
    sentences, _ = load_written_sentences("zh")
    plan = plan_corpus(assign_speakers(PACKS, speaker_needs(spec), 0, "zh"), sentences, spec, 0, language="zh")
    assert {j.language for j in plan.jobs} == {"zh"} and {j.text for j in plan.jobs} <= {s.text for s in sentences}
    dirs = data_dirs(plan, str(tmp_path), {j.utt: 1.0 for j in plan.jobs})
    for split in layout.SPLITS:
        for gender in ("f", "m"):
            assert {t.target for t in dirs[layout.trials(split, gender)].trials} == {True, False}


@prompts
def test_a_french_plan_reads_french_and_has_empty_male_trial_sets(tmp_path):
    spec = KOKORO_SIZES["tiny"]
    sentences, _ = prompt_sentences("fr")
    plan = plan_corpus(assign_speakers(PACKS, speaker_needs(spec), 0, "fr"), sentences, spec, 0, language="fr")
    assert {j.language for j in plan.jobs} == {"fr"}
    dirs = data_dirs(plan, str(tmp_path), {j.utt: 1.0 for j in plan.jobs})
    for split in layout.SPLITS:
        assert dirs[layout.trials(split, "f")].trials and not dirs[layout.trials(split, "m")].utts


def test_a_language_needs_the_kokoro_engine_and_no_topics(tmp_path):
    with pytest.raises(CorpusPlanError, match="needs the kokoro engine"):
        build_corpus(tmp_path / "a", engine="formant", language="es")
    with pytest.raises(CorpusPlanError, match="topic sentences are English"):
        build_corpus(tmp_path / "b", engine="kokoro", language="es", topics=True)
    with pytest.raises(CorpusPlanError, match="no corpus in 'de'"):
        build_corpus(tmp_path / "c", engine="kokoro", language="de")
    assert not any(tmp_path.iterdir())


@installed
@prompts
@pytest.mark.slow
@pytest.mark.parametrize("language, genders, real, accented", [("es", ["f", "m"], "asterisk-allison-es", False),
                                                               ("fr", ["f"], None, False), ("ja", ["f", "m"], None, False),
                                                               ("fr", ["f", "m"], None, True)])
def test_tiny_corpus_records_its_language_and_trials_of_the_genders_it_has(tmp_path, language, genders, real,
                                                                          accented):
    desc = build_corpus(tmp_path, size="tiny", engine="kokoro", language=language, jobs=2, quiet=True,
                        emotion="styles", real=real is not None, accented=accented)
    saved = json.loads((tmp_path / "corpus.json").read_text())
    assert saved == json.loads(json.dumps(desc))
    assert saved.get("accented", False) == accented and ("(accented)" in saved["speaker_design"]) == accented
    assert (saved["language"], saved["error_unit"], saved["genders"]) == (language, error_unit(language), genders)
    assert ("no male speakers" in saved["genders_note"]) == (genders == ["f"])
    written = language in WRITTEN_LANGUAGES
    sentences = load_written_sentences(language)[0] if written else prompt_sentences(language)[0]
    assert saved["sentence_source"]["licence"] == ("CC0-1.0" if written else "CC-BY-SA-3.0")
    assert (f"sentences_{language}.txt" if written else f"core-sounds-{language}") in saved["sentences"]
    assert json.loads((tmp_path / ".voxanon-synth-settings.json").read_text())["language"] == language
    found = layout.find_layout(tmp_path)
    assert found.splits == ["dev", "test"]                               # an empty gender's sets keep splits whole
    for gender, path in zip(("f", "m"), found.trials["test"]):
        trials = read_data_dir(path)
        assert len(set(trials.utt2spk.values())) == (2 if gender in genders else 0)
        assert {t.target for t in trials.trials} == ({True, False} if gender in genders else set())
    texts = set(read_data_dir(tmp_path / "data" / "train").text.values())
    assert texts <= {s.transcript for s in sentences}                    # the transcripts (words apart in ja)
    if real:  # its real prompts beside the English clips (speakers enough for the real-voice check)
        speakers = set(read_data_dir(tmp_path / "data" / "real").utt2spk.values())
        assert real in speakers and {c.speaker for c in find_clips()} <= speakers
        speech = read_data_dir(found.real_speech)  # and its real-speech check: that language's prompts only
        assert set(speech.utt2spk.values()) == {real} and 0 < len(speech.wav_scp) <= 30
    else:
        assert found.real_speech is None
    other = "it" if language == "es" else "es"
    with pytest.raises(CorpusPlanError, match="other settings"):         # a corpus in one language is not another
        build_corpus(tmp_path, size="tiny", engine="kokoro", language=other, jobs=1, quiet=True, emotion="styles",
                     real=False)
