"""Scoring, enrollment averaging, gender split, caching and bad input of the privacy evaluation."""

import dataclasses
import json
import shutil

import numpy as np
import pytest
import soundfile as sf

from voxanon.audio.io import AudioError
from voxanon.cli.handlers.evaluate import format_privacy_table
from voxanon.data.kaldi import DataDir, DataError, Trial, read_data_dir, write_data_dir
from voxanon.evaluation.embeddings import EmbeddingCache, audio_key, extract_embeddings
from voxanon.evaluation.privacy import cosine_scores, evaluate_privacy, run_scenarios
from voxanon.evaluation.results import PrivacyResult, from_dict, to_dict
from voxanon.models.speaker import SpeakerEncoder

SCALE = 0.1
FLOOR = 1e-4


class CodeEncoder(SpeakerEncoder):
    """Test double: samples 1..dim of the audio *are* the embedding (up to scale); counts work done.

    The audio around them is a small non-zero floor, so the trimming of digital
    silence before embedding keeps them in place; peak normalisation only scales them.
    """

    sample_rate = 16000
    dim = 4

    def __init__(self, name="code-v1", fail_after=None):
        self.name, self.calls, self.embedded, self.fail_after = name, 0, 0, fail_after

    def embed(self, wavs, sr):
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise RuntimeError("simulated crash")
        self.calls += 1
        self.embedded += len(wavs)
        return np.stack([w[1:1 + self.dim] / SCALE for w in wavs]).astype(np.float32)


def _write(root, name, utt_vecs, utt2spk, spk2gender, trials=()):
    """A data dir whose utterance audio encodes the given vectors (float WAV)."""
    d = root / name
    (d / "wav").mkdir(parents=True)
    wav_scp = {}
    for utt, vec in utt_vecs.items():
        path = d / "wav" / f"{utt}.wav"
        sig = np.full(1600, FLOOR, dtype=np.float32)
        sig[1:5] = np.asarray(vec, dtype=np.float32) * SCALE
        sf.write(path, sig, 16000, subtype="FLOAT")
        wav_scp[utt] = str(path)
    spks = set(utt2spk.values())
    write_data_dir(DataDir(wav_scp=wav_scp, utt2spk=utt2spk,
                           spk2gender={s: g for s, g in spk2gender.items() if s in spks},
                           trials=[Trial(*t) for t in trials]), d)
    return d


@pytest.fixture
def corpus(tmp_path):
    """Two female and two male speakers; female trials separable, male trials inverted."""
    g = {"fa": "f", "fb": "f", "ma": "m", "mb": "m"}
    enroll = _write(tmp_path, "enrolls", {
        "fa-1": [1, 0, 0, 0], "fa-2": [0, 1, 0, 0],          # mean [.5, .5, 0, 0]
        "fb-1": [0, 0, 1, 0], "fb-2": [0, 0, 1, 0.05],
        "ma-1": [0, 0, 0, 1], "mb-1": [0.9, 0.1, 0, 0.2],
    }, {"fa-1": "fa", "fa-2": "fa", "fb-1": "fb", "fb-2": "fb", "ma-1": "ma", "mb-1": "mb"}, g)
    trials_f = _write(tmp_path, "trials_f", {"fa-t": [1, 1, 0, 0], "fb-t": [0, 0.2, 1, 0]},
                      {"fa-t": "fa", "fb-t": "fb"}, g,
                      [("fa", "fa-t", True), ("fa", "fb-t", False), ("fb", "fa-t", False), ("fb", "fb-t", True)])
    # male trial audio is swapped: each target trial looks like the other speaker
    trials_m = _write(tmp_path, "trials_m", {"ma-t": [1, 0, 0, 0.1], "mb-t": [0, 0, 0, 1]},
                      {"ma-t": "ma", "mb-t": "mb"}, g,
                      [("ma", "ma-t", True), ("ma", "mb-t", False), ("mb", "ma-t", False), ("mb", "mb-t", True)])
    # same audio bytes as ma-1 (float WAVs carry a write-time PEAK chunk, so writing twice may differ)
    shutil.copyfile(enroll / "wav" / "ma-1.wav", trials_m / "wav" / "mb-t.wav")
    return enroll, trials_f, trials_m


def test_enrollment_average_and_gender_split(corpus, tmp_path):
    enroll, tf, tm = corpus
    res = evaluate_privacy(enroll, [tf, tm], CodeEncoder(), n_boot=50, quiet=True)
    scores = {(s.enroll_spk, s.utt): s for s in res.scores}
    # enrollment model of fa is the mean [.5,.5,0,0]: cosine with [1,1,0,0] is 1
    assert scores[("fa", "fa-t")].score == pytest.approx(1.0, abs=1e-5)
    assert scores[("fb", "fa-t")].score == pytest.approx(0.0, abs=1e-5)
    assert scores[("ma", "ma-t")].gender == "m" and scores[("fa", "fb-t")].gender == "f"
    assert res.by_gender["f"].eer == pytest.approx(0.0)
    assert res.by_gender["m"].eer == pytest.approx(100.0)
    assert res.eer_mean == pytest.approx(50.0)
    assert res.by_gender["f"].n_target == 2 and res.by_gender["m"].n_nontarget == 2
    assert from_dict(PrivacyResult, json.loads(json.dumps(to_dict(res)))) == res  # serialisable, round trip
    assert "OO" in format_privacy_table({"OO": res})
    assert "strongest" not in format_privacy_table({"OO": res, "OA": res})  # OO attacks nothing anonymized
    weak = dataclasses.replace(res, eer_mean=61.5)
    text = format_privacy_table({"OO": res, "OA": weak, "AA-lazy": res})
    assert text.startswith("strongest attacker: AA-lazy (mean EER 50.00 %)") and "OA by 11.5" in text
    rows = [w[0] for w in map(str.split, text.splitlines()[1:]) if w and w[0] in ("OO", "OA", "AA-lazy")]
    assert rows[0] == "AA-lazy"  # its rows come first


@pytest.mark.parametrize("n_trials", [3, 40])  # sparse list (row-wise) and dense grid (matrix product)
def test_cosine_scores_match_loop(n_trials):
    rng = np.random.default_rng(0)
    models, tests = rng.normal(size=(5, 8)), rng.normal(size=(7, 8))
    mi, ti = rng.integers(0, 5, n_trials), rng.integers(0, 7, n_trials)
    ref = [models[a] @ tests[b] / np.linalg.norm(models[a]) / np.linalg.norm(tests[b]) for a, b in zip(mi, ti)]
    np.testing.assert_allclose(cosine_scores(models, mi, tests, ti), ref, rtol=1e-10)


def test_cache_second_run_computes_nothing(corpus, tmp_path):
    enroll, tf, tm = corpus
    cache = tmp_path / "cache"
    first = CodeEncoder()
    r1 = evaluate_privacy(enroll, [tf, tm], first, cache_dir=cache, n_boot=20, quiet=True)
    assert first.embedded == 9  # 10 utterances; mb-t has the same audio bytes as ma-1 (cached by content)
    again = CodeEncoder()
    r2 = evaluate_privacy(enroll, [tf, tm], again, cache_dir=cache, n_boot=20, quiet=True)
    assert again.calls == 0 and r2.eer_mean == r1.eer_mean
    other = CodeEncoder(name="code-v2")  # another model never reuses these embeddings
    evaluate_privacy(enroll, [tf], other, cache_dir=cache, n_boot=20, quiet=True)
    assert other.embedded > 0


def test_cache_resumes_after_crash(corpus, tmp_path):
    enroll, _, _ = corpus
    data = read_data_dir(enroll)
    crashing = CodeEncoder(fail_after=2)
    with pytest.raises(RuntimeError):
        extract_embeddings(data, crashing, cache_dir=tmp_path / "c", batch_size=2, quiet=True)
    resumed = CodeEncoder()
    extract_embeddings(data, resumed, cache_dir=tmp_path / "c", batch_size=2, quiet=True)
    assert resumed.embedded == 2  # only the batch that never finished


def test_cache_key_follows_content(tmp_path):
    a = tmp_path / "a.wav"
    sf.write(a, np.zeros(100, dtype=np.float32), 16000, subtype="FLOAT")
    k1 = audio_key(str(a))
    sf.write(a, np.full(100, 0.1, dtype=np.float32), 16000, subtype="FLOAT")  # same size, new content
    assert audio_key(str(a)) != k1
    assert audio_key(f"cat {a} |") != audio_key(str(a))
    cache = EmbeddingCache(tmp_path / "c", "m")
    cache.put(k1, np.ones(3))
    np.testing.assert_array_equal(cache.get(k1), np.ones(3))
    assert cache.get("0" * 64) is None


def _edit_trials(path, line):
    (path / "trials").write_text((path / "trials").read_text() + line)


def test_trial_with_missing_utterance(corpus):
    enroll, tf, _ = corpus
    _edit_trials(tf, "fa nosuchutt target\n")
    with pytest.raises(DataError, match="nosuchutt"):
        evaluate_privacy(enroll, [tf], CodeEncoder(), quiet=True)


def test_trial_with_unenrolled_speaker(corpus):
    enroll, tf, _ = corpus
    _edit_trials(tf, "zz fa-t nontarget\n")
    with pytest.raises(DataError, match="'zz' has no enrollment audio"):
        evaluate_privacy(enroll, [tf], CodeEncoder(), quiet=True)


def test_bad_gender_rejected(corpus):
    enroll, tf, _ = corpus
    (enroll / "spk2gender").write_text((enroll / "spk2gender").read_text().replace("fa f", "fa x"))
    with pytest.raises(DataError, match="gender"):
        evaluate_privacy(enroll, [tf], CodeEncoder(), quiet=True)


def test_unreadable_audio_named(corpus):
    enroll, tf, _ = corpus
    (tf / "wav" / "fb-t.wav").write_bytes(b"not audio")
    with pytest.raises(AudioError, match="fb-t"):
        evaluate_privacy(enroll, [tf], CodeEncoder(), quiet=True)


def test_scenarios(corpus, tmp_path):
    enroll, tf, tm = corpus
    res = run_scenarios(["OO", "OA", "AA-semi"], orig_enroll=enroll, orig_trials=[tf, tm],
                        anon_enroll=enroll, anon_trials=[tf], pretrained=CodeEncoder(),
                        attacker=CodeEncoder("retrained"), n_boot=20, quiet=True)
    assert set(res) == {"OO", "OA", "AA-semi"}
    assert res["AA-semi"].encoder == "retrained" and res["OA"].trials == [str(tf)]
    with pytest.raises(ValueError, match="anonymized"):
        run_scenarios(["AA-lazy"], orig_enroll=enroll, orig_trials=[tf], pretrained=CodeEncoder(), quiet=True)
    with pytest.raises(ValueError, match="checkpoint"):
        run_scenarios(["AA-semi"], orig_enroll=enroll, orig_trials=[tf], anon_enroll=enroll,
                      anon_trials=[tf], pretrained=CodeEncoder(), quiet=True)


def test_vpc_normalize_trims_digital_silence_and_peak_normalises():
    from voxanon.evaluation.embeddings import vpc_normalize

    wav = np.array([0, 0, 0.1, -0.2, 0, 0.05, 0, 0], dtype=np.float32)
    np.testing.assert_allclose(vpc_normalize(wav), [0.5, -1.0, 0, 0.25])
    np.testing.assert_array_equal(vpc_normalize(np.zeros(5)), np.zeros(5))


def test_zero_padded_louder_copy_embeds_like_the_original(tmp_path):
    class SumEncoder(SpeakerEncoder):
        """Test double whose embedding depends on length and level: (sum |w|, length)."""

        name, sample_rate, dim = "sum-v1", 16000, 2

        def embed(self, wavs, sr):
            return np.array([[np.abs(w).sum(), len(w)] for w in wavs], dtype=np.float32)

    rng = np.random.default_rng(0)
    speech = (0.1 * rng.standard_normal(800)).astype(np.float32)
    padded = np.concatenate([np.zeros(300), 3 * speech, np.zeros(500)]).astype(np.float32)
    wav_scp = {}
    for utt, sig in (("a", speech), ("b", padded)):
        sf.write(tmp_path / f"{utt}.wav", sig, 16000, subtype="FLOAT")
        wav_scp[utt] = str(tmp_path / f"{utt}.wav")
    data = DataDir(wav_scp=wav_scp, utt2spk={"a": "s", "b": "s"})
    out = extract_embeddings(data, SumEncoder(), cache_dir=tmp_path / "cache", quiet=True)
    np.testing.assert_allclose(out["a"], out["b"], rtol=1e-5)
    assert out["a"][1] == 800


def test_beyond_eer_metrics_score_every_trial_utterance_against_every_enrolled_speaker(tmp_path):
    # 3 enrolled speakers on orthogonal axes; B's first trial utterance lies nearer C's model than B's
    enroll = _write(tmp_path, "enroll", {"A-e": [1, 0, 0, 0], "B-e": [0, 1, 0, 0], "C-e": [0, 0, 1, 0]},
                    {"A-e": "A", "B-e": "B", "C-e": "C"}, {"A": "f", "B": "f", "C": "f"})
    vecs = {"A-1": [1, .1, 0, 0], "A-2": [1, 0, .2, 0], "B-1": [0, .4, 1, 0], "B-2": [.1, 1, 0, 0],
            "C-1": [0, .1, 1, 0], "C-2": [.2, 0, 1, 0]}
    trials = [(spk, utt, utt[0] == spk) for utt in vecs for spk in "ABC"]
    trial_dir = _write(tmp_path, "trials", vecs, {u: u[0] for u in vecs}, {"A": "f", "B": "f", "C": "f"}, trials)
    res = evaluate_privacy(enroll, [trial_dir], CodeEncoder())
    b = res.beyond
    assert b is not None and b.n_speakers == 3 and b.n_trials == 3 and b.calibration_trials == 3
    # the evaluated half is each speaker's first utterance (A-1, B-1, C-1): B-1 ranks B second
    assert b.rank1_linkability == pytest.approx(200 / 3) and b.rank1_linkability_chance == pytest.approx(100 / 3)
    assert from_dict(PrivacyResult, json.loads(json.dumps(to_dict(res)))).beyond == b


def test_beyond_eer_metrics_need_two_trial_utterances_of_a_speaker(tmp_path):
    enroll = _write(tmp_path, "enroll", {"A-e": [1, 0, 0, 0], "B-e": [0, 1, 0, 0]}, {"A-e": "A", "B-e": "B"},
                    {"A": "f", "B": "m"})
    vecs = {"A-1": [1, .1, 0, 0], "B-1": [0, 1, .1, 0]}
    trials = [(spk, utt, utt[0] == spk) for utt in vecs for spk in "AB"]
    trial_dir = _write(tmp_path, "trials", vecs, {u: u[0] for u in vecs}, {"A": "f", "B": "m"}, trials)
    assert evaluate_privacy(enroll, [trial_dir], CodeEncoder()).beyond is None


def test_an_empty_gender_set_is_left_out_and_a_set_without_trials_is_still_refused(corpus, tmp_path):
    """A corpus in a language without packs of one gender has an empty trial set of that gender."""
    enroll, tf, _ = corpus
    empty = tmp_path / "trials_m_empty"
    empty.mkdir()
    (empty / "wav.scp").write_text("")
    res = evaluate_privacy(enroll, [tf, empty], CodeEncoder(), n_boot=50, quiet=True)
    assert set(res.by_gender) == {"f"} and res.eer_mean == pytest.approx(0.0) and res.fairness is None
    with pytest.raises(DataError, match="hold no utterances"):
        evaluate_privacy(enroll, [empty], CodeEncoder(), n_boot=50, quiet=True)
    (tf / "trials").unlink()  # utterances but no trial list: still an error
    with pytest.raises(DataError, match="no trials"):
        evaluate_privacy(enroll, [tf, empty], CodeEncoder(), n_boot=50, quiet=True)
