"""ASR learnability: CTC decoding, a tiny overfit on real speech, the evaluator trained on A and tested on B."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

from tests.helpers.audio import LIBRIVOX
from tests.helpers.benchmark_results import (
    RUN,
    benchmark_results,
    ranked,
    summary_csv_rows,
)
from voxanon.cli import main
from voxanon.data import layout
from voxanon.data.kaldi import read_data_dir, write_data_dir
from voxanon.evaluation.ctc_training import ctc_features, train_ctc
from voxanon.evaluation.evaluator import (
    OPTIONAL_EVALUATORS,
    Env,
    NoOptions,
    SystemData,
    evaluator_class,
)
from voxanon.evaluation.learnability import (
    AsrLearnabilityEvaluator,
    AsrLearnabilitySettings,
)
from voxanon.evaluation.results import LearnabilityResult, from_dict, to_dict
from voxanon.jobs.benchmark.profiles import PROFILES
from voxanon.jobs.report.write import write_outputs
from voxanon.metrics import wer
from voxanon.models.asr import AsrError, load_asr
from voxanon.models.asr.ctc import (
    BLANK,
    VOCAB,
    greedy_decode,
    load_frontend,
    text_to_ids,
)
from voxanon.training import ctc
from voxanon.training.ctc import CtcSettings

#: a small, fast head on frozen Whisper features, made to overfit (no dropout, no masks, one utterance a step)
TINY = CtcSettings("whisper-tiny:4", hidden=128, layers=1, dropout=0.0, epochs=60, batch_size=1, lr=3e-3,
                 time_masks=0, feature_masks=0)


def _posterior(symbols: str) -> np.ndarray:
    """Log-probabilities whose best path is ``symbols`` ('_' = blank), one frame per character."""
    ids = [BLANK if c == "_" else VOCAB.index(c) for c in symbols]
    scores = np.full((len(ids), len(VOCAB)), -5.0, dtype=np.float32)
    scores[np.arange(len(ids)), ids] = -0.1
    return scores


def test_greedy_decoding_merges_repeats_and_drops_blanks():
    assert greedy_decode(_posterior("_HH_EE_LL_L_OO__  _IT''S_")) == "HELLO IT'S"
    assert greedy_decode(_posterior("HELLO")) == "HELO"  # a double letter needs a blank between
    assert greedy_decode(_posterior("  A  B  ")) == "A B"  # spaces at the ends and in runs collapse
    assert greedy_decode(_posterior("____")) == ""
    assert greedy_decode(torch.from_numpy(_posterior("A_A"))) == "AA"


def test_targets_use_the_vpc_alphabet():
    assert VOCAB[BLANK] == "<blank>" and len(VOCAB) == 29
    ids = text_to_ids("Hello, it's 2 me!")
    assert "".join(VOCAB[i] for i in ids) == "HELLO IT'S ME"  # digits dropped, spaces collapsed
    assert BLANK not in ids


def _librivox_dir(root: Path, prefix: str = "") -> Path:
    """The three LibriVox clips as a data directory (utterance ids get ``prefix``)."""
    refs = dict(line.split(maxsplit=1) for line in (LIBRIVOX / "text").read_text().splitlines())
    (root / "wav").mkdir(parents=True)
    lines = {"wav.scp": [], "text": [], "utt2spk": []}
    for utt, text in refs.items():
        wav, sr = sf.read(LIBRIVOX / f"{utt}.flac", dtype="float32")
        sf.write(root / "wav" / f"{utt}.wav", wav, sr)
        lines["wav.scp"].append(f"{prefix}{utt} {root / 'wav' / f'{utt}.wav'}")
        lines["text"].append(f"{prefix}{utt} {text.upper()}")
        lines["utt2spk"].append(f"{prefix}{utt} austen")
    for name, rows in lines.items():
        (root / name).write_text("\n".join(rows) + "\n")
    return root


@pytest.mark.slow
def test_tiny_overfit_on_real_speech_lowers_the_loss_and_decodes_a_training_utterance(tmp_path):
    torch.set_num_threads(1)
    data = _librivox_dir(tmp_path / "train")
    out = tmp_path / "model"
    result = train_ctc(data, out, TINY, cache_dir=tmp_path / "cache", quiet=True)
    summary = result.summary
    losses = [h["loss"] for h in result.history]
    assert summary["epochs_run"] == 60 and summary["train_utterances"] == 3
    assert losses[-1] < 0.3 * losses[0], losses[::10]
    assert result.model == out / "model.pt" and [json.loads(ln) for ln in result.log.read_text().splitlines()] == \
        result.history == summary["history"]
    asr = load_asr(f"ctc:{result.model}")
    d = read_data_dir(data)
    hyps = asr.transcribe([sf.read(d.wav_scp[u], dtype="float32")[0] for u in d.utts], 16000)
    # chance (an empty or random string) is 100 % CER; the overfit model spells its training sentences
    assert wer(d.text, dict(zip(d.utts, hyps))).cer < 50.0, hyps
    # a rerun reuses the finished model; the features were cached by audio content
    assert train_ctc(data, out, TINY, cache_dir=tmp_path / "cache", quiet=True) == result
    assert len(list((tmp_path / "cache").rglob("*.npy"))) == 3


def test_bad_utterances_are_left_out_and_named(tmp_path):
    data = _librivox_dir(tmp_path / "train")
    sf.write(data / "wav" / "silent.wav", np.zeros(16000, np.float32), 16000)
    with open(data / "wav.scp", "a") as fh:
        fh.write(f"silent {data / 'wav' / 'silent.wav'}\nmissing {data / 'wav' / 'nowhere.wav'}\n")
    with open(data / "utt2spk", "a") as fh:
        fh.write("silent austen\nmissing austen\n")
    with open(data / "text", "a") as fh:
        fh.write("silent HELLO\nmissing HELLO\n")
    d = read_data_dir(data)
    feats, failed = ctc_features(d, d.utts, load_frontend("logmel"), tmp_path / "cache", quiet=True)
    assert set(feats) == set(d.utts) - {"silent", "missing"}
    assert "silent" in failed["silent"] and "missing" in failed
    with pytest.raises(AsrError, match="bad.pt is a dict of 1 key .*; expected a 'voxanon-ctc/1' checkpoint"):
        torch.save({"x": 1}, tmp_path / "bad.pt")
        load_asr(f"ctc:{tmp_path / 'bad.pt'}")


def _fake_anonymized(original: Path, out: Path) -> Path:
    """A copy whose audio is time-reversed: speech a recogniser cannot learn English spelling from."""
    d = read_data_dir(original)
    (out / "wav").mkdir(parents=True)
    for utt in d.utts:
        wav, sr = sf.read(d.wav_scp[utt], dtype="float32")
        sf.write(out / "wav" / f"{utt}.wav", wav[::-1], sr)
        d.wav_scp[utt] = str(out / "wav" / f"{utt}.wav")
    write_data_dir(d, out)
    return out


@pytest.mark.slow
def test_evaluator_trains_on_a_and_tests_on_b_beside_the_reference(tmp_path, monkeypatch):
    torch.set_num_threads(1)
    orig = _librivox_dir(tmp_path / "orig_train")
    anon = _fake_anonymized(orig, tmp_path / "anon_train")
    test_f = orig  # the reference model is tested on its own training speech: it must beat the reversed one
    test_m = _librivox_dir(tmp_path / "test_m", prefix="m-")
    split = "test"
    data = SystemData("reversed", True, {layout.TRAIN: anon},
                      {layout.TRAIN: orig, layout.trials(split, "f"): test_f, layout.trials(split, "m"): test_m})
    monkeypatch.setitem(ctc.RECIPES, "whisper", TINY)
    (ev,) = AsrLearnabilityEvaluator.plan(RUN, NoOptions())
    assert ev.slot == ("asr",) and ev.name == "learnability asr"
    assert ev.settings == AsrLearnabilitySettings("whisper", "test", TINY.epochs, 0, RUN.n_boot, "vpc")
    assert ev.inputs(data) == {"train": anon, "reference_train": orig, "test_f": test_f, "test_m": test_m}
    assert ev.models(data) == {"frontend": "whisper-tiny:4"}
    assert ev.applies(data)
    assert not ev.applies(dataclasses.replace(data, anonymized=False))
    assert not ev.applies(dataclasses.replace(data, sets={}))

    res = ev.run(data, Env(tmp_path / "cache", quiet=True))
    assert isinstance(res, LearnabilityResult) and (res.task, res.metric) == ("asr", "wer")
    assert res.train == str(anon) and res.n_test == 6 and set(res.per_fold) == {"f", "m"}
    assert res.reference_cer < 50.0 < res.anonymized_cer  # trained on what it is tested on vs on reversed audio
    assert res.reference < res.anonymized and res.reference_ci.low <= res.reference <= res.reference_ci.high
    assert res.training["anonymized"]["data_dir"] == str(anon)
    assert res.training["reference"]["data_dir"] == str(orig)
    assert from_dict(LearnabilityResult, json.loads(json.dumps(to_dict(res)))) == res
    models = tmp_path / "cache" / "learnability" / "asr"
    assert len(list(models.glob("*/model.pt"))) == 2  # one per training set, keyed by its content

    # the CLI reuses both models and prints the same numbers
    out = tmp_path / "learn.json"
    by_data = {json.loads((p.parent / "train_summary.json").read_text())["data_dir"]: p.parent
               for p in models.glob("*/model.pt")}
    monkeypatch.setitem(ctc.RECIPES, "scratch", TINY)
    assert main(["evaluate", "learnability", "asr", str(anon), str(orig), "--test", str(test_f), "--test", str(test_m),
                 "--models", str(by_data[str(anon)]), "--reference-models", str(by_data[str(orig)]),
                 "--recipe", "scratch", "--n-boot", str(RUN.n_boot), "--normalization", RUN.wer_normalization,
                 "--cache-dir", str(tmp_path / "cache"),
                 "--out", str(out), "--quiet"]) == 0
    again = from_dict(LearnabilityResult, json.loads(out.read_text()))
    assert (again.anonymized, again.reference) == (res.anonymized, res.reference)


def test_full_profile_adds_asr_learnability():
    assert "learnability-asr" in PROFILES["full"].extra_evaluators
    assert evaluator_class("learnability-asr") is AsrLearnabilityEvaluator
    assert "learnability-asr" in OPTIONAL_EVALUATORS


def _asr_learn(anonymized, reference=30.0):
    return LearnabilityResult(task="asr", metric="wer", train="anon", test="orig", anonymized=anonymized,
                              anonymized_std=None, reference=reference, reference_std=None,
                              per_fold={"f": {"anonymized": anonymized, "reference": reference},
                                        "m": {"anonymized": anonymized, "reference": reference}},
                              epochs=60, n_test=48, smoke_test_only=True, message="small corpus",
                              anonymized_cer=anonymized / 2, reference_cer=reference / 2,
                              training={"reference": {"recipe": {"frontend": "whisper-tiny:4"}}})


def test_summary_and_report_show_wer_learn(tmp_path):
    results = benchmark_results()
    systems = {n: dataclasses.replace(r, results={**r.results, ("learnability", "asr"): _asr_learn(50.0 + i)})
               if r.method is not None else r for i, (n, r) in enumerate(results.systems.items())}
    results = ranked(dataclasses.replace(results, systems=systems))
    rows = {r["system"]: r for r in summary_csv_rows(results)}
    assert rows["original"]["wer_learn"] == 30.0 and rows["a"]["wer_learn"] == 51.0
    assert "uar_learn" not in rows["a"]
    write_outputs(tmp_path, results)
    assert "wer_learn" in (tmp_path / "summary.csv").read_text().splitlines()[0].split(",")
    report = (tmp_path / "report.html").read_text()
    assert "ASR learnability" in report and "whisper-tiny:4" in report and "small corpus" in report
