"""Freed heap memory goes back to the system after each chunk and each utterance (see voxanon.heap)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.audio import make_data_dir
from tests.helpers.toys import ToyGain
from voxanon import heap
from voxanon.anonymizers import base
from voxanon.anonymizers.base import Chunking
from voxanon.jobs.runner import worker
from voxanon.jobs.runner.anonymize import anonymize_corpus

#: in a fresh process: free 16 MB (glibc raises its mmap threshold), then 60 x 4 MB from the heap, freed
#: between small blocks that stay; RSS in MB before and after release_free_memory
HOLES = """
import numpy as np
from voxanon.heap import release_free_memory
def rss(): return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) // 1024
big = np.ones(2 << 20); del big
blocks, pins = [], []
for _ in range(60):
    blocks.append(np.ones(1 << 19))
    pins.append(np.ones(1 << 10))
del blocks
before = rss(); release_free_memory(); print(before, rss())
"""


@pytest.mark.skipif(heap._malloc_trim() is None, reason="needs glibc")
def test_release_free_memory_gives_freed_heap_pages_back() -> None:
    before, after = map(int, subprocess.run([sys.executable, "-c", HOLES], capture_output=True, text=True,
                                            check=True).stdout.split())
    assert before - after > 150  # of the 240 MB freed inside the heap


class ChunkedToy(ToyGain):
    name = "toy-chunked"
    chunking = Chunking(seconds=0.2, overlap=0.02, fade=0.01)


def test_every_chunk_and_every_utterance_releases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(base, "release_free_memory", lambda: calls.append("chunk"))
    monkeypatch.setattr(worker, "release_free_memory", lambda: calls.append("utterance"))
    summary = anonymize_corpus(make_data_dir(tmp_path / "c", utts_per_speaker=1), tmp_path / "o", ChunkedToy(),
                               jobs=1, quiet=True)
    assert summary.done == 3 and calls.count("utterance") == 3
    chunks = len(ChunkedToy.chunking.bounds(np.zeros(4800, np.float32), 16000)) - 1  # make_data_dir: 0.3 s at 16 kHz
    assert chunks > 1 and calls.count("chunk") == 3 * chunks
