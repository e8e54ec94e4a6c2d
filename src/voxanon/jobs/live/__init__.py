"""Live anonymization: timed streaming sessions, streaming a file or stdin, and the WebSocket server with its page.

- :mod:`.session`: a :class:`~voxanon.anonymizers.streaming.StreamSession` with per-chunk compute times.
- :mod:`.stream`: ``voxanon stream``, from a file (in real time or as fast as it goes) or raw PCM on stdin
  to a WAV file or raw PCM on stdout, with the latency it achieved.
- :mod:`.server`: ``voxanon serve``, an aiohttp server that anonymizes browser microphones over WebSockets.
"""
