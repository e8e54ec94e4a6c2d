"""Headless Chromium driven over the DevTools protocol (aiohttp's WebSocket client), with a WAV as the microphone."""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
import subprocess
from pathlib import Path

import aiohttp

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Chromium:
    """``async with Chromium(url, wav, tmp) as browser: await browser.evaluate("...")``."""

    def __init__(self, url: str, microphone_wav: Path, profile: Path) -> None:
        self.url, self.wav, self.profile = url, microphone_wav, profile
        self._ids = itertools.count(1)

    async def __aenter__(self) -> Chromium:
        self.process = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--use-fake-device-for-media-stream",
             "--use-fake-ui-for-media-stream", f"--use-file-for-fake-audio-capture={self.wav}",
             "--autoplay-policy=no-user-gesture-required", "--disable-background-networking",
             "--disable-component-update", "--no-first-run", "--mute-audio", f"--user-data-dir={self.profile}",
             "--remote-debugging-port=0", self.url],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.http = aiohttp.ClientSession()
        try:
            self.cdp = await self.http.ws_connect(await self._page_socket(), max_msg_size=0)
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        return self

    async def _page_socket(self) -> str:
        """The DevTools WebSocket of the page (Chromium writes its port to DevToolsActivePort)."""
        port_file = self.profile / "DevToolsActivePort"
        for _ in range(300):
            if self.process.poll() is not None:
                raise RuntimeError(f"chromium exited with status {self.process.returncode}")
            if port_file.exists() and port_file.read_text().strip():
                port = port_file.read_text().split()[0]
                try:
                    async with self.http.get(f"http://127.0.0.1:{port}/json/list") as reply:
                        pages = [t for t in await reply.json() if t["type"] == "page" and t["url"] == self.url]
                    if pages:
                        return pages[0]["webSocketDebuggerUrl"]
                except aiohttp.ClientError:
                    pass
            await asyncio.sleep(0.1)
        raise RuntimeError("chromium did not open the page within 30 s")

    async def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (promises awaited)."""
        ident = next(self._ids)
        await self.cdp.send_json({"id": ident, "method": "Runtime.evaluate", "params": {
            "expression": expression, "awaitPromise": True, "returnByValue": True}})
        async for msg in self.cdp:
            reply = json.loads(msg.data)
            if reply.get("id") == ident:
                result = reply["result"]
                if "exceptionDetails" in result:
                    raise RuntimeError(f"page: {result['exceptionDetails']}")
                return result["result"].get("value")
        raise RuntimeError("the DevTools connection closed")

    async def wait_for(self, expression: str, timeout: float = 20.0):
        """Poll ``expression`` until it is truthy; its value."""
        for _ in range(int(timeout / 0.1)):
            value = await self.evaluate(expression)
            if value:
                return value
            await asyncio.sleep(0.1)
        raise TimeoutError(f"{expression} still false after {timeout} s")

    async def __aexit__(self, *exc) -> None:
        if getattr(self, "cdp", None) is not None:
            await self.cdp.close()
        await self.http.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
