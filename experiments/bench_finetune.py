"""Rung (b) of the attacker ladder: fine-tuning GE2E and the d-vector on a benchmark run's anonymized speech.

For every system, pretrained encoder, learning rate and seed: the encoder is
fine-tuned on the system's anonymized training set (speaker-balanced batches,
epoch selected on the system's dev trials, as ``voxanon benchmark`` does),
then measured three ways: the dev EER curve per epoch, the test EER of the
selected model (AA: anonymized enrollment and trials; the mean per-gender
EER), and its EER on the corpus's real voices (``data/real``, every pair a
trial; :mod:`voxanon.evaluation.real_voices`) beside the pretrained
encoder's. The run folder is the ``--out`` of a ``voxanon benchmark`` run
(its ``results.json`` names each system's data sets).

    nice -n 10 python experiments/bench_finetune.py runs/benchmark OUT --systems original mcadams \\
        --encoders ge2e dvector --lrs 1e-5 1e-4 1e-3 --epochs 8 --seeds 0

Writes ``OUT/results.json`` (one entry per run, with its log) and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from voxanon.atomic import write_text
from voxanon.evaluation.attacker_training import train_finetuned
from voxanon.evaluation.privacy import evaluate_privacy
from voxanon.evaluation.real_voices import check_real_voices
from voxanon.models.speaker import load_encoder
from voxanon.training.finetune import FinetuneSettings


def run_one(paths: dict, real: Path, encoder: str, settings: FinetuneSettings, seed: int, out: Path,
            cache: Path) -> dict:
    """Fine-tune, select on dev, measure on test and on real voices."""
    start = time.time()
    best, log = train_finetuned(encoder, paths["train"], paths["dev_enrolls"],
                                [paths["dev_trials_f"], paths["dev_trials_m"]], settings, out, seed=seed, quiet=True)
    trained = load_encoder(f"{encoder}:{best}")
    test = evaluate_privacy(paths["test_enrolls"], [paths["test_trials_f"], paths["test_trials_m"]], trained,
                            n_boot=100, quiet=True, keep_scores=False)
    real_check = check_real_voices(real, trained, load_encoder(encoder), cache_dir=cache)
    selected = min(log, key=lambda e: e["val_eer"])["epoch"]
    return {"selected_epoch": selected, "dev_eer": min(e["val_eer"] for e in log), "test_eer": test.eer_mean,
            "real_eer": real_check.eer, "real_eer_pretrained": real_check.pretrained_eer,
            "seconds": round(time.time() - start, 1), "log": log}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run", type=Path, help="a voxanon benchmark output folder")
    p.add_argument("out", type=Path)
    p.add_argument("--systems", nargs="+", default=["original", "mcadams"])
    p.add_argument("--encoders", nargs="+", default=["ge2e", "dvector"])
    p.add_argument("--lrs", nargs="+", type=float, default=[1e-4])
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    args = p.parse_args()
    results = json.loads((args.run / "results.json").read_text(encoding="utf-8"))
    real = Path(results["data"]["root"]) / "data" / "real"
    out_file = args.out / "results.json"
    done = json.loads(out_file.read_text(encoding="utf-8")) if out_file.is_file() else {}
    for system in args.systems:
        paths = results["paths"][system]
        for encoder in args.encoders:
            for lr in args.lrs:
                for seed in args.seeds:
                    key = f"{system}/{encoder}/lr{lr:g}/seed{seed}"
                    if key not in done:
                        result = run_one(paths, real, encoder, FinetuneSettings(epochs=args.epochs, lr=lr), seed,
                                         args.out / key, args.out / "embeddings")
                        # re-read: another run of this script may have added its own results meanwhile
                        done = json.loads(out_file.read_text(encoding="utf-8")) if out_file.is_file() else {}
                        done[key] = result
                        write_text(out_file, json.dumps(done, indent=1) + "\n")
                    r = done[key]
                    print(f"{key}: epoch {r['selected_epoch']}, dev {r['dev_eer']:.1f}, test {r['test_eer']:.1f}, "
                          f"real {r['real_eer']:.1f} (pretrained {r['real_eer_pretrained']:.1f}), "
                          f"dev curve {[round(e['val_eer'], 1) for e in r['log']]}, {r['seconds']:.0f} s", flush=True)
    print("\n| system | encoder | lr | seed | epoch kept | dev EER | test EER | real voices EER (pretrained) |")
    print("|---|---|---|---|---|---|---|---|")
    for key, r in done.items():
        system, encoder, lr, seed = key.split("/")
        print(f"| {system} | {encoder} | {lr[2:]} | {seed[4:]} | {r['selected_epoch']} | {r['dev_eer']:.1f} | "
              f"{r['test_eer']:.1f} | {r['real_eer']:.1f} ({r['real_eer_pretrained']:.1f}) |")


if __name__ == "__main__":
    main()
