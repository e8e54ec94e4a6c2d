"""Speech emotion recognition (SER) models behind one interface.

Three kinds, loaded with :func:`load_ser`:

``voxanon:<checkpoint.pt>``
    :class:`CompactSER`, our own network trained with :func:`fit` (one per
    IEMOCAP fold, see :mod:`voxanon.evaluation.ser`).
``transformers:<local dir or hub name>``
    :class:`TransformersSER`, any transformers audio-classification
    checkpoint (e.g. SUPERB ER ``superb/wav2vec2-base-superb-er``, labels
    neu/hap/ang/sad). Its labels are mapped to the four VPC classes with
    :data:`voxanon.data.iemocap.EMOTION_ALIASES` (neu/neutral → neu;
    hap/happy/happiness/exc/excited → hap; ang/angry/anger → ang;
    sad/sadness → sad); other labels are excluded (their probability mass is
    dropped and the rest renormalised) and listed in ``excluded_labels``.

Every model returns probabilities over :data:`voxanon.data.iemocap.EMOTIONS`
(``neu``, ``sad``, ``ang``, ``hap``) and predicts in batches of similar-length
utterances (sorted by length, so little padding is computed).
"""

from __future__ import annotations

from voxanon.models.ser.base import EmotionRecognizer, SERError

__all__ = ["EmotionRecognizer", "SERError", "load_ser"]


def load_ser(spec: str, *, device: str = "cpu") -> EmotionRecognizer:
    """Load an SER from ``"voxanon:<checkpoint.pt>"``, ``"transformers:<dir or hub name>"`` or ``"vpc2024:<fold dir>"``.

    ``device`` (``cpu`` or ``cuda``) is honoured by ``vpc2024``; the other kinds run on the CPU.
    """
    kind, sep, source = spec.partition(":")
    if not sep or not source:
        raise SERError(f"SER spec {spec!r}: expected 'voxanon:<checkpoint.pt>', 'transformers:<dir or name>' "
                       "or 'vpc2024:<exp/ser/fold_k>'")
    if kind == "vpc2024":
        from voxanon.models.ser.vpc2024 import Vpc2024Ser

        return Vpc2024Ser(source, device=device)
    if device != "cpu":
        raise SERError(f"SER spec {spec!r}: {kind} models run on the CPU only (device {device!r} asked for)")
    if kind == "voxanon":
        from voxanon.models.ser.compact import CompactSER

        return CompactSER.load(source)
    if kind == "transformers":
        from voxanon.models.ser.hf import TransformersSER

        return TransformersSER(source)
    raise SERError(f"SER spec {spec!r}: unknown kind {kind!r} (use 'voxanon', 'transformers' or 'vpc2024')")
