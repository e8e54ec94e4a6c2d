"""Speaker-conditioned acoustic model (content + pitch + speaker embedding -> HiFi-GAN log-mels).

``load_acoustic(spec)``: a model shipped in ``voxanon/resources/acoustic`` (``default``, trained
by ``voxanon train acoustic``; ``b5`` and ``b6``, trained by ``voxanon train asrbn``; ``f3va``, the DiT
flow-matching backbone of ``voxanon train f3va``; their
commands, seeds and logs lie next to them) or the path of a ``model.pt`` either command wrote.
Torch is imported only when a model is loaded.
"""

from __future__ import annotations

import functools
from pathlib import Path

__all__ = ["DEFAULT_MODEL", "SHIPPED", "load_acoustic", "shipped_path"]

#: folder of the shipped models (fp16)
RESOURCES = Path(__file__).resolve().parents[2] / "resources" / "acoustic"
#: names of the shipped models
SHIPPED = ("default", "b5", "b6", "f3va")
#: the shipped default model
DEFAULT_MODEL = RESOURCES / "default.pt"


def shipped_path(spec: str) -> Path:
    """The file of ``spec``: a shipped model's name (:data:`SHIPPED`) or a path."""
    return RESOURCES / f"{spec}.pt" if spec in SHIPPED else Path(spec)


@functools.lru_cache(maxsize=4)
def load_acoustic(spec: str = "default", device: str = "cpu"):
    """The :class:`~voxanon.models.acoustic.inference.AcousticModel` of ``spec``, loaded once per process."""
    from voxanon.models.acoustic.inference import AcousticModel

    return AcousticModel.from_file(shipped_path(spec), device)
