"""Typed benchmark results built by hand: verification, privacy, WER and SER results and a whole run."""

from __future__ import annotations

import dataclasses

from voxanon.evaluation.evaluator import RunSettings
from voxanon.evaluation.results import (
    AsrResult,
    DetPoints,
    EerInterval,
    Fairness,
    Interval,
    PrivacyResult,
    SerResult,
    VerificationMetrics,
    Zebra,
)
from voxanon.jobs.benchmark.records import (
    ORIGINAL,
    SCHEMA_VERSION,
    BenchmarkResults,
    DataInfo,
    Primary,
    Ranking,
    RunInfo,
    SystemRecord,
    rank,
    summarize,
)
from voxanon.jobs.report.write import summary_table


def verification_metrics(eer):
    return VerificationMetrics(n_target=2, n_nontarget=2, eer=eer, eer_threshold=0.5,
                               eer_ci=EerInterval(eer - 1, eer + 1, 0.05, 10, "enrolled speakers"), rocch_eer=eer,
                               cllr=1.0, min_cllr=0.9, linkability=None, zebra=Zebra(0.1, -1.0, "B"),
                               det=DetPoints([0.0], [0.0]))


def privacy_result(eer_f, eer_m):
    return PrivacyResult(encoder="e", enroll="enr", trials=["tf", "tm"],
                         by_gender={"f": verification_metrics(eer_f), "m": verification_metrics(eer_m)}, eer_mean=(eer_f + eer_m) / 2,
                         fairness=Fairness(eer_f, eer_m, 200 * abs(eer_f - eer_m) / (eer_f + eer_m)))


def wer_result(wer):
    return AsrResult(data="d", asr_backend="a", normalization="spoken", n_scored=3, wer=wer, cer=wer / 2,
                     wer_ci=Interval(wer, wer - 1, wer + 1, 0.05, 10), substitutions=1, deletions=0, insertions=0,
                     n_reference_words=10, missing_transcript=[], empty_reference=[], failed={}, decoded_now=0)


def ser_result(uar):
    return SerResult(data_dir="emo", models="m", fold_routing=True, labels=["neu"], uar_mean=uar, uar_std=1.0,
                     folds={}, per_class_recall={"neu": uar}, confusion=[[1]], n_utterances=1, excluded_labels={},
                     failed_audio={}, batch_size=16, seconds=0.1, smoke_test_only=False, message=None)


def benchmark_results(with_ser=True):
    def system(method, eer_f, eer_m, wer, uar):
        # the original row has OO; on anonymized speech the lazy attacker is weaker than the semi-informed one here
        pretrained, p = ("OO", privacy_result(1, 2)) if method is None else ("AA-lazy", privacy_result(eer_f + 10, eer_m + 10))
        results = {("privacy", "AA-semi", "test"): privacy_result(eer_f, eer_m), ("privacy", pretrained, "test"): p,
                   ("wer", "test"): wer_result(wer)}
        if with_ser:
            results[("ser",)] = ser_result(uar)
        return SystemRecord(method=method, params={}, key="k", results=results)

    return BenchmarkResults(
        schema_version=SCHEMA_VERSION, voxanon_version="x", created="now", profile={},
        settings=RunInfo(seed=0, asr="a", wer_normalization="spoken", pretrained_encoder="ge2e",
                         semi_informed_attacker="ecapa", primary=Primary("AA-semi", "test")),
        versions={}, machine={}, data=DataInfo("root", True, ["test"], {}),
        systems={ORIGINAL: system(None, 8.0, 2.0, 2.0, 70.0), "a": system("a", 42.0, 40.0, 6.0, 40.0),
                 "b": system("b", 31.0, 33.0, 3.0, 60.0), "c": system("c", 30.0, 36.0, 9.0, 30.0)},
        errors={}, paths={}, ranking=Ranking({}, {"uar": False}), elapsed_seconds=1.0)


#: run settings of a one-split benchmark
RUN = RunSettings(splits=("test",), n_boot=20, seed=0, asr="whisper-tiny", wer_normalization="vpc", pretrained="ge2e")


def ranked(results):
    """``results`` with a test machine and the ranking computed from their summary rows."""
    results = dataclasses.replace(results, machine={"cpu_count": 1, "platform": "test"})
    return dataclasses.replace(results, ranking=rank(summarize(results)))


def summary_csv_rows(results):
    """The summary.csv rows of ``results`` (ranking as they hold it)."""
    return summary_table(summarize(results), results.ranking)


def fake_benchmark(monkeypatch, results) -> list:
    """Make the CLI's benchmark job return ``results`` without running; the list it returns fills with the profile
    each run was given."""
    from voxanon.jobs.benchmark import run as pipeline

    profiles = []

    class FakeBenchmark:
        summary = summarize(results)

        def __init__(self, **kwargs):
            profiles.append(kwargs["profile"])

        def run(self):
            return results

    monkeypatch.setattr(pipeline, "Benchmark", FakeBenchmark)
    return profiles
