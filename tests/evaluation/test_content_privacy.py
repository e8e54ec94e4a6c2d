"""Content-based re-identification (C-EER) on generated transcripts: own topics vs one shared sentence pool."""

import json

import numpy as np
import pytest
import soundfile as sf

from voxanon.cli import main
from voxanon.data.kaldi import DataDir, Trial, read_data_dir, write_data_dir
from voxanon.evaluation.content_privacy import (
    asr_transcriber,
    evaluate_content_privacy,
    reference_transcripts,
)
from voxanon.evaluation.results import ContentPrivacyResult, from_dict, to_dict
from voxanon.models.asr import AsrBackend
from voxanon.models.text_speaker import (
    TextEncoderError,
    load_text_encoder,
    train_text_encoder,
)

FUNCTION_WORDS = ["the", "a", "of", "and", "to", "in", "was", "we"]


def _vocab(rng, n=25):
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, size=rng.integers(4, 9))) for _ in range(n)]


def _sentence(rng, words):
    return " ".join(rng.choice(words + FUNCTION_WORDS, size=8))


def _speakers(prefix, n):
    return [(f"{prefix}{g}{i}", g) for g in "fm" for i in range(n)]


def make_corpus(root, *, own_topics, seed=0, n_train=6, n_test=4, utts=8):
    """train / enroll / trials_f / trials_m data dirs; with ``own_topics`` each speaker talks about one topic.

    Test speakers are not training speakers; test speaker k shares the topic of training speaker k (as a
    topic-classifier attacker meets new speakers on known topics); without own topics every sentence comes
    from one shared pool.
    """
    rng = np.random.default_rng(seed)
    topics = [_vocab(rng) for _ in range(2 * n_train)]
    pool = [_sentence(rng, sum(topics, [])) for _ in range(40)]

    def data(spks, offset):
        d = DataDir()
        for k, (spk, g) in enumerate(spks):
            d.spk2gender[spk] = g
            for n in range(utts):
                utt = f"{spk}-{n:03d}"
                d.wav_scp[utt] = f"/nonexistent/{utt}.wav"
                d.utt2spk[utt] = spk
                d.text[utt] = _sentence(rng, topics[offset + k]) if own_topics else pool[rng.integers(len(pool))]
        return d

    train = data(_speakers("tr", n_train // 2), 0)
    test = data(_speakers("te", n_test // 2), 0)
    enroll_utts = [u for u in test.utts if int(u[-3:]) < 3]
    enroll = test.subset(enroll_utts)
    paths = {"train": write_data_dir(train, root / "train"), "enroll": write_data_dir(enroll, root / "enroll")}
    rest = [u for u in test.utts if u not in set(enroll_utts)]
    for g in "fm":
        spks = [s for s, gg in test.spk2gender.items() if gg == g]
        utts_g = [u for u in rest if test.gender_of_utt(u) == g]
        sub = test.subset(utts_g)
        sub.trials = [Trial(s, u, test.utt2spk[u] == s) for s in spks for u in utts_g]
        paths[f"trials_{g}"] = write_data_dir(sub, root / f"trials_{g}")
    return paths


def _evaluate(p, **kw):
    return evaluate_content_privacy(p["train"], p["enroll"], [p["trials_f"], p["trials_m"]], reference_transcripts,
                                    "reference", n_boot=50, **kw)


def test_own_topics_give_a_low_c_eer(tmp_path):
    res = _evaluate(make_corpus(tmp_path, own_topics=True))
    assert res.eer_mean < 10
    assert set(res.by_gender) == {"f", "m"} and res.missing == {} and res.transcripts == "reference"


def test_shared_sentence_pool_is_near_chance(tmp_path):
    res = _evaluate(make_corpus(tmp_path, own_topics=False, n_test=10))
    assert 35 < res.eer_mean < 65


def test_deterministic_and_json_round_trip(tmp_path):
    p = make_corpus(tmp_path, own_topics=True)
    a, b = _evaluate(p), _evaluate(p)
    assert a == b
    assert from_dict(ContentPrivacyResult, json.loads(json.dumps(to_dict(a)))) == a


def test_missing_transcript_is_reported_not_fatal(tmp_path):
    p = make_corpus(tmp_path, own_topics=True)
    text = (p["trials_f"] / "text").read_text().splitlines()
    dropped = text[0].split()[0]
    (p["trials_f"] / "text").write_text("\n".join(text[1:]) + "\n")
    res = _evaluate(p)
    assert dropped in res.missing and "no line in text" in res.missing[dropped]
    n = sum(m.n_target + m.n_nontarget for m in res.by_gender.values())
    assert n == 2 * 2 * 2 * 5 - 2  # (2 spk x 10 utts per gender) minus the dropped utterance's 2 trials


def test_encoder_save_load_and_errors(tmp_path):
    enc = train_text_encoder("tfidf", ["red apples here", "green pears there"], ["a", "b"])
    enc.save(tmp_path / "enc.npz")
    back = load_text_encoder(f"tfidf:{tmp_path / 'enc.npz'}")
    assert back.name == enc.name
    np.testing.assert_allclose(back.embed(["red apples"]), enc.embed(["red apples"]))
    with pytest.raises(TextEncoderError, match="at least 2 training speakers"):
        train_text_encoder("tfidf", ["x y"], ["a"])
    with pytest.raises(TextEncoderError, match="not found"):
        load_text_encoder("tfidf:/nonexistent.npz")
    (tmp_path / "bad.npz").write_bytes(b"junk")
    with pytest.raises(TextEncoderError, match="not a tfidf text encoder file"):
        load_text_encoder(f"tfidf:{tmp_path / 'bad.npz'}")


def test_cli(tmp_path, capsys):
    p = make_corpus(tmp_path, own_topics=True)
    args = ["evaluate", "content-privacy", "--train", str(p["train"]), "--enroll", str(p["enroll"]),
            "--trials", str(p["trials_f"]), str(p["trials_m"]), "--n-boot", "20", "--out", str(tmp_path / "r.json")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "C-EER (reference)" in out and "mean" in out
    assert json.loads((tmp_path / "r.json").read_text())["transcripts"] == "reference"
    assert main([*args[:3], str(tmp_path / "nowhere"), *args[4:]]) == 3
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "nowhere" in err


class LookupAsr(AsrBackend):
    """A recogniser for generated audio: each utterance is a constant level that names its transcript."""

    name = "lookup-asr"

    def __init__(self, texts):
        self.texts = texts

    def _transcribe(self, wavs):
        return [self.texts[int(round(float(w[0]) * 10000))] for w in wavs]


def test_asr_transcripts_through_the_cache(tmp_path):
    p = make_corpus(tmp_path, own_topics=True)
    texts = []
    for name in ("train", "enroll", "trials_f", "trials_m"):
        d = read_data_dir(p[name])
        lines = []
        for utt in d.utts:
            wav = tmp_path / "wav" / f"{utt}.wav"
            if not wav.exists():
                wav.parent.mkdir(exist_ok=True)
                sf.write(wav, np.full(1600, (len(texts) + 1) / 10000, np.float32), 16000, subtype="FLOAT")
                texts.append(d.text[utt])
            lines.append(f"{utt} {wav}\n")
        (p[name] / "wav.scp").write_text("".join(lines))
    asr = LookupAsr(dict(enumerate(texts, start=1)))
    lost = sorted(read_data_dir(p["trials_m"]).utts)[0]
    (tmp_path / "wav" / f"{lost}.wav").unlink()
    run = asr_transcriber(asr, tmp_path / "cache", quiet=True)
    res = evaluate_content_privacy(p["train"], p["enroll"], [p["trials_f"], p["trials_m"]], run, asr.name, n_boot=20)
    assert res.transcripts == "lookup-asr" and res.eer_mean < 10
    assert list(res.missing) == [lost] and str(p["trials_m"]) in res.missing[lost]
    assert len(list((tmp_path / "cache" / "lookup-asr").glob("*.txt"))) == len(texts) - 1
    again = evaluate_content_privacy(p["train"], p["enroll"], [p["trials_f"], p["trials_m"]], run, asr.name,
                                     n_boot=20)
    assert again.eer_mean == res.eer_mean


def test_evaluator_contract(tmp_path):
    from voxanon.evaluation.content_privacy import ContentPrivacyEvaluator
    from voxanon.evaluation.evaluator import Env, NoOptions, RunSettings, SystemData

    p = make_corpus(tmp_path, own_topics=True)
    run = RunSettings(splits=("test",), n_boot=20, seed=0, asr="whisper-tiny",
                      wer_normalization="vpc", pretrained="ge2e")
    evs = ContentPrivacyEvaluator.plan(run, NoOptions())
    assert [e.slot for e in evs] == [("reference", "test"), ("whisper-tiny", "test")]
    sets = {"train": p["train"], "test_enrolls": p["enroll"], "test_trials_f": p["trials_f"],
            "test_trials_m": p["trials_m"]}
    data = SystemData(label="original", anonymized=False, sets=sets, original=sets)
    assert evs[0].applies(data) and evs[0].models(data) == {} and evs[1].models(data) == {"asr": "whisper-tiny"}
    assert evs[0].key(data, 0)["inputs"].keys() == {"train", "enroll", "trials_f", "trials_m"}
    res = evs[0].run(data, Env(cache_dir=tmp_path / "cache", quiet=True))
    assert isinstance(res, ContentPrivacyResult) and res.eer_mean < 10
