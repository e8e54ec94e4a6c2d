"""SER learnability: trained on anonymized emotion folds, tested on original folds; benchmark wiring."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest

from tests.helpers.benchmark_results import (
    RUN,
    benchmark_results,
    privacy_result,
    ranked,
    summary_csv_rows,
)
from tests.helpers.emotion_corpus import make_emotion_corpus
from voxanon.cli import main
from voxanon.data import layout
from voxanon.data.kaldi import read_data_dir, write_data_dir
from voxanon.evaluation.evaluator import EVALUATORS, Env, SystemData, plan
from voxanon.evaluation.learnability import (
    SerLearnabilityEvaluator,
    SerLearnabilityOptions,
    SerLearnabilitySettings,
)
from voxanon.evaluation.results import LearnabilityResult, from_dict, to_dict
from voxanon.evaluation.ser import (
    CompactSER,
    evaluate_ser,
    fold_model_path,
    reference_models,
    train_folds,
)
from voxanon.jobs.benchmark.profiles import PROFILES
from voxanon.jobs.benchmark.records import (
    load_results,
    save_results,
)
from voxanon.jobs.report.write import write_outputs


def _emotionless_copy(original, out):
    """An "anonymization" that erases emotion: every utterance becomes its speaker's neutral utterance i."""
    data = read_data_dir(original)
    for utt in data.utts:
        spk, _, i = utt.rsplit("_", 2)
        dst = out / "wav" / f"{utt}.wav"
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(data.wav_scp[f"{spk}_neu_{i}"], dst)
        data.wav_scp[utt] = str(dst)
    write_data_dir(data, out)
    return out


def _system(anon, orig, ref, epochs=8):
    """A system whose run trained the reference models (``epochs``) into ``ref``."""
    return SystemData("erased", True, {layout.EMO: anon}, {layout.EMO: orig},
                      prepared={reference_models(orig, epochs, RUN.seed).id: ref})


def _plan(epochs=8):
    return SerLearnabilityEvaluator.plan(RUN, SerLearnabilityOptions(epochs))


@pytest.mark.slow
def test_training_on_emotionless_speech_falls_to_chance_and_the_reference_does_not(tmp_path):
    orig = make_emotion_corpus(tmp_path / "orig")
    anon = _emotionless_copy(orig, tmp_path / "anon")
    ref = tmp_path / "ref"
    train_folds(orig, ref, epochs=8, channels=32, quiet=True)
    ev = SerLearnabilityEvaluator(SerLearnabilitySettings(epochs=8, seed=0, channels=32))
    data = _system(anon, orig, ref)
    res = ev.run(data, Env(tmp_path / "cache", quiet=True))

    assert isinstance(res, LearnabilityResult) and (res.task, res.metric, res.epochs) == ("ser", "uar", 8)
    assert res.train == str(anon) and res.test == str(orig) and res.n_test == 160
    assert res.reference > 70.0 and res.anonymized < res.reference - 20.0  # chance is 25 %
    assert set(res.per_fold) == set("12345")
    # the numbers are those of the fold-routed scoring of the original folds with each set of models
    models = next((tmp_path / "cache" / "learnability" / "ser").iterdir())
    assert CompactSER.load(fold_model_path(models, "1")).meta["data_dir"] == str(anon)
    again = evaluate_ser(orig, models, quiet=True)
    assert res.anonymized == again.uar_mean
    assert res.per_fold["2"] == {"anonymized": again.folds["2"].uar,
                                 "reference": evaluate_ser(orig, ref, quiet=True).folds["2"].uar}
    assert from_dict(LearnabilityResult, json.loads(json.dumps(to_dict(res)))) == res

    # the CLI: reference models reused, anonymized ones reused from the same folder
    out = tmp_path / "learn.json"
    assert main(["evaluate", "learnability", "ser", str(anon), str(orig), "--reference-models", str(ref), "--models",
                 str(models), "--epochs", "8", "--channels", "32", "--out", str(out), "--quiet"]) == 0
    assert from_dict(LearnabilityResult, json.loads(out.read_text())).anonymized == res.anonymized


def test_evaluator_contract(tmp_path):
    orig, anon, ref = tmp_path / "orig", tmp_path / "anon", tmp_path / "ref"
    (ev,) = _plan()
    assert ev.slot == ("ser",) and ev.name == "learnability ser"
    assert ev.settings == SerLearnabilitySettings(epochs=8, seed=0)
    data = _system(anon, orig, ref)
    assert ev.applies(data) and ev.inputs(data) == {"train": anon, "test": orig}
    assert ev.models(data) == {"reference": f"folds:{ref}"}
    assert not ev.applies(dataclasses.replace(data, anonymized=False))  # original speech: that is the SER row
    assert ev.prerequisites(data.original) == [reference_models(orig, 8, RUN.seed)]
    assert not ev.applies(dataclasses.replace(data, prepared={}))  # the run could not train the reference
    assert not ev.applies(_system(anon, orig, ref, epochs=12))  # nor with this recipe
    assert not ev.applies(dataclasses.replace(data, sets={}))


def test_full_profile_alone_adds_content_and_learnability():
    assert PROFILES["full"].extra_evaluators == ("content", "learnability", "learnability-asr")
    assert all(p.extra_evaluators == () for name, p in PROFILES.items() if name != "full")
    assert "content" not in EVALUATORS and "learnability" not in EVALUATORS
    kinds = {e.kind for e in plan(RUN, [*EVALUATORS, *PROFILES["full"].extra_evaluators])}
    assert {"content", "learnability"} <= kinds
    assert not {"content", "learnability"} & {e.kind for e in plan(RUN)}


def _learn(anonymized, reference=70.0):
    return LearnabilityResult(task="ser", metric="uar", train="anon", test="orig", anonymized=anonymized,
                              anonymized_std=2.0, reference=reference, reference_std=1.0,
                              per_fold={"1": {"anonymized": anonymized, "reference": reference}}, epochs=8,
                              n_test=10, smoke_test_only=False)


def _with_new_results(results):

    from voxanon.evaluation.results import ContentPrivacyResult

    def content(eer, source):
        p = privacy_result(eer, eer)
        return ContentPrivacyResult(encoder="tfidf", transcripts=source, train="t", enroll="e", trials=["f", "m"],
                                    by_gender=p.by_gender, eer_mean=eer, n_train=4, n_empty=0, missing={})

    systems = dict(results.systems)
    for name, rec in systems.items():
        extra = {("content", "a", "test"): content(12.0, "a"), ("content", "reference", "test"): content(5.0, "x")}
        if rec.method is not None:
            extra[("learnability", "ser")] = _learn({"a": 40.0, "b": 65.0, "c": 30.0}[name])
        systems[name] = dataclasses.replace(rec, results={**rec.results, **extra})
    return ranked(dataclasses.replace(results, systems=systems))


def test_summary_and_report_show_c_eer_and_learnability_when_present(tmp_path):
    results = _with_new_results(benchmark_results())
    rows = {r["system"]: r for r in summary_csv_rows(results)}
    assert (rows["a"]["c_eer"], rows["a"]["c_eer_reference"], rows["a"]["uar_learn"]) == (12.0, 5.0, 40.0)
    assert rows["original"]["uar_learn"] == 70.0  # the reference: trained on original speech
    write_outputs(tmp_path, results)
    header = (tmp_path / "summary.csv").read_text().splitlines()[0].split(",")
    assert {"c_eer", "c_eer_reference", "uar_learn"} <= set(header)
    report = (tmp_path / "report.html").read_text()
    assert "C-EER (ASR)" in report and "Learnability" in report and "original (reference)" in report
    assert load_results(tmp_path / "results.json") == results  # the new kinds read back typed


def test_summary_and_report_unchanged_without_them(tmp_path):
    results = ranked(benchmark_results())
    for row in summary_csv_rows(results):
        assert not {"c_eer", "c_eer_reference", "uar_learn"} & set(row)
    write_outputs(tmp_path, results)
    report = (tmp_path / "report.html").read_text()
    assert "C-EER" not in report and "Learnability" not in report
    save_results(tmp_path / "again.json", results)
    assert "learnability" not in (tmp_path / "again.json").read_text()


def test_key_follows_the_anonymized_folds_the_reference_models_and_the_recipe(tmp_path):
    orig, anon, ref = tmp_path / "orig", tmp_path / "anon", tmp_path / "ref"
    for d in (orig, anon):
        d.mkdir()
        (d / "wav.scp").write_text(f"u1 {d}/u1.wav\n")
        (d / "utt2emo").write_text("u1 neu\n")
    (ref / "fold_1").mkdir(parents=True)
    (ref / "fold_1" / "ser.pt").write_bytes(b"weights")
    (ev,) = _plan()
    data = _system(anon, orig, ref)
    key = ev.key(data, 0)
    assert ev.key(data, 0) == key and ev.key(data, 1) != key
    (ev12,) = _plan(12)
    assert ev12.key(_system(anon, orig, ref, epochs=12), 0)["settings"] != key["settings"]
    (anon / "utt2emo").write_text("u1 sad\n")
    assert ev.key(data, 0)["inputs"]["train"] != key["inputs"]["train"]
    assert ev.key(data, 0)["inputs"]["test"] == key["inputs"]["test"]
    (ref / "fold_1" / "ser.pt").write_bytes(b"other weights")
    assert ev.key(data, 0)["models"] != key["models"]
