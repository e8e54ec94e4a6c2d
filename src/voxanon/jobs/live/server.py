"""``voxanon serve``: anonymize browser microphones (or any WebSocket client) live, several sessions at once.

Protocol, one WebSocket per session at ``/ws``:

1. the client sends a JSON text frame ``{"type": "hello", "sample_rate": 16000, "format": "f32"}``
   (format ``f32`` or ``s16``, little-endian mono; an optional ``"key"`` names the session's
   pseudo-speaker as an utterance id names it offline: the same seed and key give the same voice);
2. the server answers ``{"type": "ready", "session", "method", "sample_rate", "latency_ms",
   "max_frame_samples"}``;
3. the client sends binary PCM frames; the server answers each with a binary frame of the output
   samples that are final (none while the method looks ahead), in the same format;
4. the client sends ``{"type": "end"}``; the server sends the rest of the output, then
   ``{"type": "done", "samples_in", "samples_out", "latency_ms", "compute_ms": {p50, p95, p99}}``
   and closes.

Anything else (a binary frame before the hello, a torn or non-finite frame, a frame over
``max_frame_samples``, unknown JSON) ends that session with ``{"type": "error", "message"}``
and a close; the other sessions go on. A session past ``max_sessions`` is refused the same
way. Memory per session is bounded: frames are at most ``max_frame_samples`` long, the
stream keeps at most a batch of frames, and compute times are kept for the last
:data:`~voxanon.jobs.live.session.KEPT_TIMES` chunks. Processing runs on the event loop
(a 20 ms McAdams chunk takes about a millisecond), so frames of one session are handled
in order and no session waits long for another.
"""

from __future__ import annotations

import itertools
import json
import secrets
import sys
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import WSCloseCode, WSMsgType, web

from voxanon.anonymizers.base import Anonymizer
from voxanon.errors import VoxanonError
from voxanon.jobs.live import pcm
from voxanon.jobs.live.session import TimedSession

#: the page, its script and the capture worklet, served from the package
PAGE = Path(__file__).resolve().parents[2] / "resources" / "live"
PAGE_FILES = {"/": ("index.html", "text/html"), "/live.js": ("live.js", "text/javascript"),
              "/capture.js": ("capture.js", "text/javascript")}
#: JSON control frames are small; anything longer is malformed
MAX_TEXT_BYTES = 4096


class ProtocolError(VoxanonError):
    """A client frame that breaks the protocol; the session ends with this message."""


@dataclass
class LiveServer:
    """What every session shares: the anonymizer, the seed, the limits, the open sessions."""

    anonymizer: Anonymizer
    seed: int | str = field(default_factory=lambda: secrets.randbits(63))
    max_sessions: int = 8
    max_frame_seconds: float = 1.0
    quiet: bool = False
    sessions: dict[int, TimedSession | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)

    def max_frame_samples(self, sample_rate: int) -> int:
        return max(1, round(self.max_frame_seconds * sample_rate))

    def log(self, line: str) -> None:
        if not self.quiet:
            print(f"voxanon serve: {line}", file=sys.stderr, flush=True)

    def app(self) -> web.Application:
        """The aiohttp application: the page at ``/``, sessions at ``/ws``, counts at ``/status``."""
        app = web.Application()
        for route, (name, content_type) in PAGE_FILES.items():
            app.router.add_get(route, self._static(name, content_type))
        app.router.add_get("/status", self.status)
        app.router.add_get("/ws", self.websocket)
        return app

    @staticmethod
    def _static(name: str, content_type: str):
        body = (PAGE / name).read_bytes()

        async def handler(request: web.Request) -> web.Response:
            return web.Response(body=body, content_type=content_type, headers={"Cache-Control": "no-store"})

        return handler

    async def status(self, request: web.Request) -> web.Response:
        return web.json_response({"method": self.anonymizer.name, "sessions": len(self.sessions),
                                  "max_sessions": self.max_sessions})

    async def websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One session: refuse it past the limit, else run it; whatever happens, free its slot."""
        # frames up to max_frame_seconds of f32 at 48 kHz pass the transport; the session checks its own limit
        ws = web.WebSocketResponse(max_msg_size=4 * self.max_frame_samples(48000) + 1024, heartbeat=20.0)
        await ws.prepare(request)
        if len(self.sessions) >= self.max_sessions:
            await self._fail(ws, f"server full: {self.max_sessions} sessions open (the --max-sessions limit); "
                             "try again later", WSCloseCode.TRY_AGAIN_LATER)
            return ws
        sid = next(self._ids)
        self.sessions[sid] = None
        try:
            await self._run(ws, sid)
        except (ProtocolError, VoxanonError) as exc:
            self.log(f"session {sid} ended: {exc}")
            await self._fail(ws, str(exc), WSCloseCode.UNSUPPORTED_DATA)
        finally:
            del self.sessions[sid]
        return ws

    async def _run(self, ws: web.WebSocketResponse, sid: int) -> None:
        session, fmt = None, "f32"
        async for msg in ws:
            if msg.type == WSMsgType.TEXT:
                request = _control(msg.data)
                if request.get("type") == "hello" and session is None:
                    session, fmt = self._open(request, sid)
                    await ws.send_json({"type": "ready", "session": sid, "method": session.method,
                                        "sample_rate": session.sample_rate, "latency_ms": session.latency_ms,
                                        "max_frame_samples": self.max_frame_samples(session.sample_rate)})
                elif request.get("type") == "end" and session is not None:
                    out = session.flush()
                    if out.size:
                        await ws.send_bytes(pcm.encode(out, fmt))
                    await ws.send_json({"type": "done", **session.summary()})
                    self.log(f"session {sid} done: {json.dumps(session.summary())}")
                    await ws.close()
                    return
                else:
                    expected = "a hello" if session is None else "audio or an end"
                    raise ProtocolError(f"unexpected control frame {msg.data[:80]!r}; expected {expected}")
            elif msg.type == WSMsgType.BINARY:
                if session is None:
                    raise ProtocolError("audio before the hello; send {\"type\": \"hello\", ...} first")
                chunk = pcm.decode(msg.data, fmt)
                if chunk.size > self.max_frame_samples(session.sample_rate):
                    raise ProtocolError(f"a frame of {chunk.size} samples is over the limit of "
                                        f"{self.max_frame_samples(session.sample_rate)}; send shorter frames")
                out = session.process(chunk)
                if out.size:
                    await ws.send_bytes(pcm.encode(out, fmt))
            elif msg.type == WSMsgType.ERROR:
                raise ProtocolError(f"transport error: {ws.exception()}")
        self.log(f"session {sid}: the client left before the end")

    def _open(self, hello: dict, sid: int) -> tuple[TimedSession, str]:
        rate, fmt, key = hello.get("sample_rate"), hello.get("format", "f32"), hello.get("key", f"live-{sid}")
        if not isinstance(rate, int) or isinstance(rate, bool) or rate <= 0:
            raise ProtocolError(f"hello: sample_rate must be a positive integer, got {rate!r}")
        if fmt not in pcm.FORMATS:
            raise ProtocolError(f"hello: format must be one of {', '.join(pcm.FORMATS)}, got {fmt!r}")
        if not isinstance(key, str) or not 0 < len(key) <= 200:
            raise ProtocolError("hello: key must be a string of 1 to 200 characters")
        session = TimedSession.open(self.anonymizer, rate, self.seed, key)
        self.sessions[sid] = session
        self.log(f"session {sid} open: {rate} Hz {fmt}, latency {session.latency_ms:.1f} ms")
        return session, fmt

    @staticmethod
    async def _fail(ws: web.WebSocketResponse, message: str, code: int) -> None:
        if not ws.closed:
            await ws.send_json({"type": "error", "message": message})
            await ws.close(code=code, message=message.encode()[:120].decode(errors="ignore").encode())


def _control(text: str) -> dict:
    """A JSON control frame as a dict; ProtocolError for anything else."""
    if len(text) > MAX_TEXT_BYTES:
        raise ProtocolError(f"a control frame of {len(text)} characters; at most {MAX_TEXT_BYTES}")
    try:
        value = json.loads(text)
    except ValueError:
        raise ProtocolError(f"a text frame that is not JSON: {text[:80]!r}") from None
    if not isinstance(value, dict):
        raise ProtocolError(f"a control frame must be a JSON object, got {text[:80]!r}")
    return value


def serve(server: LiveServer, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Run the server until interrupted."""
    server.log(f"{server.anonymizer.name} on http://{host}:{port}/ (at most {server.max_sessions} sessions)")
    web.run_app(server.app(), host=host, port=port, print=None, handle_signals=True)
