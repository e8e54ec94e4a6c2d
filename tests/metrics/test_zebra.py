import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import expit

from voxanon.metrics import zebra
from voxanon.metrics.zebra import _ece_gain, tag_disclosure


def _ece_gain_by_quadrature(llr: float) -> float:
    """Mean over priors p ~ U(0, 1) of p * [-log(p) + log(sigmoid(llr + logit p))]."""

    def integrand(p):
        prior_log_odds = np.log(p / (1 - p))
        return p * (-np.log(p) + np.log(expit(llr + prior_log_odds)))

    return quad(integrand, 0, 1, limit=200)[0]


@pytest.mark.parametrize("llr", [-5.0, -0.3, -1e-6, 0.0, 2e-5, 1e-3, 0.7, 4.0, 30.0])
def test_closed_form_ece_gain_matches_numerical_integral(llr):
    assert _ece_gain(np.array([llr]))[0] == pytest.approx(_ece_gain_by_quadrature(llr), abs=1e-9)


def test_ece_gain_limits():
    np.testing.assert_allclose(_ece_gain(np.array([np.inf, 800.0, 0.0])), [0.25, 0.25, 0.0])


def test_perfect_separation():
    # PAV LLRs +-inf: each class gains 1/4 nat. With Laplace pseudo-trials
    # the blocks are (1 target, 3 non-targets) and (3, 1): |LLR| = ln 3.
    result = zebra([5.0, 6.0], [1.0, 2.0])
    assert result.expected_bits == pytest.approx(0.5 / np.log(2))
    assert result.worst_case_log10 == pytest.approx(np.log10(3))
    assert result.tag == "A"


def test_no_information_means_zero_disclosure_but_kit_tag_a():
    # equal class sizes: Laplace pseudo-trials keep the pooled posterior at the prior,
    # so every LLR is 0; the kit's monotonicity ramp (i * 1e-6 / N nats) makes the
    # worst case (N - 1) / N * 1e-6 nats, above machine epsilon: tag "A", as the kit says
    result = zebra(np.zeros(50), np.zeros(50))
    assert result.expected_bits == 0.0
    assert result.worst_case_log10 == pytest.approx(99 / 100 * 1e-6 / np.log(10), rel=1e-9)
    assert result.tag == "A"


def test_kit_epsilon_moves_a_boundary_value_up_a_category():
    # Laplace PAV with 1 target above 9 non-targets... choose counts so the top block's
    # plain |LLR| is exactly ln 10 (log10 = 1, the A/B boundary): with the ramp it is above
    # 1 and the tag is "B", as in the kit (plain PAV would say "A").
    # Top block: 1 real target + 1 pseudo-target vs 1 pseudo-non-target -> posterior odds 2;
    # prior odds n_t / n_n = 1 / 5 -> LLR = ln 10.
    result = zebra([10.0], [0.0, 1.0, 2.0, 3.0, 4.0])
    assert result.worst_case_log10 > 1.0
    assert result.worst_case_log10 == pytest.approx(1.0, abs=1e-6)
    assert result.tag == "B"


def test_more_separation_discloses_more():
    rng = np.random.default_rng(0)
    nontarget = rng.normal(0, 1, 3000)
    weak = zebra(rng.normal(0.5, 1, 1000), nontarget)
    strong = zebra(rng.normal(3.0, 1, 1000), nontarget)
    assert 0 < weak.expected_bits < strong.expected_bits < 0.5 / np.log(2)
    assert weak.worst_case_log10 < strong.worst_case_log10


@pytest.mark.parametrize(
    "value, tag",
    [(0.0, "0"), (1e-17, "0"), (0.5, "A"), (1.0, "A"), (1.5, "B"), (3.0, "C"), (4.5, "D"), (6.0, "E"), (6.1, "F"), (np.inf, "F")],
)
def test_categorical_tags(value, tag):
    assert tag_disclosure(value) == tag
