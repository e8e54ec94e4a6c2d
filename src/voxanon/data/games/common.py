"""What the game extractors share: where set-up unpacks the Debian packages, the clip record, the VPC text form,
and the licence read from a package's copyright file."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from voxanon.data.sentences import normalize_transcript
from voxanon.errors import DataError


@dataclass(frozen=True)
class Package:
    """A Debian package, pinned, as ``tools/setup.sh`` fetches and unpacks it."""

    name: str
    version: str
    sha256: str
    #: the folder inside the unpacked package that holds the game's files
    data_path: str

    @property
    def folder(self) -> str:
        """The unpacked package's folder name inside the cache: ``<name>_<version>``."""
        return f"{self.name}_{self.version}"


def games_dir() -> Path:
    """The cache where set-up unpacks the game packages: ``$VOXANON_GAMES_DIR`` or ``~/.cache/voxanon/games``."""
    env = os.environ.get("VOXANON_GAMES_DIR")
    return Path(env) if env else Path.home() / ".cache/voxanon/games"


def package_root(package: Package, cache: str | os.PathLike | None = None) -> Path:
    """The unpacked package (its ``usr/`` tree) in ``cache``, checked to be the pinned version.

    Raises
    ------
    DataError
        The package is not unpacked there, or another version or file is (its ``SOURCE`` line differs).
    """
    root = (Path(cache) if cache is not None else games_dir()) / package.folder
    source = root / "SOURCE"
    expected = f"{package.name} {package.version} {package.sha256}"
    if not source.is_file() or source.read_text(encoding="utf-8").strip() != expected:
        raise DataError(f"{root}: no unpacked {package.name} {package.version} (expected a SOURCE file reading "
                        f"'{expected}'): run tools/setup.sh, or set VOXANON_GAMES_DIR to where it unpacked them")
    return root


def licence(root: Path, package: Package) -> str:
    """The text of the package's ``/usr/share/doc/<name>/copyright`` (the licence and the freeware terms)."""
    path = root / "usr/share/doc" / package.name / "copyright"
    if not path.is_file():
        raise DataError(f"{path}: the package's copyright file is missing: unpack {package.name} again "
                        f"(tools/setup.sh)")
    return path.read_text(encoding="utf-8", errors="replace")


def vpc_text(text: str) -> str:
    """A game line in the VPC's transcript form (upper case, words and apostrophes only, numbers spelt out)."""
    return normalize_transcript(text)


@dataclass(frozen=True)
class GameClip:
    """One speech clip of a game with its exact line.

    ``utt`` starts with ``speaker`` (Kaldi sorts utterances by speaker); ``source`` names the clip inside the
    package; ``read`` returns its samples (float, mono) and sample rate.
    """

    utt: str
    speaker: str
    source: str
    text: str
    read: Callable[[], tuple[np.ndarray, int]] = field(compare=False, repr=False)


@dataclass
class Extraction:
    """A game's clips matched to their lines, and the clips left out, counted by reason."""

    game: str
    package: Package
    root: Path
    clips: list[GameClip]
    unmatched: dict[str, int]
    #: character speaker id -> a short description (who the character is, from the game)
    characters: dict[str, str]
    #: character speaker id -> gender ("f"/"m") as the game gives it; the others are estimated from pitch
    genders: dict[str, str] = field(default_factory=dict)
