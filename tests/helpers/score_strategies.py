"""Hypothesis strategies for score sets with many ties."""

import numpy as np
from hypothesis import strategies as st

# Integer-valued scores: exact in float64, many ties, small enough for the
# naive references.
_integer_scores = st.lists(st.integers(-30, 30), min_size=1, max_size=40)

score_pairs = st.tuples(_integer_scores, _integer_scores).map(
    lambda pair: (np.array(pair[0], dtype=float), np.array(pair[1], dtype=float))
)
