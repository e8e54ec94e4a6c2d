"""Hypothesis strategies for score sets with many ties."""

import numpy as np
from hypothesis import strategies as st

# Integer-valued scores: exact in float64, many ties, small enough for the
# naive references.
_integer_scores = st.lists(st.integers(-30, 30), min_size=1, max_size=40)

score_pairs = st.tuples(_integer_scores, _integer_scores).map(
    lambda pair: (np.array(pair[0], dtype=float), np.array(pair[1], dtype=float))
)


@st.composite
def score_matrices(draw, max_speakers: int = 4, max_trials: int = 8):
    """(scores, true_index) with integer scores in -3..3 (many ties), 2..max_speakers columns."""
    n_speakers = draw(st.integers(2, max_speakers))
    n_trials = draw(st.integers(1, max_trials))
    cells = draw(st.lists(st.integers(-3, 3), min_size=n_trials * n_speakers, max_size=n_trials * n_speakers))
    true = draw(st.lists(st.integers(0, n_speakers - 1), min_size=n_trials, max_size=n_trials))
    return np.array(cells, dtype=float).reshape(n_trials, n_speakers), np.array(true)
