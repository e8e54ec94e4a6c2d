"""``voxanon benchmark``: the main job — anonymize, attack, measure, rank and report."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from voxanon.data.layout import CORPUS_LANGUAGES
from voxanon.errors import EXIT_OK, EXIT_PARTIAL, ConfigError
from voxanon.jobs.benchmark.profiles import PROFILES


def category(cat: int | None) -> str:
    """The VPC privacy category as printed (``>=20``, ``<10``, ``-``)."""
    return f">={cat}" if cat else ("<10" if cat == 0 else "-")


def run(args: argparse.Namespace) -> int:
    from voxanon.jobs.benchmark.run import Benchmark, default_systems, parse_system
    from voxanon.table import format_table

    profile = PROFILES["quick" if args.quick else args.profile]
    added = tuple(e for e in args.add_evaluators or () if e not in profile.extra_evaluators)
    profile = dataclasses.replace(profile, extra_evaluators=profile.extra_evaluators + added)
    if getattr(args, "settings", None):
        from voxanon.evaluation.evaluator import parse_setting

        profile = dataclasses.replace(profile, settings={**profile.settings, **dict(map(parse_setting, args.settings))})
    if args.conditions is not None or args.condition_on is not None:
        from voxanon.jobs.benchmark.conditions import parse_conditions, parse_places

        conditions = (tuple(c.name for c in parse_conditions(args.conditions)) if args.conditions is not None
                      else profile.conditions)
        places = parse_places(args.condition_on) if args.condition_on is not None else profile.condition_places
        if not conditions:
            raise ConfigError("--condition-on needs --conditions (or --profile conditions)")
        profile = dataclasses.replace(profile, conditions=conditions, condition_places=places)
    if args.language is not None:
        if args.data:
            raise ConfigError("--language chooses the offline corpus a run builds; with --data the corpus's own "
                              "language (its corpus.json) is used: leave --language out")
        profile = dataclasses.replace(profile, corpus_language=args.language)
    if args.accented is not None:
        if args.data:
            raise ConfigError("--accented chooses the speakers of the offline corpus a run builds; with --data "
                              "the corpus's own speakers are used: leave --accented out")
        if args.accented and profile.corpus_language == "en":
            raise ConfigError("--accented: accented speakers are other languages' voices reading the corpus's "
                              "language; give --language (or --profile multilingual)")
        profile = dataclasses.replace(profile, corpus_accented=args.accented)
    try:
        systems = [parse_system(s) for s in args.systems] if args.systems else default_systems(profile)
    except ValueError as exc:  # a --system that does not parse
        raise ConfigError(str(exc)) from None
    if not any(s.method is None for s in systems):
        systems.insert(0, parse_system("original"))
    bench = Benchmark(out=Path(args.out), profile=profile,
                      systems=systems, data_root=Path(args.data) if args.data else None, seed=args.seed,
                      jobs=args.jobs, asr=args.asr, pretrained=args.encoder, quiet=args.quiet)
    results = bench.run()
    out = Path(args.out).resolve()
    rank = results.ranking.systems
    summary = bench.summary
    columns = summary.shown("cli")
    rows = [[r.system, *(r[c.name] for c in columns), category(rank[r.system].category if r.system in rank else None)]
            for r in summary.rows]
    print("\n" + format_table(["system", *(c.cli for c in columns), "category"], rows))
    if results.conditions:
        _print_conditions(results, summary)
    if results.errors:
        print(f"\n{len(results.errors)} system(s) had errors; see {out / 'results.json'}")
    print(f"\nreport: {out / 'report.html'}\nresults: {out / 'results.json'}, {out / 'summary.csv'}, "
          f"{out / 'privacy.csv'}" + (f", {out / 'conditions.csv'}" if results.conditions else "")
          + f"\nfigures: {out / 'figures'}")
    return EXIT_PARTIAL if results.errors else EXIT_OK


def _print_conditions(results, summary) -> None:
    """Strongest-attacker EER and WER (the ranking's privacy and required measures) per system under each
    condition and place, beside the clean run's."""
    from voxanon.jobs.benchmark.conditions import compared_columns, condition_summary
    from voxanon.table import format_table

    def cell(row, key: str) -> str:
        value = row.values.get(key) if row is not None else None
        return "-" if value is None else f"{value:.2f}"

    runs = list(results.conditions)
    by_run = [{r.system: r for r in condition_summary(results, run).rows} for run in runs]
    columns = compared_columns(summary)
    header = ["system", *(f"{c.cli} clean" for c in columns)]
    for run in runs:
        header += [f"{c.cli} {run.name} {run.applied_to}" for c in columns]
    rows = []
    for r in summary.rows:
        cells = [r.system, *(cell(r, c.name) for c in columns)]
        for rows_of in by_run:
            cells += [cell(rows_of.get(r.system), c.name) for c in columns]
        rows.append(cells)
    print("\nrecording conditions (EER of the strongest attacker):\n" + format_table(header, rows))


def _evaluator_option(p: argparse.ArgumentParser) -> None:
    from voxanon.evaluation.evaluator import OPTIONAL_EVALUATORS

    p.add_argument("--add-evaluator", dest="add_evaluators", action="append", choices=sorted(OPTIONAL_EVALUATORS),
                   help="run this optional evaluator besides the profile's (content: C-EER of a text speaker "
                        "encoder; learnability, learnability-asr: SER / ASR trained on anonymized speech); "
                        "repeatable; the full profile has them all")


def register(commands) -> None:
    p = commands.top.add_parser(
        "benchmark", help="anonymize, attack, measure utility, rank and write the report",
        description="Runs the VPC-style evaluation for several anonymizers. Without --data it builds (or reuses) "
                    "the offline synthetic corpus under OUT/corpus. Every stage is cached under OUT, keyed by "
                    "what it depends on (settings, data content, models, seed), so a rerun resumes where it "
                    "stopped and recomputes exactly what changed.")
    p.add_argument("--out", default="runs/benchmark", help="output folder (default: runs/benchmark)")
    p.add_argument("--data", help="prepared data root: a `voxanon data synth` corpus or VPC data directories "
                                  "(libri_test_enrolls, ..., IEMOCAP_all); default: build the offline corpus")
    p.add_argument("--system", dest="systems", action="append", metavar="SPEC",
                   help="'original', a method name, or LABEL=METHOD:{json params}; repeatable "
                        "(default: original + the profile's anonymizers; --quick: original, mcadams, world)")
    p.add_argument("--profile", choices=sorted(PROFILES), default="default",
                   help="quick: 3 systems, test split, small formant corpus, attacker rungs (a) and small (c); "
                        "default: the 9 signal-processing and cascade anonymizers, dev+test, small Kokoro corpus, "
                        "rungs (a)-(c); neural: the same for the shipped LTF and F3-VA models (run it into the "
                        "default's OUT to add them to its results); leaderboard: the default's corpus and attackers for "
                        "every offline anonymizer, pocketsphinx's WER beside Whisper's, rung (b) from the d-vector too "
                        "(BENCHMARKS.md's "
                        "leaderboard; hours); conditions: the default again under "
                        "telephone, noise10 and reverb600, each on the input and the output (privacy and WER; "
                        "about six more main jobs); multilingual: the default's corpus size, attackers and measures "
                        "for mcadams and world on a Spanish corpus (--language fr, it, zh or ja for those; other "
                        "languages' voices fill dev and test: --accented), Whisper base in that language; full: every offline anonymizer (kNN-VC included), the default-size Kokoro "
                        "corpus, VPC-recipe ECAPA, plus content privacy (C-EER) and SER and ASR learnability "
                        "(hours; not in default: they add the ASR of each training set and 5 SER trainings and a "
                        "CTC training per system, past its time budget)")
    p.add_argument("--conditions", metavar="LIST",
                   help="also measure privacy and WER under these recording conditions, comma-separated: "
                        "telephone (300-3400 Hz, 8 kHz, G.711 mu-law), telephone-gsm (GSM 06.10), noise<SNR dB> "
                        "(pink noise, speech-active SNR; e.g. noise20,noise10,noise5), reverb<RT60 ms> (simulated "
                        "rooms; e.g. reverb300,reverb600,reverb900); each costs about one more run of the profile "
                        "per place (the conditions profile: telephone,noise10,reverb600)")
    p.add_argument("--condition-on", metavar="PLACES",
                   help="where the conditions apply: input (before anonymization: does the anonymizer survive "
                        "such recordings?), output (after it, before the attackers: does the channel change "
                        "privacy?) or input,output (default)")
    p.add_argument("--quick", action="store_true", help="same as --profile quick (a few minutes; for CI)")
    p.add_argument("--set", dest="settings", action="append", metavar="NAME.SETTING=VALUE",
                   help="an evaluator's setting, over the profile's (e.g. ser.epochs=15, ladder.attacker_epochs=4, "
                        "ladder.rungs=AA-backend,AA-semi, wer.splits=dev,test, wer_check.backends=pocketsphinx, "
                        "quality.max_utts=20); repeatable; a wrong name lists the evaluators or their settings")
    p.defer(_evaluator_option)
    p.add_argument("--seed", type=int, default=0,
                   help="global seed (corpus and anonymization); another seed in a filled --out builds its own "
                        "corpus next to the first (OUT/corpus-<engine>-<size>-seed<seed>) and reuses the rest")
    p.add_argument("--jobs", type=int, default=None,
                   help="worker processes of the corpus build, the anonymization and the evaluation (default: all "
                        "cores; each evaluation runs on one thread, so a trained attacker does not depend on it)")
    p.add_argument("--language", choices=CORPUS_LANGUAGES, default=None,
                   help="build the offline corpus in this language (`voxanon data synth --language`; default: the "
                        "profile's, English except in the multilingual profile); the ASR, its normalisation and "
                        "WER or CER follow the corpus's language")
    p.add_argument("--accented", action=argparse.BooleanOptionalAction, default=None,
                   help="build a corpus in another language than English with accented speakers (`voxanon data "
                        "synth --accented`): other languages' voices reading it fill dev and test up to the size's "
                        "count (default: the profile's; the multilingual profile's are accented, --no-accented "
                        "keeps the language's own voices alone)")
    p.add_argument("--asr", default=None,
                   help="ASR backend spec (default: whisper-tiny for an English corpus, whisper-base:<language> for "
                        "another)")
    p.add_argument("--encoder", default="ge2e", help="pretrained speaker encoder of the ignorant/lazy attackers")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(handler=run)
