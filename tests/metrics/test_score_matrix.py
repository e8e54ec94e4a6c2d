import numpy as np
import pytest

from voxanon.errors import DataError
from voxanon.metrics import ScoreMatrix, ScoreMatrixError, held_out_split


def test_valid_matrix_is_copied_and_read_only():
    scores = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.2]])
    matrix = ScoreMatrix(scores, [0, 1, 0], speakers=["a", "b"])
    scores[0, 0] = 9.0
    assert matrix.scores[0, 0] == 1.0
    assert scores.flags.writeable
    with pytest.raises(ValueError):
        matrix.scores[0, 0] = 2.0
    assert (matrix.n_trials, matrix.n_speakers) == (3, 2)
    assert matrix.true_index.dtype == np.int64


def test_mated_nonmated_and_speaker_trials():
    matrix = ScoreMatrix([[1.0, 0.1], [0.2, 2.0], [3.0, 0.3]], np.array([0, 1, 0]))
    np.testing.assert_array_equal(matrix.mated_scores(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(matrix.nonmated_scores(), [0.1, 0.2, 0.3])
    target, nontarget = matrix.speaker_trials(0)
    np.testing.assert_array_equal(target, [1.0, 3.0])
    np.testing.assert_array_equal(nontarget, [0.2])


@pytest.mark.parametrize(("scores", "true", "message"), [
    ([[1.0, 2.0]], [0, 1], "one entry per trial"),
    ([1.0, 2.0], [0], "must be"),
    ([[1.0]], [0], "n_speakers >= 2"),
    (np.zeros((0, 2)), np.zeros(0, int), "n_trials >= 1"),
    ([[1.0, 2.0]], [2], "trial 0 \\(u1\\) has true speaker index 2, outside 0..1"),
    ([[1.0, 2.0]], [-1], "outside"),
    ([[1.0, 2.0]], [0.0], "integer"),
    ([[1.0, 2.0], [np.nan, 0.0]], [0, 1], "NaN or infinite scores, the first of trial 1 \\(u2\\) against a"),
    ([[1.0, np.inf]], [0], "trial 0 \\(u1\\) against b"),
])
def test_invalid_input_names_the_fault(scores, true, message):
    n_trials = np.shape(scores)[0] if np.ndim(scores) == 2 else 0
    trials = ["u1", "u2"][:n_trials] if n_trials <= 2 else None
    with pytest.raises(ScoreMatrixError, match=message) as raised:
        ScoreMatrix(scores, np.asarray(true), speakers=["a", "b"][: np.shape(scores)[-1]] or None,
                    trials=trials)
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, DataError)


def test_id_counts_must_match():
    with pytest.raises(ScoreMatrixError, match="1 speaker ids for 2 speakers"):
        ScoreMatrix([[1.0, 2.0]], [0], speakers=["a"])
    with pytest.raises(ScoreMatrixError, match="2 trial ids for 1 trials"):
        ScoreMatrix([[1.0, 2.0]], [0], trials=["u", "v"])


def test_held_out_split_alternates_within_each_speaker():
    true = np.array([0, 1, 0, 0, 1, 2, 0])
    scores = np.arange(14, dtype=float).reshape(7, 2).repeat(2, axis=1)[:, :3]
    matrix = ScoreMatrix(scores, true, trials=[f"u{i}" for i in range(7)])
    evaluated, held_out = held_out_split(matrix)
    # speaker 0: rows 0, 2, 3, 6 -> evaluated 0, 3; held out 2, 6. Speaker 1: rows 1, 4. Speaker 2: row 5.
    assert evaluated.trials == ("u0", "u1", "u3", "u5")
    assert held_out.trials == ("u2", "u4", "u6")
    np.testing.assert_array_equal(held_out.true_index, [0, 1, 0])
    np.testing.assert_array_equal(held_out.scores, scores[[2, 4, 6]])


def test_held_out_split_needs_a_speaker_with_two_trials():
    with pytest.raises(ScoreMatrixError, match="two trials"):
        held_out_split(ScoreMatrix([[1.0, 0.0], [0.0, 1.0]], [0, 1]))
