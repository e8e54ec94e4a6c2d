import numpy as np
import pytest
from hypothesis import given

from tests.helpers.metrics_reference import tie_break_ranks
from tests.helpers.score_strategies import score_matrices
from voxanon.metrics import ScoreMatrix, _ranks
from voxanon.metrics._ranks import rank_counts, true_ranks


@given(score_matrices())
def test_rank_counts_match_every_tie_break_order(case):
    scores, true = case
    matrix = ScoreMatrix(scores, true)
    counts = rank_counts(true_ranks(matrix), matrix.n_speakers, np.zeros(len(true), dtype=np.int64), 1)
    np.testing.assert_allclose(counts[0], tie_break_ranks(scores, true), atol=1e-12)


def test_counts_per_group_and_chunked_comparison(monkeypatch):
    monkeypatch.setattr(_ranks, "_CHUNK_ELEMENTS", 3)  # one row per chunk
    scores = np.array([[3.0, 1.0, 2.0], [1.0, 1.0, 1.0], [0.0, 5.0, 5.0]])
    matrix = ScoreMatrix(scores, [0, 2, 1])
    ranks = true_ranks(matrix)
    np.testing.assert_array_equal(ranks.greater, [0, 0, 0])
    np.testing.assert_array_equal(ranks.tied, [0, 2, 1])
    counts = rank_counts(ranks, 3, np.array([0, 1, 1]), 2)
    np.testing.assert_allclose(counts, [[1, 0, 0], [1 / 3 + 1 / 2, 1 / 3 + 1 / 2, 1 / 3]])
    assert counts.sum() == pytest.approx(3)
