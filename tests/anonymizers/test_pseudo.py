"""Pseudo-speaker generators: the defining property of each, the pool file, parameters and errors."""

from __future__ import annotations

import numpy as np
import pytest

from voxanon.anonymizers.pseudo import (
    GENERATORS,
    load_default_flow,
    load_default_pool,
    make_generator,
)
from voxanon.anonymizers.pseudo.generators import (
    GaussianGenerator,
    PoolGenerator,
    shrunk_covariance,
)
from voxanon.anonymizers.pseudo.pool import SpeakerPool, load_pool, unit_rows
from voxanon.errors import ConfigError, DataError


def ring_pool(n: int = 12, dim: int = 6) -> SpeakerPool:
    """Speakers on a circle in the first two dimensions: speaker k at angle 2 pi k / n (cosine to e0 known)."""
    angles = 2 * np.pi * np.arange(n) / n
    emb = np.zeros((n, dim), dtype=np.float32)
    emb[:, 0], emb[:, 1] = np.cos(angles), np.sin(angles)
    return SpeakerPool(emb, [f"s{k:02d}" for k in range(n)], ["f" if k % 2 else "m" for k in range(n)], "toy")


def gender_pool(rng: np.random.Generator, n: int = 20, dim: int = 16) -> SpeakerPool:
    """Female speakers clustered around e0, male ones around e1."""
    genders = np.array(["f", "m"] * (n // 2))
    centre = np.where(genders[:, None] == "f", np.eye(dim)[0], np.eye(dim)[1])
    return SpeakerPool(centre + 0.2 * rng.standard_normal((n, dim)), [f"s{k}" for k in range(n)], genders, "toy")


def test_pool_averages_the_farthest_speakers():
    pool, source = ring_pool(), np.eye(6, dtype=np.float32)[0]
    gen = PoolGenerator(pool, n_far=3, n_avg=3)
    # cosine to e0 is cos(2 pi k / 12): the three lowest are k = 5, 6, 7
    assert sorted(gen.farthest(source).tolist()) == [5, 6, 7]
    out = gen(source, np.random.default_rng(0))
    np.testing.assert_allclose(out, unit_rows(pool.embeddings[[5, 6, 7]].mean(axis=0)), atol=1e-6)
    np.testing.assert_allclose(out[:2], [-1.0, 0.0], atol=1e-6)


def test_pool_subset_comes_from_the_farthest_and_sizes_are_clipped():
    pool, source = ring_pool(), np.eye(6, dtype=np.float32)[0]
    gen = PoolGenerator(pool, n_far=5, n_avg=2)
    far = set(gen.farthest(source).tolist())
    assert far == {4, 5, 6, 7, 8}
    outs = {tuple(np.round(gen(source, np.random.default_rng(s)), 5)) for s in range(30)}
    allowed = {tuple(np.round(unit_rows(pool.embeddings[[a, b]].mean(axis=0)), 5)) for a in far for b in far if a < b}
    assert outs <= allowed and len(outs) > 3
    arc = SpeakerPool(pool.embeddings[:5], pool.speakers[:5], pool.genders[:5], "toy")  # 0 to 120 degrees
    whole = PoolGenerator(arc, n_far=200, n_avg=100)(source, np.random.default_rng(0))  # clipped to 5 / 5
    np.testing.assert_allclose(whole, unit_rows(arc.embeddings.mean(axis=0)), atol=1e-6)
    np.testing.assert_allclose(whole[:2], [np.cos(np.pi / 3), np.sin(np.pi / 3)], atol=1e-6)


def test_gender_restricted_pools_respect_the_predicted_gender():
    rng = np.random.default_rng(1)
    pool = gender_pool(rng)
    female_source = unit_rows(np.eye(16)[0] + 0.1 * rng.standard_normal(16))
    cross = PoolGenerator(pool, n_far=200, n_avg=3, gender="cross")
    same = PoolGenerator(pool, n_far=200, n_avg=3, gender="same")
    assert set(pool.genders[cross.farthest(female_source)]) == {"m"}
    assert set(pool.genders[same.farthest(female_source)]) == {"f"}
    assert set(pool.genders[PoolGenerator(pool, n_far=200, gender="cross").farthest(np.eye(16)[1])]) == {"f"}
    # the average of male speakers lies near e1, of female ones near e0
    assert cross(female_source, rng)[1] > 0.8 and same(female_source, rng)[0] > 0.8


def test_gender_generators_need_both_genders():
    pool = SpeakerPool(np.eye(3), ["a", "b", "c"], ["f", "f", "f"], "toy")
    with pytest.raises(ConfigError, match="no speaker of gender 'm'"):
        make_generator("cross_gender", pool=pool)


def test_gaussian_alpha_one_returns_the_source_and_samples_follow_the_fit():
    rng = np.random.default_rng(2)
    pool = gender_pool(rng, n=40, dim=8)
    source = pool.embeddings[0]
    np.testing.assert_allclose(GaussianGenerator(pool, alpha=1.0)(source, rng), source, atol=1e-6)
    gen = GaussianGenerator(pool)
    draws = gen.sample(np.random.default_rng(3), 40000)
    np.testing.assert_allclose(draws.mean(axis=0), gen.mean, atol=0.01)
    assert np.abs(np.cov(draws.T) - gen.cov).max() < 0.05 * np.abs(gen.cov).max()
    out = gen(source, rng)
    assert out.shape == (8,) and abs(np.linalg.norm(out) - 1) < 1e-5


def test_shrunk_covariance_matches_ledoit_wolf():
    sklearn_cov = pytest.importorskip("sklearn.covariance")
    x = np.random.default_rng(4).standard_normal((30, 50)) @ np.diag(np.linspace(0.1, 2, 50))
    cov, s = shrunk_covariance(x)
    ref, ref_s = sklearn_cov.ledoit_wolf(x)
    assert s == pytest.approx(ref_s, rel=1e-6)
    np.testing.assert_allclose(cov, ref, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("kind", ["pool", "same_gender", "cross_gender", "gaussian"])
def test_generators_are_reproducible_from_the_rng(kind):
    pool = gender_pool(np.random.default_rng(5))
    gen = make_generator(kind, pool=pool, **({"n_avg": 3} if kind != "gaussian" else {"alpha": 0.3}))
    source = pool.embeddings[3]
    a, b = gen(source, np.random.default_rng(7)), gen(source, np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, gen(source, np.random.default_rng(8)))
    assert a.dtype == np.float32 and abs(np.linalg.norm(a) - 1) < 1e-5


@pytest.mark.parametrize(("kind", "params", "match"), [
    ("nope", {}, "unknown pseudo-speaker generator"),
    ("pool", {"alpha": 0.5}, "no parameter 'alpha'"),
    ("pool", {"n_far": 0}, "n_far must be a positive integer"),
    ("pool", {"n_avg": 2.5}, "n_avg=2.5 must be a int"),
    ("gaussian", {"alpha": 1.5}, r"alpha must be in \[0, 1\]"),
    ("f3va", {"w": 2}, r"w must be in \[-1, 1\]"),
    ("f3va", {"w_range": "a,b"}, "must be two numbers"),
    ("f3va", {"w_range": (0.5, -0.5)}, "w_range must be"),
    ("f3va", {"solver": "heun"}, "unknown ODE solver"),
    ("f3va", {"steps": 0}, "steps must be a positive integer"),
])
def test_bad_parameters_raise_config_error(kind, params, match):
    with pytest.raises(ConfigError, match=match):
        make_generator(kind, pool=ring_pool(), **params)


def test_string_parameters_are_coerced():
    gen = make_generator("pool", pool=ring_pool(), n_far="3", n_avg="3")
    assert (gen.n_far, gen.n_avg) == (3, 3)
    with pytest.raises(ConfigError, match=r"w_range must be .* got \(1.0, 0.5\)"):
        make_generator("f3va", w_range="1:0.5")


def test_source_of_the_wrong_size_is_a_config_error():
    with pytest.raises(ConfigError, match="dimension 6"):
        make_generator("pool", pool=ring_pool())(np.ones(5), np.random.default_rng(0))


def test_pool_round_trips_through_npz(tmp_path):
    rng = np.random.default_rng(6)
    pool = gender_pool(rng)
    pool = SpeakerPool(pool.embeddings, pool.speakers, pool.genders, "ge2e",
                       utt_embeddings=rng.standard_normal((50, 16)), utt_speakers=rng.integers(0, 20, 50))
    loaded = load_pool(pool.save(tmp_path / "p.npz", dtype="float16"))
    np.testing.assert_allclose(loaded.embeddings, pool.embeddings, atol=2e-3)
    np.testing.assert_allclose(np.linalg.norm(loaded.embeddings, axis=1), 1.0, atol=1e-6)
    assert loaded.speakers.tolist() == pool.speakers.tolist() and loaded.encoder == "ge2e"
    assert loaded.training_points().shape == (50, 16)
    np.testing.assert_array_equal(loaded.utt_speakers, pool.utt_speakers)


def test_bad_pool_files_raise_data_error(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        load_pool(tmp_path / "missing.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(DataError, match="junk.npz: not a readable .npz"):
        load_pool(tmp_path / "junk.npz")
    np.savez(tmp_path / "partial.npz", embeddings=np.eye(2))
    with pytest.raises(DataError, match="missing array 'speakers'"):
        load_pool(tmp_path / "partial.npz")
    np.savez(tmp_path / "gender.npz", embeddings=np.eye(2), speakers=["a", "b"], genders=["f", "x"], encoder="ge2e")
    with pytest.raises(DataError, match="gender.npz: speaker pool: gender 'x'"):
        load_pool(tmp_path / "gender.npz")
    np.savez(tmp_path / "shape.npz", embeddings=np.eye(2), speakers=["a"], genders=["f"], encoder="ge2e")
    with pytest.raises(DataError, match="2 embeddings but 1 speaker ids"):
        load_pool(tmp_path / "shape.npz")


def test_shipped_defaults_load_and_generate():
    pool, flow = load_default_pool(), load_default_flow()
    assert pool.encoder == "ge2e" and pool.dim == 256 and set(pool.genders) == {"f", "m"}
    assert flow.dim == 256 and flow.encoder == "ge2e"
    source = pool.embeddings[0]
    for kind in GENERATORS:
        out = make_generator(kind)(source, np.random.default_rng(0))
        assert out.shape == (256,) and abs(np.linalg.norm(out) - 1) < 1e-4
