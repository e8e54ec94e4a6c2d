"""The speaker flow: solvers, CFM training, checkpoints and the F3-VA generator's defining properties."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from voxanon.anonymizers.pseudo import make_generator
from voxanon.anonymizers.pseudo.f3va import mix_latents
from voxanon.anonymizers.pseudo.pool import unit_rows
from voxanon.errors import ConfigError
from voxanon.models.flow import FlowError, integrate, load_flow, save_flow
from voxanon.training.flow import FlowSettings, train_flow


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A small flow trained briefly on clustered unit vectors (its field is far from zero)."""
    rng = np.random.default_rng(0)
    centres = unit_rows(rng.standard_normal((4, 16)))
    points = unit_rows(centres[rng.integers(0, 4, 400)] + 0.15 * rng.standard_normal((400, 16)))
    out = tmp_path_factory.mktemp("flow")
    result = train_flow(points, out, FlowSettings(epochs=8, seed=0, hidden=64, layers=2), encoder="toy", fp16=False,
                        quiet=True)
    assert result.model == out / "flow.pt" and json.loads(result.log.read_text()) == result.summary
    assert [r["epoch"] for r in result.history] == list(range(1, 9))
    return load_flow(result.model), result.summary, points


@pytest.mark.parametrize(("solver", "tol"), [("euler", 0.05), ("midpoint", 2e-3), ("rk4", 1e-6)])
def test_solvers_integrate_exponential_decay_both_ways(solver, tol):
    x0 = torch.tensor([[1.0, -2.0]], dtype=torch.float64)
    x1 = integrate(lambda x, t: -x, x0, 0.0, 1.0, steps=16, solver=solver)
    torch.testing.assert_close(x1, x0 * np.exp(-1.0), atol=tol, rtol=0)
    back = integrate(lambda x, t: -x, x1, 1.0, 0.0, steps=16, solver=solver)
    torch.testing.assert_close(back, x1 * np.exp(1.0), atol=3 * tol, rtol=0)


@pytest.mark.parametrize(("solver", "order"), [("euler", 1), ("midpoint", 2), ("rk4", 4)])
def test_solvers_converge_at_their_order_on_a_time_dependent_field(solver, order):
    def f(x, t):          # x(1) = x0 exp(-1.5)
        return -(1.0 + t) * x

    x0 = torch.ones(1, 1, dtype=torch.float64)
    errs = [abs(float(integrate(f, x0, 0.0, 1.0, steps=n, solver=solver)) - math.exp(-1.5)) for n in (16, 32)]
    assert errs[0] / errs[1] == pytest.approx(2 ** order, rel=0.1)


def test_cfm_training_lowers_the_loss(trained):
    _, log, points = trained
    assert log["epochs"] == 8 and log["points"] == len(points)
    assert log["loss"][-1] < 0.9 * log["loss"][0]


def test_round_trip_with_w_one_returns_the_source(trained):
    flow, _, points = trained
    gen = make_generator("f3va", flow=flow, w=1.0, solver="rk4", steps=32)
    for source in points[:3]:
        np.testing.assert_allclose(gen(source, np.random.default_rng(0)), source, atol=1e-4)
    z = flow.to_noise(points[:8], steps=32, solver="rk4")
    assert np.abs(z).max() > 0.3  # the latent is not the embedding itself
    np.testing.assert_allclose(unit_rows(flow.from_noise(z, steps=32, solver="rk4")), points[:8], atol=1e-4)


def test_w_zero_ignores_the_source(trained):
    flow, _, points = trained
    gen = make_generator("f3va", flow=flow, w=0.0)
    a, b = gen(points[0], np.random.default_rng(5)), gen(points[200], np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)
    z = np.random.default_rng(0).standard_normal((2, 16))
    np.testing.assert_array_equal(mix_latents(z[0], z[1], 0.0), z[1])
    np.testing.assert_allclose(mix_latents(z[0], z[1], -1.0), (2 * z[1] - z[0]) / np.sqrt(5))


def test_w_moves_the_output_between_source_and_random(trained):
    flow, _, points = trained
    cos = {w: np.mean([make_generator("f3va", flow=flow, w=w, solver="rk4")(s, np.random.default_rng(i)) @ s
                       for i, s in enumerate(points[:20])]) for w in (-1.0, 0.0, 0.9)}
    assert cos[0.9] > cos[0.0] > cos[-1.0]


def test_f3va_is_reproducible_and_dynamic_w_varies(trained):
    flow, _, points = trained
    gen = make_generator("f3va", flow=flow, w_range="-1:1", steps=8)  # as --param gives it
    assert gen.w_range == (-1.0, 1.0)
    a = gen(points[0], np.random.default_rng(3))
    np.testing.assert_array_equal(a, gen(points[0], np.random.default_rng(3)))
    assert not np.allclose(a, gen(points[0], np.random.default_rng(4)))
    assert abs(np.linalg.norm(a) - 1) < 1e-5


def test_checkpoint_round_trip_and_bad_files(trained, tmp_path):
    flow, log, points = trained
    save_flow(flow, tmp_path / "f.pt", train_log=log)
    loaded = load_flow(tmp_path / "f.pt")
    assert loaded.encoder == "toy" and loaded.field.config == flow.field.config
    np.testing.assert_allclose(loaded.from_noise(points[:4]), flow.from_noise(points[:4]), atol=0.02)
    (tmp_path / "junk.pt").write_bytes(b"junk")
    with pytest.raises(FlowError, match="junk.pt cannot be read"):
        load_flow(tmp_path / "junk.pt")
    torch.save({"format": "other"}, tmp_path / "other.pt")
    with pytest.raises(FlowError, match="other.pt is a 'other' checkpoint; expected a 'voxanon"):
        load_flow(tmp_path / "other.pt")
    ckpt = torch.load(tmp_path / "f.pt", weights_only=True)
    ckpt["config"]["hidden"] = 32
    torch.save(ckpt, tmp_path / "shape.pt")
    with pytest.raises(FlowError, match="has shape"):
        load_flow(tmp_path / "shape.pt")
    with pytest.raises(FlowError, match="not found"):
        load_flow(tmp_path / "missing.pt")


def test_training_rejects_bad_settings(tmp_path):
    points = np.random.default_rng(0).standard_normal((10, 4))
    with pytest.raises(ConfigError, match="give --epochs or --minutes"):
        train_flow(points, tmp_path, FlowSettings())
    with pytest.raises(ConfigError, match="--epochs must be >= 1"):
        train_flow(points, tmp_path, FlowSettings(epochs=0))
    with pytest.raises(ConfigError, match="at least 2 embeddings"):
        train_flow(points[:1], tmp_path, FlowSettings(epochs=1))
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="CUDA is not available"):
            train_flow(points, tmp_path, FlowSettings(epochs=1), device="cuda")
    assert not list(tmp_path.iterdir())
