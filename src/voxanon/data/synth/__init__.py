"""Deterministic offline benchmark corpus shaped like the VoicePrivacy Challenge data.

Debian TTS voices times vocal-tract-length warps make the speakers; shipped
sentences make exact transcripts. See :mod:`.build` for the layout,
:mod:`.voices` for speaker design and gender labels, :mod:`.sets` for the
VPC-style set and trial construction.
"""

from voxanon.data.synth.build import build_corpus
from voxanon.data.synth.sets import SIZES, CorpusPlanError, SizeSpec

__all__ = ["build_corpus", "SIZES", "SizeSpec", "CorpusPlanError"]
