"""Speed and memory of every anonymizer and evaluation model, and how the corpus runner scales.

Per target (a registered anonymizer, ``encoder:ge2e`` or ``asr:whisper-tiny``)
and device, a fresh Python process builds the target once, warms it up on the
shortest input, then times ``repeats`` calls on speech-like inputs of each
duration (:func:`voxanon.audio.synthetic.speech_like`, 16 kHz, or the method's
own rate; or a given recording repeated to each duration, for methods that
need words: the cascade recognises nothing in speech-like noise) in increasing
order, and reports the median real-time factor (wall seconds per second of
audio). Durations whose estimated time would exceed the target's time budget
are skipped and listed.

The process runs single-threaded (``OMP_NUM_THREADS=1``, one torch thread), as
a runner worker does, so an RTF is the cost of one worker on one core.

Memory is the peak resident set size of the process while it works on each
duration, and that peak's growth over the RSS just before. RSS covers native
allocations (torch, WORLD, CTranslate2) that ``tracemalloc`` cannot see, and a
fresh process per target keeps one target's memory out of another's. The
kernel's high-water mark is reset before each duration (Linux
``/proc/self/clear_refs``), since otherwise a peak while importing or loading
would hide the peak of the work; where that is not possible the lifetime peak
(``ru_maxrss``) is reported. On CUDA the peak of
``torch.cuda.max_memory_allocated`` is reported as well. The growth includes
the output array (4 bytes per sample); the input (also float32) is resident
before. Anonymizers run through :meth:`~voxanon.anonymizers.base.Anonymizer.process`,
as in the corpus runner, so methods that declare chunking are measured chunked.

The memory run (``--memory``) times one call at each of
:data:`MEMORY_DURATIONS` without a time budget.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from voxanon.errors import ConfigError
from voxanon.table import format_table as text_table

DEFAULT_DURATIONS = (5.0, 10.0, 20.0, 30.0, 60.0)
#: durations of the memory run (``voxanon perf --memory``): 10 s, 60 s, 10 min, 1 h
MEMORY_DURATIONS = (10.0, 60.0, 600.0, 3600.0)
#: longest warm-up input (a memory run starting at 1 h must not warm up on an hour)
WARM_UP_SECONDS = 5.0
MODEL_TARGETS = ("encoder:ge2e", "asr:whisper-tiny")
SINGLE_THREAD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def default_targets() -> list[str]:
    """Every registered anonymizer, then the evaluation models."""
    from voxanon.anonymizers.registry import available

    return [*available(), *MODEL_TARGETS]


def hardware() -> dict[str, Any]:
    """CPU model, cores, memory, GPUs and library versions of this machine."""
    info: dict[str, Any] = {"platform": platform.platform(), "python": platform.python_version(),
                            "numpy": np.__version__, "cpu_model": platform.processor() or "unknown",
                            "logical_cpus": os.cpu_count(), "usable_cpus": len(os.sched_getaffinity(0))}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            info["cpu_model"] = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
        with open("/proc/meminfo", encoding="utf-8") as fh:
            info["memory_gb"] = round(int(fh.readline().split()[1]) / 2**20, 1)
    except (OSError, StopIteration):
        pass
    try:
        import torch
    except ImportError:
        return info
    info["torch"] = torch.__version__
    info["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] \
        if torch.cuda.is_available() else []
    return info


def _rss_mb(field: str) -> float | None:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of this process from /proc, in MiB (None elsewhere)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            return next(int(line.split()[1]) / 1024 for line in fh if line.startswith(field + ":"))
    except (OSError, StopIteration):
        return None


def _reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark of this process to its current RSS; False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _peak_rss_mb(since_reset: bool) -> float:
    """Peak RSS since the last reset, or over the process's lifetime (``ru_maxrss``, KiB on Linux)."""
    peak = _rss_mb("VmHWM") if since_reset else None
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _build(target: str, device: str) -> tuple[Callable[[np.ndarray, np.random.Generator], Any], int, str]:
    """A call ``f(wav, rng)`` running ``target`` once, its input rate and its kind."""
    kind, _, spec = target.partition(":")
    if kind == "encoder":
        from voxanon.models.speaker import load_encoder

        encoder = load_encoder(spec, device=device)
        return (lambda wav, rng: encoder.embed([wav], 16000)), 16000, "encoder"
    if kind == "asr":
        from voxanon.models.asr import load_asr

        asr = load_asr(spec, device=device, threads=1)
        return (lambda wav, rng: asr.transcribe([wav], 16000)), 16000, "asr"
    from voxanon.anonymizers.registry import build

    anonymizer = build(target)
    if device != "cpu":
        raise ConfigError(f"anonymizer {target!r} has no device setting; it runs on the CPU only")
    sr = anonymizer.sample_rate or 16000
    return (lambda wav, rng: anonymizer.process(wav, sr, rng)), sr, "anonymizer"


def input_signal(seconds: float, sr: int, seed: int, speech: str | None = None) -> np.ndarray:
    """``seconds`` of input at ``sr``: speech-like noise, or the recording ``speech`` repeated."""
    from voxanon.audio.io import load_audio, resample
    from voxanon.audio.synthetic import speech_like

    if speech is None:
        return speech_like(seconds, sr, seed=seed)
    wav, wav_sr = load_audio(speech)
    return np.resize(resample(wav, wav_sr, sr), int(round(seconds * sr)))


def cpu_rtf(fn: Callable[[], object], seconds: float, repeats: int) -> float:
    """Median process CPU seconds per audio second over ``repeats`` calls of ``fn`` (after one warm-up call).

    For the studies that time one model call on ``seconds`` of audio in their own process (experiments/);
    :func:`measure` times wall seconds in a fresh process instead.
    """
    fn()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times) / seconds


def measure(target: str, durations: Sequence[float], repeats: int, device: str, budget_s: float,
            speech: str | None = None) -> dict[str, Any]:
    """Time ``target`` in this process (see the module notes); call it in a fresh process."""
    from voxanon.anonymizers.base import utterance_rng

    cuda = device.startswith("cuda")
    rss_start = _rss_mb("VmRSS")
    start = time.perf_counter()
    call, sr, kind = _build(target, device)
    torch = sys.modules.get("torch")  # imported by the target if it uses torch (always on CUDA)
    if torch is not None:
        torch.set_num_threads(1)

    def timed(wav: np.ndarray, key: str) -> float:
        t0 = time.perf_counter()
        call(wav, utterance_rng(0, key))
        if cuda:
            torch.cuda.synchronize()
        return time.perf_counter() - t0

    durations = sorted(durations)
    timed(input_signal(min(durations[0], WARM_UP_SECONDS), sr, 99, speech), "warm-up")  # loads lazy models
    load_s = time.perf_counter() - start
    rss_loaded = _rss_mb("VmRSS")
    rows, skipped, spent, rtf = [], [], 0.0, None
    for seconds in durations:
        if rtf is not None and spent + rtf * seconds * repeats > budget_s:
            skipped.append(seconds)
            continue
        wav = input_signal(seconds, sr, int(seconds), speech)
        rss_before = _rss_mb("VmRSS") or 0.0
        since_reset = _reset_peak_rss()
        times = [timed(wav, f"perf-{r}") for r in range(repeats)]
        peak = _peak_rss_mb(since_reset)
        spent += sum(times)
        rtf = statistics.median(times) / seconds
        row = {"seconds": seconds, "rtf_median": rtf, "rtf_min": min(times) / seconds, "times_s": times,
               "peak_rss_mb": round(peak, 1), "rss_growth_mb": round(peak - rss_before, 1),
               "peak_is_lifetime": not since_reset}
        if cuda:
            row["gpu_peak_mb"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
        rows.append(row)
    return {"target": target, "kind": kind, "device": device, "sample_rate": sr, "load_and_warmup_s": load_s,
            "rss_at_start_mb": rss_start, "rss_loaded_mb": rss_loaded, "rows": rows,
            "skipped_durations": skipped, "error": None}


def measure_in_subprocess(target: str, durations: Sequence[float], repeats: int, device: str,
                          budget_s: float, speech: str | None = None) -> dict[str, Any]:
    """:func:`measure` in a fresh single-threaded process; failures become an ``error`` entry."""
    with tempfile.TemporaryDirectory(prefix="voxanon-perf-") as tmp:
        out = Path(tmp) / "result.json"
        spec = {"target": target, "durations": list(durations), "repeats": repeats, "device": device,
                "budget_s": budget_s, "out": str(out), "parent": os.getpid(), "speech": speech}
        # loading a model may take a while; a hung child must not stall the report (no limit without a budget)
        timeout = None if budget_s == float("inf") else 3 * budget_s + 300
        try:
            proc = subprocess.run([sys.executable, "-m", "voxanon.jobs.perf", json.dumps(spec)],
                                  env={**os.environ, **SINGLE_THREAD_ENV}, capture_output=True, text=True,
                                  timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return _failed(target, device, f"timed out after {timeout:.0f} s")
        if proc.returncode != 0 or not out.is_file():
            lines = (proc.stderr or proc.stdout).strip().splitlines() or [f"exit status {proc.returncode}"]
            return _failed(target, device, lines[-1])
        return json.loads(out.read_text(encoding="utf-8"))


def _failed(target: str, device: str, error: str) -> dict[str, Any]:
    return {"target": target, "device": device, "rows": [], "skipped_durations": [], "error": error}


def scaling(method: str, utterances: int, seconds: float, *, jobs: Sequence[int] = (1, 2),
            ray_workers: int = 2) -> dict[str, Any]:
    """Throughput of the corpus runner on a folder of speech-like utterances, per backend and worker count.

    Ratios are throughputs over the 1-job local run's. Ray's cluster start is
    timed apart; its run time includes starting the actors (0 ``ray_workers``: skipped).
    """
    from voxanon.anonymizers.registry import build
    from voxanon.audio.io import write_wav
    from voxanon.audio.synthetic import speech_like
    from voxanon.jobs.runner.anonymize import anonymize_corpus
    from voxanon.jobs.runner.runstate import FAILURES_FILE

    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="voxanon-scaling-") as tmp:
        corpus = Path(tmp) / "corpus"
        for i in range(utterances):
            write_wav(corpus / f"u{i:04d}.wav", speech_like(seconds, 16000, seed=i), 16000)

        def run(backend_name: str, n: int, backend: Any = None) -> None:
            summary = anonymize_corpus(corpus, Path(tmp) / f"{backend_name}-{n}", build(method), jobs=n,
                                       backend=backend, quiet=True)
            failures = summary.output / FAILURES_FILE
            runs.append({"backend": backend_name, "workers": n, "wall_s": summary.wall_seconds,
                         "audio_s": summary.audio_seconds, "failed": summary.failed,
                         "first_failure": failures.read_text().splitlines()[1] if summary.failed else None,
                         "throughput_x_real_time": summary.audio_seconds / summary.wall_seconds})

        for n in jobs:
            run("local", n)
        note = None
        if ray_workers:
            note = _ray_scaling(run, ray_workers)
    base = next((r["throughput_x_real_time"] for r in runs if r["backend"] == "local" and r["workers"] == 1), None)
    for r in runs:
        r["ratio_vs_1_job"] = r["throughput_x_real_time"] / base if base else None
    return {"method": method, "utterances": utterances, "seconds_each": seconds, "runs": runs, "note": note}


def _ray_scaling(run: Callable[..., None], workers: int) -> str | None:
    """Add the Ray run to ``run``'s list on a local Ray instance; a note when Ray is missing."""
    import logging

    from voxanon.jobs.runner.ray_backend import RayBackend

    try:
        import ray
    except ImportError:
        return 'Ray backend not measured: Ray is not installed (pip install "voxanon[ray]")'
    start = time.perf_counter()
    ray.init(num_cpus=workers, include_dashboard=False, logging_level=logging.WARNING)
    try:
        started = time.perf_counter() - start
        run("ray", workers, RayBackend())
    finally:
        ray.shutdown()
    return f"local Ray instance started in {started:.1f} s (not included in the Ray run's wall time)"


def run_perf(targets: Sequence[str], durations: Sequence[float], repeats: int, *, devices: Sequence[str] | None = None,
             budget_s: float = 120.0, scaling_args: dict[str, Any] | None = None, speech: str | None = None,
             log: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Measure ``targets`` on each device (default: CPU, plus CUDA for models when present) and the scaling.

    Returns the JSON-ready report: hardware, settings, one result per (target, device), scaling.
    """
    if repeats < 1 or not durations or min(durations) <= 0:
        raise ConfigError("need repeats >= 1 and positive durations")
    info = hardware()
    devices = list(devices) if devices else ["cpu", *(["cuda"] if info.get("gpus") else [])]
    results = []
    for target in targets:
        for device in devices:
            if device != "cpu" and ":" not in target:
                continue  # anonymizers have no device setting
            log(f"perf: {target} on {device}")
            results.append(measure_in_subprocess(target, durations, repeats, device, budget_s, speech))
    report: dict[str, Any] = {
        "hardware": info,
        "settings": {"durations_s": list(durations), "repeats": repeats, "devices": devices, "budget_s": budget_s,
                     "threads_per_process": 1,
                     "input": f"{speech}, repeated" if speech else "voxanon.audio.synthetic.speech_like"},
        "results": results,
    }
    if scaling_args is not None:
        log(f"perf: runner scaling with {scaling_args['method']}")
        report["scaling"] = scaling(**scaling_args)
    return report


def _target_table(results: list[dict[str, Any]], durations: list[float]) -> str:
    """Median RTF per target and duration, load time, peak RSS and its growth."""
    rows = []
    for r in (r for r in results if not r["error"]):
        rtf = {row["seconds"]: row["rtf_median"] for row in r["rows"]}
        rows.append([r["target"], r["device"], f"{r['load_and_warmup_s']:.2f}",
                     *(f"{rtf[d]:.4f}" if d in rtf else "-" for d in durations),
                     f"{max(row['peak_rss_mb'] for row in r['rows']):.0f}",
                     f"{max(row['rss_growth_mb'] for row in r['rows']):.0f}"])
    header = ["target", "device", "load s", *(f"{d:g} s" for d in durations), "peak RSS MB", "growth MB"]
    lines = [text_table(header, rows, align="ll" + "r" * (len(durations) + 3), sep=" ")]
    lines += [f"{r['target']} {r['device']} unavailable: {r['error']}" for r in results if r["error"]]
    return "\n".join(lines)


def _memory_table(results: list[dict[str, Any]], durations: list[float]) -> str:
    """Peak RSS (and its growth during the call) per target and input duration."""
    rows = []
    for r in (r for r in results if not r["error"]):
        mem = {row["seconds"]: f"{row['peak_rss_mb']:.0f} ({row['rss_growth_mb']:.0f})" for row in r["rows"]}
        rows.append([r["target"], r["device"], *(mem.get(d, "-") for d in durations)])
    return text_table(["target", "device", *(f"{d:g} s" for d in durations)], rows,
                      align="ll" + "r" * len(durations), sep=" ")


def format_table(report: dict[str, Any]) -> str:
    """Median RTF per target and duration, peak RSS, then the scaling runs."""
    hw = report["hardware"]
    durations = report["settings"]["durations_s"]
    gpus = ", ".join(hw.get("gpus") or []) or "none"
    lines = [(f"hardware: {hw['cpu_model']}, {hw['usable_cpus']} usable of {hw['logical_cpus']} CPUs, GPU: {gpus}; "
              f"{report['settings']['repeats']} repeats, 1 thread"),
             _target_table(report["results"], durations), "peak RSS MB (growth during the call) per duration",
             _memory_table(report["results"], durations)]
    scale = report.get("scaling")
    if scale:
        lines.append(f"runner scaling: {scale['method']}, {scale['utterances']} utterances "
                     f"x {scale['seconds_each']:g} s")
        for r in scale["runs"]:
            ratio = f"{r['ratio_vs_1_job']:.2f}" if r["ratio_vs_1_job"] is not None else "n/a"
            lines.append(f"  {r['backend']:<6} {r['workers']:>3} workers: {r['wall_s']:7.2f} s wall, "
                         f"{r['throughput_x_real_time']:7.1f}x real time, ratio {ratio}")
            if r["failed"]:
                lines.append(f"    {r['failed']} failed; first: {r['first_failure']}")
        if scale.get("note"):
            lines.append(f"  {scale['note']}")
    return "\n".join(lines)


if __name__ == "__main__":  # the fresh process of measure_in_subprocess
    from voxanon.lifeline import hold_lifeline

    _spec = json.loads(sys.argv[1])
    hold_lifeline(_spec["parent"], parent=True)  # an hour-long measurement must not outlive `voxanon perf`
    _result = measure(_spec["target"], _spec["durations"], _spec["repeats"], _spec["device"], _spec["budget_s"],
                      _spec["speech"])
    Path(_spec["out"]).write_text(json.dumps(_result), encoding="utf-8")
