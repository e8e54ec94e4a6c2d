"""Speed of voxanon.metrics on large trial lists, against direct implementations.

Usage: PYTHONPATH=src python experiments/bench_metrics.py [--trials 10000000] [--subsample 4000]

Times the sort-based EER, ROCCH-EER, minCllr, ZEBRA and linkability on
``--trials`` synthetic trials (10 % targets, Gaussian scores), then runs the
direct per-threshold EER sweep (speechbrain's loop) and a stack-based PAV on a
random subsample that they can handle, checks that they agree with the fast
code and prints the speed ratio. The direct implementations live in
tests/helpers/metrics_reference.py, where the tests use them too.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers.metrics_reference import pooled_pav_llrs, speechbrain_eer
from voxanon.metrics import cllr, compute_eer, linkability, min_cllr, rocch_eer, zebra


def timed(function, *args):
    """Return (result, seconds) of one call."""
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10_000_000)
    parser.add_argument("--subsample", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    n_target = args.trials // 10
    target = rng.normal(1.5, 1.0, n_target)
    nontarget = rng.normal(0.0, 1.0, args.trials - n_target)

    print(f"## {args.trials:,} trials ({n_target:,} targets)")
    for name, function in [
        ("compute_eer", compute_eer),
        ("rocch_eer", rocch_eer),
        ("min_cllr", min_cllr),
        ("zebra", zebra),
        ("linkability", linkability),
    ]:
        result, seconds = timed(function, target, nontarget)
        print(f"{name:12s} {seconds:7.2f} s   {result}")

    sub_target = target[: args.subsample // 10]
    sub_nontarget = nontarget[: args.subsample - sub_target.size]
    print(f"\n## direct implementations on a {args.subsample:,}-trial subsample")
    fast, fast_seconds = timed(compute_eer, sub_target, sub_nontarget)
    (slow_eer, slow_threshold), slow_seconds = timed(speechbrain_eer, sub_target, sub_nontarget)
    assert abs(fast.eer - slow_eer) < 1e-12 and fast.threshold == slow_threshold
    print(
        f"EER      fast {fast_seconds * 1e3:8.2f} ms  per-threshold sweep {slow_seconds * 1e3:9.1f} ms"
        f"  ratio {slow_seconds / fast_seconds:8.0f}x  (EER {fast.eer:.4f} % both)"
    )
    # The sweep does O(n) work for each of ~2n thresholds: quadratic in n.
    hours = slow_seconds * (args.trials / args.subsample) ** 2 / 3600
    print(f"         the sweep on {args.trials:,} trials would take about {hours:,.1f} h (quadratic extrapolation)")
    fast_cllr, fast_seconds = timed(min_cllr, sub_target, sub_nontarget)
    slow_llrs, slow_seconds = timed(pooled_pav_llrs, sub_target, sub_nontarget)
    assert abs(cllr(*slow_llrs) - fast_cllr) < 1e-12
    print(
        f"minCllr  fast {fast_seconds * 1e3:8.2f} ms  stack PAV           {slow_seconds * 1e3:9.1f} ms"
        f"  ratio {slow_seconds / fast_seconds:8.0f}x  (minCllr {fast_cllr:.4f} bits both)"
    )


if __name__ == "__main__":
    main()
