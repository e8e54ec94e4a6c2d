"""HyperPyYAML files read with PyYAML, and the files of a speechbrain model folder found as speechbrain finds them.

HyperPyYAML tags build objects when speechbrain loads a file; here they stay data:

- ``!new:pkg.Class`` (an object), ``!name:pkg.func`` (a callable), ``!apply:``,
  ``!PLACEHOLDER`` and any other ``!tag`` become a :class:`Node` (its mapping
  gives ``kwargs``, its list ``args``, a non-empty scalar one argument);
- ``!ref <key>`` is replaced by the value at ``key`` (``<a[b][c]>`` reaches into
  mappings); a reference that is the whole value keeps the object's identity, so
  two references to ``<enc>`` give the same :class:`Node`; references inside a
  longer string are substituted as text (``!ref <folder>/x`` gives a path);
  HyperPyYAML's arithmetic on references (``!ref <a> * 2``) is not evaluated;
- ``!copy <key>`` is a deep copy of that value;
- numbers are read as YAML 1.2 reads them (``1e-5`` is a float).
"""

from __future__ import annotations

import copy
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from voxanon.errors import ModelError

#: the file a speechbrain pretrained-model folder describes itself with
HPARAMS_FILE = "hyperparams.yaml"
#: what speechbrain's Pretrainer names the file of loadable ``x`` (``x.ckpt``)
PARAMFILE_EXT = ".ckpt"

_REF = re.compile(r"<([^<>]+)>")


class SbFolderError(ModelError):
    """A speechbrain model folder or hyperparams file that cannot be used; the message says which and why."""


@dataclass(eq=False)
class Node:
    """A tagged HyperPyYAML value, e.g. ``!new:speechbrain.nnet.linear.Linear {n_neurons: 29}``.

    Attributes
    ----------
    kind : the tag before the colon (``new``, ``name``, ``apply``, ``PLACEHOLDER`` ...)
    target : the dotted name after the colon (empty when the tag has none)
    args, kwargs : the tagged value (a list gives ``args``, a mapping ``kwargs``)
    """

    kind: str
    target: str
    args: list = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The last part of :attr:`target` (the class or function name)."""
        return self.target.rsplit(".", 1)[-1]


@dataclass(frozen=True, eq=False)
class _Ref:
    text: str
    copy: bool


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with every ``!`` tag kept as a :class:`Node` or a reference."""


def _construct(loader: _Loader, suffix: str, node: yaml.Node) -> object:
    kind, _, target = suffix.partition(":")
    if kind in ("ref", "copy"):
        return _Ref(str(loader.construct_scalar(node)), copy=kind == "copy")
    if isinstance(node, yaml.MappingNode):
        return Node(kind, target, kwargs=loader.construct_mapping(node, deep=True))
    if isinstance(node, yaml.SequenceNode):
        return Node(kind, target, args=loader.construct_sequence(node, deep=True))
    value = loader.construct_scalar(node)
    return Node(kind, target, args=[value] if value != "" else [])


_Loader.add_multi_constructor("!", _construct)
# YAML 1.2 (HyperPyYAML's ruamel) reads 1e-5 as a float; PyYAML's YAML 1.1 rules need a dot
_Loader.add_implicit_resolver("tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9]+[eE][-+]?[0-9]+$"),
                              list("-+0123456789"))


class _Resolver:
    """Replaces the references of one parsed file, each target resolved once (identity kept)."""

    def __init__(self, root: dict, path: Path):
        self.root, self.path = root, path
        self.done: dict[int, object] = {}
        self.active: set[int] = set()

    def resolve(self, value: object) -> object:
        key = id(value)
        if key in self.done:
            return self.done[key]
        if key in self.active:
            raise SbFolderError(f"{self.path}: circular !ref; the file is not a valid hyperparams file")
        self.active.add(key)
        if isinstance(value, _Ref):
            out = self._reference(value)
            self.active.discard(key)
            return out
        if isinstance(value, Node):
            out: object = Node(value.kind, value.target, [self.resolve(v) for v in value.args],
                               {k: self.resolve(v) for k, v in value.kwargs.items()})
        elif isinstance(value, dict):
            out = {k: self.resolve(v) for k, v in value.items()}
        elif isinstance(value, list):
            out = [self.resolve(v) for v in value]
        else:
            out = value
        self.active.discard(key)
        self.done[key] = out
        return out

    def _reference(self, ref: _Ref) -> object:
        whole = _REF.fullmatch(ref.text.strip())
        if whole:
            out = self.resolve(self._lookup(whole.group(1)))
        else:
            out = _REF.sub(lambda m: str(self.resolve(self._lookup(m.group(1)))), ref.text)
        return copy.deepcopy(out) if ref.copy else out

    def _lookup(self, name: str) -> object:
        value: object = self.root
        for part in re.findall(r"[^\[\]]+", name):
            if isinstance(value, dict) and part in value:
                value = value[part]
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
                raise SbFolderError(f"{self.path}: !ref <{name}> names nothing in the file")
        return value


def load_hparams(path: str | os.PathLike) -> dict[str, Any]:
    """The top-level mapping of a HyperPyYAML file, tags as :class:`Node`, references resolved."""
    path = Path(path)
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    except FileNotFoundError:
        raise SbFolderError(f"{path} not found: a speechbrain model folder needs its {HPARAMS_FILE}") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SbFolderError(f"{path}: not a readable hyperparams file ({exc})") from exc
    if not isinstance(raw, dict):
        raise SbFolderError(f"{path}: expected a mapping at the top of the hyperparams file")
    return _Resolver(raw, path).resolve(raw)


def checkpoint_folder(folder: str | os.PathLike) -> Path:
    """The folder the VPC kit loads a model from: its latest ``CKPT<n>`` entry, else ``folder`` itself.

    As the kit's ``scan_checkpoint(folder, 'CKPT') or folder`` (``utils/path_management.py``): the entries
    whose names start with ``CKPT`` must all end in an integer (``CKPT+3``, ``CKPT12``); the largest wins.
    If there are none, or one name does not end in an integer, the kit's scan finds nothing.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise SbFolderError(f"{folder} is not a folder: give the model folder of the VPC kit (e.g. exp/asr)")
    numbered = []
    for entry in folder.glob("CKPT*"):
        try:
            numbered.append((int(entry.name[len("CKPT"):]), entry))
        except ValueError:
            return folder
    return max(numbered)[1] if numbered else folder


def node_at(hparams: dict, *keys: str, where: Path, kind: str = "new") -> Node:
    """The :class:`Node` at ``hparams[k1][k2]...``, which must be a ``!<kind>:`` tag, else SbFolderError."""
    value: object = hparams
    for k in keys:
        value = value.get(k) if isinstance(value, dict) else None
    if not isinstance(value, Node) or value.kind != kind:
        raise SbFolderError(f"{where}: no '!{kind}:' entry at {'.'.join(keys)}; is this the kit's model folder?")
    return value


def loadable_files(folder: Path, hparams: dict, where: Path) -> dict[str, tuple[Path, object]]:
    """Each Pretrainer loadable's file and the object it loads into: ``{name: (path, object)}``.

    speechbrain's ``Pretrainer.collect_files`` fetches loadable ``x`` into ``<folder>/x.ckpt`` and uses that
    file when it is there; otherwise it takes the file its ``paths`` entry names, whose base name is looked up
    in ``folder`` here (a hub path cannot be fetched offline).
    """
    pretrainer = node_at(hparams, "pretrainer", where=where)
    loadables, paths = pretrainer.kwargs.get("loadables"), pretrainer.kwargs.get("paths") or {}
    if not isinstance(loadables, dict) or not loadables:
        raise SbFolderError(f"{where}: the pretrainer lists no loadables")
    out = {}
    for name, obj in loadables.items():
        candidates = [folder / f"{name}{PARAMFILE_EXT}"]
        if name in paths and Path(str(paths[name])).name != candidates[0].name:
            candidates.append(folder / Path(str(paths[name])).name)
        found = next((p for p in candidates if p.is_file()), None)
        if found is None:
            raise SbFolderError(f"{folder}: missing the file of loadable {name!r} "
                                f"({' or '.join(p.name for p in candidates)}); copy the kit's model folder whole")
        out[name] = (found, obj)
    return out


def file_of(files: dict[str, tuple[Path, object]], node: object, where: Path, what: str) -> Path:
    """The file of the loadable that is ``node`` itself (``what`` names it in the error if none is)."""
    path = next((p for p, obj in files.values() if obj is node), None)
    if path is None:
        raise SbFolderError(f"{where}: the pretrainer does not load the {what}; is this the kit's hyperparams file?")
    return path
