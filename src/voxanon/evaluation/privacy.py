"""Privacy evaluation: speaker verification over VPC trial lists, and the attack scenarios.

Enrollment model = mean of the speaker's utterance embeddings; trial score =
cosine between enrollment model and trial utterance, all trials at once.
Metrics are computed per gender (of the enrolled speaker) and the EERs are
averaged, as the VPC does. Every result is a JSON-serialisable dict.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voxanon.data.kaldi import GENDERS, DataDir, DataError, check_trial_labels, read_data_dir
from voxanon.evaluation.embeddings import extract_embeddings
from voxanon.metrics import (
    cllr,
    compute_eer,
    det_curve,
    eer_ci,
    gender_fairness,
    linkability,
    min_cllr,
    rocch_eer,
    zebra,
)
from voxanon.models.speaker import SpeakerEncoder, load_encoder

#: scenario -> (enrollment side, trial side, attacker model)
SCENARIOS = {
    "OO": ("orig", "orig", "pretrained"),
    "OA": ("orig", "anon", "pretrained"),
    "AA-lazy": ("anon", "anon", "pretrained"),
    "AA-semi": ("anon", "anon", "retrained"),
}
#: DET points kept in the JSON (evenly thinned)
_DET_POINTS = 200


@dataclass
class TrialScores:
    """Scores of a set of trials with their labels and the enrolled speaker's gender."""

    enroll_spk: np.ndarray
    utt: np.ndarray
    score: np.ndarray
    target: np.ndarray
    gender: np.ndarray


def enrollment_models(enroll: DataDir, embeddings: dict[str, np.ndarray],
                      speakers: list[str]) -> np.ndarray:
    """Mean embedding of each speaker's enrollment utterances, rows in ``speakers`` order."""
    spk2utt = enroll.spk2utt
    rows = []
    for spk in speakers:
        utts = spk2utt.get(spk)
        if not utts:
            raise DataError(f"{enroll.path}: enrolled speaker {spk!r} has no enrollment utterances")
        rows.append(np.mean([embeddings[u] for u in utts], axis=0))
    return np.stack(rows)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def cosine_scores(models: np.ndarray, model_idx: np.ndarray, tests: np.ndarray, test_idx: np.ndarray) -> np.ndarray:
    """Cosine of ``models[model_idx[k]]`` and ``tests[test_idx[k]]`` for every trial k (vectorised).

    VPC trial lists are (nearly) full speaker × utterance grids, so the whole
    cosine matrix is one matrix product; sparse lists use row-wise dot products.
    """
    m, t = _unit(models), _unit(tests)
    if len(m) * len(t) <= 4 * len(model_idx):
        return (m @ t.T)[model_idx, test_idx]
    return np.einsum("ij,ij->i", m[model_idx], t[test_idx])


def check_trials(enroll: DataDir, trial_dir: DataDir) -> None:
    """Raise DataError naming the trial file and id when a trial refers to missing data."""
    where = (trial_dir.path or Path("<trials>")) / "trials"
    if not trial_dir.trials:
        raise DataError(f"{where}: no trials (the trial data directory needs a 'trials' file)")
    enrolled = set(enroll.utt2spk.values())
    for t in trial_dir.trials:
        if t.utt not in trial_dir.wav_scp:
            raise DataError(f"{where}: trial utterance {t.utt!r} is not in {trial_dir.path}/wav.scp")
        if t.enroll_spk not in enrolled:
            raise DataError(f"{where}: speaker {t.enroll_spk!r} has no enrollment audio in {enroll.path}")
        gender = enroll.spk2gender.get(t.enroll_spk)
        if gender not in GENDERS:
            raise DataError(f"{enroll.path}/spk2gender: enrolled speaker {t.enroll_spk!r} has gender "
                            f"{gender!r}; it must be f or m")
    check_trial_labels(trial_dir, enroll.spk2gender)


def score_trials(enroll: DataDir, trial_dirs: list[DataDir], encoder: SpeakerEncoder, *,
                 cache_dir: str | os.PathLike | None = None, quiet: bool = False) -> TrialScores:
    """Embed enrollment and trial audio (cached) and score every trial of every trial directory."""
    for td in trial_dirs:
        check_trials(enroll, td)
    speakers = sorted({t.enroll_spk for td in trial_dirs for t in td.trials})
    enroll_utts = [u for s in speakers for u in enroll.spk2utt[s]]
    enroll_emb = extract_embeddings(enroll, encoder, utts=enroll_utts, cache_dir=cache_dir, quiet=quiet)
    models = enrollment_models(enroll, enroll_emb, speakers)
    spk_index = {s: i for i, s in enumerate(speakers)}
    parts = []
    for td in trial_dirs:
        utts = sorted({t.utt for t in td.trials})
        emb = extract_embeddings(td, encoder, utts=utts, cache_dir=cache_dir, quiet=quiet)
        utt_index = {u: i for i, u in enumerate(utts)}
        tests = np.stack([emb[u] for u in utts])
        m_idx = np.array([spk_index[t.enroll_spk] for t in td.trials])
        t_idx = np.array([utt_index[t.utt] for t in td.trials])
        parts.append(TrialScores(
            enroll_spk=np.array([t.enroll_spk for t in td.trials]),
            utt=np.array([t.utt for t in td.trials]),
            score=cosine_scores(models, m_idx, tests, t_idx),
            target=np.array([t.target for t in td.trials], dtype=bool),
            gender=np.array([enroll.spk2gender[t.enroll_spk] for t in td.trials]),
        ))
    return TrialScores(*(np.concatenate([getattr(p, f) for p in parts]) for f in TrialScores.__dataclass_fields__))


def _finite(x: float) -> float | None:
    """``x`` as a float, or None when it is NaN (JSON has no NaN)."""
    return None if np.isnan(x) else float(x)


def _thin(x: np.ndarray, n: int) -> list[float]:
    idx = np.unique(np.linspace(0, len(x) - 1, min(n, len(x))).round().astype(int)) if len(x) else []
    return [float(v) for v in np.asarray(x)[idx]]


def verification_metrics(scores: np.ndarray, target: np.ndarray, enroll_spk: np.ndarray, *,
                         n_boot: int = 1000, seed: int = 0) -> dict:
    """EER (%), ROCCH-EER, Cllr/minCllr, linkability, ZEBRA, bootstrap CI over speakers, DET points."""
    tar, non = scores[target], scores[~target]
    if len(tar) == 0 or len(non) == 0:
        raise DataError(f"need target and non-target trials (got {len(tar)} target, {len(non)} non-target)")
    eer = compute_eer(tar, non)
    ci = eer_ci(tar, non, enroll_spk[target], enroll_spk[~target], n_boot=n_boot, seed=seed)
    z = zebra(tar, non)
    pfa, pmiss = det_curve(tar, non)
    return {
        "n_target": int(len(tar)),
        "n_nontarget": int(len(non)),
        "eer": float(eer.eer),
        "eer_threshold": float(eer.threshold),
        "eer_ci": {"low": float(ci.low), "high": float(ci.high), "alpha": ci.alpha, "n_boot": ci.n_boot,
                   "resampled": "enrolled speakers"},
        "rocch_eer": float(rocch_eer(tar, non)),
        "cllr": float(cllr(tar, non)),
        "min_cllr": float(min_cllr(tar, non)),
        "linkability": _finite(linkability(tar, non)),  # None: too few target trials to estimate
        "zebra": {"expected_bits": float(z.expected_bits), "worst_case_log10": float(z.worst_case_log10),
                  "tag": z.tag},
        "det": {"pfa_probit": _thin(pfa, _DET_POINTS), "pmiss_probit": _thin(pmiss, _DET_POINTS)},
    }


def privacy_metrics(trials: TrialScores, *, n_boot: int = 1000, seed: int = 0) -> dict:
    """Metrics per gender of the enrolled speaker, their mean EER and the gender-fairness summary."""
    by_gender = {}
    for g in GENDERS:
        sel = trials.gender == g
        if sel.any():
            by_gender[g] = verification_metrics(trials.score[sel], trials.target[sel], trials.enroll_spk[sel],
                                                n_boot=n_boot, seed=seed)
    if not by_gender:
        raise DataError("no trials to evaluate")
    eers = [m["eer"] for m in by_gender.values()]
    out = {"by_gender": by_gender, "eer_mean": float(np.mean(eers))}
    if len(by_gender) == 2:
        fair = gender_fairness(by_gender["f"]["eer"], by_gender["m"]["eer"])
        out["fairness"] = {"eer_female": fair.eer_female, "eer_male": fair.eer_male, "mfdr": fair.mfdr}
    return out


def evaluate_privacy(enroll_dir: str | os.PathLike | DataDir, trial_dirs: list, encoder: SpeakerEncoder, *,
                     cache_dir: str | os.PathLike | None = None, n_boot: int = 1000, quiet: bool = False,
                     keep_scores: bool = True) -> dict:
    """Score the trial lists against the enrollment set with ``encoder`` and compute the metrics.

    Returns a JSON-serialisable dict: encoder, data paths, per-gender metrics,
    mean EER, fairness and (``keep_scores``) every trial's score, label and gender.
    """
    enroll = enroll_dir if isinstance(enroll_dir, DataDir) else read_data_dir(enroll_dir)
    tds = [td if isinstance(td, DataDir) else read_data_dir(td) for td in trial_dirs]
    trials = score_trials(enroll, tds, encoder, cache_dir=cache_dir, quiet=quiet)
    result = {"encoder": encoder.name, "enroll": str(enroll.path), "trials": [str(td.path) for td in tds],
              **privacy_metrics(trials, n_boot=n_boot)}
    if keep_scores:
        result["scores"] = [
            {"enroll_spk": str(s), "utt": str(u), "score": float(v), "target": bool(t), "gender": str(g)}
            for s, u, v, t, g in zip(trials.enroll_spk, trials.utt, trials.score, trials.target, trials.gender)
        ]
    return result


def run_scenarios(scenarios: list[str], *, orig_enroll, orig_trials: list, anon_enroll=None,
                  anon_trials: list | None = None, pretrained: str | SpeakerEncoder = "ge2e",
                  attacker: str | SpeakerEncoder | None = None,
                  cache_dir: str | os.PathLike | None = None, device: str = "cpu", n_boot: int = 1000,
                  quiet: bool = False) -> dict:
    """Run the VPC attack scenarios (``OO``, ``OA``, ``AA-lazy``, ``AA-semi``).

    ``pretrained`` is the encoder (or its spec) of the ignorant / lazy-informed
    attacker; ``attacker`` that of the semi-informed one (e.g. ``ecapa:ckpt.pt``),
    retrained on anonymized data. Each spec is loaded once and shared.
    """
    sides = {"orig": (orig_enroll, orig_trials), "anon": (anon_enroll, anon_trials)}
    loaded: dict[str, SpeakerEncoder] = {}
    results = {}
    for name in scenarios:
        if name not in SCENARIOS:
            raise ValueError(f"unknown scenario {name!r}; choose from {', '.join(SCENARIOS)}")
        enroll_side, trial_side, model = SCENARIOS[name]
        enroll, _ = sides[enroll_side]
        _, trials = sides[trial_side]
        if enroll is None or not trials:
            raise ValueError(f"scenario {name} needs the {'anonymized' if 'anon' in (enroll_side, trial_side) else 'original'} "
                             "enrollment and trial directories")
        spec = pretrained if model == "pretrained" else attacker
        if spec is None:
            raise ValueError(f"scenario {name} needs the retrained attacker's checkpoint (e.g. ecapa:attacker/best.pt)")
        if isinstance(spec, str):
            if spec not in loaded:
                loaded[spec] = load_encoder(spec, device=device)
            spec = loaded[spec]
        results[name] = evaluate_privacy(enroll, trials, spec, cache_dir=cache_dir, n_boot=n_boot, quiet=quiet)
        results[name]["scenario"] = name
    return results


def format_table(results: dict) -> str:
    """A readable table: one row per scenario and gender, then the scenario's mean EER."""
    head = (f"{'scenario':<9} {'gender':<6} {'EER %':>6} {'95% CI':>14} {'ROCCH':>6} {'Cllr':>7} "
            f"{'minCllr':>7} {'link':>6} {'ZEBRA bits':>10} {'tag':>4}  encoder")
    lines = [head, "-" * len(head)]
    for name, r in results.items():
        for g, m in r["by_gender"].items():
            ci = f"[{m['eer_ci']['low']:.1f}, {m['eer_ci']['high']:.1f}]"
            lines.append(f"{name:<9} {g:<6} {m['eer']:6.2f} {ci:>14} {m['rocch_eer']:6.2f} {m['cllr']:7.3f} "
                         f"{m['min_cllr']:7.3f} {'n/a' if m['linkability'] is None else format(m['linkability'], '.3f'):>6} {m['zebra']['expected_bits']:10.4f} "
                         f"{m['zebra']['tag']:>4}  {r['encoder']}")
        lines.append(f"{name:<9} {'mean':<6} {r['eer_mean']:6.2f}")
    return "\n".join(lines)
