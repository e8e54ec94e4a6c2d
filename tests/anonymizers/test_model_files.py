"""Which weights an anonymizer's output depends on: ``model_files`` and the digests ``settings()`` records."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.audio import make_data_dir, write_utterance
from voxanon.anonymizers.registry import build
from voxanon.digest import content_digest, file_digest
from voxanon.jobs.benchmark.run import System

RESOURCES = Path(__file__).resolve().parents[2] / "src" / "voxanon" / "resources"


def test_signal_processing_records_no_models() -> None:
    for method in ("mcadams", "world", "chain"):
        assert "models" not in build(method, {}).settings()


@pytest.mark.parametrize(("method", "params", "files"), [
    ("b5", {}, {"model": "acoustic/b5.pt"}),
    ("b6", {"model": "b5"}, {"model": "acoustic/b5.pt"}),
    ("ltf", {}, {"model": "ltf/default.pt"}),
    ("embedding", {}, {"model": "acoustic/default.pt", "pool": "pseudo/pool_ge2e.npz"}),
    ("embedding", {"generator": "f3va"}, {"model": "acoustic/default.pt", "flow": "pseudo/flow_ge2e.pt"}),
    ("f3va", {}, {"model": "acoustic/f3va.pt", "flow": "pseudo/flow_ge2e.pt"}),
    ("b3", {}, {"model": "acoustic/default.pt", "flow": "pseudo/flow_ge2e.pt"}),
    ("knnvc", {}, {"targets": "knnvc/manifest.json"}),
])
def test_shipped_weights_are_recorded_by_content(method: str, params: dict, files: dict) -> None:
    models = build(method, params).settings()["models"]
    assert models == {role: file_digest(RESOURCES / rel, 16) for role, rel in files.items()}


def test_retrained_weights_change_the_settings_and_the_benchmark_key(tmp_path: Path) -> None:
    weights = tmp_path / "model.pt"
    weights.write_bytes(b"first training run")
    first = build("ltf", {"model": str(weights)}).settings()
    weights.write_bytes(b"second training run")
    second = build("ltf", {"model": str(weights)}).settings()
    assert first["params"] == second["params"] and first["models"] != second["models"]
    ltf = System("ltf", "ltf", {"model": str(weights)})
    assert ltf.key(0, first["models"]) != ltf.key(0, second["models"])
    # a system that loads nothing keeps the key (and the output folder) it always had
    assert System("w", "world").key(0, None) == System("w", "world").key(0)


def test_composite_methods_record_their_parts_files(tmp_path: Path) -> None:
    weights = tmp_path / "ltf.pt"
    weights.write_bytes(b"weights")
    components = [{"method": "world", "params": {}, "p": 0.5}, {"method": "ltf", "params": {"model": str(weights)},
                                                                "p": 0.5}]
    assert build("admixture", {"components": components}).settings()["models"] == {"1.model": file_digest(weights, 16)}
    steps = [{"method": "ltf", "params": {"model": str(weights)}}, {"method": "world", "params": {}}]
    assert build("chain", {"steps": steps}).settings()["models"] == {"0.model": file_digest(weights, 16)}


def test_knnvc_targets_are_recorded_by_their_audio(tmp_path: Path) -> None:
    data = make_data_dir(tmp_path / "targets")
    before = build("knnvc", {"targets": str(data)}).settings()["models"]
    assert set(before) == {"targets"}                      # the shipped sets are not used with targets=DIR
    audio = sorted((tmp_path / "targets").rglob("*.wav"))[0]
    write_utterance(audio, seed=99)                         # same name, other speech
    assert build("knnvc", {"targets": str(data)}).settings()["models"] != before
    checkpoint = tmp_path / "WavLM-Large.pt"
    checkpoint.write_bytes(b"weights")
    models = build("knnvc", {"encoder": f"wavlm-pt:{checkpoint}:6"}).settings()["models"]
    assert models["encoder"] == file_digest(checkpoint, 16)
    assert "encoder" not in build("knnvc", {"encoder": "whisper-tiny:3"}).settings()["models"]


def test_content_digest_of_nothing_says_missing(tmp_path: Path) -> None:
    assert content_digest(tmp_path / "absent.pt") == "missing"
    assert build("ltf", {"model": str(tmp_path / "absent.pt")}).settings()["models"] == {"model": "missing"}
