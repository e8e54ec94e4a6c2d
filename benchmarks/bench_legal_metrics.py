"""Rank-based privacy metrics of voxanon against the reference code of Vauquier et al. (2025), and their speed.

Usage: PYTHONPATH=src python benchmarks/bench_legal_metrics.py [--trials 10000] [--speakers 1000] [--seed 0]

Needs the authors' package, ``pip install voice-anonymization-legal-eval==2.1.0``
(MIT; its core needs only numpy and scipy). Runs the same constructed and
random score sets through both implementations and prints the values side by
side with the time each took:

- rank-1 linkability against ``legal_eval.metrics.linkability`` with the
  exact estimator and the candidate set N' = all N enrolled speakers;
- singling out against ``legal_eval.metrics.singling_out`` with the record set
  = all speakers (so its random draw of candidates is the whole population and
  one run is exact), one evaluated trial and M held-out trials per speaker.

The two agree on continuous scores; they differ by design where scores tie:
``legal_eval`` lets the true speaker win every tie (100 % linkability for
constant scores), voxanon counts a k-way tie as 1/k (chance, 100 / N).

Last, the speed of every voxanon metric and of ``beyond_eer`` on a
``--trials`` x ``--speakers`` matrix, with the ratio to ``compute_eer`` over
the same mated and non-mated scores.
"""

import argparse
import time

import numpy as np

try:
    import legal_eval.io
    from legal_eval.metrics import ConversationScores
    from legal_eval.metrics import linkability as legal_linkability
    from legal_eval.metrics import singling_out as legal_singling_out
except ImportError:
    raise SystemExit("bench_legal_metrics needs the reference package: "
                     "pip install voice-anonymization-legal-eval==2.1.0") from None

from voxanon.metrics import (
    ScoreMatrix,
    beyond_eer,
    compute_eer,
    held_out_split,
    isolation_thresholds,
    rank1_linkability,
    rank_disclosure,
    singling_out,
    speaker_eer_spread,
    tpr_at_fpr,
)


def timed(function, *args, **kwargs):
    """Return (result, seconds) of one call."""
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def system(n_speakers: int, per_speaker: int, shift: float, rng) -> ScoreMatrix:
    """Gaussian scores, the true speaker's raised by ``shift`` standard deviations; ids ``s0``, ``s1`` ..."""
    true = np.repeat(np.arange(n_speakers), per_speaker)
    scores = rng.normal(size=(true.size, n_speakers))
    scores[np.arange(true.size), true] += shift
    return ScoreMatrix(scores, true, speakers=[f"s{j}" for j in range(n_speakers)])


def legal_rank1(matrix: ScoreMatrix) -> float:
    """legal_eval's exact pi_link (percent) with every enrolled speaker a candidate."""
    reference = legal_eval.io.ScoreMatrix(
        scores=matrix.scores.T, enroll_speakers=list(matrix.speakers),
        test_speakers=[matrix.speakers[t] for t in matrix.true_index], metadata={})
    return 100.0 * legal_linkability(reference, matrix.n_speakers, estimator="exact")[0]


def legal_isolation(evaluated: ScoreMatrix, calibration: ScoreMatrix) -> float:
    """legal_eval's pi_sing (percent): one evaluated trial per speaker, all speakers as records."""
    order = np.argsort(calibration.true_index, kind="stable")
    sizes = np.bincount(calibration.true_index, minlength=calibration.n_speakers)
    ends = np.cumsum(sizes)
    conversations = ConversationScores(
        enroll_speakers=list(evaluated.speakers), dataset_speakers=list(evaluated.speakers),
        test_scores=evaluated.scores[np.argsort(evaluated.true_index)].T,
        calibration_scores=calibration.scores[order].T,
        calibration_slices=[(int(e - s), int(e)) for s, e in zip(sizes, ends)])
    outcomes = legal_singling_out(conversations, n_test_speakers=evaluated.n_speakers, n_runs=1)
    return 100.0 * float(np.mean([runs[0] for runs in outcomes.values()]))


def constant(n_speakers: int, per_speaker: int) -> ScoreMatrix:
    """All scores equal: every model ties with the true one."""
    true = np.repeat(np.arange(n_speakers), per_speaker)
    return ScoreMatrix(np.zeros((true.size, n_speakers)), true, speakers=[f"s{j}" for j in range(n_speakers)])


def row(name: str, ours: tuple, theirs: tuple) -> None:
    """One line: values (percent) and times of both implementations."""
    (value, seconds), (reference, reference_seconds) = ours, theirs
    print(f"{name:38s} {value:9.3f} {reference:10.3f} {seconds * 1e3:10.2f} {reference_seconds * 1e3:11.2f}"
          f" {reference_seconds / seconds:8.1f}x")


def compare_linkability(rng) -> None:
    """Rank-1 linkability on constructed and random matrices."""
    print("## rank-1 linkability (%): voxanon rank1_linkability vs legal_eval linkability(exact, N' = N)")
    print(f"{'case':38s} {'voxanon':>9s} {'legal_eval':>10s} {'ours ms':>10s} {'theirs ms':>11s} {'speed-up':>9s}")
    tie = ScoreMatrix([[0.9, 0.2, 0.1], [0.5, 0.4, 0.6], [0.3, 0.7, 0.7]], [0, 1, 2], speakers=["s0", "s1", "s2"])
    cases = [
        ("random N=40, 20/spk, no signal", system(40, 20, 0.0, rng)),
        ("random N=40, 20/spk, shift 2", system(40, 20, 2.0, rng)),
        ("random N=200, 10/spk, shift 3", system(200, 10, 3.0, rng)),
        ("random N=1000, 10/spk, shift 2", system(1000, 10, 2.0, rng)),
        ("separated N=10 (expect 100)", system(10, 5, 100.0, rng)),
        ("constant N=10 (ties: 10 vs 100)", constant(10, 5)),
        ("3x3, one 2-way tie (50 vs 66.7)", tie),
    ]
    for name, matrix in cases:
        row(name, timed(rank1_linkability, matrix), timed(legal_rank1, matrix))


def compare_singling_out(rng) -> None:
    """pi_sing on constructed and random matrices, one evaluated trial and 5 held-out trials per speaker."""
    print("\n## singling out (%): voxanon singling_out vs legal_eval singling_out(N = all, 1 run)")
    print(f"{'case':38s} {'voxanon':>9s} {'legal_eval':>10s} {'ours ms':>10s} {'theirs ms':>11s} {'speed-up':>9s}")
    for name, n, shift in [("random R=40, no signal (chance 37.3)", 40, 0.0),
                           ("random R=200, no signal (chance 36.9)", 200, 0.0),
                           ("random R=200, shift 2", 200, 2.0),
                           ("random R=500, shift 3", 500, 3.0),
                           ("separated R=20 (expect 100)", 20, 100.0),
                           ("constant R=20 (nothing fires: 0)", 20, None)]:
        evaluated, calibration = ((constant(n, 1), constant(n, 5)) if shift is None else
                                  (system(n, 1, shift, rng), system(n, 5, shift, rng)))
        ours = timed(lambda e, c: singling_out(e, isolation_thresholds(c)).rate, evaluated, calibration)
        row(name, ours, timed(legal_isolation, evaluated, calibration))


def speed(n_trials: int, n_speakers: int, rng) -> None:
    """Time of each voxanon metric on one large matrix, against compute_eer over the same scores."""
    per_speaker = max(2, n_trials // n_speakers)
    matrix, calibration = held_out_split(system(n_speakers, 2 * per_speaker, 2.0, rng))
    target, nontarget = matrix.mated_scores(), matrix.nonmated_scores()
    print(f"\n## speed: {matrix.n_trials:,} trials x {n_speakers:,} speakers "
          f"({nontarget.size:,} non-mated scores), {calibration.n_trials:,} held-out trials")
    eer, eer_seconds = timed(compute_eer, target, nontarget)
    print(f"{'compute_eer (reference)':28s} {eer_seconds:7.3f} s   1.00x   EER {eer.eer:.2f} %")
    trials = {matrix.speaker_name(j): matrix.speaker_trials(j) for j in range(n_speakers)}
    for name, function in [
        ("rank1_linkability", lambda: f"{rank1_linkability(matrix):.2f} %"),
        ("singling_out (+thresholds)", lambda: f"{singling_out(matrix, isolation_thresholds(calibration)).rate:.2f} %"),
        ("rank_disclosure", lambda: f"{rank_disclosure(matrix).mean_bits:.3f} bits"),
        ("tpr_at_fpr 0.1 %", lambda: f"{tpr_at_fpr(target, nontarget, 0.1):.2f} %"),
        ("speaker_eer_spread", lambda: f"{speaker_eer_spread(trials).mean:.2f} % mean"),
        ("beyond_eer (all five)", lambda: f"{beyond_eer(matrix, calibration).rank1_linkability:.2f} % rank-1"),
    ]:
        value, seconds = timed(function)
        print(f"{name:28s} {seconds:7.3f} s   {seconds / eer_seconds:4.2f}x   {value}")
    _, legal_seconds = timed(legal_rank1, matrix)
    print(f"{'legal_eval linkability':28s} {legal_seconds:7.3f} s   {legal_seconds / eer_seconds:4.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--speakers", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    compare_linkability(rng)
    compare_singling_out(rng)
    speed(args.trials, args.speakers, rng)


if __name__ == "__main__":
    main()
