"""Speaker-conditioned acoustic model (content + pitch + speaker embedding -> HiFi-GAN log-mels).

``load_acoustic(spec)``: ``default`` (the model shipped in ``voxanon/resources/acoustic``,
trained by ``voxanon train acoustic``; its command, seed and log lie next to it) or the
path of a ``model.pt`` that command wrote. Torch is imported only when a model is loaded.
"""

from __future__ import annotations

import functools
from pathlib import Path

__all__ = ["DEFAULT_MODEL", "load_acoustic"]

#: the shipped default model (fp16)
DEFAULT_MODEL = Path(__file__).resolve().parents[2] / "resources" / "acoustic" / "default.pt"


@functools.lru_cache(maxsize=4)
def load_acoustic(spec: str = "default", device: str = "cpu"):
    """The :class:`~voxanon.models.acoustic.inference.AcousticModel` of ``spec``, loaded once per process."""
    from voxanon.models.acoustic.inference import AcousticModel

    return AcousticModel.from_file(DEFAULT_MODEL if spec == "default" else spec, device)
