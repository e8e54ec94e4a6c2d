"""Shared fixtures: a small Kaldi data directory and a plain audio folder (helpers live in ``tests/helpers``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.audio import make_data_dir, write_utterance


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A data directory of 3 speakers (2 f, 1 m) x 2 utterances of 0.3 s, 16 kHz."""
    return make_data_dir(tmp_path / "corpus")


@pytest.fixture
def audio_folder(tmp_path: Path) -> Path:
    """A plain folder: a.wav (16 kHz), sub/b.flac (22.05 kHz), sub/deeper/c.ogg (16 kHz)."""
    root = tmp_path / "folder"
    write_utterance(root / "a.wav", seed=1)
    write_utterance(root / "sub" / "b.flac", sr=22050, seed=2)
    write_utterance(root / "sub" / "deeper" / "c.ogg", seed=3)
    return root


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch thread for a module of tiny tensors (a second thread only waits: ten times slower on a loaded
    machine); torch's setting is restored afterwards."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
