"""The benchmark pipeline: system specs, stage cache, data layouts, ranking and the report page."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import pytest

from tests.helpers.benchmark_results import (
    benchmark_results,
    fake_benchmark,
    privacy_result,
    summary_csv_rows,
    wer_result,
)
from voxanon.data.kaldi import DataDir, DataError, write_data_dir
from voxanon.data.layout import find_layout
from voxanon.evaluation.privacy import privacy_section
from voxanon.evaluation.results import (
    to_dict,
)
from voxanon.evaluation.scenarios import overstatement, strongest_attacker
from voxanon.jobs.benchmark.profiles import DEFAULT_SYSTEMS, PROFILES
from voxanon.jobs.benchmark.records import (
    ORIGINAL,
    load_results,
    rank,
    save_results,
    summarize,
)
from voxanon.jobs.benchmark.run import StageCache, System, default_systems, parse_system
from voxanon.jobs.report import page


def test_parse_system_forms():
    assert parse_system("original") == System(ORIGINAL)
    assert parse_system("mcadams") == System("mcadams", "mcadams", {})
    s = parse_system('w09=world:{"warp_range": [0.9, 0.95]}')
    assert (s.label, s.method, s.params) == ("w09", "world", {"warp_range": [0.9, 0.95]})
    assert parse_system('world:{"gender_target": "opposite"}').label == "world"
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_system("world:{oops")


def test_system_key_depends_on_settings_and_seed_only():
    assert System("a", "world", {"x": 1}).key(0) == System("b", "world", {"x": 1}).key(0)
    assert System("a", "world", {"x": 1}).key(0) != System("a", "world", {"x": 2}).key(0)
    assert System("a", "world", {"x": 1}).key(0) != System("a", "world", {"x": 1}).key(1)


def test_default_systems_are_original_plus_offline_anonymizers():
    systems = default_systems()
    assert systems[0] == System(ORIGINAL)
    methods = {s.method for s in systems[1:]}
    assert {"mcadams", "world", "cascade", "admixture", "chain", "knnvc"} <= methods


def test_default_profile_leaves_the_neural_family_to_full():
    default = {s.method for s in default_systems(PROFILES["default"])[1:]}
    full = {s.method for s in default_systems(PROFILES["full"])[1:]}
    assert default == set(DEFAULT_SYSTEMS) and "knnvc" in full - default


def test_stage_cache_reuses_matching_settings(tmp_path):
    cache = StageCache(tmp_path)
    calls = []

    def compute():
        calls.append(1)
        return {"value": len(calls)}

    assert cache.run("x", {"a": 1}, compute) == {"value": 1}
    assert cache.run("x", {"a": 1}, compute) == {"value": 1}
    assert len(calls) == 1
    assert cache.run("x", {"a": 2}, compute) == {"value": 2}  # other settings: recomputed
    assert cache.run("y", {"t": (1, 2)}, compute) == {"value": 3}
    assert cache.run("y", {"t": (1, 2)}, compute) == {"value": 3}  # tuples compare equal after storage
    assert not list((tmp_path / "stages").glob("*.tmp"))


def _tiny_dir(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    wav = path.parent / "a.wav"
    wav.touch()
    write_data_dir(DataDir(wav_scp={"u1": str(wav)}, utt2spk={"u1": "s1"}, spk2gender={"s1": "f"}), path)
    return path


def test_find_layout_vpc_names(tmp_path):
    for name in ("libri_test_enrolls", "libri_test_trials_f", "libri_test_trials_m", "train-clean-360"):
        _tiny_dir(tmp_path / name)
    layout = find_layout(tmp_path)
    assert layout.splits == ["test"] and not layout.synthetic
    assert layout.train == tmp_path / "train-clean-360" and layout.emo is None
    assert set(layout.sets(["test"])) == {"test_enrolls", "test_trials_f", "test_trials_m", "train"}


def test_find_layout_synthetic_corpus(tmp_path):
    (tmp_path / "corpus.json").write_text(json.dumps({"synthetic": True}))
    for name in ("dev_enrolls", "dev_trials_f", "dev_trials_m", "test_enrolls", "test_trials_f", "test_trials_m",
                 "train", "emo"):
        _tiny_dir(tmp_path / "data" / name)
    layout = find_layout(tmp_path)
    assert layout.synthetic and layout.splits == ["dev", "test"]
    assert layout.emo == tmp_path / "data" / "emo"


def test_find_layout_names_what_is_missing(tmp_path):
    _tiny_dir(tmp_path / "libri_test_enrolls")
    with pytest.raises(DataError, match="libri_test_trials_f"):
        find_layout(tmp_path)


def test_summary_and_ranking_follow_vpc_categories():
    summary = summarize(benchmark_results())
    by = {r.system: r for r in summary.rows}
    assert by["a"]["eer"] == 41.0 and by["a"]["wer"] == 6.0 and by["a"]["attacker"] == "AA-semi"
    assert by[ORIGINAL]["eer_lazy"] == 1.5  # original row: lazy-informed equals OO
    assert (by[ORIGINAL]["attacker"], by[ORIGINAL]["eer"], by[ORIGINAL]["eer_semi"]) == ("OO", 1.5, 5.0)
    ranking = rank(summary)
    cats = {n: s.category for n, s in ranking.systems.items()}
    assert cats == {ORIGINAL: 0, "a": 40, "b": 30, "c": 30}
    # inside category 30: b has the lower WER and the higher UAR
    assert ranking.systems["b"].ranks["wer"] == 1 and ranking.systems["c"].ranks["wer"] == 2
    assert ranking.systems["b"].ranks["uar"] == 1
    assert "c" not in ranking.pareto["privacy_vs_wer"]  # dominated by b (more private? no: a) and b
    assert set(ranking.pareto["privacy_vs_wer"]) == {ORIGINAL, "a", "b"}
    assert ranking.systems["a"].changes["eer"] == pytest.approx(100 * (41 - 1.5) / 1.5)  # against the original's OO


def test_ranking_without_uar_ranks_on_wer_only():
    ranking = rank(summarize(benchmark_results(with_ser=False)))
    assert not ranking.uses("uar") and ranking.uses("wer")
    assert set(ranking.pareto) == {"privacy_vs_wer"}
    assert all(s.ranks["uar"] is None and "uar" not in s.changes for s in ranking.systems.values())


def test_results_round_trip_through_results_json(tmp_path):
    results = benchmark_results()
    results = dataclasses.replace(results, ranking=rank(summarize(results)))
    save_results(tmp_path / "results.json", results)
    assert load_results(tmp_path / "results.json") == results
    raw = json.loads((tmp_path / "results.json").read_text())
    assert raw["systems"]["a"]["privacy"]["AA-semi"]["test"]["by_gender"]["f"]["eer"] == 42.0
    assert raw["systems"]["a"]["ser"]["uar_mean"] == 40.0


@pytest.mark.parametrize("version", [None, 1, 99])
def test_results_of_another_schema_version_are_refused(tmp_path, version):
    data = to_dict(benchmark_results())
    data.pop("schema_version")
    if version is not None:
        data["schema_version"] = version
    (tmp_path / "results.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match="schema version"):
        load_results(tmp_path / "results.json")


def test_malformed_results_name_the_field(tmp_path):
    data = to_dict(benchmark_results())
    del data["systems"]["a"]["wer"]["test"]["wer"]
    (tmp_path / "results.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"systems\.a\.wer\.test.*'wer'"):
        load_results(tmp_path / "results.json")


def test_strongest_attacker_is_the_lowest_eer_and_ties_go_to_the_attacker_that_knows_less():
    assert strongest_attacker({"OA": 40.0, "AA-lazy": 12.0, "AA-semi": 20.0, "AA-backend": None}) == ("AA-lazy", 12.0)
    # exactly equal EERs: the ladder order (OO, OA, AA-lazy, AA-backend, AA-finetuned, AA-semi) decides,
    # whatever the dict order
    assert strongest_attacker({"AA-semi": 5.0, "AA-backend": 5.0, "OA": 9.0}) == ("AA-backend", 5.0)
    assert strongest_attacker({"AA-backend": 5.0, "AA-semi": 5.0}) == ("AA-backend", 5.0)
    assert strongest_attacker({"zz": 3.0, "my-attack": 3.0, "AA-semi": 3.0}) == ("AA-semi", 3.0)
    assert strongest_attacker({"zz": 3.0, "my-attack": 3.0}) == ("my-attack", 3.0)
    assert strongest_attacker({"AA-semi": None}) is None
    assert overstatement({"OA": 40.0, "AA-lazy": 12.0, "AA-semi": 21.3}) == pytest.approx(
        {"OA": 28.0, "AA-semi": 9.3})


def _with_rung(results, system, scenario, eer_f, eer_m):
    rec = results.systems[system]
    rec = dataclasses.replace(rec, results={**rec.results, ("privacy", scenario, "test"): privacy_result(eer_f, eer_m)})
    return dataclasses.replace(results, systems={**results.systems, system: rec})


def test_the_strongest_attacker_sets_the_headline_and_the_category():
    # system a: AA-semi says 41 % (category 40); the back-end rung breaks it at 15 % (category 10)
    results = _with_rung(benchmark_results(), "a", "AA-backend", 14.0, 16.0)
    summary = summarize(results)
    by = {r.system: r for r in summary.rows}
    assert [by["a"][k] for k in ("attacker", "eer", "eer_f", "eer_m")] == ["AA-backend", 15.0, 14.0, 16.0]
    assert by["a"]["eer_semi"] == 41.0 and by["a"]["eer_lazy"] == 51.0  # the VPC column stays
    assert rank(summary).systems["a"].category == 10
    title, html = privacy_section(results, page)  # the report's heatmap marks that attacker
    row = next(r for r in html.split("<tr>") if r.startswith("<td>a</td>"))
    assert title == "Privacy at a glance" and row.count("★") == 1 and "<b>15.0 ★</b>" in row and ">41.0<" in row


def test_the_report_shows_each_trained_rung_on_real_voices():
    from voxanon.evaluation.ladder import LadderEvaluator
    from voxanon.evaluation.results import AttackerTraining, RealVoiceCheck

    assert LadderEvaluator.section(benchmark_results(), page) is None  # no trained rung: no section
    results = benchmark_results()
    for system, rung, eer, pretrained in (("a", "AA-finetuned", 9.5, 7.0), ("a", "AA-semi", 38.0, None),
                                          ("b", "AA-finetuned", 12.25, 7.0)):
        results = _with_rung(results, system, rung, 20.0, 22.0)
        key = ("privacy", rung, "test")
        rec = results.systems[system]
        check = RealVoiceCheck(eer=eer, pretrained_eer=pretrained, speakers=7, utterances=159, target_pairs=2000,
                               nontarget_pairs=10561, data="real")
        training = AttackerTraining(rung=rung, model="m", train="t", selected_on="dev", val_eer=20.0, history=[],
                                    real_voices=check)
        rec = dataclasses.replace(rec, results={**rec.results,
                                                key: dataclasses.replace(rec.results[key], training=training)})
        results = dataclasses.replace(results, systems={**results.systems, system: rec})
    title, html = LadderEvaluator.section(results, page)
    assert title == "Trained attackers on real voices" and "7 real speakers" in html and "159 utterances" in html
    rows = html.split("<tr>")
    assert "<td>pretrained encoder (reference)</td><td>7.0</td><td>–</td>" in rows[2]
    assert "<td>a</td><td>9.5</td><td>38.0</td>" in rows[3] and "<td>b</td><td>12.2</td><td>–</td>" in rows[4]
    assert "fine-tuned GE2E" in rows[1] and "AA semi-informed" in rows[1]


def test_summary_csv_and_cli_table_lead_with_the_strongest_attacker(tmp_path, monkeypatch, capsys):
    from voxanon.cli import benchmark as cli_benchmark
    results = _with_rung(benchmark_results(), "a", "AA-backend", 14.0, 16.0)
    results = dataclasses.replace(results, ranking=rank(summarize(results)))
    rows = summary_csv_rows(results)
    assert list(rows[0])[:8] == ["system", "attacker", "eer", "eer_f", "eer_m", "eer_semi", "eer_lazy",
                                 "eer_ignorant"]
    a = next(r for r in rows if r["system"] == "a")
    assert (a["attacker"], a["eer"], a["eer_semi"], a["eer_AA-backend"], a["category"]) == (
        "AA-backend", 15.0, 41.0, 15.0, 10)

    profiles = fake_benchmark(monkeypatch, results)
    args = argparse.Namespace(quick=True, profile="quick", systems=["original", "a"], out=str(tmp_path), data=None,
                              seed=0, jobs=1, asr="x", encoder="ge2e", quiet=True, add_evaluators=["content"],
                              conditions=None, condition_on=None, language=None,
                              accented=None)
    cli_benchmark.run(args)
    assert profiles[0].extra_evaluators == ("content",) and profiles[0].rungs == PROFILES["quick"].rungs
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("system"))
    assert header.split()[:4] == ["system", "strongest", "attacker", "EER"]
    row_a = next(line for line in lines if line.startswith("a "))
    assert row_a.split()[1:3] == ["AA-backend", "15.00"] and row_a.split()[-1] == ">=10"


def test_a_second_recogniser_gets_its_own_column_beside_the_runs_wer(tmp_path, monkeypatch, capsys):
    """pocketsphinx's WER (a judge a model trained against Whisper cannot fool) in summary.csv, the CLI table,
    the report's tables and results.json; a run without one shows no such column."""
    from voxanon.cli import benchmark as cli_benchmark
    from voxanon.jobs.benchmark import run as pipeline
    from voxanon.jobs.report.write import write_outputs

    results = benchmark_results()
    systems = {n: dataclasses.replace(r, results={**r.results, ("wer_check", "pocketsphinx", "test"): wer_result(w)})
               for (n, r), w in zip(results.systems.items(), (15.0, 31.0, 17.5, 40.0))}
    results = dataclasses.replace(results, systems=systems, machine={"cpu_count": 2, "platform": "p"})
    results = dataclasses.replace(results, ranking=rank(summarize(results)))
    assert {r.system: r["wer_pocketsphinx"] for r in summarize(results).rows}["b"] == 17.5
    rows = {r["system"]: r for r in summary_csv_rows(results)}
    assert (rows["b"]["wer"], rows["b"]["wer_pocketsphinx"]) == (3.0, 17.5)
    keys = list(rows["b"])
    assert keys[keys.index("wer") + 1] == "wer_pocketsphinx"  # beside the run's WER, as in the tables
    assert "wer_pocketsphinx" not in summary_csv_rows(benchmark_results())[0]
    save_results(tmp_path / "results.json", results)
    assert load_results(tmp_path / "results.json") == results
    write_outputs(tmp_path, results)
    page = (tmp_path / "report.html").read_text()
    assert "WER pocketsphinx %" in page and "<td>pocketsphinx</td>" in page and "17.50" in page

    monkeypatch.setattr(pipeline, "Benchmark", lambda **kwargs: type(
        "B", (), {"run": lambda self: results, "summary": summarize(results)})())
    args = argparse.Namespace(quick=False, profile="neural", systems=None, out=str(tmp_path), data=None,
                              seed=0, jobs=1, asr="x", encoder="ge2e", quiet=True, add_evaluators=None,
                              conditions=None, condition_on=None, language=None,
                              accented=None)
    cli_benchmark.run(args)
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("system"))
    assert "WER pocketsphinx %" in header
    assert next(line for line in lines if line.startswith("b ")).split()[-4:-2] == ["3.00", "17.50"]


def test_the_content_section_says_how_far_each_c_eer_moved_from_the_original():
    from voxanon.evaluation.content_privacy import ContentPrivacyEvaluator

    results = benchmark_results()
    assert ContentPrivacyEvaluator.section(results, page) is None            # no content attack ran
    c_eers = {ORIGINAL: 27.0, "a": 45.8, "b": 20.5}
    systems = {n: dataclasses.replace(r, results={**r.results, ("content", "a", "test"): dataclasses.replace(
        privacy_result(c_eers[n] - 1, c_eers[n] + 1), eer_mean=c_eers[n])}) for n, r in results.systems.items()
        if n in c_eers}
    title, html = ContentPrivacyEvaluator.section(dataclasses.replace(results, systems=systems), page)
    assert title == "Content privacy" and html.count("<li>") == 2
    assert "<li>a: C-EER 45.8 %, 18.8 points above the original&#x27;s 27.0 %.</li>" in html
    assert "<li>b: C-EER 20.5 %, 6.5 points below the original&#x27;s 27.0 %.</li>" in html


def test_default_profile_builds_the_kokoro_corpus_and_quick_the_formant_one():
    assert (PROFILES["quick"].corpus_engine, PROFILES["quick"].corpus_size) == ("formant", "small")
    assert (PROFILES["default"].corpus_engine, PROFILES["default"].corpus_size) == ("kokoro", "small")
    assert (PROFILES["full"].corpus_engine, PROFILES["full"].corpus_size) == ("kokoro", "default")


def test_a_corpus_of_another_seed_or_engine_gets_its_own_folder_and_one_line(tmp_path, monkeypatch, capsys):
    from voxanon.jobs.benchmark import run as benchmark
    from voxanon.jobs.corpus import build

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "corpus.json").write_text(json.dumps({"engine": "formant", "size_name": "small", "seed": 0}))
    built = []
    monkeypatch.setattr(build, "build_corpus", lambda root, **kw: built.append((root.name, kw)))
    monkeypatch.setattr(benchmark, "find_layout", lambda root: root)
    assert benchmark.Benchmark(out=tmp_path, profile=PROFILES["quick"], systems=[])._layout() == corpus
    assert built == []                                                  # same engine, size and seed: reused
    assert benchmark.Benchmark(out=tmp_path, profile=PROFILES["quick"], systems=[], seed=1)._layout().name == \
        "corpus-formant-small-seed1"
    assert built[0][0] == "corpus-formant-small-seed1" and built[0][1]["seed"] == 1
    said = capsys.readouterr().out
    assert said.count("\n") == 1 and "needs seed 1 (it holds 0)" in said and "engine" not in said
    benchmark.Benchmark(out=tmp_path, profile=PROFILES["default"], systems=[])._layout()
    assert "needs engine kokoro (it holds formant)" in capsys.readouterr().out
    assert built[1][0] == "corpus-kokoro-small-seed0"
