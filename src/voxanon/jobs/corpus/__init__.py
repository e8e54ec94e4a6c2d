"""Deterministic offline benchmark corpus shaped like the VoicePrivacy Challenge data.

Speakers come from Kokoro-82M's voice packs and their same-gender mixtures
(:mod:`.kokoro_speakers`, the default) or from Debian TTS voices times
vocal-tract-length warps (:mod:`.voices`, engine ``formant``); shipped
sentences make exact transcripts. See :mod:`.build` for the layout and
:mod:`.sets` for the VPC-style set and trial construction. Entry point:
:func:`voxanon.jobs.corpus.build.build_corpus`.
"""
