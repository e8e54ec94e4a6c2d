"""speechbrain's ``CategoricalEncoder`` files (also ``CTCTextEncoder``'s): label → index, then extras.

The format (speechbrain ``dataio/encoder.py``, ``_save_literal``): one line per
label, ``repr(label) => index`` (e.g. ``'neu' => 0``), then the separator line
``================`` and extras in the same form (``'starting_index' => 0``).
Labels are Python literals, read with :func:`ast.literal_eval`.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from voxanon.models.speechbrain.hparams import SbFolderError

SEPARATOR = "================"
ARROW = " => "


def read_label_encoder(path: str | os.PathLike) -> dict[int, object]:
    """Index → label of a speechbrain label-encoder file; SbFolderError naming the file and line if malformed."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SbFolderError(f"{path}: cannot read the label encoder ({exc})") from exc
    ind2lab: dict[int, object] = {}
    for number, line in enumerate(lines, 1):
        if line == SEPARATOR:
            break
        literal, arrow, index = line.strip().partition(ARROW)
        try:
            label, ind = ast.literal_eval(literal), int(index)
        except (ValueError, SyntaxError):
            arrow = ""
        if not arrow or ind in ind2lab:
            raise SbFolderError(f"{path}:{number}: expected a new \"'label' => index\" line of a speechbrain "
                                f"label encoder, found {line!r}")
        ind2lab[ind] = label
    if sorted(ind2lab) != list(range(len(ind2lab))) or not ind2lab:
        raise SbFolderError(f"{path}: label indices {sorted(ind2lab)} are not 0..n-1; not a label encoder file")
    return ind2lab
