"""Deterministic offline benchmark corpus shaped like the VoicePrivacy Challenge data.

Debian TTS voices times vocal-tract-length warps make the speakers; shipped
sentences make exact transcripts. See :mod:`.build` for the layout,
:mod:`.voices` for speaker design and gender labels, :mod:`.sets` for the
VPC-style set and trial construction. Entry point:
:func:`voxanon.data.synth.build.build_corpus`.
"""
