"""The live server over real WebSockets: sessions at once, malformed frames, vanished clients, limits."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import numpy as np
import pytest
from aiohttp.test_utils import TestServer

from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.mcadams import McAdams
from voxanon.audio.synthetic import speech_like
from voxanon.dsp.mcadams import mcadams
from voxanon.jobs.live.server import LiveServer

SR = 16000
SEED = 11


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


async def serving(server: LiveServer):
    ts = TestServer(server.app(), host="127.0.0.1")
    await ts.start_server()
    return ts


async def hello(ws, **fields) -> dict:
    await ws.send_json({"type": "hello", "sample_rate": SR, "format": "f32", **fields})
    return json.loads((await ws.receive()).data)


async def stream_through(ws, wav: np.ndarray, chunk: int) -> tuple[np.ndarray, dict]:
    """Send ``wav`` in chunks, end, read until the server closes; the output and the done message."""
    out, done = [], None
    for start in range(0, wav.size, chunk):
        await ws.send_bytes(wav[start : start + chunk].astype("<f4").tobytes())
    await ws.send_json({"type": "end"})
    async for msg in ws:
        if msg.type == aiohttp.WSMsgType.BINARY:
            out.append(np.frombuffer(msg.data, dtype="<f4"))
        else:
            done = json.loads(msg.data)
    assert done is not None and done["type"] == "done", done
    return np.concatenate(out), done


def offline(wav: np.ndarray, key: str, dtype: type = np.float32) -> np.ndarray:
    """The offline McAdams transform (before peak normalisation) with the pseudo-speaker of ``key``."""
    alpha = McAdams().draw_alpha(utterance_rng(SEED, key))
    return mcadams(wav, SR, alpha).astype(dtype)


@pytest.fixture(scope="module")
def voices() -> list[np.ndarray]:
    return [speech_like(1.0, SR, f0=f0, seed=i) for i, f0 in enumerate((110.0, 210.0, 150.0))]


def test_sessions_at_once_each_get_their_own_offline_pseudo_speaker(voices):
    async def main():
        ts = await serving(LiveServer(McAdams(), seed=SEED, quiet=True))
        async with aiohttp.ClientSession() as http:
            sockets = [await http.ws_connect(ts.make_url("/ws")) for _ in voices]
            readies = [await hello(ws) for ws in sockets]
            results = await asyncio.gather(*(stream_through(ws, v, c) for ws, v, c in zip(sockets, voices,
                                                                                         (320, 160, 1000))))
            async with http.get(ts.make_url("/status")) as reply:
                status = await reply.json()
        await ts.close()
        return readies, results, status

    readies, results, status = run(main())
    assert [r["type"] for r in readies] == ["ready"] * 3
    assert readies[0]["latency_ms"] == pytest.approx(1000 * 319 / SR)
    for ready, voice, (out, done) in zip(readies, voices, results):
        np.testing.assert_array_equal(out, offline(voice, f"live-{ready['session']}"))
        assert done["samples_in"] == done["samples_out"] == voice.size
        assert done["compute_ms"]["p50"] > 0
    assert status["sessions"] == 0  # every slot freed


def test_the_hello_key_names_the_pseudo_speaker(voices):
    async def main():
        ts = await serving(LiveServer(McAdams(), seed=SEED, quiet=True))
        async with aiohttp.ClientSession() as http, http.ws_connect(ts.make_url("/ws")) as ws:
            await hello(ws, key="caller-42")
            out, _ = await stream_through(ws, voices[0], 320)
        await ts.close()
        return out

    np.testing.assert_array_equal(run(main()), offline(voices[0], "caller-42"))


@pytest.mark.parametrize("first, then, message", [
    (None, b"\x00\x00\x80\x3f", "audio before the hello"),
    (None, "not json", "not JSON"),
    ({"type": "hello", "sample_rate": 44100}, None, "streams at 16000 Hz, got 44100 Hz"),
    ({"type": "hello", "sample_rate": "16k"}, None, "sample_rate must be a positive integer"),
    ({"type": "hello", "sample_rate": SR, "format": "u8"}, None, "format must be one of f32, s16"),
    ({"type": "hello", "sample_rate": SR}, b"\x00\x00\x80", "whole 4-byte samples"),
    ({"type": "hello", "sample_rate": SR}, np.array([np.nan], "<f4").tobytes(), "NaN or infinite"),
    ({"type": "hello", "sample_rate": SR}, np.zeros(SR + 1, "<f4").tobytes(), "over the limit of 16000"),
    ({"type": "hello", "sample_rate": SR}, json.dumps({"type": "hello", "sample_rate": SR}), "expected audio or"),
])
def test_a_malformed_frame_ends_that_session_with_one_message_and_the_others_go_on(voices, first, then, message):
    async def main():
        ts = await serving(LiveServer(McAdams(), seed=SEED, quiet=True))
        async with aiohttp.ClientSession() as http:
            good = await http.ws_connect(ts.make_url("/ws"))
            ready = await hello(good)
            bad = await http.ws_connect(ts.make_url("/ws"))
            replies = []
            if first is not None:
                await bad.send_json(first)
            if then is not None:
                await (bad.send_bytes(then) if isinstance(then, bytes) else bad.send_str(then))
            async for msg in bad:
                replies.append(json.loads(msg.data))
            out, _ = await stream_through(good, voices[0], 320)
        await ts.close()
        return ready, replies, out

    ready, replies, out = run(main())
    errors = [r for r in replies if r["type"] == "error"]
    assert len(errors) == 1 and message in errors[0]["message"]
    np.testing.assert_array_equal(out, offline(voices[0], f"live-{ready['session']}"))


def test_sessions_past_the_limit_are_refused_and_a_vanished_client_frees_its_slot(voices):
    async def main():
        server = LiveServer(McAdams(), seed=SEED, max_sessions=2, quiet=True)
        ts = await serving(server)
        async with aiohttp.ClientSession() as http:
            first = await http.ws_connect(ts.make_url("/ws"))
            await hello(first)
            await first.send_bytes(voices[0][:3200].astype("<f4").tobytes())
            second = await http.ws_connect(ts.make_url("/ws"))
            await hello(second)
            third = await http.ws_connect(ts.make_url("/ws"))
            refused = json.loads((await third.receive()).data)
            first._response.connection.transport.abort()  # the client vanishes without a close frame
            for _ in range(100):
                if len(server.sessions) < 2:
                    break
                await asyncio.sleep(0.05)
            fourth = await http.ws_connect(ts.make_url("/ws"))
            ready = await hello(fourth)
            out, _ = await stream_through(fourth, voices[1], 320)
            await second.close()
        await ts.close()
        return refused, ready, out

    refused, ready, out = run(main())
    assert refused["type"] == "error" and "server full: 2 sessions" in refused["message"]
    assert ready["type"] == "ready"
    np.testing.assert_array_equal(out, offline(voices[1], f"live-{ready['session']}"))


def test_s16_frames_come_back_as_s16(voices):
    async def main():
        ts = await serving(LiveServer(McAdams(), seed=SEED, quiet=True))
        async with aiohttp.ClientSession() as http, http.ws_connect(ts.make_url("/ws")) as ws:
            ready = await hello(ws, format="s16")
            pcm = np.round(voices[2] * 32767).astype("<i2")
            await ws.send_bytes(pcm.tobytes())
            await ws.send_json({"type": "end"})
            frames = [msg.data async for msg in ws if msg.type == aiohttp.WSMsgType.BINARY]
        await ts.close()
        return ready, pcm, np.frombuffer(b"".join(frames), dtype="<i2")

    ready, pcm, out = run(main())
    expected = offline(pcm.astype(np.float32) / np.float32(32768), f"live-{ready['session']}", np.float64)
    assert out.size == pcm.size
    np.testing.assert_array_equal(out, np.round(np.clip(expected, -1, 1) * 32767).astype(np.int16))
