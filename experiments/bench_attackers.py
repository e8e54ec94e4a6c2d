"""Attacker ladder on one corpus: test EER of every rung, trained on original and on anonymized data.

For each condition (``original``: the corpus as is; ``NAME``: a folder holding
``train_S``, ``dev_enrolls_S``, ``dev_trials_{f,m}_S``, ``test_enrolls_S`` and
``test_trials_{f,m}_S`` anonymized with suffix ``_S``) the script measures, on
the test trials of that condition (AA: enrollment and trials both from it):

* ``pretrained``: the pretrained GE2E with cosine scoring (lazy-informed; OO for ``original``);
* ``a-plda`` / ``a-cosine``: rung (a), GE2E + LDA/PLDA or LDA/WCCN-cosine back-end trained
  on the condition's training set, LDA dimension selected on its dev trials;
* ``b-finetune``: rung (b), GE2E fine-tuned on the training set, epoch selected on dev;
* ``c-small`` / ``c-vpc``: rung (c), ECAPA from scratch (small model / VPC recipe), epoch
  selected on dev.

Each rung's training log goes into the JSON; every stage's wall time is printed.

    nice -n 10 python experiments/bench_attackers.py --data CORPUS/data \\
        --condition mcadams=ANON_DIR:_mcadams --out runs/attackers [--rungs pretrained,a,b,c-small,c-vpc]
        [--sweep-speakers 50,100,200 --sweep-rung c-small]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from voxanon.evaluation.attacker_training import train_ecapa, train_finetuned
from voxanon.evaluation.backend_attacker import (
    BackendTraining,
    evaluate_backend,
    train_backend,
)
from voxanon.evaluation.privacy import evaluate_privacy
from voxanon.models.speaker import load_encoder
from voxanon.models.speaker.ecapa import EcapaConfig
from voxanon.models.speaker.plda import BackendSettings, PldaBackend
from voxanon.training.asv import AsvSettings
from voxanon.training.finetune import FinetuneSettings

SETS = ("train", "dev_enrolls", "dev_trials_f", "dev_trials_m", "test_enrolls", "test_trials_f", "test_trials_m")


def _summary(result) -> dict:
    return {"eer_mean": result.eer_mean, **{f"eer_{g}": m.eer for g, m in result.by_gender.items()},
            **{f"ci_{g}": [m.eer_ci.low, m.eer_ci.high] for g, m in result.by_gender.items()}}


def ecapa_recipes(args) -> dict[str, AsvSettings]:
    """Rung (c)'s recipes; ``--vpc-step-size 0`` scales the VPC's cyclic LR to the corpus as the benchmark does
    (a half cycle per epoch, :func:`voxanon.evaluation.ladder.rung_training`)."""
    return {"c-small": AsvSettings(model=EcapaConfig(), epochs=args.ecapa_epochs),
            "c-vpc": AsvSettings.vpc(epochs=args.ecapa_epochs, step_size=args.vpc_step_size or None,
                                     cycle_epochs=2.0)}


def sweep_speakers(dirs, dev, test, encoder, cache, out: Path, args) -> dict:
    """Rung (a) or (c) (``--sweep-rung``) trained on the first k training speakers (genders alternating), for
    each k of ``--sweep-speakers``: EER vs training size, with each training's dev curve."""
    from itertools import chain, zip_longest

    from voxanon.data.kaldi import read_data_dir

    train = read_data_dir(dirs["train"])
    by_gender = [sorted(s for s in train.spk2utt if train.spk2gender.get(s) == g) for g in ("f", "m")]
    speakers = [s for s in chain.from_iterable(zip_longest(*by_gender)) if s]
    curve = []
    for k in (int(v) for v in args.sweep_speakers.split(",")):
        keep = set(speakers[:k])
        utts = {u for s in keep for u in sorted(train.spk2utt[s])[:args.sweep_utterances]}
        sub = train.subset([u for u in sorted(train.utt2spk) if u in utts])
        start = time.time()
        if args.sweep_rung == "a":
            path, log = train_backend(sub, *dev, encoder, out / f"a-plda-{k}", cache_dir=cache, quiet=True)
            res = evaluate_backend(*test, encoder, PldaBackend.load(path), cache_dir=cache, n_boot=10, quiet=True)
            point = {"lda_dim": log[0]["lda_dim"]}
        else:
            path, log = train_ecapa(sub, *dev, ecapa_recipes(args)[args.sweep_rung], out / f"{args.sweep_rung}-{k}",
                                    quiet=True)
            res = evaluate_privacy(*test, load_encoder(f"ecapa:{path}"), n_boot=10, quiet=True, keep_scores=False)
            point = {"dev_curve": [round(e["val_eer"], 2) for e in log], "loss": [round(e["loss"], 3) for e in log]}
        curve.append({"speakers": k, "utterances": len(sub.wav_scp), "dev_eer": min(e["val_eer"] for e in log),
                      "test_eer": res.eer_mean, "seconds": round(time.time() - start, 1), **point})
        print(f"    {k} speakers, {len(sub.wav_scp)} utterances: dev {curve[-1]['dev_eer']:.2f} %, "
              f"test {res.eer_mean:.2f} % ({curve[-1]['seconds']} s)", flush=True)
    return {"eer_mean": curve[-1]["test_eer"], "curve": curve}


def run_condition(dirs: dict, out: Path, rungs: list[str], args) -> dict:
    """All requested rungs on one condition; returns {rung: {test EER summary, log}}."""
    cache = out / "cache"
    dev = (dirs["dev_enrolls"], [dirs["dev_trials_f"], dirs["dev_trials_m"]])
    test = (dirs["test_enrolls"], [dirs["test_trials_f"], dirs["test_trials_m"]])
    ge2e = load_encoder("ge2e")
    results = {}

    def timed(name, fn):
        start = time.time()
        results[name] = fn()
        results[name]["seconds"] = round(time.time() - start, 1)
        print(f"  {name}: test EER {results[name]['eer_mean']:.2f} % ({results[name]['seconds']} s)", flush=True)
        (out / "results.json").write_text(json.dumps(results, indent=1))

    if "pretrained" in rungs:
        timed("pretrained", lambda: _summary(evaluate_privacy(*test, ge2e, cache_dir=cache, n_boot=args.n_boot,
                                                              quiet=True, keep_scores=False)))
    if "a" in rungs:
        for scoring in ("plda", "cosine"):
            def rung_a(scoring=scoring):
                path, log = train_backend(dirs["train"], *dev, ge2e, out / f"a-{scoring}",
                                          BackendTraining(backend=BackendSettings(scoring=scoring)),
                                          cache_dir=cache, quiet=True)
                res = evaluate_backend(*test, ge2e, PldaBackend.load(path), cache_dir=cache, n_boot=args.n_boot,
                                       quiet=True)
                return {**_summary(res), "log": log}
            timed(f"a-{scoring}", rung_a)
    if "b" in rungs:
        def rung_b():
            path, log = train_finetuned("ge2e", dirs["train"], *dev, FinetuneSettings(epochs=args.ge2e_epochs),
                                        out / "b", quiet=True)
            res = evaluate_privacy(*test, load_encoder(f"ge2e:{path}"), n_boot=args.n_boot, quiet=True,
                                   keep_scores=False)
            return {**_summary(res), "log": log}
        timed("b-finetune", rung_b)
    if args.sweep_speakers:
        timed(f"{args.sweep_rung}-sweep", lambda: sweep_speakers(dirs, dev, test, ge2e, cache, out, args))
    for name, cfg in ecapa_recipes(args).items():
        if name in rungs:
            def rung_c(cfg=cfg, name=name):
                path, log = train_ecapa(dirs["train"], *dev, cfg, out / name, quiet=True)
                res = evaluate_privacy(*test, load_encoder(f"ecapa:{path}"), n_boot=args.n_boot, quiet=True,
                                       keep_scores=False)
                return {**_summary(res), "log": log}
            timed(name, rung_c)
    return results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", required=True, help="corpus data folder (train, dev_*, test_*)")
    p.add_argument("--condition", action="append", default=[], help="NAME=FOLDER:SUFFIX of an anonymized copy")
    p.add_argument("--out", required=True)
    p.add_argument("--rungs", default="pretrained,a,b,c-small,c-vpc")
    p.add_argument("--ge2e-epochs", type=int, default=5)
    p.add_argument("--ecapa-epochs", type=int, default=8)
    p.add_argument("--vpc-step-size", type=int, default=65000,
                   help="half cycle of the VPC recipe's cyclic LR in steps (VPC: 65000; 0: a half cycle per epoch, "
                        "as the benchmark)")
    p.add_argument("--n-boot", type=int, default=200)
    p.add_argument("--sweep-speakers", help="comma-separated training-speaker counts for a size sweep")
    p.add_argument("--sweep-utterances", type=int, default=None,
                   help="keep this many training utterances per speaker in the size sweep (default: all)")
    p.add_argument("--sweep-rung", choices=("a", "c-small", "c-vpc"), default="a",
                   help="the rung of the size sweep (c-small: --ecapa-epochs each)")
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    p.add_argument("--only", help="run only this condition")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    conditions = {"original": {s: Path(args.data) / s for s in SETS}}
    for spec in args.condition:
        name, _, rest = spec.partition("=")
        folder, _, suffix = rest.rpartition(":")
        conditions[name] = {s: Path(folder) / f"{s}{suffix}" for s in SETS}
    rungs = args.rungs.split(",")
    for name, dirs in conditions.items():
        if args.only and name != args.only:
            continue
        print(f"{name}:", flush=True)
        out = Path(args.out) / name
        out.mkdir(parents=True, exist_ok=True)
        run_condition(dirs, out, rungs, args)


if __name__ == "__main__":
    main()
