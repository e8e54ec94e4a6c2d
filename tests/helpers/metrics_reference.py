"""Deliberately naive reference implementations, used to check the fast code.

They follow the published definitions literally (one threshold or one block at
a time) and are only run on small inputs.
"""

from fractions import Fraction
from itertools import permutations, product

import numpy as np


def speechbrain_eer(target, nontarget) -> tuple[float, float]:
    """EER (percent) and threshold by the literal speechbrain threshold sweep.

    |FAR - FRR| is compared as an exact fraction (speechbrain compares rounded
    floats, so on exact ties its choice depends on rounding).
    """
    target, nontarget = np.asarray(target, float), np.asarray(nontarget, float)
    unique = np.unique(np.concatenate([target, nontarget]))
    thresholds = np.sort(np.concatenate([unique, (unique[:-1] + unique[1:]) / 2]))
    best_index, best_gap = 0, None
    for i, threshold in enumerate(thresholds):
        frr = Fraction(int(np.sum(target <= threshold)), target.size)
        far = Fraction(int(np.sum(nontarget > threshold)), nontarget.size)
        if i == 0 or abs(far - frr) < best_gap:
            best_index, best_gap, best_sum = i, abs(far - frr), far + frr
    return 100.0 * float(best_sum) / 2, float(thresholds[best_index])


def pooled_pav_llrs(target, nontarget) -> tuple[np.ndarray, np.ndarray]:
    """PAV LLRs of target and non-target trials, ties pooled, stack-based PAV."""
    target, nontarget = np.asarray(target, float), np.asarray(nontarget, float)
    values = np.unique(np.concatenate([target, nontarget]))
    # blocks: [n_target, n_total, first value index, last value index]
    blocks = []
    for i, v in enumerate(values):
        blocks.append([float(np.sum(target == v)), float(np.sum(target == v) + np.sum(nontarget == v)), i, i])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            t, n, _, last = blocks.pop()
            blocks[-1][0] += t
            blocks[-1][1] += n
            blocks[-1][3] = last
    llr_of_value = np.empty(values.size)
    prior = np.log(target.size / nontarget.size)
    for t, n, first, last in blocks:
        with np.errstate(divide="ignore"):
            llr_of_value[first : last + 1] = np.log(t) - np.log(n - t) - prior
    return llr_of_value[np.searchsorted(values, target)], llr_of_value[np.searchsorted(values, nontarget)]


def bosaris_rocch2eer(pfa, pmiss) -> float:
    """ROCCH-EER (percent) as the largest EER candidate over hull segments."""
    eer = 0.0
    for i in range(len(pfa) - 1):
        xy = np.array([[pfa[i], pmiss[i]], [pfa[i + 1], pmiss[i + 1]]])
        if np.min(np.abs(xy[0] - xy[1])) == 0:
            continue
        line = np.linalg.solve(xy, np.ones(2))
        eer = max(eer, 1.0 / line.sum())
    return 100.0 * eer


def tie_break_ranks(scores, true) -> np.ndarray:
    """Expected count of trials at each rank (1 = best), averaged over every tie-break order.

    Each of the N! column orders breaks ties by column position; the counts
    are averaged over all orders (exact, as fractions turned to float).
    """
    scores, true = np.asarray(scores, float), np.asarray(true)
    n_speakers = scores.shape[1]
    counts = [Fraction(0)] * n_speakers
    orders = list(permutations(range(n_speakers)))
    for row, t in zip(scores, true):
        for order in orders:
            ranking = sorted(range(n_speakers), key=lambda j: (-row[j], order.index(j)))
            counts[ranking.index(t)] += Fraction(1, len(orders))
    return np.array([float(c) for c in counts])


def enumerated_isolation(scores, true, thresholds) -> tuple[float, float]:
    """Singling out (percent) and its own-record variant by enumerating every choice of one trial per speaker."""
    scores, true = np.asarray(scores, float), np.asarray(true)
    speakers = sorted(set(true.tolist()))
    rows_of = [np.flatnonzero(true == s) for s in speakers]
    choices = list(product(*rows_of))
    isolated = correct = Fraction(0)
    for j in speakers:
        for chosen in choices:
            firing = [speakers[i] for i, row in enumerate(chosen) if scores[row, j] > thresholds[j]]
            if len(firing) == 1:
                isolated += Fraction(1, len(choices))
                correct += Fraction(int(firing[0] == j), len(choices))
    return 100.0 * float(isolated) / len(speakers), 100.0 * float(correct) / len(speakers)


def interpolated_roc_tpr(target, nontarget, fpr) -> float:
    """TPR (percent) at FPR ``fpr`` (a fraction) on the piecewise-linear empirical ROC.

    The ROC points are (FPR, TPR) for accepting scores > t at every distinct
    score t, plus (1, 1); at an FPR shared by several points the highest TPR
    counts, between points TPR is linear in FPR.
    """
    target, nontarget = np.asarray(target, float), np.asarray(nontarget, float)
    points = [(Fraction(1), Fraction(1))]
    for t in np.unique(np.concatenate([target, nontarget])):
        points.append((Fraction(int(np.sum(nontarget > t)), nontarget.size),
                       Fraction(int(np.sum(target > t)), target.size)))
    points.sort()
    fpr = Fraction(fpr)
    at = [tpr for x, tpr in points if x == fpr]
    if at:
        return 100.0 * float(max(at))
    below = max(p for p in points if p[0] < fpr)  # the highest TPR at the nearest FPR below
    above = min(p for p in points if p[0] > fpr)  # the lowest TPR at the nearest FPR above
    share = (fpr - below[0]) / (above[0] - below[0])
    return 100.0 * float(below[1] + share * (above[1] - below[1]))
