"""``voxanon benchmark``: anonymize with several systems, attack, measure utility, rank, report.

Stages (each cached under the output folder, so a rerun or a resumed run
recomputes nothing that finished):

1. data: build or reuse the offline corpus, or take the user's VPC directories;
2. anonymize every set with every system (the corpus runner; resumable);
3. the evaluators' shared work on original data (:class:`~voxanon.evaluation.evaluator.Prerequisite`: the
   SER evaluator's emotion recognisers, trained per fold on original emotion data);
4. privacy: OO, OA (ignorant), AA lazy-informed (pretrained GE2E) and the
   profile's semi-informed rungs (:mod:`voxanon.evaluation.ladder`), each
   trained on the system's anonymized training set (original data for the
   reference row) and selected on its dev trials, per split and gender;
5. utility: WER of the offline ASR on the merged trial sets, UAR of the SER
   trained per fold on original emotion data, DNSMOS / ρF0 / G_VD; with the
   profile's extra evaluators (``full``), content privacy (C-EER from reference
   and ASR transcripts, the ASR hypotheses shared with the WER) and SER
   learnability (trained on the anonymized emotion folds, tested on original);
6. ranking (privacy categories from each system's strongest attacker, ranks,
   Pareto fronts) and the report.

Stages 4-5 are a loop over systems × evaluators (:mod:`voxanon.evaluation.evaluator`), each planned with its
options from the profile (:meth:`Profile.values`: its fields and its ``settings``).
Each stage result is a JSON file under ``<out>/stages``; it is reused when its
key matches, and every key is derived from what the stage depends on: the
evaluator's settings, the content of the data it reads, the content of the
models it loads and the seed. One system failing never stops the others: its
error is recorded and the report shows it.
"""

from __future__ import annotations

import dataclasses
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
from voxanon.data.layout import (
    CORPUS_FILE,
    EMO,
    REAL,
    REAL_SPEECH,
    Layout,
    find_layout,
    trials,
)
from voxanon.errors import ConfigError
from voxanon.evaluation import evaluator as registry
from voxanon.evaluation.evaluator import (
    Env,
    Evaluator,
    RunSettings,
    SystemData,
    options_of,
    plan,
)
from voxanon.evaluation.fingerprint import data_fingerprint, digest
from voxanon.evaluation.ladder import LadderEvaluator, semi_informed_attacker
from voxanon.evaluation.results import RESULT_KINDS, from_dict
from voxanon.evaluation.scenarios import PRIMARY_SCENARIO
from voxanon.jobs.benchmark.profiles import PROFILES, Profile  # noqa: F401  (re-exported)
from voxanon.jobs.benchmark.records import (
    ORIGINAL,
    SCHEMA_VERSION,
    BenchmarkResults,
    ConditionRun,
    DataInfo,
    Primary,
    RunInfo,
    Summary,
    SystemRecord,
    rank,
    summarize,
)

#: Whisper punctuates and writes digits; the VPC's CTC recogniser does not (see voxanon.metrics.text.normalize_spoken)
WER_NORMALIZATION = "spoken"
#: the ASR of an English corpus when --asr is not given (another language's: :func:`default_asr`)
ENGLISH_ASR = "whisper-tiny"


def corpus_language(description: dict) -> str:
    """The language a corpus's ``corpus.json`` (or a layout's description) records; ``en`` when it records none."""
    return description.get("language") or "en"


def default_asr(language: str) -> str:
    """The recogniser of a corpus in ``language``: Whisper tiny.en for English, multilingual Whisper base
    told the language for any other."""
    return ENGLISH_ASR if language == "en" else f"whisper-base:{language}"


def asr_scoring(language: str) -> tuple[str, str]:
    """(normalisation, error unit) of transcripts in ``language``: English as the VPC's (numbers spelt out,
    words), another language's words or characters in the basic normalisation
    (:func:`voxanon.metrics.text.default_normalization`, :func:`voxanon.metrics.text.error_unit`)."""
    from voxanon.metrics.text import default_normalization, error_unit

    return (WER_NORMALIZATION if language == "en" else default_normalization(language)), error_unit(language)


@dataclass(frozen=True)
class System:
    """One row of the benchmark: a label, a registered method (None = original speech) and its parameters."""

    label: str
    method: str | None = None
    params: dict = field(default_factory=dict)

    def key(self, seed: int, models: dict[str, str] | None = None) -> str:
        """Stable id of the system's settings, the seed and the content digests of the model files it loads
        (``Anonymizer.settings()["models"]``): names its anonymized output, so retrained weights are never
        taken for the old ones' output."""
        return digest([self.method, self.params, seed] + ([models] if models else []))[:10]


def default_systems(profile: Profile | None = None) -> list[System]:
    """Original speech plus every registered anonymizer that runs offline (or the profile's list), with defaults."""
    methods = [name for name, cls in available().items() if cls.offline]
    if profile is not None and profile.systems is not None:
        methods = [n for n in profile.systems if n in methods]
    return [System(ORIGINAL)] + [System(name, name) for name in methods]


def parse_system(text: str) -> System:
    """``original``, ``NAME`` or ``LABEL=NAME:{json params}`` (e.g. ``w09=world:{"warp_min":0.9}``)."""
    if text == ORIGINAL:
        return System(ORIGINAL)
    label, _, rest = text.partition("=") if "=" in text.split(":", 1)[0] else (None, "", text)
    method, _, params = rest.partition(":")
    try:
        parsed = json.loads(params) if params else {}
    except json.JSONDecodeError as exc:
        raise ConfigError(f"system {text!r}: parameters are not valid JSON ({exc})") from None
    return System(label or method, method, parsed)


#: what :meth:`StageCache.get` returns for a stage not saved under the settings asked for
MISSING = object()


class StageCache:
    """JSON results of finished stages, keyed by name and the stage's key material."""

    def __init__(self, root: Path) -> None:
        self.root = root / "stages"
        self.root.mkdir(parents=True, exist_ok=True)

    def get(self, name: str, settings: dict) -> Any:
        """The saved result of ``name`` under ``settings``, or :data:`MISSING`.

        ``settings`` is key material derived from what the stage depends on
        (never written by hand; see :meth:`Evaluator.key`).
        """
        path = self.root / f"{name}.json"
        if path.is_file():
            saved = json.loads(path.read_text(encoding="utf-8"))
            if saved.get("settings") == json.loads(json.dumps(settings, default=str)):  # as stored: no tuples
                return saved["result"]
        return MISSING

    def run(self, name: str, settings: dict, compute: Callable[[], Any]) -> Any:
        """The cached result of ``name`` under ``settings``, computing (and saving) it when absent."""
        result = self.get(name, settings)
        if result is MISSING:
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


@dataclass
class Benchmark:
    """A configured benchmark run; :meth:`run` returns the typed results (their summary in :attr:`summary`) and
    writes the report."""

    out: Path
    profile: Profile
    systems: list[System]
    data_root: Path | None = None
    seed: int = 0
    jobs: int | None = None
    asr: str | None = None  # None: the corpus language's (default_asr)
    pretrained: str = "ge2e"
    quiet: bool = False

    def __post_init__(self) -> None:
        self.out = Path(self.out).resolve()
        self.cache = StageCache(self.out)
        self.errors: dict[str, list[str]] = {}
        self.recomputed: list[str] = []  # stages computed (not read from the cache) by this run
        self.summary: Summary | None = None  # the results' summary rows, once :meth:`run` finished
        if self.profile.conditions:  # a bad name fails before any work
            from voxanon.jobs.benchmark.conditions import parse_conditions, parse_places

            parse_conditions(self.profile.conditions), parse_places(self.profile.condition_places)

    # -- helpers -----------------------------------------------------------------------------
    def _fail(self, system: str, stage: str, exc: Exception | str) -> None:
        msg = f"{stage}: {exc if isinstance(exc, str) else f'{type(exc).__name__}: {exc}'}"
        self.errors.setdefault(system, []).append(msg)
        if not self.quiet:
            print(f"  ! {system}: {msg}", flush=True)

    def _cached(self, name: str, key: dict[str, Any], compute: Callable[[], Any]) -> Any:
        def counted() -> Any:
            self.recomputed.append(name)
            return compute()

        return self.cache.run(name, key, counted)

    def _layout(self) -> Layout:
        """The corpus: ``--data``, or the profile's offline corpus for this seed, built on first use.

        ``OUT/corpus`` holds the first one built; a run whose engine, size or seed differs builds (or reuses) its
        own ``OUT/corpus-<engine>-<size>-seed<seed>`` and says in one line what differs.
        """
        if self.data_root is not None:
            return find_layout(self.data_root)
        from voxanon.jobs.corpus.build import build_corpus

        want = {"engine": self.profile.corpus_engine, "size_name": self.profile.corpus_size, "seed": self.seed}
        language = self.profile.corpus_language
        accented = self.profile.corpus_accented and language != "en"  # an English corpus's voices are English
        root = self.out / "corpus"
        if (root / CORPUS_FILE).is_file():
            built = json.loads((root / CORPUS_FILE).read_text(encoding="utf-8"))
            differs = [f"{k.removesuffix('_name')} {want[k]} (it holds {built.get(k)})" for k in want
                       if built.get(k) != want[k]]
            if corpus_language(built) != language:
                differs.append(f"language {language} (it holds {corpus_language(built)})")
            if built.get("accented", False) != accented:
                differs.append(f"accented speakers {accented} (it holds {built.get('accented', False)})")
            if differs:
                root = self.out / ("corpus-{engine}-{size_name}-seed{seed}".format(**want)
                                   + ("" if language == "en" else f"-{language}") + ("-accented" if accented else ""))
                if not self.quiet:
                    print(f"benchmark: {self.out / 'corpus'} is another corpus, this run needs "
                          f"{', '.join(differs)}: using {root}", flush=True)
        if not (root / CORPUS_FILE).is_file():
            build_corpus(root, size=want["size_name"], seed=self.seed, jobs=self.jobs, quiet=self.quiet,
                         engine=want["engine"], language=language, accented=accented)
        return find_layout(root)

    def _anonymize(self, system: System, sets: dict[str, Path], tag: str | None = None) -> dict[str, Any]:
        """Anonymize every set of ``sets`` (short name -> data directory) for ``system`` (finished utterances are
        skipped by the runner).

        Each output folder is named by the system's settings, the seed, the
        weights it loads and the content of its source set, so changing any of
        them writes a new one (``tag``: a recording condition's sets, in a folder
        of their own). Returns the output paths, the failure count, the system's
        key and the real-time factor of the audio processed, remembered from the
        run that did the work.
        """
        from voxanon.jobs.runner.anonymize import anonymize_corpus

        anonymizer = build(system.method, system.params)
        paths, audio, wall, failed = {}, 0.0, 0.0, 0
        key = system.key(self.seed, anonymizer.settings().get("models"))
        folder = self.out / "anon" / f"{system.label}-{key}"
        for name, src in sets.items():
            dst = (folder / tag if tag else folder) / f"{name}-{data_fingerprint(src)[:8]}"
            summary = anonymize_corpus(src, dst, anonymizer, seed=self.seed, jobs=self.jobs, quiet=self.quiet)
            paths[name] = str(dst)
            failed += summary.failed
            if summary.done:  # only freshly processed audio tells the speed
                audio += summary.audio_seconds
                wall += summary.wall_seconds
        speed = {"rtf": wall / audio if audio else None, "audio_seconds": audio, "jobs": self.jobs or os.cpu_count()}
        settings = {"sets": sorted(paths.values())}
        stage = f"speed-{system.label}" + (f"@{tag}" if tag else "")
        if speed["rtf"] is None:  # nothing new: the speed measured when the work was done
            speed = self.cache.run(stage, settings, lambda: speed)
        else:
            self.cache.save(stage, settings, speed)
        return {"paths": paths, "failed": failed, "key": key, **speed}

    def _prepare(self, evaluators: list[Evaluator], original: dict[str, Path], env: Env) -> dict[str, Path]:
        """Do (or reuse) every prerequisite the evaluators declare on the original sets, each once, into
        ``<out>/<name>/<digest of its key>``; their folders by :attr:`~voxanon.evaluation.evaluator.Prerequisite.id`
        (a failed one is recorded and left out, so the evaluators that need it do not run)."""
        done: dict[str, Path] = {}
        tried: set[str] = set()
        for ev in evaluators:
            for need in ev.prerequisites(original):
                if need.id in tried:
                    continue
                tried.add(need.id)
                folder = self.out / need.id
                try:
                    self._cached(need.id.replace("/", "-"), need.key, lambda: need.make(folder, env))
                except Exception as exc:
                    self._fail(ORIGINAL, need.what or need.name, exc)
                    continue
                done[need.id] = folder
        return done

    def _evaluate(self, todo: list[tuple[Evaluator, SystemData]], env: Env,
                  tags: dict[str, str] | None = None) -> dict[tuple[str, str], Any]:
        """Typed results by (system, evaluator name): from the cache when nothing they depend on changed, else
        computed on :mod:`~voxanon.jobs.benchmark.eval_workers` (``jobs`` at a time) and saved.

        ``tags`` (system label -> tag) sets a recording condition's stages apart from the clean run's: the tag
        ends each stage's name and the system's name in an error."""
        from voxanon.jobs.benchmark.eval_workers import run_units, units

        tags = tags or {}
        stages, saved, missing = {}, {}, []

        def who(label: str) -> str:
            return f"{label} [{tags[label]}]" if label in tags else label

        for ev, data in todo:
            try:  # the key reads the inputs' content
                name = "-".join((ev.kind, data.label, *ev.slot))
                if data.label in tags:
                    name += f"@{tags[data.label]}"
                stages[data.label, ev.name] = name, ev.key(data, self.seed)
            except Exception as exc:
                self._fail(who(data.label), ev.name, exc)
                continue
            result = self.cache.get(*stages[data.label, ev.name])
            if result is MISSING:
                missing.append((ev, data))
            else:
                saved[data.label, ev.name] = result
        for unit, outcomes in run_units(units(missing), env, self.jobs or len(os.sched_getaffinity(0))):
            for ev, (result, error) in zip(unit.evaluators, outcomes):
                if error is not None:
                    self._fail(who(unit.data.label), ev.name, error)
                    continue
                name, key = stages[unit.data.label, ev.name]
                self.cache.save(name, key, result)
                self.recomputed.append(name)
                saved[unit.data.label, ev.name] = result
        typed = {}
        for ev, data in todo:
            if (data.label, ev.name) in saved:
                try:
                    typed[data.label, ev.name] = from_dict(RESULT_KINDS[ev.kind][0], saved[data.label, ev.name],
                                                           ev.name)
                except Exception as exc:  # a saved result this version cannot read
                    self._fail(who(data.label), ev.name, exc)
        return typed

    def _conditions(self, original: dict[str, str], anon_paths: dict[str, dict[str, str]],
                    records: dict[str, dict[str, Any]], evaluators: list[Evaluator], env: Env,
                    synthetic: bool) -> list[ConditionRun]:
        """Every system's privacy and WER under each recording condition, applied to the input and/or the
        output (:mod:`voxanon.jobs.benchmark.conditions`); stages cached as the clean run's are."""
        from voxanon.jobs.benchmark.conditions import (
            INPUT,
            condition_set,
            parse_conditions,
        )

        evs = [e for e in evaluators if e.under_conditions]
        # no SER and no real-speech check under a condition
        sources = {k: Path(v) for k, v in original.items() if k not in (EMO, REAL_SPEECH)}
        runs = []
        for cond in parse_conditions(self.profile.conditions):
            def degrade(source: str, sets: dict[str, Path]) -> tuple[dict[str, Path], int]:
                out, failed = {}, 0
                for name, src in sets.items():
                    dst = self.out / "conditions" / cond.name / source / f"{name}-{data_fingerprint(src)[:8]}"
                    failed += condition_set(cond, src, dst, seed=self.seed, jobs=self.jobs, quiet=self.quiet)
                    out[name] = dst
                return out, failed

            try:
                degraded, failed_original = degrade(ORIGINAL, sources)
            except Exception as exc:
                self._fail(f"{ORIGINAL} [{cond.name}]", "condition", exc)
                continue
            for place in self.profile.condition_places:
                tag = f"{cond.name}-{place}"
                systems, cond_records, paths = {}, {}, {}
                for s in self.systems:
                    rec = records[s.label]
                    try:
                        if s.method is None:
                            sets, failed = degraded, failed_original
                        elif place == INPUT:
                            info = self._anonymize(s, degraded, tag=cond.name)
                            sets, failed = {k: Path(v) for k, v in info["paths"].items()}, info["failed"]
                        else:
                            clean = anon_paths.get(s.label)
                            if clean is None:  # its clean anonymization failed (recorded already)
                                continue
                            sets, failed = degrade(f"{s.label}-{rec['key']}", {k: Path(clean[k]) for k in sources})
                    except Exception as exc:  # one system failing never stops the others
                        self._fail(f"{s.label} [{tag}]", "condition" if place != INPUT else "anonymize", exc)
                        continue
                    # the ignorant attacker's enrollment: degraded speech for the input, clean for the output
                    reference = degraded if place == INPUT or s.method is None else sources
                    systems[s.label] = SystemData(s.label, s.method is not None, sets, reference, synthetic=synthetic)
                    cond_records[s.label] = {"method": s.method, "params": s.params, "key": rec["key"],
                                             "failed_utterances": failed, "results": {}}
                    paths[s.label] = {k: str(v) for k, v in sets.items()}
                todo = [(ev, data) for ev in evs for data in systems.values() if ev.applies(data)]
                # the original row is the same under both places: one stage, computed once
                tags = {label: (cond.name if records[label]["method"] is None else tag) for label in systems}
                found = self._evaluate(todo, env, tags)
                for ev, data in todo:
                    if (data.label, ev.name) in found:
                        cond_records[data.label]["results"][(ev.kind, *ev.slot)] = found[data.label, ev.name]
                runs.append(ConditionRun(cond.settings(), cond.describe(), place,
                                         {k: SystemRecord(**v) for k, v in cond_records.items()}, paths))
        return runs

    # -- stages --------------------------------------------------------------------------------
    def run(self) -> BenchmarkResults:
        """Run every stage and write ``results.json``, the CSV tables and ``report.html``."""
        from voxanon.jobs.report.write import write_outputs

        t0 = time.monotonic()
        stages = Stages(7 if self.profile.conditions else 6, self.quiet)
        stages.step("data")
        layout = self._layout()
        language = corpus_language(layout.description)
        asr = self.asr or default_asr(language)
        normalization, unit = asr_scoring(language)
        if language != "en" and not self.quiet:
            print(f"benchmark: the corpus is in {language!r}: ASR {asr}, {normalization} normalisation, "
                  f"{'CER' if unit == 'char' else 'WER'}", flush=True)
        splits = [s for s in self.profile.splits if s in layout.splits] or layout.splits
        run = RunSettings(splits=tuple(splits), n_boot=self.profile.n_boot, seed=self.seed, asr=asr,
                          wer_normalization=normalization, pretrained=self.pretrained, asr_unit=unit,
                          language=language)
        evaluators = plan(run, [*registry.EVALUATORS, *self.profile.extra_evaluators], self.profile.values())
        # e.g. the attacker rungs are selected on dev: its sets are anonymized even when only test is attacked
        extra = [s for ev in evaluators for s in ev.extra_splits() if s in layout.splits]
        original = {name: str(p) for name, p in layout.sets(list(dict.fromkeys(extra + splits))).items()}
        records: dict[str, dict[str, Any]] = {
            s.label: {"method": s.method, "params": s.params, "key": s.key(self.seed), "results": {}}
            for s in self.systems}

        stages.step(f"anonymize {len(self.systems) - 1} systems")
        anon_paths: dict[str, dict[str, str]] = {}
        for s in self.systems:
            if s.method is None:
                anon_paths[s.label] = original
                continue
            try:
                info = self._anonymize(s, layout.sets(list(dict.fromkeys(extra + splits))))
            except Exception as exc:  # one broken system must not stop the benchmark
                self._fail(s.label, "anonymize", exc)
                continue
            anon_paths[s.label] = info["paths"]
            records[s.label].update(key=info["key"], rtf=info["rtf"], rtf_jobs=info["jobs"],
                                    failed_utterances=info["failed"])

        stages.step("prepare: the evaluators' shared work on original data (e.g. the emotion recognisers)")
        env = Env(self.out / "cache", quiet=self.quiet)
        # the original sets as the evaluators read them: with the corpus's real recordings, never anonymized
        reference = {k: Path(v) for k, v in original.items()} | ({REAL: layout.real} if layout.real else {})
        prepared = self._prepare(evaluators, reference, env)
        systems = {label: SystemData(label, records[label]["method"] is not None,
                                     {k: Path(v) for k, v in paths.items()}, reference, synthetic=layout.synthetic,
                                     prepared=prepared)
                   for label, paths in anon_paths.items()}
        stages.step(f"evaluate: {len(systems)} systems x {len(evaluators)} evaluators")
        todo = [(ev, data) for ev in evaluators for data in systems.values() if ev.applies(data)]
        results_by = self._evaluate(todo, env)
        for ev, data in todo:  # in plan order, whatever order the workers finished in
            if (data.label, ev.name) in results_by:
                records[data.label]["results"][(ev.kind, *ev.slot)] = results_by[data.label, ev.name]

        condition_runs = []
        if self.profile.conditions:
            stages.step(f"recording conditions: {', '.join(self.profile.conditions)} "
                        f"on the {' and the '.join(self.profile.condition_places)}")
            condition_runs = self._conditions(original, anon_paths, records, evaluators, env, layout.synthetic)

        stages.step("ranking")
        record_objs = {label: SystemRecord(**r) for label, r in records.items()}
        info = RunInfo(seed=self.seed, asr=asr, wer_normalization=normalization, language=language, error_unit=unit,
                       pretrained_encoder=self.pretrained,
                       semi_informed_attacker=semi_informed_attacker(
                           options_of("ladder", LadderEvaluator, self.profile.values())),
                       primary=Primary(PRIMARY_SCENARIO, splits[-1]))
        results = BenchmarkResults(
            schema_version=SCHEMA_VERSION, voxanon_version=__version__,
            created=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            profile=json.loads(json.dumps(self.profile.record())),  # as results.json holds it
            settings=info, versions=_versions(),
            machine={"cpu_count": os.cpu_count(), "platform": platform.platform()},
            data=DataInfo(str(layout.root), layout.synthetic, splits, layout.description),
            systems=record_objs, errors=self.errors, paths=anon_paths, ranking=None, elapsed_seconds=0.0,
            conditions=condition_runs)
        self.summary = summarize(results)
        results = dataclasses.replace(results, ranking=rank(self.summary),
                                      elapsed_seconds=time.monotonic() - t0)

        stages.step("report")
        listen = listening_clips(self.out, results, self.profile.listen_utts)
        write_outputs(self.out, results, listen, self.summary)
        return results


@dataclass(frozen=True)
class ListenRow:
    """One utterance: its id, transcript and a decoded clip per system (None where it failed)."""

    utt: str
    text: str
    clips: list[Path | None]


@dataclass(frozen=True)
class ListenTable:
    """Original and each system's output for a few trial utterances, decoded to WAV files."""

    systems: list[str]
    rows: list[ListenRow]


def listening_clips(out: Path, results: BenchmarkResults, n: int) -> ListenTable | None:
    """Decode ``n`` trial utterances (both genders) of the original and of every system into ``<out>/listen``.

    Decoding first lets pipe entries of ``wav.scp`` play in the report; None
    when there is no original data to compare.
    """
    from voxanon.audio.io import AudioError, load_audio, write_wav
    from voxanon.data.kaldi import read_data_dir

    split, paths = results.settings.primary.split, results.paths
    if ORIGINAL not in paths:
        return None
    picks = []
    for key, k in ((trials(split, "f"), (n + 1) // 2), (trials(split, "m"), n // 2)):
        data = read_data_dir(paths[ORIGINAL][key])
        picks += [(key, data, utt) for utt in data.utts[:k]]
    rows = []
    for key, data, utt in picks:
        clips: list[Path | None] = []
        for system, sets in paths.items():
            source = data.wav_scp[utt] if system == ORIGINAL else str(Path(sets[key]) / "wav" / f"{utt}.wav")
            clip = out / "listen" / system / f"{utt}.wav"
            try:
                write_wav(clip, *load_audio(source))  # always: a cached clip could be of older output
                clips.append(clip)
            except AudioError:
                clips.append(None)
        rows.append(ListenRow(utt, data.text.get(utt, ""), clips))
    return ListenTable(list(paths), rows)
