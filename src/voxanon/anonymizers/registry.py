"""Registry of anonymizers: built-in and third-party, through entry points.

Third-party packages register with the entry-point group ``voxanon.anonymizers``
(``name = "package.module:Class"``). The built-ins are declared the same way in
voxanon's own ``pyproject.toml``.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from voxanon.anonymizers.base import Anonymizer, make_config

GROUP = "voxanon.anonymizers"

_registry: dict[str, type[Anonymizer]] = {}
_broken: dict[str, str] = {}
_loaded = False


def register(cls: type[Anonymizer]) -> type[Anonymizer]:
    """Register an anonymizer class under ``cls.name`` (usable as a decorator)."""
    existing = _registry.get(cls.name)
    if existing is not None and existing is not cls:
        raise ValueError(f"anonymizer name {cls.name!r} already registered by {existing.__module__}")
    _registry[cls.name] = cls
    return cls


def _load_entry_points() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for ep in entry_points(group=GROUP):
        try:
            cls = ep.load()
        except Exception as exc:  # a broken plug-in must not hide the others
            _broken[ep.name] = f"{ep.value}: {type(exc).__name__}: {exc}"
            continue
        if not (isinstance(cls, type) and issubclass(cls, Anonymizer)):
            _broken[ep.name] = f"{ep.value} is not an Anonymizer subclass"
            continue
        if cls.name != ep.name:
            _broken[ep.name] = f"{ep.value} declares name {cls.name!r}, entry point says {ep.name!r}"
            continue
        register(cls)


def available() -> dict[str, type[Anonymizer]]:
    """All registered anonymizer classes by name (sorted)."""
    _load_entry_points()
    return dict(sorted(_registry.items()))


def broken() -> dict[str, str]:
    """Entry points that failed to load, with the reason."""
    _load_entry_points()
    return dict(_broken)


def get(name: str) -> type[Anonymizer]:
    """The anonymizer class registered as ``name``."""
    classes = available()
    if name not in classes:
        hint = f" (failed to load: {_broken[name]})" if name in _broken else ""
        raise KeyError(f"unknown anonymizer {name!r}{hint}; available: {', '.join(classes) or 'none'}")
    return classes[name]


def build(name: str, params: dict[str, Any] | None = None) -> Anonymizer:
    """Instantiate anonymizer ``name`` with parameters given as a dict (strings are coerced)."""
    cls = get(name)
    return cls(make_config(cls.Config, params or {}))
