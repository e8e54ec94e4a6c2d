"""The benchmark reads the corpus's language: recogniser, normalisation, WER or CER, and says them."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import pytest

from tests.helpers.benchmark_results import (
    benchmark_results,
    fake_benchmark,
    wer_result,
)
from voxanon.data.kaldi import DataDir, write_data_dir
from voxanon.errors import ConfigError
from voxanon.evaluation.asr import AsrEvaluator, AsrOptions, AsrSettings, CheckAsrEvaluator
from voxanon.evaluation.evaluator import NoOptions, RunSettings, SystemData, options_of
from voxanon.jobs.benchmark import run as pipeline
from voxanon.jobs.benchmark.profiles import PROFILES
from voxanon.jobs.benchmark.records import ORIGINAL, rank, summarize
from voxanon.jobs.benchmark.run import Benchmark, System, asr_scoring, default_asr


def test_the_language_names_the_recogniser_the_normalisation_and_the_unit():
    assert default_asr("en") == "whisper-tiny" and default_asr("es") == "whisper-base:es"
    assert asr_scoring("en") == ("spoken", "word")
    assert asr_scoring("fr") == ("basic", "word") and asr_scoring("zh") == ("chinese", "char")
    assert asr_scoring("ja") == ("basic", "char")


def _corpus(root: Path, language: str | None) -> Path:
    wav = root / "a.wav"
    root.mkdir(parents=True)
    wav.touch()
    (root / "corpus.json").write_text(json.dumps({"synthetic": True, **({"language": language} if language else {})}))
    for name in ("test_enrolls", "test_trials_f", "test_trials_m"):
        write_data_dir(DataDir(wav_scp={"u1": str(wav)}, utt2spk={"u1": "s1"}, spk2gender={"s1": "f"}),
                       root / "data" / name)
    return root


@pytest.mark.parametrize("language, asr, want", [
    (None, None, ("whisper-tiny", "spoken", "word", "en")),       # an English corpus records no language
    ("es", None, ("whisper-base:es", "basic", "word", "es")),
    ("es", "whisper-base", ("whisper-base", "basic", "word", "es")),  # --asr wins; the scoring stays Spanish
])
def test_a_run_takes_its_recogniser_and_scoring_from_the_corpus(tmp_path, monkeypatch, language, asr, want):
    planned = []

    def plan(run, names, values):
        planned.append((run, values))
        return []

    monkeypatch.setattr(pipeline, "plan", plan)
    profile = dataclasses.replace(PROFILES["quick"], rungs=(), check_asrs=("pocketsphinx",))
    results = Benchmark(out=tmp_path / "out", profile=profile, systems=[System(ORIGINAL)], asr=asr, quiet=True,
                        data_root=_corpus(tmp_path / "corpus", language)).run()
    s = results.settings
    assert (s.asr, s.wer_normalization, s.error_unit, s.language) == want
    run, values = planned[0]
    assert (run.asr, run.wer_normalization, run.asr_unit, run.language) == want
    checks = CheckAsrEvaluator.plan(run, options_of("wer_check", CheckAsrEvaluator, values))
    assert [e.settings.backend for e in checks] == (["pocketsphinx"] if want[3] == "en" else [])  # English only
    page = (tmp_path / "out" / "report.html").read_text()
    assert f"language {want[3]}" in page


def _run(unit: str) -> RunSettings:
    return RunSettings(splits=("test",), n_boot=10, seed=0, asr="whisper-base:zh", wer_normalization="basic",
                       pretrained="ge2e", asr_unit=unit)


def test_the_asr_evaluator_scores_in_the_runs_unit_and_keeps_word_keys_as_they_were(tmp_path, monkeypatch):
    (char,) = AsrEvaluator.plan(_run("char"), AsrOptions(("test",)))
    (word,) = AsrEvaluator.plan(_run("word"), AsrOptions(("test",)))
    assert char.settings == AsrSettings("test", "whisper-base:zh", "basic", 10, "char")
    sets = {f"test_trials_{g}": tmp_path for g in ("f", "m")}
    data = SystemData("a", True, sets, sets)
    monkeypatch.setattr(AsrEvaluator, "models", lambda self, data: {})  # no model file to fingerprint
    assert char.key(data, 0)["settings"]["unit"] == "char"
    # the key of a word-scored stage: the one it had before the unit was a setting (cached results stay valid)
    assert word.key(data, 0)["settings"] == {"split": "test", "backend": "whisper-base:zh", "normalization": "basic",
                                             "n_boot": 10}


def test_a_character_language_heads_its_columns_cer(tmp_path):
    from voxanon.jobs.report.write import write_outputs

    results = benchmark_results()
    results = dataclasses.replace(results, settings=dataclasses.replace(results.settings, language="zh",
                                                                        error_unit="char"),
                                  machine={"cpu_count": 2, "platform": "p"})
    results = dataclasses.replace(results, ranking=rank(summarize(results)))
    columns = {c.name: c for c in summarize(results).columns}
    assert (columns["wer"].header, columns["wer"].cli) == ("CER % [95% CI]", "CER %")
    write_outputs(tmp_path, results)
    page = (tmp_path / "report.html").read_text()
    assert "The corpus is in zh: utility is the CER" in page and "ranks by CER and UAR" in page
    assert "accented speakers" not in page
    accented = dataclasses.replace(results.data, description={**results.data.description, "accented": True})
    write_outputs(tmp_path, dataclasses.replace(results, data=accented))
    assert "accented speakers: other languages' voices" in (tmp_path / "report.html").read_text()
    english = benchmark_results()
    assert {c.name: c for c in summarize(english).columns}["wer"].cli == "WER %"
    assert wer_result(3.0).unit == "word"


def test_the_multilingual_profile_builds_a_spanish_corpus_in_a_folder_of_its_own(tmp_path, monkeypatch, capsys):
    from voxanon.jobs.corpus import build

    profile = PROFILES["multilingual"]
    assert (profile.corpus_language, profile.systems, profile.check_asrs) == ("es", ("mcadams", "world"), ())
    assert profile.corpus_accented
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "corpus.json").write_text(json.dumps({"engine": "kokoro", "size_name": "small", "seed": 0}))
    built = []
    monkeypatch.setattr(build, "build_corpus", lambda root, **kw: built.append((root.name, kw)))
    monkeypatch.setattr(pipeline, "find_layout", lambda root: root)
    assert Benchmark(out=tmp_path, profile=PROFILES["default"], systems=[])._layout() == corpus  # English: reused
    english = dataclasses.replace(profile, corpus_language="en")  # accented means nothing in English
    assert Benchmark(out=tmp_path, profile=english, systems=[])._layout() == corpus
    name = "corpus-kokoro-small-seed0-es-accented"
    assert Benchmark(out=tmp_path, profile=profile, systems=[])._layout().name == name
    assert built == [(name, {"size": "small", "seed": 0, "jobs": None, "quiet": False, "engine": "kokoro",
                             "language": "es", "accented": True})]
    assert "needs language es (it holds en), accented speakers True (it holds False)" in capsys.readouterr().out
    (corpus / "corpus.json").write_text(json.dumps({"engine": "kokoro", "size_name": "small", "seed": 0,
                                                    "language": "es", "accented": True}))
    native = dataclasses.replace(profile, corpus_accented=False)
    assert Benchmark(out=tmp_path, profile=profile, systems=[])._layout() == corpus  # the accented corpus: reused
    assert Benchmark(out=tmp_path, profile=native, systems=[])._layout().name == "corpus-kokoro-small-seed0-es"
    assert built[-1][1]["accented"] is False
    assert "needs accented speakers False (it holds True)" in capsys.readouterr().out


def test_the_cli_language_sets_the_corpus_and_is_refused_beside_data(tmp_path, monkeypatch):
    from voxanon.cli import benchmark as cli_benchmark

    profiles = fake_benchmark(monkeypatch, benchmark_results())
    args = dict(quick=False, profile="multilingual", systems=None, out=str(tmp_path), seed=0, jobs=1, asr=None,
                encoder="ge2e", quiet=True, add_evaluators=None, conditions=None, condition_on=None)
    cli_benchmark.run(argparse.Namespace(**args, data=None, language="it", accented=None))
    assert profiles[0].corpus_language == "it" and profiles[0].name == "multilingual"
    assert profiles[0].corpus_accented                                   # the profile's
    cli_benchmark.run(argparse.Namespace(**args, data=None, language="it", accented=False))
    assert profiles[1].corpus_language == "it" and not profiles[1].corpus_accented
    with pytest.raises(ConfigError, match="with --data the corpus's own language"):
        cli_benchmark.run(argparse.Namespace(**args, data=str(tmp_path), language="fr", accented=None))
    with pytest.raises(ConfigError, match="with --data the corpus's own speakers"):
        cli_benchmark.run(argparse.Namespace(**args, data=str(tmp_path), language=None, accented=True))
    with pytest.raises(ConfigError, match="give --language"):
        cli_benchmark.run(argparse.Namespace(**{**args, "profile": "default"}, data=None, language=None,
                                             accented=True))


def test_a_language_corpus_checks_its_words_on_real_speech(tmp_path):
    from voxanon.data import layout
    from voxanon.evaluation.asr import RealSpeechAsrEvaluator
    from voxanon.jobs.corpus.build import REAL_SPEECH_PROMPTS, real_speech

    real = DataDir(utt2spk={f"p{i}": "asterisk-allison-es" for i in range(40)} | {"d1": "alsa", "q": "asterisk-june"},
                   text={f"p{i}": "una frase de " + "cinco palabras " * (i % 2) for i in range(40)}
                   | {"d1": "uno dos tres cuatro cinco", "q": "une phrase de cinq mots"})
    real.wav_scp = {u: f"{u}.wav" for u in real.utt2spk}
    chosen = real_speech(real, "es", seed=0)
    # the language's prompts of at least five words only (the even ones are three words), at most 30 of them
    assert set(chosen.utt2spk.values()) == {"asterisk-allison-es"} and len(chosen.wav_scp) == 20 < REAL_SPEECH_PROMPTS
    assert all(int(u[1:]) % 2 for u in chosen.wav_scp) and real_speech(real, "es", seed=0).wav_scp == chosen.wav_scp
    assert not real_speech(real, "en", seed=0).wav_scp  # English: bench_real_speech.py measures it
    root = _corpus(tmp_path / "corpus", "es")
    write_data_dir(chosen, root / "data" / layout.REAL_SPEECH)
    assert layout.find_layout(root).real_speech is None  # a data directory without the REAL marker is not one
    (root / "data" / layout.REAL_SPEECH / "REAL").write_text("real\n")
    found = layout.find_layout(root)
    assert found.sets(["test"])[layout.REAL_SPEECH] == found.real_speech == root.resolve() / "data/real_speech"

    (ev,) = RealSpeechAsrEvaluator.plan(_run("word"), NoOptions())
    sets = {f"test_trials_{g}": tmp_path for g in ("f", "m")}
    assert not ev.applies(SystemData("a", True, sets, sets))
    with_real = SystemData("a", True, {**sets, layout.REAL_SPEECH: tmp_path / "rs"}, sets)
    assert ev.applies(with_real) and ev.inputs(with_real) == {"real": tmp_path / "rs"}
    assert ev.name == "wer real-speech"

    results = benchmark_results()
    assert not [c for c in RealSpeechAsrEvaluator.columns(results)
                if any(c.value(r, results) is not None for r in results.systems.values())]
    rec = results.systems["a"]
    rec = dataclasses.replace(rec, results={**rec.results, ("wer", "real-speech"): wer_result(12.5)})
    results = dataclasses.replace(results, systems={**results.systems, "a": rec})
    (column,) = RealSpeechAsrEvaluator.columns(results)
    assert (column.name, column.header, column.value(rec, results)) == ("wer_real", "real speech WER %", 12.5)
