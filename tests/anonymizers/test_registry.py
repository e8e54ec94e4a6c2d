"""Anonymizer registry (entry points, register, import paths), config coercion, per-utterance RNG."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint

import numpy as np
import pytest

from tests.helpers.toys import ToyConfig, ToyGain, ToyGain8k
from voxanon.anonymizers import registry
from voxanon.anonymizers.base import (
    Anonymizer,
    describe_config,
    make_config,
    param,
    utterance_rng,
)
from voxanon.errors import ConfigError


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch):
    """An empty registry whose entry points are the ones a test sets in ``eps``."""
    eps: list[EntryPoint] = []
    monkeypatch.setattr(registry, "_registry", {})
    monkeypatch.setattr(registry, "_broken", {})
    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.setattr(registry, "entry_points", lambda group: [ep for ep in eps if ep.group == group])
    return eps


def test_installed_entry_points_are_read() -> None:
    # voxanon's own pyproject declares mcadams: it either loads or is reported broken, never ignored
    assert "mcadams" in registry.available() or "mcadams" in registry.broken()


def test_entry_points_load_and_broken_ones_are_reported(fresh_registry) -> None:
    fresh_registry += [
        EntryPoint("toy-gain", "tests.helpers.toys:ToyGain", registry.GROUP),
        EntryPoint("missing", "no_such_module:Thing", registry.GROUP),
        EntryPoint("not-a-class", "tests.helpers.audio:write_utterance", registry.GROUP),
        EntryPoint("misnamed", "tests.helpers.toys:ToyGain8k", registry.GROUP),
        EntryPoint("toy-raises", "tests.helpers.toys:ToyRaises", "some.other.group"),
    ]
    assert registry.available() == {"toy-gain": ToyGain}
    broken = registry.broken()
    assert set(broken) == {"missing", "not-a-class", "misnamed"}
    assert "ModuleNotFoundError" in broken["missing"]
    assert "not an Anonymizer subclass" in broken["not-a-class"]
    assert "declares name 'toy-gain-8k'" in broken["misnamed"]
    with pytest.raises(ConfigError, match=r"unknown anonymizer 'missing' \(failed to load: .*no_such_module"):
        registry.get("missing")


def test_entry_point_clashing_with_a_registered_name_is_reported(fresh_registry) -> None:
    class Impostor(ToyGain):
        name = "toy-gain"

    registry.register(Impostor)
    fresh_registry.append(EntryPoint("toy-gain", "tests.helpers.toys:ToyGain", registry.GROUP))
    assert registry.available() == {"toy-gain": Impostor}
    assert "already registered" in registry.broken()["toy-gain"]


def test_unknown_name_lists_the_available_ones(fresh_registry) -> None:
    registry.register(ToyGain)
    with pytest.raises(ConfigError, match=r"unknown anonymizer 'nope'; available: toy-gain"):
        registry.get("nope")


def test_third_party_register(fresh_registry) -> None:
    @registry.register
    class Mine(Anonymizer):
        """Third-party method."""

        name = "mine"

        def anonymize(self, wav, sr, rng):
            return -wav, sr

    assert registry.get("mine") is Mine
    assert registry.register(Mine) is Mine  # idempotent
    with pytest.raises(ValueError, match="already registered"):
        registry.register(type("Other", (Mine,), {}))
    out, sr = registry.build("mine").anonymize(np.ones(3, dtype=np.float32), 16000, utterance_rng(0, "u"))
    np.testing.assert_array_equal(out, -np.ones(3))


def test_import_path_names_an_unregistered_class(fresh_registry) -> None:
    assert registry.get("tests.helpers.toys:ToyGain8k") is ToyGain8k
    assert registry.build("tests.helpers.toys:ToyGain", {"delay": "0.5"}).config == ToyConfig(delay=0.5)
    with pytest.raises(ConfigError, match="cannot import anonymizer 'tests.helpers.toys:Nope'"):
        registry.get("tests.helpers.toys:Nope")
    with pytest.raises(ConfigError, match="not an Anonymizer subclass"):
        registry.get("tests.helpers.audio:SPEAKERS")
    assert registry.available() == {}


@dataclass(frozen=True)
class Typed:
    n: int = param(3, "an int")
    x: float = param(0.5, "a float")
    flag: bool = param(False, "a bool")
    label: str = param("a", "a str")
    pair: tuple[float, float] = param((1.0, 2.0), "two floats")
    maybe: float | None = param(None, "optional")


def test_config_coercion_from_strings() -> None:
    cfg = make_config(Typed, {"n": "7", "x": "1e-2", "flag": "yes", "label": 5, "pair": "[3, 4.5]", "maybe": "2"})
    assert cfg == Typed(n=7, x=0.01, flag=True, label="5", pair=(3, 4.5), maybe=2.0)
    assert make_config(Typed, {"maybe": "none", "n": 4.0, "pair": [1, 2]}) == Typed(maybe=None, n=4, pair=(1, 2))


@pytest.mark.parametrize("params, message", [
    ({"m": "1"}, r"unknown parameter\(s\) m; known: n, x, flag, label, pair, maybe"),
    ({"n": "seven"}, "parameter n: expected int, got 'seven'"),
    ({"n": 2.5}, "parameter n: expected int, got 2.5"),
    ({"x": "fast"}, "parameter x: expected float"),
    ({"flag": "maybe"}, "parameter flag: expected true/false"),
    ({"pair": "[1, 2"}, "parameter pair: expected a JSON list"),
])
def test_config_coercion_errors_name_the_parameter(params, message) -> None:
    with pytest.raises(ValueError, match=message):
        make_config(Typed, params)


def test_describe_config() -> None:
    rows = describe_config(Typed)
    assert rows[0] == ("n", "int", 3, "an int", None)
    assert rows[4][2] == (1.0, 2.0)


def test_anonymizer_takes_config_or_params_not_both() -> None:
    assert ToyGain(delay=0.25).config == ToyConfig(0.25)
    assert ToyGain().settings() == {"method": "toy-gain", "params": {"delay": 0.0}}
    with pytest.raises(TypeError):
        ToyGain(ToyConfig(), delay=1.0)


def test_utterance_rng_is_reproducible_and_keyed() -> None:
    draw = lambda seed, key: utterance_rng(seed, key).integers(0, 2**62, 4).tolist()  # noqa: E731
    assert draw(0, "utt1") == draw(0, "utt1") == draw("0", "utt1")
    assert draw(0, "utt1") != draw(0, "utt2")
    assert draw(0, "utt1") != draw(1, "utt1")
    assert draw(1, "2a") != draw(12, "a")
