"""Rung (a) of the attacker ladder: a pretrained encoder with an LDA/PLDA back-end trained on anonymized data.

:func:`train_backend` embeds the (anonymized) training set with the encoder
(cached), fits one back-end per candidate LDA dimension, scores the dev trials
with each and keeps the one with the lowest dev EER (mean over genders, as the
VPC reports). ``OUT/backend.npz`` is the selected back-end, ``OUT/log.json``
the selection log. :func:`evaluate_backend` scores trial lists with it and
returns the same metrics as :func:`voxanon.evaluation.privacy.evaluate_privacy`.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from voxanon.data.kaldi import DataDir, DataError
from voxanon.evaluation.dev_selection import as_data_dir, mean_gender_eer
from voxanon.evaluation.embeddings import extract_embeddings
from voxanon.evaluation.privacy import (
    TrialScores,
    beyond_eer_metrics,
    enrolled_trials,
    identification_matrix,
    privacy_metrics,
    trial_sets,
)
from voxanon.evaluation.results import PrivacyResult
from voxanon.models.speaker import SpeakerEncoder
from voxanon.models.speaker.plda import BackendSettings, PldaBackend


@dataclass(frozen=True)
class BackendTraining:
    """What :func:`train_backend` tries: LDA dimensions (each clipped as in :class:`BackendSettings`)."""

    backend: BackendSettings = BackendSettings()
    lda_dims: tuple[int, ...] = (50, 100, 150, 200)


def backend_trial_scores(enroll: DataDir, trial_dirs: list[DataDir], encoder: SpeakerEncoder,
                         backend: PldaBackend, *, cache_dir=None, quiet: bool = False) -> TrialScores:
    """Score every trial with the back-end; enrollment = all of the speaker's enrollment utterances."""
    trial_dirs = trial_sets(enroll, trial_dirs)
    speakers = sorted({t.enroll_spk for td in trial_dirs for t in td.trials})
    utts = [u for s in speakers for u in enroll.spk2utt[s]]
    emb = extract_embeddings(enroll, encoder, utts=utts, cache_dir=cache_dir, quiet=quiet)
    enrollments = [np.stack([emb[u] for u in enroll.spk2utt[s]]) for s in speakers]
    spk_index = {s: i for i, s in enumerate(speakers)}
    parts, rows, true, ids = [], [], [], []
    for td in trial_dirs:
        tutts = sorted({t.utt for t in td.trials})
        temb = extract_embeddings(td, encoder, utts=tutts, cache_dir=cache_dir, quiet=quiet)
        matrix = backend.score(enrollments, np.stack([temb[u] for u in tutts]))
        utt_index = {u: i for i, u in enumerate(tutts)}
        pos, who = enrolled_trials(td, tutts, spk_index)
        rows.append(matrix[:, pos].T)
        true += who
        ids += [tutts[i] for i in pos]
        parts.append(TrialScores(
            enroll_spk=np.array([t.enroll_spk for t in td.trials]),
            utt=np.array([t.utt for t in td.trials]),
            score=matrix[[spk_index[t.enroll_spk] for t in td.trials], [utt_index[t.utt] for t in td.trials]],
            target=np.array([t.target for t in td.trials], dtype=bool),
            gender=np.array([enroll.spk2gender[t.enroll_spk] for t in td.trials]),
        ))
    return TrialScores.concatenate(parts, identification_matrix(rows, true, ids, speakers))


def evaluate_backend(enroll, trial_dirs: list, encoder: SpeakerEncoder, backend: PldaBackend, *,
                     cache_dir=None, n_boot: int = 1000, quiet: bool = False) -> PrivacyResult:
    """Privacy metrics (per gender, mean EER, fairness) of the back-end attacker on trial lists."""
    enroll = as_data_dir(enroll)
    tds = [as_data_dir(td) for td in trial_dirs]
    trials = backend_trial_scores(enroll, tds, encoder, backend, cache_dir=cache_dir, quiet=quiet)
    by_gender, eer_mean, fairness = privacy_metrics(trials, n_boot=n_boot)
    return PrivacyResult(encoder=f"{encoder.name}+{backend.settings.scoring}", enroll=str(enroll.path),
                         trials=[str(td.path) for td in tds], by_gender=by_gender, eer_mean=eer_mean,
                         fairness=fairness, beyond=beyond_eer_metrics(trials))


def train_backend(train_dir, dev_enroll, dev_trials: list, encoder: SpeakerEncoder, out_dir: str | os.PathLike,
                  settings: BackendTraining = BackendTraining(), *, seed: int = 0, cache_dir=None,
                  quiet: bool = False) -> tuple[Path, list[dict]]:
    """Train the back-end on ``train_dir``, select the LDA dimension on the dev trials.

    Returns the path of the selected back-end (``OUT/backend.npz``) and the
    log: one entry per candidate with ``epoch`` (candidate number), ``loss``
    (None: closed-form training has none), ``lda_dim`` and ``val_eer``. The
    fit is closed-form, so ``seed`` changes nothing; it is kept for the common
    signature of the attacker rungs.

    Raises
    ------
    DataError
        A training set with fewer than two speakers or no more utterances than speakers.
    """
    del seed
    train = as_data_dir(train_dir)
    utts = sorted(train.utt2spk)
    emb = extract_embeddings(train, encoder, utts=utts, cache_dir=cache_dir, quiet=quiet)
    x = np.stack([emb[u] for u in utts])
    labels = np.array([train.utt2spk[u] for u in utts])
    enroll, tds = as_data_dir(dev_enroll), [as_data_dir(t) for t in dev_trials]
    log, best = [], None
    # candidates that clip to the same dimension (few speakers) are one candidate
    dims = dict.fromkeys(min(d, len(set(labels)) - 1, x.shape[1]) for d in settings.lda_dims)
    for i, dim in enumerate(dims, start=1):
        try:
            backend = PldaBackend(replace(settings.backend, lda_dim=dim)).fit(x, labels)
        except ValueError as exc:
            raise DataError(f"{train.path}: {exc}") from exc
        eer = mean_gender_eer(backend_trial_scores(enroll, tds, encoder, backend, cache_dir=cache_dir, quiet=True))
        log.append({"epoch": i, "loss": None, "lda_dim": dim, "val_eer": eer})
        if best is None or eer < best[0]:
            best = (eer, backend)
        if not quiet:
            print(f"LDA {dim}: dev EER {eer:.2f} %")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    best[1].save(out / "backend.npz")
    (out / "log.json").write_text(json.dumps({
        "encoder": encoder.name, "train": str(train.path), "speakers": len(set(labels)), "utterances": len(utts),
        "settings": asdict(best[1].settings), "history": log}, indent=1), encoding="utf-8")
    return out / "backend.npz", log
