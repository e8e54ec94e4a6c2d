"""Benchmark stage keys are derived from settings, input content, model content and seed: a change in any
of them recomputes the stage, no change recomputes nothing."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from voxanon.data import names
from voxanon.data.kaldi import DataDir, Trial, write_data_dir
from voxanon.evaluation import evaluator as registry
from voxanon.evaluation.evaluator import Env, Evaluator, RunSettings, SystemData, plan
from voxanon.evaluation.fingerprint import data_fingerprint
from voxanon.evaluation.results import RESULT_KINDS, register_kind
from voxanon.pipelines.benchmark import Benchmark, System
from voxanon.pipelines.profiles import PROFILES


def _run(**over) -> RunSettings:
    base = dict(splits=("test",), wer_splits=("test",), n_boot=10, seed=0, asr="whisper-tiny",
                wer_normalization="words", pretrained="ge2e", quality_utts=2, quality_split="test")
    return RunSettings(**{**base, **over})


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
        sets[tag] = {names.enrolls("test"): _set(root / "test_enrolls", "f1", "f")}
        for g in names.GENDERS:
            sets[tag][names.trials("test", g)] = _set(root / f"test_trials_{g}", f"{g}1", g, trials=True)
    ckpt = tmp_path / "attacker.pt"
    ckpt.write_bytes(b"weights-1")
    return SystemData("sys", True, sets["a"], sets["o"], attacker=f"ecapa:{ckpt}")


def _keys(evaluators, data, seed=0) -> dict[str, dict]:
    return {e.name: e.key(data, seed) for e in evaluators if e.applies(data)}


def test_nothing_changed_gives_the_same_keys(system):
    assert _keys(plan(_run()), system) == _keys(plan(_run()), system)


def test_seed_changes_every_key_and_the_anonymized_output_folder(system):
    a, b = _keys(plan(_run()), system, seed=0), _keys(plan(_run()), system, seed=1)
    assert all(a[k] != b[k] for k in a)
    assert System("w", "world").key(0) != System("w", "world").key(1)


def test_encoder_changes_the_pretrained_attacks_and_quality_only(system):
    a, b = _keys(plan(_run()), system), _keys(plan(_run(pretrained="ecapa:other.pt")), system)
    changed = {k for k in a if a[k] != b[k]}
    assert changed == {"privacy OA test", "privacy AA-lazy test", "quality"}


def test_attacker_model_content_changes_the_semi_informed_attack_only(system):
    a = _keys(plan(_run()), system)
    Path(system.attacker.partition(":")[2]).write_bytes(b"weights-2")  # retrained with other settings
    b = _keys(plan(_run()), system)
    assert {k for k in a if a[k] != b[k]} == {"privacy AA-semi test"}


def test_attacker_training_settings_change_its_checkpoint_folder(tmp_path, system):
    train = system.sets[names.enrolls("test")]
    quick = Benchmark(tmp_path / "b1", PROFILES["quick"], [])
    default = Benchmark(tmp_path / "b2", PROFILES["default"], [])  # 8 attacker epochs instead of 4
    calls = []
    import voxanon.evaluation.asv_training as asv

    def fake_train(data, out, cfg, quiet=False):
        calls.append((Path(out).name, cfg.epochs))
        return {"best_eer": 0.0}

    mp = pytest.MonkeyPatch()
    mp.setattr(asv, "train_attacker", fake_train)
    try:
        spec_q = quick._attacker("sys", str(train))
        spec_q2 = quick._attacker("sys", str(train))
        spec_d = default._attacker("sys", str(train))
    finally:
        mp.undo()
    assert spec_q == spec_q2 and spec_q.rsplit("/", 2)[1] != spec_d.rsplit("/", 2)[1]
    assert [c[1] for c in calls] == [4, 8]  # the second quick call was cached


def test_anonymizer_parameters_change_the_system_key():
    assert System("w", "world", {"warp_min": 0.9}).key(0) != System("w", "world", {"warp_min": 0.8}).key(0)
    assert System("a", "world", {"warp_min": 0.9}).key(0) == System("b", "world", {"warp_min": 0.9}).key(0)


def _rewrite_first_wav(data_dir: Path) -> None:
    wav = Path((data_dir / "wav.scp").read_text().split()[1])
    sf.write(wav, np.full(3200, 0.2, dtype=np.float32), 16000, subtype="PCM_16")  # new audio


def _changed(system, change) -> set[str]:
    before = _keys(plan(_run()), system)
    change()
    after = _keys(plan(_run()), system)
    return {k for k in before if before[k] != after[k]}


def test_corpus_content_changes_the_keys_that_read_it(system):
    # the ignorant attacker enrolls on original speech; quality compares with the original trials
    assert _changed(system, lambda: _rewrite_first_wav(system.original[names.enrolls("test")])) == {"privacy OA test"}
    assert _changed(system, lambda: _rewrite_first_wav(system.original[names.trials("test", "f")])) == {"quality"}
    anon_f = system.sets[names.trials("test", "f")]
    text = anon_f / "text"
    assert _changed(system, lambda: text.write_text(text.read_text().replace("hello", "hullo"))) == {
        "privacy OA test", "privacy AA-lazy test", "privacy AA-semi test", "wer test", "quality"}


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
    def plan(cls, run):
        return [cls(CountSettings(run.n_boot))]

    def inputs(self, data):
        return {"enroll": data.sets[names.enrolls("test")]}

    def run(self, data, env):
        CountEvaluator.runs += 1
        n = len((self.inputs(data)["enroll"] / "wav.scp").read_text().splitlines())
        return CountResult(n * self.settings.factor)


def test_benchmark_reuses_and_recomputes_a_registered_evaluator(tmp_path, system, monkeypatch):
    monkeypatch.setitem(registry.EVALUATORS, "count", f"{__name__}:CountEvaluator")
    monkeypatch.setitem(RESULT_KINDS, "count", (CountResult, 0))
    bench = Benchmark(tmp_path / "out", PROFILES["quick"], [], seed=0, quiet=True)
    env = Env(tmp_path / "cache", quiet=True)
    [ev] = plan(_run(), ["count"])
    CountEvaluator.runs = 0
    assert bench._evaluate(ev, system, env) == CountResult(2 * 10)
    assert bench._evaluate(ev, system, env) == CountResult(2 * 10) and CountEvaluator.runs == 1
    assert bench.recomputed == ["count-sys"]
    [ev5] = plan(_run(n_boot=5), ["count"])  # other settings
    assert bench._evaluate(ev5, system, env) == CountResult(2 * 5) and CountEvaluator.runs == 2
    enroll = system.sets[names.enrolls("test")]
    os.utime(next((enroll.parent / "audio").iterdir()), ns=(1, 1))  # audio touched: content may differ
    bench._evaluate(ev5, system, env)
    assert CountEvaluator.runs == 3
    other_seed = Benchmark(tmp_path / "out", PROFILES["quick"], [], seed=1, quiet=True)
    other_seed._evaluate(ev5, system, env)
    assert CountEvaluator.runs == 4


def test_register_kind_refuses_a_clash():
    with pytest.raises(ValueError, match="already registered"):
        register_kind("privacy", CountResult, 0)
