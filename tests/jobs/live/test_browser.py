"""The live page end to end: headless Chromium, a WAV as its microphone, the server anonymizing it."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
import soundfile as sf
from aiohttp.test_utils import TestServer

from tests.helpers.audio import LIBRIVOX
from tests.helpers.chromium import CHROMIUM, Chromium
from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.mcadams import McAdams
from voxanon.audio.io import load_audio, resample
from voxanon.dsp.mcadams import mcadams
from voxanon.jobs.live.server import LiveServer

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs the chromium browser (tools/setup.sh installs it)")

SR = 16000
SEED = 3


async def session_in_browser(url: str, microphone, profile) -> dict:
    async with Chromium(url, microphone, profile) as browser:
        await browser.wait_for("document.readyState === 'complete' && window.voxanonLive !== undefined")
        await browser.evaluate("voxanonLive.start({keep: true})")
        await browser.wait_for(f"voxanonLive.error || voxanonLive.sent >= {2 * SR}")
        await browser.evaluate("voxanonLive.stop()")
        await browser.wait_for("voxanonLive.error || voxanonLive.done")
        return await browser.evaluate(
            "({error: voxanonLive.error, ready: voxanonLive.ready, done: voxanonLive.done, sent: voxanonLive.sent,"
            " received: voxanonLive.received, delays: voxanonLive.delays,"
            " input: voxanonLive.input.flatMap(a => Array.from(a)),"
            " output: voxanonLive.output.flatMap(a => Array.from(a))})")


def test_the_page_anonymizes_the_microphone_and_reports_its_latency(tmp_path):
    wav, sr = load_audio(sorted(LIBRIVOX.glob("*.flac"))[1])
    microphone = tmp_path / "microphone.wav"
    sf.write(microphone, resample(wav, sr, SR)[: 3 * SR], SR, subtype="PCM_16")
    server = LiveServer(McAdams(), seed=SEED, quiet=True)

    async def main():
        async with TestServer(server.app(), host="127.0.0.1") as ts:
            return await session_in_browser(str(ts.make_url("/")), microphone, tmp_path / "profile")

    page = asyncio.run(asyncio.wait_for(main(), 90))
    assert page["error"] is None
    assert page["ready"]["sample_rate"] == SR and page["ready"]["latency_ms"] == pytest.approx(1000 * 319 / SR)
    sent, returned = np.array(page["input"], np.float32), np.array(page["output"], np.float32)
    assert page["sent"] == page["received"] == page["done"]["samples_out"] == sent.size == returned.size >= 2 * SR
    assert np.sqrt(np.mean(sent**2)) > 0.01  # the recording reached the page as its microphone
    alpha = McAdams().draw_alpha(utterance_rng(SEED, f"live-{page['ready']['session']}"))
    np.testing.assert_array_equal(returned, mcadams(sent, SR, alpha).astype(np.float32))
    delays = np.array(page["delays"])
    assert delays.size > 50 and np.isfinite(delays).all()
    # a reply's first sample waited for the look-ahead (at least a window less a hop: 10 ms) and the round trip
    assert 10.0 <= np.median(delays) < 1000.0
