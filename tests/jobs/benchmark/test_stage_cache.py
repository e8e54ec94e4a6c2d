"""Benchmark stage keys are derived from settings, input content, model content and seed: a change in any
of them recomputes the stage, no change recomputes nothing."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from voxanon.data import layout
from voxanon.data.kaldi import DataDir, Trial, write_data_dir
from voxanon.evaluation import evaluator as registry
from voxanon.evaluation.evaluator import Env, Evaluator, RunSettings, SystemData, plan
from voxanon.evaluation.results import RESULT_KINDS, register_kind
from voxanon.jobs.benchmark.profiles import PROFILES
from voxanon.jobs.benchmark.run import Benchmark, System, default_systems

#: the run's shared settings and, by profile key, the evaluators' options of these tests
SHARED = dict(splits=("test",), n_boot=10, seed=0, asr="whisper-tiny", wer_normalization="spoken", pretrained="ge2e")
OPTIONS = dict(wer_splits=("test",), quality_utts=2, rungs=("AA-backend", "AA-finetuned", "AA-semi"),
               ecapa_recipe="small", attacker_epochs=4, finetune_epochs=2)


def _plan(names=None, **over):
    """The evaluators planned with ``over`` (a shared setting or an option's profile key) changed."""
    run = RunSettings(**{k: over.get(k, v) for k, v in SHARED.items()})
    return plan(run, names, {**OPTIONS, **{k: v for k, v in over.items() if k not in SHARED}})


def _ladder(**over):
    from voxanon.evaluation.ladder import LadderEvaluator, LadderOptions

    run = RunSettings(**{k: over.pop(k, v) for k, v in SHARED.items()})
    defaults = {k: v for k, v in OPTIONS.items() if k in {f for f in LadderOptions.__dataclass_fields__}}
    return LadderEvaluator.plan(run, LadderOptions(**{**defaults, **over}))


def _set(path: Path, spk: str, gender: str, trials: bool = False) -> Path:
    wav_dir = path.parent / "audio"
    wav_dir.mkdir(parents=True, exist_ok=True)
    data = DataDir()
    for i in range(2):
        utt = f"{spk}-{path.name}-{i}"
        wav = wav_dir / f"{utt}.wav"
        sf.write(wav, np.full(1600, 0.01 * (i + 1), dtype=np.float32), 16000, subtype="PCM_16")
        data.wav_scp[utt], data.utt2spk[utt], data.text[utt] = str(wav), spk, "hello there"
    data.spk2gender = {spk: gender}
    if trials:
        data.trials = [Trial(spk, u, True) for u in data.wav_scp]
    write_data_dir(data, path)
    return path


@pytest.fixture
def system(tmp_path) -> SystemData:
    sets = {}
    for root, tag in ((tmp_path / "orig", "o"), (tmp_path / "anon", "a")):
        sets[tag] = {layout.TRAIN: _set(root / "train", "t1", "f")}
        for split in ("dev", "test"):
            sets[tag][layout.enrolls(split)] = _set(root / f"{split}_enrolls", "f1", "f")
            for g in layout.GENDERS:
                sets[tag][layout.trials(split, g)] = _set(root / f"{split}_trials_{g}", f"{g}1", g, trials=True)
    return SystemData("sys", True, sets["a"], sets["o"])


def _keys(evaluators, data, seed=0) -> dict[str, dict]:
    return {e.name: e.key(data, seed) for e in evaluators if e.applies(data)}


def test_nothing_changed_gives_the_same_keys(system):
    assert _keys(_plan(), system) == _keys(_plan(), system)


def test_seed_changes_every_key_and_the_anonymized_output_folder(system):
    a, b = _keys(_plan(), system, seed=0), _keys(_plan(), system, seed=1)
    assert all(a[k] != b[k] for k in a)
    assert System("w", "world").key(0) != System("w", "world").key(1)


RUNGS = {"privacy AA-backend test", "privacy AA-finetuned test", "privacy AA-semi test"}


def test_encoder_changes_the_pretrained_attacks_rung_a_and_quality_only(system):
    a, b = _keys(_plan(), system), _keys(_plan(pretrained="ecapa:other.pt"), system)
    changed = {k for k in a if a[k] != b[k]}
    # rung (b) fine-tunes GE2E whatever the pretrained attacker; (c) trains from scratch
    assert changed == {"privacy OA test", "privacy AA-lazy test", "privacy AA-backend test", "quality"}


def test_each_rung_key_changes_with_its_settings_only(system):
    a = _keys(_plan(), system)
    assert {k for k, v in _keys(_plan(attacker_epochs=8), system).items() if v != a[k]} == {
        "privacy AA-semi test"}
    assert {k for k, v in _keys(_plan(ecapa_recipe="vpc"), system).items() if v != a[k]} == {
        "privacy AA-semi test"}
    assert {k for k, v in _keys(_plan(finetune_epochs=3), system).items() if v != a[k]} == {
        "privacy AA-finetuned test"}
    assert set(_keys(_plan(rungs=("AA-backend",)), system)) & RUNGS == {"privacy AA-backend test"}


def test_anonymized_training_and_dev_data_change_every_rung_and_nothing_else(system):
    assert _changed(system, lambda: _rewrite_first_wav(system.sets[layout.TRAIN])) == RUNGS
    assert _changed(system, lambda: _rewrite_first_wav(system.sets[layout.trials("dev", "m")])) == RUNGS
    # the original training set is not what the anonymized system's attackers train on
    assert _changed(system, lambda: _rewrite_first_wav(system.original[layout.TRAIN])) == set()


def test_rungs_need_training_and_dev_sets(system):
    ladder = _plan(["ladder"])
    assert [e.name for e in ladder] == sorted(RUNGS) and all(e.applies(system) for e in ladder)
    no_dev = SystemData("sys", True, {k: v for k, v in system.sets.items() if not k.startswith("dev")},
                        system.original)
    assert not any(e.applies(no_dev) for e in ladder)


def test_a_rung_trains_once_per_system_for_every_split_and_again_when_its_data_change(tmp_path, system, monkeypatch):
    from voxanon.evaluation import attacker_training

    calls = []

    def fake_train(train_dir, dev_enroll, dev_trials, settings, out, *, seed, device, quiet):
        calls.append((Path(train_dir), settings.epochs, seed))
        return Path(out) / "best.pt", [{"epoch": 1, "loss": 2.0, "val_eer": 30.0},
                                       {"epoch": 2, "loss": 1.0, "val_eer": 20.0}]

    monkeypatch.setattr(attacker_training, "train_ecapa", fake_train)
    env = Env(tmp_path / "cache", quiet=True)
    dev_ev, test_ev = _ladder(splits=("dev", "test"), rungs=("AA-semi",))
    assert dev_ev.slot == ("AA-semi", "dev") and test_ev.slot == ("AA-semi", "test")
    trained = dev_ev.train(system, env)
    assert test_ev.train(system, env) == trained and len(calls) == 1  # the test evaluator reuses the training
    assert trained.val_eer == 20.0 and trained.model.startswith("ecapa:") and len(trained.history) == 2
    assert calls[0][0] == system.sets[layout.TRAIN] and calls[0][1:] == (4, 0)
    _rewrite_first_wav(system.sets[layout.TRAIN])
    test_ev.train(system, env)
    assert len(calls) == 2


def test_fine_tuned_rungs_start_from_their_encoders(system):

    ge2e, dvector = _ladder(rungs=("AA-finetuned", "AA-finetuned-dvector"))
    assert (ge2e.settings.encoder, dvector.settings.encoder) == ("ge2e", "dvector")
    assert ge2e.training_dir(system, Path("c")) != dvector.training_dir(system, Path("c"))
    a = _keys(_plan(rungs=("AA-finetuned-dvector",)), system)
    b = _keys(_plan(rungs=("AA-finetuned-dvector",), finetune_epochs=3), system)
    assert {k for k in a if a[k] != b[k]} == {"privacy AA-finetuned-dvector test"}


def test_real_recordings_change_the_rung_results_but_not_their_training(tmp_path, system):
    import dataclasses


    with_real = dataclasses.replace(system, original={**system.original,
                                                      layout.REAL: _set(tmp_path / "real" / "real", "r1", "f")})
    before, after = _keys(_plan(), system), _keys(_plan(), with_real)
    assert {k for k in before if before[k] != after[k]} == RUNGS
    (ev,) = _ladder(rungs=("AA-semi",))
    assert ev.training_dir(system, Path("c")) == ev.training_dir(with_real, Path("c"))


def test_the_real_voice_check_runs_once_per_training(tmp_path, system, monkeypatch):
    import dataclasses
    import json

    from voxanon.evaluation import attacker_training
    from voxanon.evaluation.ladder import LadderEvaluator
    from voxanon.evaluation.results import RealVoiceCheck

    monkeypatch.setattr(attacker_training, "train_ecapa", lambda *a, out=None, **k: (
        Path(a[4]) / "best.pt", [{"epoch": 1, "loss": 1.0, "val_eer": 20.0}]))
    checks = []

    def fake_check(self, training, real, env):
        checks.append(real)
        return RealVoiceCheck(eer=12.5, pretrained_eer=None, speakers=2, utterances=4, target_pairs=2,
                              nontarget_pairs=4, data=str(real))

    monkeypatch.setattr(LadderEvaluator, "_check_real_voices", fake_check)
    env = Env(tmp_path / "cache", quiet=True)
    (ev,) = _ladder(rungs=("AA-semi",))
    assert ev.train(system, env).real_voices is None and checks == []  # no real recordings: no check
    with_real = dataclasses.replace(system, original={**system.original, layout.REAL: tmp_path / "real"})
    trained = ev.train(with_real, env)  # a finished training without the check gets it, once
    assert trained.real_voices.eer == 12.5 and checks == [tmp_path / "real"]
    assert ev.train(with_real, env) == trained and len(checks) == 1
    stored = json.loads((ev.training_dir(system, env.cache_dir) / "training.json").read_text())
    assert stored["real_voices"]["eer"] == 12.5


def test_anonymizer_parameters_change_the_system_key():
    assert System("w", "world", {"warp_min": 0.9}).key(0) != System("w", "world", {"warp_min": 0.8}).key(0)
    assert System("a", "world", {"warp_min": 0.9}).key(0) == System("b", "world", {"warp_min": 0.9}).key(0)


def _rewrite_first_wav(data_dir: Path) -> None:
    wav = Path((data_dir / "wav.scp").read_text().split()[1])
    sf.write(wav, np.full(3200, 0.2, dtype=np.float32), 16000, subtype="PCM_16")  # new audio


def _changed(system, change) -> set[str]:
    before = _keys(_plan(), system)
    change()
    after = _keys(_plan(), system)
    return {k for k in before if before[k] != after[k]}


def test_corpus_content_changes_the_keys_that_read_it(system):
    # the ignorant attacker enrolls on original speech; quality compares with the original trials
    assert _changed(system, lambda: _rewrite_first_wav(system.original[layout.enrolls("test")])) == {"privacy OA test"}
    assert _changed(system, lambda: _rewrite_first_wav(system.original[layout.trials("test", "f")])) == {"quality"}
    anon_f = system.sets[layout.trials("test", "f")]
    text = anon_f / "text"
    assert _changed(system, lambda: text.write_text(text.read_text().replace("hello", "hullo"))) == {
        "privacy OA test", "privacy AA-lazy test", "wer test", "quality"} | RUNGS


# -- the loop itself: a registered evaluator is cached by its derived key ------------------------------
@dataclass(frozen=True)
class CountSettings:
    factor: int


@dataclass(frozen=True)
class CountResult:
    utterances: int


class CountEvaluator(Evaluator):
    """Counts the utterances of the enrollment set (a real, if small, evaluation of its input)."""

    kind = "count"
    Settings = CountSettings
    runs = 0

    @classmethod
    def plan(cls, run, options):
        return [cls(CountSettings(run.n_boot))]

    def inputs(self, data):
        return {"enroll": data.sets[layout.enrolls("test")]}

    def run(self, data, env):
        CountEvaluator.runs += 1
        n = len((self.inputs(data)["enroll"] / "wav.scp").read_text().splitlines())
        return CountResult(n * self.settings.factor)


def _evaluate(bench, ev, system, env):
    return bench._evaluate([(ev, system)], env)[system.label, ev.name]


def test_benchmark_reuses_and_recomputes_a_registered_evaluator(tmp_path, system, monkeypatch):
    monkeypatch.setitem(registry.EVALUATORS, "count", f"{__name__}:CountEvaluator")
    monkeypatch.setitem(RESULT_KINDS, "count", (CountResult, 0))
    bench = Benchmark(tmp_path / "out", PROFILES["quick"], [], seed=0, quiet=True)
    env = Env(tmp_path / "cache", quiet=True)
    [ev] = _plan(["count"])
    CountEvaluator.runs = 0
    assert _evaluate(bench, ev, system, env) == CountResult(2 * 10)
    assert _evaluate(bench, ev, system, env) == CountResult(2 * 10) and CountEvaluator.runs == 1
    assert bench.recomputed == ["count-sys"]
    [ev5] = _plan(["count"], n_boot=5)  # other settings
    assert _evaluate(bench, ev5, system, env) == CountResult(2 * 5) and CountEvaluator.runs == 2
    enroll = system.sets[layout.enrolls("test")]
    os.utime(next((enroll.parent / "audio").iterdir()), ns=(1, 1))  # audio touched: content may differ
    _evaluate(bench, ev5, system, env)
    assert CountEvaluator.runs == 3
    other_seed = Benchmark(tmp_path / "out", PROFILES["quick"], [], seed=1, quiet=True)
    _evaluate(other_seed, ev5, system, env)
    assert CountEvaluator.runs == 4


class BrokenEvaluator(CountEvaluator):
    """Fails in ``run`` (``factor`` 0) or already in its key, reading a set the system lacks (``factor`` 1)."""

    kind = "broken"

    @property
    def slot(self):
        return (str(self.settings.factor),)

    def inputs(self, data):
        return {"enroll": data.sets["no such set"]} if self.settings.factor == 1 else super().inputs(data)

    def run(self, data, env):
        raise ValueError("broken on purpose")


def test_a_failing_evaluation_is_recorded_and_the_others_finish(tmp_path, system, monkeypatch):
    monkeypatch.setitem(RESULT_KINDS, "count", (CountResult, 0))
    bench = Benchmark(tmp_path / "out", PROFILES["quick"], [], seed=0, jobs=1, quiet=True)
    count = CountEvaluator(CountSettings(3))
    todo = [(BrokenEvaluator(CountSettings(0)), system), (BrokenEvaluator(CountSettings(1)), system), (count, system)]
    assert bench._evaluate(todo, Env(tmp_path / "cache", quiet=True)) == {("sys", "count"): CountResult(2 * 3)}
    assert bench.errors == {"sys": ["broken 1: KeyError: 'no such set'", "broken 0: ValueError: broken on purpose"]}
    assert bench.recomputed == ["count-sys"]  # a failure is not saved: the next run tries again


def test_register_kind_refuses_a_clash():
    with pytest.raises(ValueError, match="already registered"):
        register_kind("privacy", CountResult, 0)


def test_the_neural_profile_measures_the_shipped_models_as_the_main_job_measures_the_rest():
    """Same corpus, attackers and measures as the default (so it reuses a main job's folder); its systems run
    offline without settings."""
    neural, main = PROFILES["neural"], PROFILES["default"]
    assert replace(neural, name=main.name, systems=main.systems, check_asrs=main.check_asrs) == main
    assert neural.check_asrs == ("pocketsphinx",) and not main.check_asrs  # LTF learnt against Whisper
    assert [(s.label, s.params) for s in default_systems(neural)] == [("original", {}), ("ltf", {}), ("f3va", {})]


def test_a_second_recogniser_adds_its_wer_and_leaves_the_runs_own_cached(system):
    """A run with pocketsphinx beside Whisper (the neural profile) plans one more WER per split and keeps every
    other key, so it reuses a main job's results."""
    a, b = _keys(_plan(), system), _keys(_plan(check_asrs=("pocketsphinx",)), system)
    assert set(b) - set(a) == {"wer_check pocketsphinx test"}
    assert all(b[k] == a[k] for k in a)
    assert b["wer_check pocketsphinx test"]["models"] != a["wer test"]["models"]


def test_a_prerequisite_is_built_once_for_every_evaluator_that_declares_it(tmp_path, system, monkeypatch):
    """The SER reference models: trained once on the original emotion set for the SER evaluation and SER
    learnability of the same recipe, again for another recipe, and a failure is recorded, leaving both out."""
    from voxanon.evaluation import ser

    calls = []
    monkeypatch.setattr(ser, "train_folds", lambda emo, folder, *, epochs, seed, quiet: calls.append(
        (emo, folder, epochs)) or {"folds": {}})
    emo = system.original[layout.TRAIN]  # any original data directory stands for the emotion set here
    original = {**system.original, layout.EMO: emo}
    bench = Benchmark(tmp_path / "out", PROFILES["quick"], [], seed=0, quiet=True)
    env = Env(tmp_path / "cache", quiet=True)
    evs = _plan(["ser", "learnability"], ser_epochs=6)
    prepared = bench._prepare(evs, original, env)
    [(key, folder)] = prepared.items()
    assert calls == [(emo, folder, 6)] and folder == tmp_path / "out" / key and key.startswith("ser_models/")
    data = replace(system, sets={**system.sets, layout.EMO: system.sets[layout.TRAIN]}, original=original,
                   prepared=prepared)
    assert [e.applies(data) for e in evs] == [True, True]
    assert bench._prepare(evs, original, env) == prepared and len(calls) == 1  # cached
    other = _plan(["ser", "learnability"], ser_epochs=6, **{"learnability.epochs": 3})
    assert len(bench._prepare(other, original, env)) == 2 and calls[-1][2] == 3

    def broken(*args, **kwargs):
        raise RuntimeError("no emotions")

    monkeypatch.setattr(ser, "train_folds", broken)
    failing = Benchmark(tmp_path / "out2", PROFILES["quick"], [], seed=0, quiet=True)
    assert failing._prepare(evs, original, env) == {}
    assert failing.errors == {"original": ["SER training: RuntimeError: no emotions"]}
    assert not any(e.applies(replace(data, prepared={})) for e in evs)
