"""Content encoders behind one interface, and ``load_content_encoder(spec)``.

Specs: ``whisper-tiny[:<layer>]`` (Whisper tiny.en's encoder from the bundled
CTranslate2 model; default layer 3 of 4), ``whisper-base[:<layer>]`` (multilingual
Whisper base's encoder from the model ``tools/setup.sh`` fetches; 6 layers of 512,
default layer 4), ``whisper-ct2:<model dir>[:<layer>]``
(any CTranslate2 Whisper), ``hf:<save_pretrained dir>[:<layer>]`` (WavLM,
HuBERT, wav2vec 2.0; default layer 6), ``wavlm-pt:<checkpoint.pt>[:<layer>]`` (a WavLM
checkpoint in Microsoft's unilm layout, e.g. kNN-VC's ``WavLM-Large.pt``; default
layer 6, kNN-VC's). Backends are imported lazily.
"""

from __future__ import annotations

import functools
import os

from voxanon.models.content.base import ContentEncoder, ContentError

__all__ = ["ContentEncoder", "ContentError", "load_content_encoder"]


def _split_layer(rest: str, default: int) -> tuple[str, int]:
    head, sep, tail = rest.rpartition(":")
    if sep and tail.lstrip("-").isdigit():
        return head, int(tail)
    return rest, default


@functools.lru_cache(maxsize=4)
def load_content_encoder(spec: str = "whisper-tiny") -> ContentEncoder:
    """Load a content encoder once per process."""
    engine, _, rest = spec.partition(":")
    if engine in ("whisper-tiny", "whisper-base", "whisper-ct2"):
        from voxanon.models.content.whisper import (
            WhisperContent,
            bundled_model_bin,
            load_whisper_encoder,
        )

        if engine == "whisper-tiny":
            path, layer, name = bundled_model_bin(), int(rest) if rest else 3, engine
        elif engine == "whisper-base":
            from voxanon.models.asr.whisper import base_model_dir

            path, layer, name = os.path.join(base_model_dir(), "model.bin"), int(rest) if rest else 4, engine
        else:  # the model's path is part of the name: caches keyed by it must tell two models apart
            model_dir, layer = _split_layer(rest, 3)
            path, name = os.path.join(model_dir, "model.bin"), f"{engine}:{os.path.abspath(model_dir)}"
        return WhisperContent(load_whisper_encoder(path), layer, name=name)
    if engine == "hf" and rest:
        from voxanon.models.content.hf import HfContent

        model_dir, layer = _split_layer(rest, 6)
        return HfContent.from_dir(model_dir, layer)
    if engine == "wavlm-pt" and rest:
        from voxanon.models.content.hf import HfContent
        from voxanon.models.content.unilm import load_unilm_wavlm

        path, layer = _split_layer(rest, 6)
        return HfContent(load_unilm_wavlm(path), layer, f"wavlm-pt:{os.path.abspath(path)}")
    raise ContentError(f"unknown content encoder {spec!r}; use whisper-tiny[:<layer>], whisper-base[:<layer>], "
                       f"whisper-ct2:<dir>[:<layer>], hf:<dir>[:<layer>] or wavlm-pt:<checkpoint>[:<layer>]")
