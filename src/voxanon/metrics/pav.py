"""Pool-adjacent-violators (PAV) calibration of verification scores to LLRs.

The PAV algorithm finds the non-decreasing map from scores to target
posteriors that is optimal for every proper scoring rule (Brümmer & du Preez,
2006; Zadrozny & Elkan, 2002). Tied scores form a single block before PAV
runs, so equal scores always get the same LLR (a sort that put non-targets
before targets among ties, as BOSARIS-derived code does, would split them
optimistically). Subtracting the empirical prior log-odds turns the posteriors
into log-likelihood ratios (natural log).
"""

from dataclasses import dataclass

import numpy as np
from scipy.optimize import isotonic_regression

from voxanon.metrics._scores import TieGroups


@dataclass(frozen=True)
class PAVBlocks:
    """Blocks of consecutive distinct scores that share one PAV posterior.

    Attributes
    ----------
    last_group : ndarray of int
        Index (into the tie groups) of the last distinct score of each block.
    n_target, n_nontarget : ndarray
        Target / non-target counts of each block (pseudo-counts included).
    """

    last_group: np.ndarray
    n_target: np.ndarray
    n_nontarget: np.ndarray


def pav_blocks(n_target: np.ndarray, n_nontarget: np.ndarray) -> PAVBlocks:
    """Run weighted PAV on per-score target fractions.

    Parameters
    ----------
    n_target, n_nontarget : ndarray
        Target / non-target counts per distinct score, in ascending score order.
    """
    weights = (n_target + n_nontarget).astype(np.float64)
    fit = isotonic_regression(n_target / weights, weights=weights, increasing=True)
    starts = fit.blocks[:-1]
    return PAVBlocks(
        last_group=fit.blocks[1:] - 1,
        n_target=np.add.reduceat(n_target, starts),
        n_nontarget=np.add.reduceat(n_nontarget, starts),
    )


def pav_llrs(groups: TieGroups, laplace: bool = False) -> np.ndarray:
    """PAV log-likelihood ratio for each distinct score of ``groups``.

    Parameters
    ----------
    groups : TieGroups
        Distinct scores with target and non-target counts.
    laplace : bool
        If True, add one target and one non-target pseudo-trial below the
        lowest and above the highest score before PAV (BOSARIS' Laplace rule
        of succession), which keeps every LLR finite. The prior correction
        uses the real trial counts, as BOSARIS does.

    Returns
    -------
    ndarray
        Non-decreasing LLRs (natural log), one per distinct score; without
        ``laplace`` they are -inf / +inf for blocks holding only non-targets /
        only targets.
    """
    n_target, n_nontarget = groups.n_target, groups.n_nontarget
    if laplace:
        n_target = np.concatenate([[1], n_target, [1]])
        n_nontarget = np.concatenate([[1], n_nontarget, [1]])
    blocks = pav_blocks(n_target, n_nontarget)
    with np.errstate(divide="ignore"):
        block_llr = (np.log(blocks.n_target) - np.log(blocks.n_nontarget)) - (
            np.log(groups.n_target.sum()) - np.log(groups.n_nontarget.sum())
        )
    sizes = np.diff(blocks.last_group, prepend=-1)
    llrs = np.repeat(block_llr, sizes)
    return llrs[1:-1] if laplace else llrs
