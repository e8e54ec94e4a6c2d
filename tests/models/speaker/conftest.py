"""Fixtures of the d-vector tests: the fetched model (or a skip) and generated small quantised d-vectors."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.helpers.dvector_data import SMALL, write_quantised
from voxanon.models.speaker.dvector import EncoderError, model_path
from voxanon.models.speaker.dvector_net import DVectorNet


@pytest.fixture(scope="session")
def real_model() -> Path:
    """The fetched ``embedder.int8.onnx``, or a skip saying how to get it."""
    try:
        return model_path()
    except EncoderError as exc:
        pytest.skip(f"the d-vector model is not fetched here ({exc})")


@pytest.fixture(scope="session", params=[False, True], ids=["per-tensor", "per-channel"])
def small_quantised(request, tmp_path_factory) -> tuple[DVectorNet, Path]:
    """A random small :class:`DVectorNet` and its int8 ONNX export (both quantisation granularities)."""
    torch.manual_seed(0)
    net = DVectorNet(SMALL)
    path = tmp_path_factory.mktemp("dvector") / f"small-{request.param_index}.onnx"
    return net, write_quantised(net, path, per_channel=request.param)
