"""The benchmark pipeline: system specs, stage cache, data layouts, ranking and the report page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voxanon.data.kaldi import DataDir, DataError, write_data_dir
from voxanon.pipelines.benchmark import ORIGINAL, StageCache, System, default_systems, parse_system
from voxanon.pipelines.benchmark_report import ranking, summary_rows
from voxanon.pipelines.layout import find_layout


def test_parse_system_forms():
    assert parse_system("original") == System(ORIGINAL)
    assert parse_system("mcadams") == System("mcadams", "mcadams", {})
    s = parse_system('w09=world:{"warp_range": [0.9, 0.95]}')
    assert (s.label, s.method, s.params) == ("w09", "world", {"warp_range": [0.9, 0.95]})
    assert parse_system('world:{"gender_target": "opposite"}').label == "world"
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_system("world:{oops")


def test_system_key_depends_on_settings_only():
    assert System("a", "world", {"x": 1}).key() == System("b", "world", {"x": 1}).key()
    assert System("a", "world", {"x": 1}).key() != System("a", "world", {"x": 2}).key()


def test_default_systems_are_original_plus_offline_anonymizers():
    systems = default_systems()
    assert systems[0] == System(ORIGINAL)
    methods = {s.method for s in systems[1:]}
    assert {"mcadams", "world", "cascade", "admixture", "chain"} <= methods


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


def _privacy(eer_f, eer_m):
    return {"test": {"eer_mean": (eer_f + eer_m) / 2, "by_gender": {"f": {"eer": eer_f}, "m": {"eer": eer_m}},
                     "fairness": {"mfdr": 200 * abs(eer_f - eer_m) / (eer_f + eer_m)}}}


def _results():
    def system(method, eer_f, eer_m, wer, uar):
        return {"method": method, "params": {}, "privacy": {"AA-semi": _privacy(eer_f, eer_m),
                                                             "OO" if method is None else "AA-lazy": _privacy(1, 2)},
                "wer": {"test": {"wer": wer, "wer_ci": {"low": wer - 1, "high": wer + 1}}},
                "ser": {"uar_mean": uar}}

    return {"settings": {"primary": {"scenario": "AA-semi", "split": "test"}},
            "systems": {ORIGINAL: system(None, 8.0, 2.0, 2.0, 70.0), "a": system("a", 42.0, 40.0, 6.0, 40.0),
                        "b": system("b", 31.0, 33.0, 3.0, 60.0), "c": system("c", 30.0, 36.0, 9.0, 30.0)}}


def test_summary_and_ranking_follow_vpc_categories():
    rows = summary_rows(_results())
    by = {r["system"]: r for r in rows}
    assert by["a"]["eer"] == 41.0 and by["a"]["wer"] == 6.0
    assert by[ORIGINAL]["eer_lazy"] == 1.5  # original row: lazy-informed equals OO
    rank = ranking(rows)
    cats = {n: s["category"] for n, s in rank["systems"].items()}
    assert cats == {ORIGINAL: 0, "a": 40, "b": 30, "c": 30}
    # inside category 30: b has the lower WER and the higher UAR
    assert rank["systems"]["b"]["wer_rank"] == 1 and rank["systems"]["c"]["wer_rank"] == 2
    assert rank["systems"]["b"]["uar_rank"] == 1
    assert "c" not in rank["pareto"]["privacy_vs_wer"]  # dominated by b (more private? no: a) and b
    assert set(rank["pareto"]["privacy_vs_wer"]) == {ORIGINAL, "a", "b"}
    assert rank["systems"]["a"]["d_eer"] == pytest.approx(100 * (41 - 5) / 5)


def test_ranking_without_uar_ranks_on_wer_only():
    results = _results()
    for s in results["systems"].values():
        s.pop("ser")
    rank = ranking(summary_rows(results))
    assert not rank["uar_used"]
    assert set(rank["pareto"]) == {"privacy_vs_wer"}
    assert all(s["uar_rank"] is None for s in rank["systems"].values())
