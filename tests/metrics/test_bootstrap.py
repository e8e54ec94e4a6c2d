import numpy as np
import pytest

from voxanon.metrics import compute_eer, eer_ci, uar, uar_ci, wer, wer_ci, wer_ratio_ci


@pytest.fixture(scope="module")
def trials():
    rng = np.random.default_rng(0)
    speakers = np.repeat(np.arange(12), 30)
    offsets = rng.normal(0, 0.5, 12)[speakers]  # speaker-dependent score shift
    target = rng.normal(2, 1, speakers.size) + offsets
    nontarget = rng.normal(0, 1, speakers.size) + offsets
    return target, nontarget, speakers


def _percentiles(values, alpha=0.05):
    return np.percentile(values, [50 * alpha, 100 - 50 * alpha])


def test_eer_ci_matches_explicit_speaker_resampling(trials):
    target, nontarget, speakers = trials
    ci = eer_ci(target, nontarget, speakers, speakers, n_boot=40, seed=3)
    draws = np.random.default_rng(3).integers(0, 12, size=(40, 12))
    replicates = [
        compute_eer(
            np.concatenate([target[speakers == s] for s in row]),
            np.concatenate([nontarget[speakers == s] for s in row]),
        ).eer
        for row in draws
    ]
    np.testing.assert_allclose([ci.low, ci.high], _percentiles(replicates))
    assert ci.estimate == compute_eer(target, nontarget).eer
    assert ci.low <= ci.estimate <= ci.high


def test_eer_ci_resamples_speakers_not_trials(trials):
    target, nontarget, _ = trials
    one_speaker = np.zeros(target.size, dtype=int)
    ci = eer_ci(target, nontarget, one_speaker, one_speaker, n_boot=20)
    assert ci.low == ci.high == ci.estimate


def test_eer_ci_is_seeded(trials):
    target, nontarget, speakers = trials
    first = eer_ci(target, nontarget, speakers, speakers, n_boot=30, seed=1)
    assert first == eer_ci(target, nontarget, speakers, speakers, n_boot=30, seed=1)
    assert first != eer_ci(target, nontarget, speakers, speakers, n_boot=30, seed=2)


def test_eer_ci_needs_one_speaker_per_trial(trials):
    target, nontarget, speakers = trials
    with pytest.raises(ValueError):
        eer_ci(target, nontarget, speakers[:-1], speakers)


def test_wer_ci_matches_explicit_utterance_resampling():
    refs = ["a b c", "a b", "a", "a b c d", "b c"]
    hyps = ["a b", "a b", "b", "a c d e", "b c"]
    result = wer(refs, hyps)
    ci = wer_ci(result, n_boot=50, seed=7)
    errors = np.array([u.errors for u in result.utterances])
    words = np.array([u.n_reference_words for u in result.utterances])
    draws = np.random.default_rng(7).integers(0, 5, size=(50, 5))
    replicates = [100 * errors[row].sum() / words[row].sum() for row in draws]
    np.testing.assert_allclose([ci.low, ci.high], _percentiles(replicates))
    assert ci.estimate == result.wer


def test_wer_ci_of_single_utterance_is_degenerate():
    ci = wer_ci(wer(["a b c d"], ["a b x d"]), n_boot=10)
    assert (ci.low, ci.estimate, ci.high) == (25.0, 25.0, 25.0)


def test_wer_ratio_ci_resamples_the_same_utterances_for_both():
    refs = ["a b c", "a b", "a", "a b c d", "b c", "c d e"]
    system = wer(refs, ["a b", "x y", "b", "a c d e", "b", "c d e"])
    original = wer(refs, ["a b c", "a", "b", "a b c", "b c", "c e"])
    ci = wer_ratio_ci(system, original, n_boot=80, seed=4)
    sys_err = np.array([u.errors for u in system.utterances])
    ref_err = np.array([u.errors for u in original.utterances])
    draws = np.random.default_rng(4).integers(0, 6, size=(80, 6))
    replicates = [sys_err[row].sum() / ref_err[row].sum() for row in draws if ref_err[row].sum()]
    np.testing.assert_allclose([ci.low, ci.high], _percentiles(replicates))
    assert ci.estimate == pytest.approx(system.wer / original.wer) and ci.low <= ci.estimate <= ci.high


def test_wer_ratio_ci_of_several_runs_averages_each_utterances_errors():
    refs = ["a b c", "a b", "a", "a b c d", "b c", "c d e"]
    original = wer(refs, ["a b c", "a", "b", "a b c", "b c", "c e"])
    runs = [wer(refs, ["a b", "x y", "b", "a c d e", "b", "c d e"]), wer(refs, ["a b c", "a b", "x", "a", "b c", "c"])]
    pooled = wer_ratio_ci(runs, original, n_boot=80, seed=4)
    mean_errors = np.mean([[u.errors for u in r.utterances] for r in runs], axis=0)
    ref_err = np.array([u.errors for u in original.utterances])
    draws = np.random.default_rng(4).integers(0, 6, size=(80, 6))
    replicates = [mean_errors[row].sum() / ref_err[row].sum() for row in draws if ref_err[row].sum()]
    np.testing.assert_allclose([pooled.low, pooled.high], _percentiles(replicates))
    assert pooled.estimate == pytest.approx(np.mean([r.wer for r in runs]) / original.wer)
    assert wer_ratio_ci(runs[:1], original, n_boot=80) == wer_ratio_ci(runs[0], original, n_boot=80)


def test_wer_ratio_ci_refuses_results_of_different_utterances():
    with pytest.raises(ValueError, match="same utterances"):
        wer_ratio_ci(wer(["a b", "c"], ["a b", "c"]), wer(["a b"], ["a"]))
    with pytest.raises(ValueError, match="same utterances"):
        wer_ratio_ci([wer(["a b"], ["a"]), wer(["a b", "c"], ["a b", "c"])], wer(["a b"], ["a"]))


def test_uar_ci_matches_explicit_resampling():
    y_true = list("aabbbccd")
    y_pred = list("abbbacdd")
    ci = uar_ci(y_true, y_pred, n_boot=60, seed=5)
    draws = np.random.default_rng(5).integers(0, 8, size=(60, 8))
    replicates = [uar([y_true[i] for i in row], [y_pred[i] for i in row]).uar for row in draws]
    np.testing.assert_allclose([ci.low, ci.high], _percentiles(replicates))
    assert ci.estimate == uar(y_true, y_pred).uar
    assert (ci.alpha, ci.n_boot) == (0.05, 60)


def test_uar_ci_over_folds_resamples_within_each_fold_and_averages():
    y_true, y_pred, folds = list("aabbcabca"), list("abbbcaacc"), [1, 1, 1, 1, 2, 2, 2, 2, 2]
    ci = uar_ci(y_true, y_pred, n_boot=40, seed=3, folds=folds)
    rng = np.random.default_rng(3)
    per_fold = []
    for idx in ([0, 1, 2, 3], [4, 5, 6, 7, 8]):
        draws = rng.integers(0, len(idx), size=(40, len(idx)))
        per_fold.append([uar([y_true[idx[i]] for i in row], [y_pred[idx[i]] for i in row]).uar for row in draws])
    np.testing.assert_allclose([ci.low, ci.high], _percentiles(np.mean(per_fold, axis=0)))
    first, second = uar(y_true[:4], y_pred[:4]).uar, uar(y_true[4:], y_pred[4:]).uar
    assert ci.estimate == pytest.approx((first + second) / 2)
