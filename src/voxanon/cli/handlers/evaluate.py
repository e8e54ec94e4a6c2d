"""Handlers of ``voxanon evaluate``: each runs one evaluation of :mod:`voxanon.evaluation` (or the VPC kit
job), prints its table and writes its results."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from voxanon.cli.handlers.shared import INPUT_ERRORS, as_error, device, write_json
from voxanon.errors import EXIT_OK, EXIT_PARTIAL, ConfigError, DataError


def format_privacy_table(results: dict) -> str:
    """One row per scenario and gender, then the scenario's mean EER (``results``: scenario -> PrivacyResult).

    With several attacks on anonymized speech, a first line names the strongest
    attacker (lowest mean EER; OO, which attacks nothing anonymized, is left
    out), its rows come first, and the line says how much each weaker
    attacker overstated privacy.
    """
    from voxanon.evaluation.scenarios import (
        SCENARIOS,
        overstatement,
        strongest_attacker,
    )
    from voxanon.table import cell, format_table

    attacks = {n: r.eer_mean for n, r in results.items() if n not in SCENARIOS or SCENARIOS[n].needs_anonymized}
    best = strongest_attacker(attacks) if len(attacks) > 1 else None
    lead = ""
    if best:
        over = ", ".join(f"{n} by {d:.1f}" for n, d in overstatement(attacks).items())
        lead = (f"strongest attacker: {best[0]} (mean EER {best[1]:.2f} %); "
                f"weaker attackers overstated privacy (EER points): {over}\n")
        results = {best[0]: results[best[0]], **{n: r for n, r in results.items() if n != best[0]}}
    rows = []
    for name, r in results.items():
        for g, m in r.by_gender.items():
            rows.append([name, g, cell(m.eer), f"[{m.eer_ci.low:.1f}, {m.eer_ci.high:.1f}]", cell(m.rocch_eer),
                         cell(m.cllr, 3), cell(m.min_cllr, 3), cell(m.linkability, 3, "n/a"),
                         cell(m.zebra.expected_bits, 4), m.zebra.tag, r.encoder])
        rows.append([name, "mean", cell(r.eer_mean), *[""] * 8])
    header = ["scenario", "gender", "EER %", "95% CI", "ROCCH", "Cllr", "minCllr", "link", "ZEBRA bits", "tag",
              "encoder"]
    return lead + format_table(header, rows, align="ll" + "r" * 8 + "l", rule=True)


def privacy(args: argparse.Namespace) -> int:
    from voxanon.evaluation.privacy import run_scenarios
    from voxanon.evaluation.results import to_dict
    from voxanon.evaluation.scenarios import SCENARIOS, applicable

    scenarios = [name for name, sc in SCENARIOS.items() if getattr(args, sc.flag)]
    if not scenarios:
        scenarios = applicable(bool(args.anon_trials), bool(args.attacker))
    try:
        results = run_scenarios(
            scenarios, orig_enroll=args.enroll, orig_trials=args.trials, anon_enroll=args.anon_enroll,
            anon_trials=args.anon_trials, pretrained=args.encoder,
            attacker=f"ecapa:{args.attacker}" if args.attacker else None, cache_dir=args.cache,
            device=device(args.device), n_boot=args.n_boot, quiet=args.quiet)
    except INPUT_ERRORS as exc:
        raise as_error(exc) from None
    if args.out:
        write_json(args.out, to_dict(results))
    print(format_privacy_table(results))
    if args.out:
        print(f"results written to {args.out}")
    return 0


def utility_asr(args: argparse.Namespace) -> int:
    from voxanon.data.kaldi import read_data_dir
    from voxanon.evaluation.asr import evaluate_asr
    from voxanon.jobs.report.utility import format_asr_table, write_asr_results
    from voxanon.models.asr import load_asr

    asr = load_asr(args.asr_backend, device=args.device, threads=args.threads)
    out = Path(args.out)
    cache = Path(args.cache_dir) if args.cache_dir else out / "asr_cache"
    sets = [evaluate_asr(read_data_dir(d), asr, cache, normalization=args.normalization, unit=args.unit,
                         batch_size=args.batch_size, n_boot=args.n_boot, quiet=args.quiet).to_result()
            for d in args.data_dirs]
    header = {"asr_backend": asr.name, "normalization": args.normalization, "unit": args.unit, "n_boot": args.n_boot,
              "hypothesis_cache": str(cache)}
    write_asr_results(header, sets, out)
    print(format_asr_table(sets))
    print(f"results: {out / 'asr_results.json'}")
    unscored = [s.data for s in sets if not s.n_scored]
    if unscored:
        raise DataError(f"no utterance of {', '.join(unscored)} could be scored; see {out / 'asr_report.txt'}")
    failed = sum(len(s.failed) for s in sets)
    if failed:
        print(f"voxanon evaluate utility: {failed} utterance(s) failed, listed in {out / 'asr_report.txt'}",
              file=sys.stderr)
        return EXIT_PARTIAL
    return EXIT_OK


def utility_ser(args: argparse.Namespace) -> int:
    """Score every data directory with the per-fold models (``--ser-models``) or one model (``--ser-model``)."""
    from voxanon.evaluation.ser import evaluate_ser
    from voxanon.jobs.report.utility import ser_text, write_ser_results

    models_dir, spec = getattr(args, "ser_models", None), getattr(args, "ser_model", None)
    if (models_dir is None) == (spec is None):
        raise ConfigError("SER evaluation: give either --ser-models DIR (per-fold models) or --ser-model SPEC")
    results = [evaluate_ser(d, models_dir, model_spec=spec, batch_size=args.batch_size, quiet=args.quiet)
               for d in args.data_dirs]
    out = write_ser_results(results, args.out)
    print(ser_text(results))
    print(f"results: {out / 'ser_results.json'}")
    return EXIT_OK


def utility(args: argparse.Namespace) -> int:
    if not (args.asr or args.ser):
        raise ConfigError("choose --asr, --ser or both")
    status = utility_asr(args) if args.asr else 0
    if args.ser:
        status = max(status, utility_ser(args))
    return status


def content_privacy(args: argparse.Namespace) -> int:
    from voxanon.evaluation.content_privacy import (
        REFERENCE,
        asr_transcriber,
        evaluate_content_privacy,
        reference_transcripts,
    )
    from voxanon.evaluation.results import to_dict

    try:
        if args.transcripts == REFERENCE:
            transcripts, source = reference_transcripts, REFERENCE
        else:
            from voxanon.models.asr import load_asr

            asr = load_asr(args.transcripts, device=device(args.device))
            transcripts, source = asr_transcriber(asr, args.asr_cache, quiet=args.quiet), asr.name
        result = evaluate_content_privacy(args.train, args.enroll, args.trials, transcripts, source,
                                          encoder=args.encoder, n_boot=args.n_boot, seed=args.seed)
    except INPUT_ERRORS as exc:
        raise as_error(exc) from None
    if args.out:
        write_json(args.out, to_dict(result))
    print(format_privacy_table({f"C-EER ({source})": result}))
    print(f"text encoder trained on {result.n_train} transcripts of {result.train}; {result.n_empty} empty "
          "transcript(s) kept")
    if result.missing:
        first, why = next(iter(result.missing.items()))
        print(f"left out for lack of a transcript: {len(result.missing)} (first: {first}: {why})")
    if args.out:
        print(f"results written to {args.out}")
    return 0


#: fine-tuning options -> EcapaSslSettings fields
FINETUNE_OPTIONS = {"epochs": "epochs", "batch_size": "batch_size", "lr": "lr"}


def vpc(args: argparse.Namespace) -> int:
    from voxanon.jobs.vpc import run_vpc

    finetune = None
    given = {field: getattr(args, opt) for opt, field in FINETUNE_OPTIONS.items() if getattr(args, opt) is not None}
    if args.finetune_asv:
        from voxanon.training.ecapa_ssl import EcapaSslSettings
        from voxanon.training.trainer import resolve_device

        finetune = EcapaSslSettings(**given)
        args.device = resolve_device(args.device)
    elif given:
        names = ", ".join("--" + opt.replace("_", "-") for opt in FINETUNE_OPTIONS if getattr(args, opt) is not None)
        raise ConfigError(f"{names} set the fine-tuning: add --finetune-asv")
    results = run_vpc(args.data, args.out, edition=args.edition, suffix=args.suffix, exp=args.exp, asv=args.asv,
                      asv_anon=args.asv_anon, asr=args.asr, ser=args.ser, device=args.device,
                      cache_dir=args.cache, n_boot=args.n_boot, quiet=args.quiet, finetune=finetune)
    training = results.get("asv_anon_training")
    if training:
        print(f"fine-tuned ASV_eval^anon: {training['out_dir']} (epoch {training['best_epoch']} of "
              f"{training['epoch']}, validation loss {training['best_val_loss']:.3f})")
    summary = Path(args.out) / "results_summary.txt"
    print(summary.read_text(encoding="utf-8"), end="")
    for attacker, eers in results["ranking_eer"].items():
        if eers:
            print(f"VPC {results['edition']} ranking EER ({attacker} ASV, anon/anon): "
                  + ", ".join(f"{split} {eer:.3f} %" for split, eer in eers.items()))
    print(f"results: {Path(args.out) / 'vpc_results.json'}; the kit's form: {summary}")
    return 0


def learnability_ser(args: argparse.Namespace) -> int:
    from voxanon.evaluation.learnability import ser_learnability
    from voxanon.evaluation.results import to_dict
    from voxanon.evaluation.ser import is_synthetic, train_folds

    recipe = {"epochs": args.epochs, "channels": args.channels, "seed": args.seed}
    train_folds(args.original, args.reference_models, quiet=args.quiet, **recipe)  # finished folds are reused
    res = ser_learnability(args.anonymized, args.original, args.reference_models, args.models,
                           synthetic=is_synthetic(args.original), quiet=args.quiet, **recipe)
    print("fold  UAR % trained on anonymized  UAR % trained on original")
    for fold, v in res.per_fold.items():
        print(f"{fold:>4}  {v['anonymized']:27.1f}  {v['reference']:25.1f}")
    print(f"mean  {res.anonymized:19.1f} ± {res.anonymized_std:4.1f}  {res.reference:17.1f} ± "
          f"{res.reference_std:4.1f}   (tested on {res.n_test} original utterances)")
    if res.message:
        print(res.message)
    if args.out:
        write_json(args.out, to_dict(res))
        print(f"result written to {args.out}")
    return EXIT_OK


def format_asr_learnability(res) -> str:
    """The reference and anonymized-trained rows: WER [CI], CER and the WER of each test set."""
    tests = list(res.per_fold)
    lines = [f"{'ASR trained on':<18} {'WER % [95% CI]':>22} {'CER %':>6} " + " ".join(f"{t:>14}" for t in tests)]
    for role, label, value, ci, cer in (
            ("reference", "original speech", res.reference, res.reference_ci, res.reference_cer),
            ("anonymized", "anonymized speech", res.anonymized, res.anonymized_ci, res.anonymized_cer)):
        interval = f"{value:5.1f} [{ci.low:5.1f}, {ci.high:5.1f}]" if ci else f"{value:5.1f}"
        per = " ".join(f"{(v if (v := res.per_fold[t][role]) is not None else float('nan')):>14.1f}" for t in tests)
        lines.append(f"{label:<18} {interval:>22} {cer if cer is not None else float('nan'):6.1f} {per}")
    for role, t in (res.training or {}).items():
        lines.append(f"{role} model: {t['epochs_run']} epochs ({t['stopped_by']}), {t['train_seconds']:.0f} s, "
                     f"final CTC loss {t['final_loss']}, {t['train_utterances']} utterances")
    lines.append(f"tested on {res.n_test} original utterances")
    if res.message:
        lines.append(res.message)
    return "\n".join(lines)


def learnability_asr(args: argparse.Namespace) -> int:
    import torch

    from voxanon.evaluation.learnability import asr_learnability
    from voxanon.evaluation.results import to_dict
    from voxanon.evaluation.ser import is_synthetic
    from voxanon.training.ctc import recipe
    from voxanon.training.trainer import resolve_device

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    ctc = recipe(args.recipe, epochs=args.epochs, minutes=args.minutes, seed=args.seed)
    tests = {Path(d).name: d for d in args.test}
    res = asr_learnability(args.anonymized, args.original, tests, args.models, args.reference_models, ctc,
                           cache_dir=args.cache_dir or Path(args.models).parent / "cache",
                           device=resolve_device(args.device), n_boot=args.n_boot, seed=args.seed,
                           normalization=args.normalization, synthetic=is_synthetic(args.original),
                           quiet=args.quiet)
    print(format_asr_learnability(res))
    if args.out:
        from voxanon.atomic import write_text

        write_text(args.out, json.dumps(to_dict(res), indent=1) + "\n")
        print(f"result written to {args.out}")
    return EXIT_OK


def format_conversation_tables(result) -> str:
    """The attacks (strongest first) and, per side, DER, speaker-count error, cpWER and the overlap leak."""
    from voxanon.table import cell, format_table

    order = sorted(result.attacks, key=lambda n: n != result.strongest)
    attacks = format_table(
        ["attack", "EER f %", "EER m %", "mean %"],
        [[n, *(cell(r.by_gender[g].eer) if g in r.by_gender else "-" for g in ("f", "m")), cell(r.eer_mean)]
         for n in order for r in [result.attacks[n]]], align="lrrr", rule=True)
    rows = []
    for side, s in result.sides.items():
        d, w = s.diarization, s.cpwer
        leaks = s.overlap.values() or [None]
        for leak in leaks:
            rows.append([side, cell(d.der if d else None), cell(d.count_error if d else None),
                         cell(w.cpwer if w else None), leak.encoder if leak else "-",
                         cell(leak.cosine_talking if leak else None, 3), cell(leak.cosine_others if leak else None, 3),
                         cell(100 * leak.closest_is_talking if leak else None, 0)])
    sides = format_table(["side", "DER %", "|count err|", "cpWER %", "encoder", "cos talking", "cos others",
                          "closest talking %"], rows, align="lrrrlrrr", rule=True)
    lead = (f"strongest attacker: {result.strongest} (mean EER {result.strongest_eer:.2f} %)\n"
            if result.strongest else "")
    return lead + attacks + "\n\n" + sides


def conversations(args: argparse.Namespace) -> int:
    from voxanon.evaluation.conversations import evaluate_conversations, load_diarizer
    from voxanon.metrics.text import NORMALIZERS

    if args.normalization not in NORMALIZERS:
        raise ConfigError(f"--normalization {args.normalization!r}: choose {', '.join(sorted(NORMALIZERS))}")
    if args.anon_enroll and not args.anonymized:
        raise ConfigError("--anon-enroll needs --anonymized (the anonymized recordings)")
    asr = None
    if args.asr != "none":
        from voxanon.models.asr import load_asr

        asr = load_asr(args.asr, device=device(args.device))
    try:
        result = evaluate_conversations(
            args.corpus, args.out, anonymized=args.anonymized, anon_enroll=args.anon_enroll, system=args.system,
            diarizer=load_diarizer(args.diarizer, device(args.device)), diarizer_name=args.diarizer,
            encoders=tuple(args.encoder or ["ge2e"]), asr=asr, normalization=args.normalization, collar=args.collar,
            oracle_count=args.oracle_count, n_boot=args.n_boot, cache_dir=args.cache, device=device(args.device),
            quiet=args.quiet)
    except INPUT_ERRORS as exc:
        raise as_error(exc) from None
    print(format_conversation_tables(result))
    print(f"results: {Path(args.out) / 'results.json'} (and privacy, diarization, cpwer, overlap .csv)")
    return EXIT_OK
