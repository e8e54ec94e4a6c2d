"""Live anonymization: algorithmic latency, compute per chunk on one core, end to end through the WebSocket,
RTF, and what the streamed output keeps of the offline one (words, and the speaker-verification input).

For every streaming method (those whose class :meth:`~voxanon.anonymizers.base.Anonymizer.streams`):

- **algorithmic latency**: the session's declared ``latency_ms`` (look-ahead, samples arriving one by one);
- **compute per chunk**: each ``process`` call's wall time over the corpus in ``--chunk-ms`` chunks, in a
  process pinned to one CPU with one BLAS thread (p50 / p99), and the real-time factor (compute over audio);
- **end to end through the WebSocket**: ``voxanon serve`` in a subprocess pinned to another CPU; this
  process plays ``--live-seconds`` of the corpus to it in real time in ``--chunk-ms`` f32 frames and, for
  every reply, takes the time since its first sample was captured (p50 / p95 / p99 / max): chunk buffering,
  look-ahead, compute and transport together, i.e. the playback delay a listener needs;
- **streamed against offline**: each clip of the corpus streamed (seed 0, key = utterance id) against
  ``voxanon anonymize``'s output for the same seed and key. Reported: the samples where the streamed output,
  scaled by its own peak normalisation gain, differs from the offline output; the largest difference of the
  two after the VPC evaluation front end (:func:`~voxanon.evaluation.embeddings.vpc_normalize`, which every
  speaker-verification attacker here applies first); and the WER of Whisper tiny.en on the original, the
  offline and the streamed output.

The corpus is the real recorded English of Debian's packages (:mod:`voxanon.data.debian_clips`): the
pocketsphinx LibriVox and card clips and ``--prompts`` of Asterisk's sentence prompts (8 kHz, resampled).

Usage::

    python experiments/bench_streaming.py [--chunk-ms 20] [--live-seconds 20] [--prompts 30] [--out results.json]
"""

# ruff: noqa: E402  (thread counts are set before numpy loads)
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import time

import aiohttp
import numpy as np

from voxanon.anonymizers import registry
from voxanon.anonymizers.base import utterance_rng
from voxanon.audio.io import load_audio, resample
from voxanon.data.debian_clips import WIDEBAND, find_clips, prompt_clips
from voxanon.dsp.mcadams import normalization_gain
from voxanon.evaluation.embeddings import vpc_normalize
from voxanon.jobs.live.session import percentiles
from voxanon.metrics.wer import wer

SR = 16000
SEED = 0


def corpus(prompts: int) -> list[tuple[str, np.ndarray, str]]:
    """(utterance id, 16 kHz float32 audio, transcript) of the wideband clips and the first ``prompts`` prompts."""
    clips = [c for c in find_clips() if c.speaker in WIDEBAND] + prompt_clips()[:prompts]
    found = []
    for clip in clips:
        wav, sr = load_audio(clip.path)
        found.append((clip.utt, resample(wav, sr, SR), clip.text))
    return found


def streamed(session, wav: np.ndarray, chunk: int) -> tuple[np.ndarray, list[float]]:
    """The session's output for ``wav`` in chunks, and each chunk's compute time in ms."""
    out, times = [], []
    for start in range(0, wav.size, chunk):
        t = time.perf_counter()
        out.append(session.process(wav[start : start + chunk]))
        times.append(1000.0 * (time.perf_counter() - t))
    out.append(session.flush())
    return np.concatenate(out), times


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def play_live(url: str, wav: np.ndarray, chunk: int) -> list[float]:
    """Send ``wav`` to the server in real time; per reply, ms since its first sample was captured."""
    delays: list[float] = []
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        await ws.send_json({"type": "hello", "sample_rate": SR, "format": "f32"})
        ready = json.loads((await ws.receive()).data)
        assert ready["type"] == "ready", ready
        start = time.perf_counter()

        async def receive() -> None:
            got = 0
            async for msg in ws:
                if msg.type == aiohttp.WSMsgType.BINARY:
                    delays.append(1000.0 * (time.perf_counter() - (start + (got + 1) / SR)))
                    got += len(msg.data) // 4
                elif json.loads(msg.data)["type"] != "done":
                    raise RuntimeError(msg.data)

        reader = asyncio.create_task(receive())
        for pos in range(0, wav.size, chunk):
            piece = wav[pos : pos + chunk]
            await asyncio.sleep(max(0.0, start + (pos + piece.size) / SR - time.perf_counter()))
            await ws.send_bytes(piece.astype("<f4").tobytes())
        await ws.send_json({"type": "end"})
        await reader
    return delays


def end_to_end(method: str, wav: np.ndarray, chunk: int, cpu: int) -> list[float]:
    """``voxanon serve --method method`` pinned to ``cpu``; the delays of :func:`play_live`."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "voxanon", "serve", "--method", method, "--quiet",
                               "--port", str(port)], preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    try:
        for _ in range(600):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        return asyncio.run(play_live(f"ws://127.0.0.1:{port}/ws", wav, chunk))
    finally:
        server.terminate()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunk-ms", type=float, default=20.0)
    parser.add_argument("--live-seconds", type=float, default=20.0)
    parser.add_argument("--prompts", type=int, default=30)
    parser.add_argument("--out", help="write the results as JSON")
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[0]})
    chunk = round(args.chunk_ms * SR / 1000)
    clips = corpus(args.prompts)
    audio_seconds = sum(w.size for _, w, _ in clips) / SR
    print(f"corpus: {len(clips)} clips, {audio_seconds:.1f} s; chunks of {args.chunk_ms:g} ms", file=sys.stderr)

    from voxanon.models.asr import load_asr

    asr = load_asr("whisper-tiny", threads=1)
    texts = {utt: text for utt, _, text in clips}
    original_words = wer(texts, dict(zip(texts, asr.transcribe([w for _, w, _ in clips], SR)))).wer
    results = []
    for name, cls in registry.available().items():
        if not cls.streams():
            continue
        method = cls()
        times, outputs, offline_outputs, differing, front_end = [], [], [], 0, 0.0
        latency = None
        for utt, wav, _ in clips:
            session = method.open_stream(SR, SEED, utt)
            latency = session.latency_ms
            out, chunk_times = streamed(session, wav, chunk)
            times += chunk_times
            offline, _ = method.process(wav, SR, utterance_rng(SEED, utt))
            out32 = out.astype(np.float32)
            differing += int(np.count_nonzero(out32 * np.float32(normalization_gain(out32)) != offline))
            front_end = max(front_end, float(np.abs(vpc_normalize(out32) - vpc_normalize(offline)).max()))
            outputs.append(out32)
            offline_outputs.append(offline)
        live = np.concatenate([w for _, w, _ in clips])[: round(args.live_seconds * SR)]
        delays = end_to_end(name, live, chunk, cpus[-1])
        row = {
            "method": name, "chunk_ms": args.chunk_ms, "algorithmic_latency_ms": round(latency, 2),
            "compute_ms": {k: round(v, 3) for k, v in percentiles(times, (50, 99)).items()},
            "rtf": round(sum(times) / 1000.0 / audio_seconds, 4),
            "end_to_end_ms": {**{k: round(v, 1) for k, v in percentiles(delays).items()},
                              "max": round(max(delays), 1)},
            "live_seconds": round(live.size / SR, 2),
            "samples_differing_after_gain": differing, "samples": int(sum(o.size for o in outputs)),
            "max_difference_after_vpc_normalize": front_end,
            "wer_original": round(original_words, 2),
            "wer_offline": round(wer(texts, dict(zip(texts, asr.transcribe(offline_outputs, SR)))).wer, 2),
            "wer_streamed": round(wer(texts, dict(zip(texts, asr.transcribe(outputs, SR)))).wer, 2),
        }
        results.append(row)
        print(json.dumps(row), file=sys.stderr)
    print("| method | chunk ms | algorithmic latency ms | compute/chunk p50 / p99 ms (one core) | RTF | "
          "end to end p50 / p95 / max ms (WebSocket) | WER % original / offline / streamed |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        c, e = r["compute_ms"], r["end_to_end_ms"]
        print(f"| {r['method']} | {r['chunk_ms']:g} | {r['algorithmic_latency_ms']} | {c['p50']} / {c['p99']} | "
              f"{r['rtf']} | {e['p50']} / {e['p95']} / {e['max']} | {r['wer_original']} / {r['wer_offline']} / "
              f"{r['wer_streamed']} |")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"corpus_clips": len(clips), "corpus_seconds": round(audio_seconds, 2), "results": results},
                      fh, indent=2)


if __name__ == "__main__":
    main()
