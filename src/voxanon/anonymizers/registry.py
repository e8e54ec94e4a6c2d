"""Registry of anonymizers: built-in and third-party, through entry points.

Third-party packages register with the entry-point group ``voxanon.anonymizers``
(``name = "package.module:Class"``). The built-ins are declared the same way in
voxanon's own ``pyproject.toml``. An anonymizer that is not registered can
still be named by its import path, ``package.module:Class``.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

from voxanon.anonymizers.base import Anonymizer, make_config
from voxanon.errors import ConfigError

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
        try:
            register(cls)
        except ValueError as exc:
            _broken[ep.name] = str(exc)


def available() -> dict[str, type[Anonymizer]]:
    """All registered anonymizer classes by name (sorted)."""
    _load_entry_points()
    return dict(sorted(_registry.items()))


def broken() -> dict[str, str]:
    """Entry points that failed to load, with the reason."""
    _load_entry_points()
    return dict(_broken)


def _import_class(path: str) -> type[Anonymizer]:
    """The Anonymizer subclass at import path ``package.module:Class``."""
    module_name, _, qualname = path.partition(":")
    try:
        obj = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot import anonymizer {path!r}: {type(exc).__name__}: {exc}") from None
    if not (isinstance(obj, type) and issubclass(obj, Anonymizer)):
        raise ConfigError(f"{path!r} is not an Anonymizer subclass")
    return obj


def get(name: str) -> type[Anonymizer]:
    """The anonymizer class registered as ``name``, or at import path ``package.module:Class``."""
    if ":" in name:
        return _import_class(name)
    classes = available()
    if name not in classes:
        hint = f" (failed to load: {_broken[name]})" if name in _broken else ""
        raise ConfigError(f"unknown anonymizer {name!r}{hint}; available: {', '.join(classes) or 'none'}")
    return classes[name]


def build(name: str, params: dict[str, Any] | None = None) -> Anonymizer:
    """Instantiate anonymizer ``name`` (see :func:`get`) with parameters as a dict (strings are coerced)."""
    cls = get(name)
    return cls(make_config(cls.Config, params or {}))
