"""Study scripts (experiments/) are files, not modules of the package: tests load them by path as fixtures."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def script_fixture(name: str):
    """A module-scoped fixture giving ``experiments/<name>.py`` loaded as module ``name`` (registered in
    ``sys.modules`` while it is used: dataclasses look their module up while the class is built)."""

    @pytest.fixture(scope="module")
    def load():
        spec = importlib.util.spec_from_file_location(name, EXPERIMENTS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        yield module
        del sys.modules[name]

    return load
