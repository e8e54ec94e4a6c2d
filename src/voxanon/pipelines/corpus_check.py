"""Speaker separability of a synthetic corpus: are its speakers distinct to a speaker encoder?

Runs the VPC verification protocol (original enrollment, original trials)
on the corpus' dev and test trial lists and reports, per set, the EER per
gender and their mean, plus the EER when the only non-target trials kept are
*hard* ones: the impostor shares the enrolled speaker's base voice and
differs only by its vocal-tract warp (and pitch). A low hard EER means the
warps make separable speakers.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from voxanon.data import names
from voxanon.evaluation.privacy import evaluate_privacy
from voxanon.evaluation.results import to_dict
from voxanon.metrics import compute_eer
from voxanon.models.speaker import load_encoder


def _hard_eer(scores: list[dict], base_of: dict[str, str], spk_of: dict[str, str]) -> dict:
    target = [s["score"] for s in scores if s["target"]]
    hard = [s["score"] for s in scores
            if not s["target"] and base_of[s["enroll_spk"]] == base_of[spk_of[s["utt"]]]]
    if not target or not hard:
        return {"eer": None, "nontarget_trials": len(hard)}
    return {"eer": float(compute_eer(np.array(target), np.array(hard)).eer), "nontarget_trials": len(hard)}


def check_separability(root: str | os.PathLike, *, encoder: str = "ge2e", sets: tuple[str, ...] = ("dev", "test"),
                       device: str = "cpu", quiet: bool = False) -> dict:
    """EER of ``encoder`` on the corpus' trial lists (all trials and same-base-voice impostors only).

    Returns a JSON-ready dict per set: ``eer`` per gender, ``eer_mean``,
    ``hard`` (same-base-voice impostors), and the speaker counts.
    """
    root = Path(root)
    corpus = json.loads((root / names.CORPUS_FILE).read_text(encoding="utf-8"))
    base_of = {spk: f"{s['engine']}/{s['voice']}" for spk, s in corpus["speakers"].items()}
    model = load_encoder(encoder, device=device)
    out = {"encoder": encoder, "corpus": str(root), "speakers": {
        g: sum(1 for s in corpus["speakers"].values() if s["gender"] == g) for g in names.GENDERS},
        "base_voices": len(set(base_of.values())), "sets": {}}
    for name in sets:
        trial_dirs = [root / names.SYNTH_DATA / names.trials(name, g) for g in names.GENDERS]
        result = evaluate_privacy(root / names.SYNTH_DATA / names.enrolls(name), trial_dirs, model, n_boot=100,
                                  quiet=quiet)
        spk_of = {}
        for td in trial_dirs:
            spk_of.update(dict(line.split() for line in (td / "utt2spk").read_text().splitlines() if line))
        out["sets"][name] = {
            "eer": {g: m.eer for g, m in result.by_gender.items()},
            "eer_mean": result.eer_mean,
            "hard": _hard_eer(to_dict(result.scores), base_of, spk_of),
        }
    return out
