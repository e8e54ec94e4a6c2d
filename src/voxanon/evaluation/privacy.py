"""Privacy evaluation: speaker verification over VPC trial lists, and the attack scenarios.

Enrollment model = mean of the speaker's utterance embeddings; trial score =
cosine between enrollment model and trial utterance, all trials at once.
Metrics are computed per gender (of the enrolled speaker) and the EERs are
averaged, as the VPC does. Results are typed (:class:`~voxanon.evaluation.results.PrivacyResult`);
each scenario on each split is one :class:`PrivacyEvaluator` of the benchmark.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voxanon.data import layout
from voxanon.data.kaldi import (
    GENDERS,
    DataDir,
    DataError,
    check_trial_labels,
    read_data_dir,
)
from voxanon.errors import ConfigError
from voxanon.evaluation.embeddings import extract_embeddings
from voxanon.evaluation.evaluator import PRIVACY, Column, Env, Evaluator, Rank, RunSettings, SystemData, Table
from voxanon.evaluation.results import (
    DetPoints,
    EerInterval,
    Fairness,
    PrivacyResult,
    TrialScore,
    VerificationMetrics,
    Zebra,
)
from voxanon.evaluation.scenarios import (
    AA_LAZY,
    AA_SEMI,
    ATTACKER_ORDER,
    OA,
    OO,
    SCENARIOS,
    strongest_attacker,
    title,
)
from voxanon.metrics import (
    BeyondEERResult,
    ScoreMatrix,
    ScoreMatrixError,
    beyond_eer,
    cllr,
    compute_eer,
    det_curve,
    eer_ci,
    gender_fairness,
    held_out_split,
    linkability,
    min_cllr,
    rocch_eer,
    zebra,
)
from voxanon.models.speaker import SpeakerEncoder, load_encoder

#: DET points kept in the JSON (evenly thinned)
_DET_POINTS = 200


@dataclass
class TrialScores:
    """Scores of a set of trials with their labels and the enrolled speaker's gender.

    ``matrix`` scores every trial utterance of an enrolled speaker against every enrolled model (the
    identification view behind :func:`voxanon.metrics.beyond_eer`); None with fewer than 2 models.
    """

    enroll_spk: np.ndarray
    utt: np.ndarray
    score: np.ndarray
    target: np.ndarray
    gender: np.ndarray
    matrix: ScoreMatrix | None = None

    @classmethod
    def concatenate(cls, parts: list[TrialScores], matrix: ScoreMatrix | None = None) -> TrialScores:
        """The trials of ``parts`` (e.g. one per trial list) end to end, with ``matrix``."""
        columns = [f for f in cls.__dataclass_fields__ if f != "matrix"]
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in columns), matrix=matrix)


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


def trial_sets(enroll: DataDir, trial_dirs: list[DataDir]) -> list[DataDir]:
    """The trial directories that hold trials, each checked (:func:`check_trials`); an empty one (no utterances:
    a gender the corpus has no speakers of) is left out. DataError when none is left."""
    kept = [td for td in trial_dirs if td.wav_scp or td.trials]
    if not kept:
        raise DataError(f"no trials: {', '.join(str(td.path) for td in trial_dirs)} hold no utterances")
    for td in kept:
        check_trials(enroll, td)
    return kept


def score_trials(enroll: DataDir, trial_dirs: list[DataDir], encoder: SpeakerEncoder, *,
                 cache_dir: str | os.PathLike | None = None, quiet: bool = False) -> TrialScores:
    """Embed enrollment and trial audio (cached) and score every trial of every trial directory (empty ones
    left out: :func:`trial_sets`)."""
    trial_dirs = trial_sets(enroll, trial_dirs)
    speakers = sorted({t.enroll_spk for td in trial_dirs for t in td.trials})
    enroll_utts = [u for s in speakers for u in enroll.spk2utt[s]]
    enroll_emb = extract_embeddings(enroll, encoder, utts=enroll_utts, cache_dir=cache_dir, quiet=quiet)
    models = enrollment_models(enroll, enroll_emb, speakers)
    spk_index = {s: i for i, s in enumerate(speakers)}
    parts, rows, true, ids = [], [], [], []
    for td in trial_dirs:
        utts = sorted({t.utt for t in td.trials})
        emb = extract_embeddings(td, encoder, utts=utts, cache_dir=cache_dir, quiet=quiet)
        utt_index = {u: i for i, u in enumerate(utts)}
        tests = np.stack([emb[u] for u in utts])
        pos, who = enrolled_trials(td, utts, spk_index)
        rows.append(_unit(tests[pos]) @ _unit(models).T)
        true += who
        ids += [utts[i] for i in pos]
        m_idx = np.array([spk_index[t.enroll_spk] for t in td.trials])
        t_idx = np.array([utt_index[t.utt] for t in td.trials])
        parts.append(TrialScores(
            enroll_spk=np.array([t.enroll_spk for t in td.trials]),
            utt=np.array([t.utt for t in td.trials]),
            score=cosine_scores(models, m_idx, tests, t_idx),
            target=np.array([t.target for t in td.trials], dtype=bool),
            gender=np.array([enroll.spk2gender[t.enroll_spk] for t in td.trials]),
        ))
    return TrialScores.concatenate(parts, identification_matrix(rows, true, ids, speakers))


def enrolled_trials(td: DataDir, utts: list[str], spk_index: dict[str, int]) -> tuple[list[int], list[int]]:
    """Positions in ``utts`` of the trial utterances spoken by an enrolled speaker, and that speaker's column."""
    pos = [i for i, u in enumerate(utts) if td.utt2spk.get(u) in spk_index]
    return pos, [spk_index[td.utt2spk[utts[i]]] for i in pos]


def identification_matrix(rows: list[np.ndarray], true: list[int], ids: list[str],
                          speakers: list[str]) -> ScoreMatrix | None:
    """The :class:`ScoreMatrix` of score blocks ``rows`` (trial utterances x enrolled speakers, one block per trial
    list, its utterances and their true columns from :func:`enrolled_trials`), None with fewer than 2 speakers or
    no such utterance."""
    if len(speakers) < 2 or not true:
        return None
    return ScoreMatrix(np.concatenate(rows), np.array(true), speakers=tuple(speakers), trials=tuple(ids))


def beyond_eer_metrics(trials: TrialScores) -> BeyondEERResult | None:
    """:func:`voxanon.metrics.beyond_eer` of the trials' score matrix, its held-out half calibrating singling
    out (None where no matrix can be formed or no speaker has two trial utterances)."""
    if trials.matrix is None:
        return None
    try:
        return beyond_eer(*held_out_split(trials.matrix))
    except ScoreMatrixError:
        return None


def _finite(x: float) -> float | None:
    """``x`` as a float, or None when it is NaN (JSON has no NaN)."""
    return None if np.isnan(x) else float(x)


def _thin(x: np.ndarray, n: int) -> list[float]:
    idx = np.unique(np.linspace(0, len(x) - 1, min(n, len(x))).round().astype(int)) if len(x) else []
    return [float(v) for v in np.asarray(x)[idx]]


def verification_metrics(scores: np.ndarray, target: np.ndarray, enroll_spk: np.ndarray, *,
                         n_boot: int = 1000, seed: int = 0) -> VerificationMetrics:
    """EER (%), ROCCH-EER, Cllr/minCllr, linkability, ZEBRA, bootstrap CI over speakers, DET points."""
    tar, non = scores[target], scores[~target]
    if len(tar) == 0 or len(non) == 0:
        raise DataError(f"need target and non-target trials (got {len(tar)} target, {len(non)} non-target)")
    eer = compute_eer(tar, non)
    ci = eer_ci(tar, non, enroll_spk[target], enroll_spk[~target], n_boot=n_boot, seed=seed)
    z = zebra(tar, non)
    pfa, pmiss = det_curve(tar, non)
    return VerificationMetrics(
        n_target=int(len(tar)), n_nontarget=int(len(non)), eer=float(eer.eer), eer_threshold=float(eer.threshold),
        eer_ci=EerInterval(float(ci.low), float(ci.high), ci.alpha, ci.n_boot, "enrolled speakers"),
        rocch_eer=float(rocch_eer(tar, non)), cllr=float(cllr(tar, non)), min_cllr=float(min_cllr(tar, non)),
        linkability=_finite(linkability(tar, non)),  # None: too few target trials to estimate
        zebra=Zebra(float(z.expected_bits), float(z.worst_case_log10), z.tag),
        det=DetPoints(_thin(pfa, _DET_POINTS), _thin(pmiss, _DET_POINTS)),
    )


def privacy_metrics(trials: TrialScores, *, n_boot: int = 1000, seed: int = 0
                    ) -> tuple[dict[str, VerificationMetrics], float, Fairness | None]:
    """Metrics per gender of the enrolled speaker, their mean EER and the gender-fairness summary."""
    by_gender = {}
    for g in GENDERS:
        sel = trials.gender == g
        if sel.any():
            by_gender[g] = verification_metrics(trials.score[sel], trials.target[sel], trials.enroll_spk[sel],
                                                n_boot=n_boot, seed=seed)
    if not by_gender:
        raise DataError("no trials to evaluate")
    fairness = None
    if len(by_gender) == 2:
        fair = gender_fairness(by_gender["f"].eer, by_gender["m"].eer)
        fairness = Fairness(fair.eer_female, fair.eer_male, fair.mfdr)
    return by_gender, float(np.mean([m.eer for m in by_gender.values()])), fairness


def evaluate_privacy(enroll_dir: str | os.PathLike | DataDir, trial_dirs: list, encoder: SpeakerEncoder, *,
                     cache_dir: str | os.PathLike | None = None, n_boot: int = 1000, quiet: bool = False,
                     keep_scores: bool = True) -> PrivacyResult:
    """Score the trial lists against the enrollment set with ``encoder`` and compute the metrics.

    The result names the encoder and data paths and holds the per-gender
    metrics, mean EER, fairness and (``keep_scores``) every trial's score.
    """
    enroll = enroll_dir if isinstance(enroll_dir, DataDir) else read_data_dir(enroll_dir)
    tds = [td if isinstance(td, DataDir) else read_data_dir(td) for td in trial_dirs]
    trials = score_trials(enroll, tds, encoder, cache_dir=cache_dir, quiet=quiet)
    by_gender, eer_mean, fairness = privacy_metrics(trials, n_boot=n_boot)
    scores = None
    if keep_scores:
        scores = [TrialScore(str(s), str(u), float(v), bool(t), str(g))
                  for s, u, v, t, g in zip(trials.enroll_spk, trials.utt, trials.score, trials.target, trials.gender)]
    return PrivacyResult(encoder=encoder.name, enroll=str(enroll.path), trials=[str(td.path) for td in tds],
                         by_gender=by_gender, eer_mean=eer_mean, fairness=fairness, scores=scores,
                         beyond=beyond_eer_metrics(trials))


def run_scenarios(scenarios: list[str], *, orig_enroll, orig_trials: list, anon_enroll=None,
                  anon_trials: list | None = None, pretrained: str | SpeakerEncoder = "ge2e",
                  attacker: str | SpeakerEncoder | None = None,
                  cache_dir: str | os.PathLike | None = None, device: str = "cpu", n_boot: int = 1000,
                  quiet: bool = False, keep_scores: bool = True) -> dict[str, PrivacyResult]:
    """Run the VPC attack scenarios (names in :data:`voxanon.evaluation.scenarios.SCENARIOS`).

    ``pretrained`` is the encoder (or its spec) of the ignorant / lazy-informed
    attacker; ``attacker`` that of the semi-informed one (e.g. ``ecapa:ckpt.pt``),
    retrained on anonymized data. Each spec is loaded once and shared.
    """
    sides = {"orig": (orig_enroll, orig_trials), "anon": (anon_enroll, anon_trials)}
    loaded: dict[str, SpeakerEncoder] = {}
    results = {}
    for name in scenarios:
        if name not in SCENARIOS:
            raise ConfigError(f"unknown scenario {name!r}; choose from {', '.join(SCENARIOS)}")
        sc = SCENARIOS[name]
        enroll, _ = sides[sc.enroll]
        _, trials = sides[sc.trials]
        if enroll is None or not trials:
            raise ConfigError(f"scenario {name} needs the {'anonymized' if sc.needs_anonymized else 'original'} "
                              "enrollment and trial directories")
        spec = pretrained if sc.attacker == "pretrained" else attacker
        if spec is None:
            raise ConfigError(f"scenario {name} needs the retrained attacker's checkpoint "
                              "(e.g. ecapa:attacker/best.pt)")
        if isinstance(spec, str):
            if spec not in loaded:
                loaded[spec] = load_encoder(spec, device=device)
            spec = loaded[spec]
        res = evaluate_privacy(enroll, trials, spec, cache_dir=cache_dir, n_boot=n_boot, quiet=quiet,
                               keep_scores=keep_scores)
        results[name] = dataclasses.replace(res, scenario=name)
    return results


@dataclass(frozen=True)
class PrivacySettings:
    """One attack scenario on one split with the pretrained ``encoder``."""

    scenario: str
    split: str
    encoder: str
    n_boot: int


class PrivacyEvaluator(Evaluator):
    """A VPC attack scenario of the pretrained attacker (OO, OA, AA-lazy) on one split of one system.

    The retrained (semi-informed) attackers are :mod:`voxanon.evaluation.ladder`.
    """

    kind = "privacy"
    Settings = PrivacySettings
    under_conditions = True

    @classmethod
    def plan(cls, run: RunSettings, options) -> list[Evaluator]:
        return [cls(PrivacySettings(name, split, run.pretrained, run.n_boot))
                for split in run.splits for name, sc in SCENARIOS.items() if sc.attacker == "pretrained"]

    @property
    def slot(self) -> tuple[str, ...]:
        return (self.settings.scenario, self.settings.split)

    @property
    def group(self) -> str:
        return f"pretrained {self.settings.split}"  # the scenarios of one split share embeddings

    def applies(self, data: SystemData) -> bool:
        return SCENARIOS[self.settings.scenario].needs_anonymized or not data.anonymized  # OO: the original only

    def inputs(self, data: SystemData) -> dict[str, Path]:
        sc = SCENARIOS[self.settings.scenario]
        enroll, trial_f, trial_m = layout.split_sets(self.settings.split)
        side = {"orig": data.original, "anon": data.sets}
        return {"enroll": side[sc.enroll][enroll], "trials_f": side[sc.trials][trial_f],
                "trials_m": side[sc.trials][trial_m]}

    def models(self, data: SystemData) -> dict[str, str]:
        return {"encoder": self.settings.encoder}

    @classmethod
    def columns(cls, results) -> list[Column]:
        return headline_columns(results) + beyond_columns()

    @classmethod
    def section(cls, results, page) -> tuple[str, str] | None:
        return privacy_section(results, page)

    @classmethod
    def figures(cls, results, summary, draw, folder: Path) -> list[tuple[Path, str]]:
        return privacy_figures(results, summary, draw, folder)

    @classmethod
    def tables(cls, results) -> list[Table]:
        return [Table("privacy", privacy_rows(results), "Privacy", privacy_table)]

    def run(self, data: SystemData, env: Env) -> PrivacyResult:
        dirs = self.inputs(data)
        encoder = env.model(self.models(data)["encoder"], lambda spec: load_encoder(spec, device=env.device))
        res = evaluate_privacy(dirs["enroll"], [dirs["trials_f"], dirs["trials_m"]], encoder,
                               cache_dir=env.cache_dir / "embeddings", n_boot=self.settings.n_boot,
                               quiet=env.quiet, keep_scores=False)
        return dataclasses.replace(res, scenario=self.settings.scenario)


# -- a system's privacy results: every attacker of the privacy kind (the scenarios here and the ladder's rungs)
def privacy_result(record, scenario: str, split: str) -> PrivacyResult | None:
    """The privacy result of attacker ``scenario`` on ``split`` in a system's ``record``
    (:class:`~voxanon.jobs.benchmark.records.SystemRecord`); the original row's OA/AA-lazy equal its OO when
    absent (nothing is anonymized)."""
    kind = PrivacyEvaluator.kind
    res = record.get(kind, scenario, split)
    if res is None and record.method is None and scenario in SCENARIOS and SCENARIOS[scenario].attacker == "pretrained":
        res = record.get(kind, OO, split)
    return res


def attacker_eers(record, split: str) -> dict[str, float]:
    """Mean EER (%) of every attacker that ran on ``split`` (scenarios and ladder rungs) in a system's ``record``,
    by name."""
    return {scenario: res.eer_mean for (scenario, sp), res in record.of_kind(PrivacyEvaluator.kind).items()
            if sp == split}


def privacy_rows(results) -> list[dict]:
    """``privacy.csv``: system x attacker x split x gender with every privacy metric."""
    rows = []
    for name, s in results.systems.items():
        for (scenario, split), p in s.of_kind(PrivacyEvaluator.kind).items():
            for g, m in p.by_gender.items():
                rows.append({"system": name, "scenario": scenario, "split": split, "gender": g,
                             "eer": m.eer, "eer_ci_low": m.eer_ci.low, "eer_ci_high": m.eer_ci.high,
                             "rocch_eer": m.rocch_eer, "cllr": m.cllr, "min_cllr": m.min_cllr,
                             "linkability": m.linkability, "zebra_bits": m.zebra.expected_bits,
                             "zebra_worst_log10": m.zebra.worst_case_log10, "zebra_tag": m.zebra.tag,
                             "n_target": m.n_target, "n_nontarget": m.n_nontarget, "encoder": p.encoder})
    return rows


def privacy_table(rows: list[dict], page) -> str:
    """The report's Privacy section: :func:`privacy_rows` as a table."""
    header = ["system", "scenario", "split", "gender", "EER % [95% CI]", "ROCCH-EER", "Cllr", "minCllr",
              "linkability", "ZEBRA bits", "tag", "trials (tar/non)"]
    fmt = page.fmt
    body = [[fmt(r["system"]), fmt(title(r["scenario"])), r["split"], r["gender"],
             page.fmt_ci(r["eer"], (r["eer_ci_low"], r["eer_ci_high"])), fmt(r["rocch_eer"]), fmt(r["cllr"], 3),
             fmt(r["min_cllr"], 3), fmt(r["linkability"], 3), fmt(r["zebra_bits"], 3), fmt(str(r["zebra_tag"])),
             f"{r['n_target']}/{r['n_nontarget']}"] for r in rows]
    return page.table(header, body)


# -- the summary headline, led by the strongest attacker
def _strongest(record, results) -> tuple[str, float] | None:
    """The attacker with the lowest mean EER on the primary split, and that EER (None: no attacker ran)."""
    return strongest_attacker(attacker_eers(record, results.settings.primary.split))


def _strongest_name(record, results) -> str | None:
    best = _strongest(record, results)
    return best[0] if best else None


def _strongest_eer(record, results) -> float | None:
    best = _strongest(record, results)
    return best[1] if best else None


def _strongest_result(record, results) -> PrivacyResult | None:
    best = _strongest(record, results)
    return privacy_result(record, best[0], results.settings.primary.split) if best else None


def _gender_eer(gender: str):
    def value(record, results) -> float | None:
        p = _strongest_result(record, results)
        return p.by_gender[gender].eer if p and gender in p.by_gender else None
    return value


def _mfdr(record, results) -> float | None:
    p = _strongest_result(record, results)
    return p.fairness.mfdr if p and p.fairness else None


def _scenario_eer(scenario: str | None):
    """Mean EER of ``scenario`` (None: the run's primary scenario, the VPC semi-informed attacker)."""
    def value(record, results) -> float | None:
        res = privacy_result(record, scenario or results.settings.primary.scenario, results.settings.primary.split)
        return res.eer_mean if res else None
    return value


def _attacker_eer(name: str):
    return lambda record, results: attacker_eers(record, results.settings.primary.split).get(name)


def headline_columns(results) -> list[Column]:
    """The privacy headline of the summary, led by the strongest attacker.

    ``attacker`` is the attacker with the lowest mean EER over all that ran
    (:func:`~voxanon.evaluation.scenarios.strongest_attacker`); ``eer``,
    ``eer_f``, ``eer_m`` and ``mfdr`` are its numbers (the privacy category
    comes from them; ``eer`` ranks as the privacy of the VPC ranking). ``eer_semi`` is the VPC semi-informed attacker,
    ``eer_lazy`` and ``eer_ignorant`` the pretrained ones, ``eer_<rung>`` each
    further attacker (ladder rungs) and ``attackers`` (not in summary.csv)
    every attacker's mean EER, by name.
    """
    split = results.settings.primary.split
    rungs = dict.fromkeys(n for s in results.systems.values() for n in attacker_eers(s, split) if n not in SCENARIOS)
    return [Column("attacker", _strongest_name, header="strongest attacker", cli="strongest attacker", label=title),
            Column("eer", _strongest_eer, cli="EER %", rank=Rank(PRIVACY)),
            Column("eer_f", _gender_eer("f"), header="EER f"),
            Column("eer_m", _gender_eer("m"), header="EER m"),
            Column("eer", _strongest_eer, header="EER", bold=True, csv=False),
            Column("eer_semi", _scenario_eer(None), header="EER VPC semi", cli="EER VPC semi %"),
            Column("eer_lazy", _scenario_eer(AA_LAZY), header="EER lazy", cli="EER lazy %"),
            Column("eer_ignorant", _scenario_eer(OA), header="EER ignorant"),
            *(Column(f"eer_{n}", _attacker_eer(n)) for n in rungs),
            Column("mfdr", _mfdr),
            Column("attackers", lambda record, results: attacker_eers(record, split), csv=False)]


def _strongest_beyond(field: str):
    """A field of the strongest attacker's :class:`~voxanon.metrics.BeyondEERResult` (None where not computed)."""
    def value(record, results) -> float | None:
        p = _strongest_result(record, results)
        return getattr(p.beyond, field) if p is not None and p.beyond is not None else None
    return value


#: the privacy metrics beyond the EER in the summary (the strongest attacker's): column, field, report title
BEYOND_COLUMNS = (("link_rank1", "rank1_linkability", "rank-1 linkability %"),
                  ("singling_out", "singling_out", "singling out %"),
                  ("disclosure_bits", "disclosure_mean_bits", "rank disclosure (bits)"),
                  ("disclosure_worst_bits", "disclosure_worst_bits", "worst speaker's disclosure (bits)"),
                  ("tpr_fpr1", "tpr_at_fpr_1", "TPR % at 1 % FPR"),
                  ("tpr_fpr0.1", "tpr_at_fpr_0_1", "TPR % at 0.1 % FPR"),
                  ("spk_eer_worst10", "speaker_eer_worst_decile", "worst-decile speaker EER %"))


def beyond_columns() -> list[Column]:
    """summary.csv columns of the strongest attacker's metrics beyond the EER (absent where none was computed)."""
    return [Column(name, _strongest_beyond(field), omit_missing=True) for name, field, _ in BEYOND_COLUMNS]


def _heat(eer: float | None, strongest: bool) -> str:
    """A heatmap cell: red where the attacker verifies well (EER near 0), white at chance (50 %)."""
    if eer is None:
        return "<td>–</td>"
    level = max(0.0, min(1.0, eer / 50.0))
    colour = f"rgb(255,{int(90 + 165 * level)},{int(90 + 165 * level)})"
    text = f"<b>{eer:.1f} ★</b>" if strongest else f"{eer:.1f}"
    return f"<td style='background:{colour};text-align:right'>{text}</td>"


def privacy_section(results, page) -> tuple[str, str] | None:
    """The report's privacy at a glance: a system x attacker EER heatmap (strongest marked), and the strongest
    attacker's metrics beyond the EER per system."""
    split = results.settings.primary.split
    eers = {label: attacker_eers(record, split) for label, record in results.systems.items()}
    names = sorted({n for e in eers.values() for n, v in e.items() if v is not None},
                   key=lambda n: (ATTACKER_ORDER.index(n) if n in ATTACKER_ORDER else len(ATTACKER_ORDER), n))
    if not names:
        return None
    head = "".join(f"<th>{page.fmt(title(n))}</th>" for n in names)
    rows = []
    for label, e in eers.items():
        best = strongest_attacker(e)
        cells = "".join(_heat(e.get(n), best is not None and n == best[0]) for n in names)
        rows.append(f"<tr><td>{page.fmt(label)}</td>{cells}</tr>")
    out = (f"<p>Mean EER (%) of every attacker on the {page.fmt(split)} split: the lower (redder), the better the "
           "attacker links the voices; 50 % is chance. ★ marks each system's strongest attacker, which leads every "
           "table.</p>"
           f"<table><thead><tr><th>system</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
    beyond = {label: p.beyond for label, record in results.systems.items()
              if (p := _strongest_result(record, results)) is not None and p.beyond is not None}
    if beyond:
        first = next(iter(beyond.values()))
        out += ("<p>The strongest attacker's privacy beyond the EER: every trial utterance scored against all "
                f"{first.n_speakers} enrolled speakers (chance: rank-1 linkability "
                f"{first.rank1_linkability_chance:.1f} %, singling out {first.singling_out_chance:.1f} %, "
                f"disclosure 0 bits of at most {first.disclosure_max_bits:.2f}). Worst decile: the mean EER of the "
                "tenth of speakers who stay most identifiable.</p>")
        out += page.table(["system"] + [t for _, _, t in BEYOND_COLUMNS],
                          [[page.fmt(label)] + [page.fmt(getattr(b, field), 1) for _, field, _ in BEYOND_COLUMNS]
                           for label, b in beyond.items()])
    return "Privacy at a glance", out


def privacy_figures(results, summary, draw, folder: Path) -> list[tuple[Path, str]]:
    """DET curves of the VPC semi-informed and the lazy-informed attackers per system and gender, and the
    strongest attacker's EER per gender with the mFDR gap."""
    figs = []
    split = results.settings.primary.split
    for scenario in (AA_SEMI, AA_LAZY):
        name_ = SCENARIOS[scenario].title
        curves = {}
        for name, s in results.systems.items():
            p = privacy_result(s, scenario, split)
            for g, m in (p.by_gender if p else {}).items():
                curves[f"{name} ({g})"] = (m.det.pfa_probit, m.det.pmiss_probit)
        if curves:
            figs.append((draw.det_curves(folder / f"det_{scenario}", curves, f"DET, {name_}"),
                         f"DET curves of the {name_} attacker per system and gender."))
    # a corpus may hold one gender only (a language without packs of the other): its bars alone
    rows = summary.rows
    genders = [(g, name) for g, name in (("eer_f", "female"), ("eer_m", "male")) if any(r[g] is not None for r in rows)]
    gender_rows = [r for r in rows if any(r[g] is not None for g, _ in genders)]
    if gender_rows:
        figs.append((draw.grouped_bars(
            folder / "gender_eer",
            [r.system + (f"\nmFDR {r['mfdr']:.0f} %" if r["mfdr"] is not None else "") for r in gender_rows],
            {name: [math.nan if r[g] is None else r[g] for r in gender_rows] for g, name in genders},
            ylabel="EER %", title="Strongest attacker's EER per gender"),
            "Per-gender EER of each system's strongest attacker, with the mFDR fairness gap."))
    return figs
