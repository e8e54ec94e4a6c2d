"""Sound devices for ``voxanon stream``: capture chunks from a microphone, play chunks on a speaker.

PortAudio through the ``sounddevice`` package (the ``live`` extra; PortAudio itself is the system's
``libportaudio2``). A device is named as PortAudio lists it (``voxanon stream --devices``), by its
index, or left to the system default. Capture is blocking: each chunk is read when its last sample
has been captured, and that moment is its capture time for the end-to-end delay.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from voxanon.errors import ConfigError, DataError


def _sounddevice() -> Any:
    try:
        import sounddevice
    except (ImportError, OSError) as exc:  # OSError: the package is there, PortAudio is not
        raise ConfigError(f"sound devices need the sounddevice package and PortAudio ({exc}); install the live "
                          "extra (pip install 'voxanon[live]') and libportaudio2") from None
    return sounddevice


def list_devices() -> list[str]:
    """One line per sound device PortAudio sees: index, name, input and output channels."""
    sd = _sounddevice()
    return [f"{i}: {d['name']} ({d['max_input_channels']} in, {d['max_output_channels']} out)"
            for i, d in enumerate(sd.query_devices())]


def _device(sd: Any, name: str, kind: str) -> int | str | None:
    """PortAudio's id for ``name`` ('' = the default); DataError naming the devices there are."""
    wanted = int(name) if name.isdigit() else name or None
    try:
        sd.query_devices(wanted, kind)
    except (ValueError, sd.PortAudioError) as exc:
        found = "; ".join(list_devices()) or "none"
        what = f"sound device {name!r}" if name else f"default {kind} sound device"
        raise DataError(f"no {what} ({exc}); devices here: {found}") from None
    return wanted


def device_chunks(name: str, sample_rate: int, chunk: int, seconds: float | None = None) -> Iterator[tuple]:
    """Mono float32 chunks of ``chunk`` samples captured from input device ``name`` ('' = default), each with
    the time its last sample was captured, for ``seconds`` (None: until Ctrl-C)."""
    sd = _sounddevice()
    device = _device(sd, name, "input")
    total = None if seconds is None else max(1, round(seconds * sample_rate))
    taken = 0
    try:
        stream = sd.InputStream(samplerate=sample_rate, channels=1, dtype="float32", blocksize=chunk,
                                device=device)
    except sd.PortAudioError as exc:
        raise DataError(f"cannot capture from {name or 'the default input device'} at {sample_rate} Hz ({exc})")
    with stream:
        while total is None or taken < total:
            size = chunk if total is None else min(chunk, total - taken)
            try:
                data, _overflowed = stream.read(size)
            except KeyboardInterrupt:  # Ctrl-C ends the capture; the stream is flushed and reported
                return
            taken += size
            yield np.ascontiguousarray(data[:, 0]), time.perf_counter()


class DeviceSink:
    """Output chunks played on output device ``name`` ('' = default) as they come."""

    def __init__(self, name: str, sample_rate: int) -> None:
        sd = _sounddevice()
        device = _device(sd, name, "output")
        try:
            self._stream = sd.OutputStream(samplerate=sample_rate, channels=1, dtype="float32", device=device)
        except sd.PortAudioError as exc:
            raise DataError(f"cannot play on {name or 'the default output device'} at {sample_rate} Hz ({exc})")
        self._stream.start()

    def __call__(self, samples: np.ndarray) -> None:
        if samples.size:
            self._stream.write(np.ascontiguousarray(samples, dtype=np.float32).reshape(-1, 1))

    def close(self) -> None:
        self._stream.stop()  # plays what is queued, then stops
        self._stream.close()
