"""The streaming contract: anonymize audio chunk by chunk while it is being spoken.

A :class:`StreamSession` is opened with :meth:`Anonymizer.open_stream(sample_rate, seed, key)
<voxanon.anonymizers.base.Anonymizer.open_stream>`, which derives the rng exactly as the offline
runner does (:func:`~voxanon.anonymizers.base.utterance_rng`), so the session's pseudo-speaker is the
one the offline path draws for the same seed and key. ``process(chunk)`` returns every output sample
that no later input can change; ``flush()`` returns the rest at the end of the input. Whatever the
chunking (one sample, 20 ms, the whole input), the concatenated output is the same.

``latency_ms`` is the method's algorithmic latency: the longest time an input sample waits for the
input after it (look-ahead) plus the method's own buffering, when samples arrive one by one. A
caller that feeds chunks of ``C`` ms adds up to ``C`` ms of its own, and compute and transport
come on top.

A method that cannot stream says why: :meth:`Anonymizer.stream` raises a ConfigError with its
``stream_limit`` (e.g. it normalises by the whole utterance's peak, or needs the whole utterance's
F0 statistics).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class StreamSession(ABC):
    """One live utterance (or call): mono float samples in, anonymized samples out, same rate and length."""

    #: sample rate of both input and output, in Hz
    sample_rate: int

    @property
    @abstractmethod
    def latency_ms(self) -> float:
        """Algorithmic latency in ms (look-ahead plus buffering) when samples arrive one by one."""

    @abstractmethod
    def process(self, chunk: np.ndarray) -> np.ndarray:
        """Feed the next mono samples (any length, even 0); return the output samples that are now final."""

    @abstractmethod
    def flush(self) -> np.ndarray:
        """End of input: return the remaining output; the session accepts no more input afterwards."""
