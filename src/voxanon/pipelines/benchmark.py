"""``voxanon benchmark``: anonymize with several systems, attack, measure utility, rank, report.

Stages (each cached under the output folder, so a rerun or a resumed run
recomputes nothing that finished):

1. data: build or reuse the offline corpus, or take the user's VPC directories;
2. anonymize every set with every system (the corpus runner; resumable);
3. attackers: train the semi-informed ECAPA per system on its anonymized
   training set (and one on original data for the reference row);
4. privacy: OO, OA (ignorant), AA lazy-informed (pretrained GE2E) and AA
   semi-informed (retrained ECAPA), per split and gender;
5. utility: WER of the offline ASR on the merged trial sets, UAR of the SER
   trained per fold on original emotion data, DNSMOS / ρF0 / G_VD;
6. ranking (privacy categories, ranks, Pareto fronts) and the report.

Each stage result is a JSON file under ``<out>/stages``; it is reused when its
settings key matches. One system failing never stops the others: its error is
recorded and the report shows it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

from voxanon import __version__
from voxanon.anonymizers.registry import available, build
from voxanon.atomic import write_text
from voxanon.data.kaldi import DataDir, read_data_dir
from voxanon.pipelines.layout import Layout, find_layout

ORIGINAL = "original"
SCENARIOS = ("OO", "OA", "AA-lazy", "AA-semi")
PRIMARY_SCENARIO = "AA-semi"
#: Whisper punctuates; the VPC's CTC recogniser does not (see voxanon.metrics.text.normalize_words)
WER_NORMALIZATION = "words"


@dataclass(frozen=True)
class Profile:
    """How much work a benchmark does.

    ``splits`` get the privacy attacks, ``wer_splits`` the ASR (its most costly
    utility measure); ``systems`` limits the default system list (None: all offline).
    """

    name: str
    corpus_size: str
    splits: tuple[str, ...]
    wer_splits: tuple[str, ...]
    attacker_epochs: int
    ser_epochs: int
    n_boot: int
    quality_utts: int
    listen_utts: int
    systems: tuple[str, ...] | None = None


PROFILES = {
    # CI and first contact: three systems, test split, short training
    "quick": Profile("quick", "small", ("test",), ("test",), attacker_epochs=4, ser_epochs=6, n_boot=200,
                     quality_utts=4, listen_utts=2, systems=("mcadams", "world")),
    # the main job: every offline anonymizer on the small corpus; attacks on dev and test, WER on test
    "default": Profile("default", "small", ("dev", "test"), ("test",), attacker_epochs=8, ser_epochs=10,
                       n_boot=1000, quality_utts=8, listen_utts=4),
    # more speakers and trials for tighter intervals (an hour or more on 2 cores)
    "full": Profile("full", "default", ("dev", "test"), ("dev", "test"), attacker_epochs=15, ser_epochs=15,
                    n_boot=1000, quality_utts=40, listen_utts=6),
}


@dataclass(frozen=True)
class System:
    """One row of the benchmark: a label, a registered method (None = original speech) and its parameters."""

    label: str
    method: str | None = None
    params: dict = field(default_factory=dict)

    def key(self) -> str:
        """Stable id of the system's settings (names cached outputs)."""
        text = json.dumps([self.method, self.params], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:10]


def default_systems(profile: Profile | None = None) -> list[System]:
    """Original speech plus every registered anonymizer that runs offline (or the profile's list), with defaults."""
    names = [name for name, cls in available().items() if cls.offline]
    if profile is not None and profile.systems is not None:
        names = [n for n in profile.systems if n in names]
    return [System(ORIGINAL)] + [System(name, name) for name in names]


def parse_system(text: str) -> System:
    """``original``, ``NAME`` or ``LABEL=NAME:{json params}`` (e.g. ``w09=world:{"warp_min":0.9}``)."""
    if text == ORIGINAL:
        return System(ORIGINAL)
    label, _, rest = text.partition("=") if "=" in text.split(":", 1)[0] else (None, "", text)
    method, _, params = rest.partition(":")
    try:
        parsed = json.loads(params) if params else {}
    except json.JSONDecodeError as exc:
        raise ValueError(f"system {text!r}: parameters are not valid JSON ({exc})") from None
    return System(label or method, method, parsed)


class StageCache:
    """JSON results of finished stages, keyed by name and settings."""

    def __init__(self, root: Path) -> None:
        self.root = root / "stages"
        self.root.mkdir(parents=True, exist_ok=True)

    def run(self, name: str, settings: dict, compute: Callable[[], Any]) -> Any:
        """The cached result of ``name`` under ``settings``, computing (and saving) it when absent."""
        path = self.root / f"{name}.json"
        settings = json.loads(json.dumps(settings, default=str))  # compare as stored (tuples become lists)
        if path.is_file():
            saved = json.loads(path.read_text(encoding="utf-8"))
            if saved.get("settings") == settings:
                return saved["result"]
        result = compute()
        self.save(name, settings, result)
        return result

    def save(self, name: str, settings: dict, result: Any) -> None:
        """Store ``result`` of stage ``name`` atomically."""
        write_text(self.root / f"{name}.json", json.dumps({"settings": settings, "result": result}, default=str))


class Stages:
    """Overall progress across stages: ``[stage k/N] what``."""

    def __init__(self, total: int, quiet: bool) -> None:
        self.total, self.done, self.quiet = total, 0, quiet
        self.start = time.monotonic()

    def step(self, what: str) -> None:
        """Announce the next stage."""
        self.done += 1
        if not self.quiet:
            elapsed = time.monotonic() - self.start
            print(f"[stage {self.done}/{self.total} | {elapsed:6.0f} s] {what}", flush=True)


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "voxanon": __version__}
    for pkg in ("numpy", "scipy", "torch", "pyworld", "faster-whisper", "resemblyzer", "piper-tts", "speechmos"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def _merged(dirs: list[Path], name: str) -> DataDir:
    """One data directory holding the utterances of several (for WER over female + male trials)."""
    merged = DataDir(path=Path(name))
    for d in dirs:
        data = read_data_dir(d)
        merged.wav_scp.update(data.wav_scp)
        merged.text.update(data.text)
    return merged


@dataclass
class Benchmark:
    """A configured benchmark run; :meth:`run` returns the results dict and writes the report."""

    out: Path
    profile: Profile
    systems: list[System]
    data_root: Path | None = None
    seed: int = 0
    jobs: int | None = None
    asr: str = "whisper-tiny"
    pretrained: str = "ge2e"
    quiet: bool = False

    def __post_init__(self) -> None:
        self.out = Path(self.out).resolve()
        self.cache = StageCache(self.out)
        self.errors: dict[str, list[str]] = {}
        self.synthetic = False  # set from the data layout when the run starts

    # -- helpers -----------------------------------------------------------------------------
    def _fail(self, system: str, stage: str, exc: Exception) -> None:
        msg = f"{stage}: {type(exc).__name__}: {exc}"
        self.errors.setdefault(system, []).append(msg)
        if not self.quiet:
            print(f"  ! {system}: {msg}", flush=True)

    def _layout(self) -> Layout:
        if self.data_root is not None:
            return find_layout(self.data_root)
        from voxanon.data.synth.build import build_corpus

        root = self.out / "corpus"
        if not (root / "corpus.json").is_file():
            build_corpus(root, size=self.profile.corpus_size, seed=self.seed, jobs=self.jobs, quiet=self.quiet)
        return find_layout(root)

    def _anonymize(self, system: System, layout: Layout, splits: list[str]) -> dict[str, Any]:
        """Anonymize every set for ``system`` (finished utterances are skipped by the runner).

        Returns the output paths, the failure count and the real-time factor of
        the audio processed, remembered from the run that did the work.
        """
        from voxanon.pipelines.anonymize import anonymize_corpus

        anonymizer = build(system.method, system.params)
        paths, audio, wall, failed = {}, 0.0, 0.0, 0
        for name, src in layout.sets(splits).items():
            dst = self.out / "anon" / f"{system.label}-{system.key()}" / name
            summary = anonymize_corpus(src, dst, anonymizer, seed=self.seed, jobs=self.jobs, quiet=self.quiet)
            paths[name] = str(dst)
            failed += summary.failed
            if summary.done:  # only freshly processed audio tells the speed
                audio += summary.audio_seconds
                wall += summary.wall_seconds
        speed = {"rtf": wall / audio if audio else None, "audio_seconds": audio, "jobs": self.jobs or os.cpu_count()}
        settings = {"system": system.key(), "sets": sorted(paths)}
        if speed["rtf"] is None:  # nothing new: the speed measured when the work was done
            speed = self.cache.run(f"speed-{system.label}", settings, lambda: speed)
        else:
            self.cache.save(f"speed-{system.label}", settings, speed)
        return {"paths": paths, "failed": failed, **speed}

    def _attacker(self, label: str, train_dir: str) -> str:
        """Train (or reuse) the semi-informed attacker on ``train_dir``; returns its encoder spec."""
        from voxanon.evaluation.asv_training import TrainConfig, train_attacker

        out = self.out / "attackers" / label
        cfg = TrainConfig(epochs=self.profile.attacker_epochs, seed=self.seed)
        settings = {"train": train_dir, "cfg": dataclasses.asdict(cfg)}
        self.cache.run(f"attacker-{label}", settings,
                       lambda: train_attacker(read_data_dir(train_dir), out, cfg, quiet=self.quiet))
        return f"ecapa:{out / 'best.pt'}"

    # -- stages --------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Run every stage and write ``results.json``, the CSV tables and ``report.html``."""
        from voxanon.pipelines.benchmark_report import write_outputs

        t0 = time.monotonic()
        stages = Stages(7, self.quiet)
        stages.step("data")
        layout = self._layout()
        self.synthetic = layout.synthetic
        splits = [s for s in self.profile.splits if s in layout.splits] or layout.splits
        systems: dict[str, dict[str, Any]] = {
            s.label: {"method": s.method, "params": s.params, "key": s.key()} for s in self.systems}
        original = {name: str(p) for name, p in layout.sets(splits).items()}

        stages.step(f"anonymize {len(self.systems) - 1} systems")
        anon_paths: dict[str, dict[str, str]] = {}
        for s in self.systems:
            if s.method is None:
                anon_paths[s.label] = original
                continue
            try:
                info = self._anonymize(s, layout, splits)
            except Exception as exc:  # one broken system must not stop the benchmark
                self._fail(s.label, "anonymize", exc)
                continue
            anon_paths[s.label] = info["paths"]
            systems[s.label].update(rtf=info["rtf"], rtf_jobs=info["jobs"], failed_utterances=info["failed"])

        stages.step("train semi-informed attackers")
        attackers: dict[str, str] = {}
        if layout.train:
            for label, paths in anon_paths.items():
                try:
                    attackers[label] = self._attacker(label, paths["train"])
                except Exception as exc:
                    self._fail(label, "attacker training", exc)

        stages.step("privacy: speaker verification attacks")
        for label, paths in anon_paths.items():
            systems[label]["privacy"] = self._privacy(label, paths, original, attackers.get(label), splits)

        stages.step("utility: ASR word error rate")
        for label, paths in anon_paths.items():
            systems[label]["wer"] = self._wer(label, paths, [s for s in splits if s in self.profile.wer_splits] or splits[-1:])

        stages.step("utility: emotion recognition")
        if layout.emo:
            ser_models = self._ser_models(original["emo"])
            for label, paths in anon_paths.items():
                if ser_models:
                    systems[label]["ser"] = self._ser(label, paths["emo"], ser_models)

        stages.step("quality, ranking and report")
        for label, paths in anon_paths.items():
            if label != ORIGINAL:
                systems[label]["quality"] = self._quality(label, paths, original, splits[-1])
        results = {
            "voxanon_version": __version__,
            "created": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "profile": dataclasses.asdict(self.profile),
            "settings": {"seed": self.seed, "asr": self.asr, "wer_normalization": WER_NORMALIZATION,
                         "pretrained_encoder": self.pretrained,
                         "semi_informed_attacker": f"ECAPA-TDNN (small), {self.profile.attacker_epochs} epochs",
                         "primary": {"scenario": PRIMARY_SCENARIO, "split": splits[-1]}},
            "versions": _versions(),
            "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
            "data": {"root": str(layout.root), "synthetic": layout.synthetic, "splits": splits,
                     "description": layout.description},
            "systems": systems,
            "errors": self.errors,
            "paths": anon_paths,
        }
        results["elapsed_seconds"] = time.monotonic() - t0
        write_outputs(self.out, results)
        return results

    def _privacy(self, label: str, paths: dict, original: dict, attacker: str | None, splits: list[str]) -> dict:
        from voxanon.evaluation.privacy import run_scenarios

        wanted = ["OO", "OA", "AA-lazy"] if label == ORIGINAL else ["OA", "AA-lazy"]
        out: dict[str, dict] = {}
        for split in splits:
            def trials(p: dict) -> list[str]:
                return [p[f"{split}_trials_f"], p[f"{split}_trials_m"]]

            common = dict(orig_enroll=original[f"{split}_enrolls"], orig_trials=trials(original),
                          anon_enroll=paths[f"{split}_enrolls"], anon_trials=trials(paths),
                          cache_dir=self.out / "cache" / "embeddings", n_boot=self.profile.n_boot, quiet=self.quiet)
            try:
                res = self.cache.run(f"privacy-{label}-{split}", {"paths": paths, "attacker": attacker,
                                                                   "n_boot": self.profile.n_boot},
                                     lambda: self._scenarios(run_scenarios, wanted, attacker, common))
            except Exception as exc:
                self._fail(label, f"privacy {split}", exc)
                continue
            for scenario, r in res.items():
                out.setdefault(scenario, {})[split] = r
        return out

    def _scenarios(self, run_scenarios, wanted: list[str], attacker: str | None, common: dict) -> dict:
        res = run_scenarios(wanted, pretrained=self.pretrained, **common)
        if attacker:
            # the original row's semi-informed attacker is trained on original data (VPC's "orig" line)
            res.update(run_scenarios(["AA-semi"], pretrained=self.pretrained, attacker=attacker, **common))
        for r in res.values():
            r.pop("scores", None)
        return res

    def _wer(self, label: str, paths: dict, splits: list[str]) -> dict:
        from voxanon.evaluation.asr import evaluate_asr
        from voxanon.models.asr import load_asr

        out = {}
        for split in splits:
            dirs = [Path(paths[f"{split}_trials_f"]), Path(paths[f"{split}_trials_m"])]

            def compute() -> dict:
                ev = evaluate_asr(_merged(dirs, f"{label}/{split}_trials"), self._asr(load_asr),
                                  self.out / "cache" / "asr", normalization=WER_NORMALIZATION,
                                  n_boot=self.profile.n_boot, quiet=self.quiet)
                res = ev.to_dict()
                res.pop("utterances", None)
                return res

            try:
                out[split] = self.cache.run(f"wer-{label}-{split}", {"dirs": [str(d) for d in dirs],
                                                                      "asr": self.asr, "normalization": WER_NORMALIZATION}, compute)
            except Exception as exc:
                self._fail(label, f"WER {split}", exc)
        return out

    def _asr(self, load_asr):
        if not hasattr(self, "_asr_model"):
            self._asr_model = load_asr(self.asr)
        return self._asr_model

    def _ser_models(self, emo_dir: str) -> str | None:
        from voxanon.evaluation.ser import train_folds

        models = self.out / "ser_models"
        try:
            self.cache.run("ser-train", {"emo": emo_dir, "epochs": self.profile.ser_epochs},
                           lambda: train_folds(emo_dir, models, epochs=self.profile.ser_epochs, seed=self.seed,
                                               quiet=self.quiet))
        except Exception as exc:
            self._fail(ORIGINAL, "SER training", exc)
            return None
        return str(models)

    def _ser(self, label: str, emo_dir: str, models: str) -> dict | None:
        from voxanon.evaluation.ser import SMOKE_TEST_MESSAGE, evaluate_ser

        def compute() -> dict:
            res = evaluate_ser(emo_dir, models, quiet=self.quiet)
            res.pop("utterances", None)
            if self.synthetic and not res["smoke_test_only"]:  # anonymized copies carry no SYNTHETIC marker
                res.update(smoke_test_only=True, message=SMOKE_TEST_MESSAGE)
            return res

        try:
            return self.cache.run(f"ser-{label}", {"emo": emo_dir, "models": models}, compute)
        except Exception as exc:
            self._fail(label, "SER", exc)
            return None

    def _quality(self, label: str, paths: dict, original: dict, split: str) -> dict | None:
        orig, anon = original[f"{split}_trials_f"], paths[f"{split}_trials_f"]
        orig_m, anon_m = original[f"{split}_trials_m"], paths[f"{split}_trials_m"]
        n = self.profile.quality_utts

        def compute() -> dict:
            from voxanon.evaluation.quality import evaluate_quality

            return evaluate_quality([orig, orig_m], [anon, anon_m], max_utts=n, encoder=self.pretrained,
                                    cache_dir=self.out / "cache" / "embeddings", quiet=self.quiet)

        try:
            return self.cache.run(f"quality-{label}", {"orig": [orig, orig_m], "anon": [anon, anon_m], "n": n},
                                  compute)
        except Exception as exc:
            self._fail(label, "quality", exc)
            return None
