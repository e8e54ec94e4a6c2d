"""LDA + two-covariance PLDA back-end: exact LLRs, beats cosine where it should, training and selection on dev."""

import dataclasses
import json

import numpy as np
import pytest
import soundfile as sf
from scipy.stats import multivariate_normal

from voxanon.data.kaldi import DataDir, Trial, read_data_dir, write_data_dir
from voxanon.errors import DataError
from voxanon.metrics import compute_eer
from voxanon.models.speaker import EncoderError, SpeakerEncoder
from voxanon.models.speaker.plda import BackendSettings, PldaBackend

DIM = 32
#: speaker identity lives in 8 dimensions; the other 24 carry large within-speaker nuisance
BETWEEN = np.r_[np.ones(8), np.zeros(DIM - 8)]
WITHIN = np.r_[np.full(8, 0.3), np.full(DIM - 8, 4.0)]


def _utts(spk_vectors, n, rng):
    x = np.repeat(spk_vectors, n, axis=0) + rng.normal(size=(len(spk_vectors) * n, DIM)) * np.sqrt(WITHIN) + 5.0
    return x, np.repeat(np.arange(len(spk_vectors)), n)


def _speakers(n, rng):
    return rng.normal(size=(n, DIM)) * np.sqrt(BETWEEN)


@pytest.fixture(scope="module")
def gaussian():
    rng = np.random.default_rng(0)
    train = _utts(_speakers(200, rng), 8, rng)
    test_spk = _speakers(40, rng)
    enroll, enroll_lab = _utts(test_spk, 4, rng)
    trials, trial_lab = _utts(test_spk, 4, rng)
    return train, [enroll[enroll_lab == s] for s in range(40)], trials, trial_lab


def _eer(scores, trial_lab):
    target = trial_lab[None, :] == np.arange(scores.shape[0])[:, None]
    return compute_eer(scores[target], scores[~target]).eer


def test_plda_llr_beats_cosine_on_gaussian_speakers(gaussian):
    (x, lab), enroll, trials, trial_lab = gaussian
    unit = lambda a: a / np.linalg.norm(a, axis=1, keepdims=True)  # noqa: E731
    raw_cosine = _eer(unit(np.stack([e.mean(0) for e in enroll])) @ unit(trials).T, trial_lab)
    plda = _eer(PldaBackend(BackendSettings(lda_dim=20)).fit(x, lab).score(enroll, trials), trial_lab)
    wccn = _eer(PldaBackend(BackendSettings(lda_dim=20, scoring="cosine")).fit(x, lab).score(enroll, trials), trial_lab)
    assert raw_cosine > 30          # the nuisance dimensions swamp the cosine
    assert plda < 8 and plda < wccn < raw_cosine


def test_llr_is_the_exact_two_covariance_likelihood_ratio(gaussian):
    (x, lab), enroll, trials, _ = gaussian
    backend = PldaBackend(BackendSettings(lda_dim=6)).fit(x, lab)
    scores = backend.score(enroll[:3], trials[:5])
    psi = backend.params["psi"]
    for i in range(3):
        n = len(enroll[i])
        u = backend.transform(enroll[i]).mean(axis=0)
        for j in range(5):
            v = backend.transform(trials[j:j + 1])[0]
            same = np.block([[np.diag(psi + 1 / n), np.diag(psi)], [np.diag(psi), np.diag(psi + 1)]])
            diff = np.block([[np.diag(psi + 1 / n), np.zeros((6, 6))], [np.zeros((6, 6)), np.diag(psi + 1)]])
            joint = np.r_[u, v]
            expected = multivariate_normal(cov=same).logpdf(joint) - multivariate_normal(cov=diff).logpdf(joint)
            assert scores[i, j] == pytest.approx(expected, rel=1e-6, abs=1e-6)


def test_save_load_roundtrip_and_bad_files(gaussian, tmp_path):
    (x, lab), enroll, trials, _ = gaussian
    backend = PldaBackend(BackendSettings(lda_dim=10)).fit(x, lab)
    backend.save(tmp_path / "b.npz")
    loaded = PldaBackend.load(tmp_path / "b.npz")
    assert loaded.settings == backend.settings
    np.testing.assert_allclose(loaded.score(enroll, trials), backend.score(enroll, trials))
    (tmp_path / "bad.npz").write_bytes(b"not a back-end")
    with pytest.raises(EncoderError, match="bad.npz"):
        PldaBackend.load(tmp_path / "bad.npz")
    with pytest.raises(EncoderError, match="not trained"):
        PldaBackend().score(enroll, trials)


def test_invalid_settings_and_data():
    with pytest.raises(ValueError, match="scoring"):
        BackendSettings(scoring="svm")
    with pytest.raises(DataError, match="2 speakers"):
        PldaBackend().fit(np.ones((3, 4)), ["a", "a", "a"])


class VectorEncoder(SpeakerEncoder):
    """Test double: the audio's first DIM samples are the embedding (scaled by the peak normalisation)."""

    name, sample_rate, dim = "vector-v1", 16000, DIM

    def embed(self, wavs, sr):
        return np.stack([w[:DIM] for w in wavs]).astype(np.float32)


def _data_dir(root, name, x, spk, trials=(), gender=None):
    (root / name / "wav").mkdir(parents=True)
    wav_scp, utt2spk = {}, {}
    for i, (vec, s) in enumerate(zip(x, spk)):
        utt = f"{s}-{name}-{i:03d}"
        sig = (vec / 20.0).astype(np.float32)  # no exact zeros: nothing trimmed before embedding
        sf.write(root / name / "wav" / f"{utt}.wav", sig, 16000, subtype="FLOAT")
        wav_scp[utt], utt2spk[utt] = str(root / name / "wav" / f"{utt}.wav"), s
    spks = sorted(set(spk))
    write_data_dir(DataDir(wav_scp=wav_scp, utt2spk=utt2spk, spk2gender={s: gender or ("f" if int(s[1:]) % 2 else "m") for s in spks},
                           trials=[Trial(*t) for t in trials]), root / name)
    return root / name


def test_train_backend_selects_on_dev_and_scores_like_evaluate_privacy(gaussian, tmp_path):
    from voxanon.evaluation.backend_attacker import (
        BackendTraining,
        evaluate_backend,
        train_backend,
    )

    rng = np.random.default_rng(1)
    train_x, train_lab = _utts(_speakers(60, rng), 5, rng)
    dev_spk = _speakers(8, rng)
    ex, el = _utts(dev_spk, 3, rng)
    tx, tl = _utts(dev_spk, 3, rng)
    train = _data_dir(tmp_path, "train", train_x, [f"s{i:02d}" for i in train_lab])
    enroll = _data_dir(tmp_path, "enroll", ex, [f"d{i}" for i in el])
    trial_spk = [f"d{i}" for i in tl]
    trial_dir = _data_dir(tmp_path, "trials", tx, trial_spk)
    utts = sorted(f"{s}-trials-{i:03d}" for i, s in enumerate(trial_spk))
    trials = [(f"d{k}", u, u.startswith(f"d{k}-")) for k in range(8) for u in utts]
    write_data_dir(DataDir(wav_scp={u: str(trial_dir / "wav" / f"{u}.wav") for u in utts},
                           utt2spk={u: u.split("-")[0] for u in utts},
                           spk2gender={f"d{k}": "f" if k % 2 else "m" for k in range(8)},
                           trials=[Trial(*t) for t in trials]), trial_dir)
    path, log = train_backend(train, enroll, [trial_dir], VectorEncoder(), tmp_path / "out",
                              BackendTraining(lda_dims=(4, 8, 500)), cache_dir=tmp_path / "cache", quiet=True)
    assert [e["lda_dim"] for e in log] == [4, 8, 32]  # 500 clipped to the embedding size
    assert all(set(e) >= {"epoch", "loss", "val_eer"} for e in log)
    saved = json.loads((tmp_path / "out" / "log.json").read_text())
    best = min(log, key=lambda e: e["val_eer"])
    assert saved["settings"]["lda_dim"] == best["lda_dim"] and saved["speakers"] == 60
    result = evaluate_backend(enroll, [trial_dir], VectorEncoder(), PldaBackend.load(path), cache_dir=tmp_path / "cache",
                              n_boot=20, quiet=True)
    assert result.eer_mean == pytest.approx(best["val_eer"])
    assert set(result.by_gender) == {"f", "m"}
    # rank-1 linkability and singling out from the back-end's own scores of every trial against every speaker
    from voxanon.evaluation.embeddings import extract_embeddings
    from voxanon.metrics import ScoreMatrix, beyond_eer, held_out_split

    enrolled = extract_embeddings(read_data_dir(enroll), VectorEncoder(), cache_dir=tmp_path / "cache", quiet=True)
    tests = extract_embeddings(read_data_dir(trial_dir), VectorEncoder(), cache_dir=tmp_path / "cache", quiet=True)
    llr = PldaBackend.load(path).score([np.stack([v for u, v in enrolled.items() if u.startswith(f"d{k}-")])
                                        for k in range(8)], np.stack([tests[u] for u in utts]))
    expected = beyond_eer(*held_out_split(ScoreMatrix(llr.T, np.array([int(u[1]) for u in utts]))))
    assert result.beyond is not None and result.beyond.n_speakers == 8
    got, want = dataclasses.asdict(result.beyond), dataclasses.asdict(expected)
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == (pytest.approx(value) if isinstance(value, float) else value), key


def test_ladder_rung_a_trains_on_the_systems_training_set_and_attacks_with_the_selected_back_end(tmp_path):
    """The benchmark's rung (a) evaluator, for real: PLDA fitted on ``train``, LDA chosen on dev, test attacked."""
    from voxanon.data import layout
    from voxanon.evaluation.backend_attacker import BackendTraining
    from voxanon.evaluation.evaluator import Env, SystemData
    from voxanon.evaluation.ladder import LadderEvaluator, LadderSettings

    rng = np.random.default_rng(2)
    train_x, train_lab = _utts(_speakers(60, rng), 5, rng)
    sets = {layout.TRAIN: _data_dir(tmp_path, "train", train_x, [f"s{i:02d}" for i in train_lab])}
    for split in ("dev", "test"):
        spk = _speakers(8, rng)
        ex, el = _utts(spk, 3, rng)
        tx, tl = _utts(spk, 3, rng)
        prefix = split[0]
        enroll = _data_dir(tmp_path, f"{split}_enrolls", ex, [f"{prefix}{i}" for i in el])
        trial_spk = [f"{prefix}{i}" for i in tl]
        utts = sorted(f"{s}-{split}_trials-{i:03d}" for i, s in enumerate(trial_spk))
        trial_dir = _data_dir(tmp_path, f"{split}_trials", tx, trial_spk,
                              trials=[(f"{prefix}{k}", u, u.startswith(f"{prefix}{k}-")) for k in range(8) for u in utts])
        sets[layout.enrolls(split)] = enroll
        sets[layout.trials(split, "f")] = sets[layout.trials(split, "m")] = trial_dir  # one list holds both genders
    data = SystemData("sys", True, sets, sets)
    env = Env(tmp_path / "cache", quiet=True)
    env._models["vec"] = VectorEncoder()  # the "pretrained" encoder, as if loaded
    ev = LadderEvaluator(LadderSettings("AA-backend", "test", "vec", BackendTraining(lda_dims=(4, 8)), 20, 0))
    res = ev.run(data, env)
    assert res.scenario == "AA-backend" and res.encoder == "vector-v1+plda"
    assert res.training.selected_on == "dev" and res.training.train == str(sets[layout.TRAIN])
    assert [e["lda_dim"] for e in res.training.history] == [4, 8]
    assert res.training.val_eer == min(e["val_eer"] for e in res.training.history)
    assert set(res.by_gender) == {"f", "m"} and res.eer_mean < 15  # speakers unseen in training, still found


def test_two_utterances_per_speaker_give_finite_scores_that_rank_targets_first():
    # LDA to (speakers - 1) dimensions on 2 utterances a speaker leaves the within-speaker scatter nearly singular:
    # psi ~ 1e17, where a c - psi^2 cancelled to 0 or below (NaN scores on the Kokoro corpus's small size)
    rng = np.random.default_rng(0)
    spk = rng.normal(size=(50, 256))
    x = np.repeat(spk, 2, axis=0) + 0.3 * rng.normal(size=(100, 256))
    backend = PldaBackend(BackendSettings(lda_dim=150)).fit(x, np.repeat(np.arange(50), 2))
    scores = backend.score([spk[i:i + 1] + 0.3 * rng.normal(size=(1, 256)) for i in range(5)],
                           spk[:5] + 0.3 * rng.normal(size=(5, 256)))
    assert np.isfinite(scores).all()
    assert (scores.argmax(axis=1) == np.arange(5)).all()
