"""Every model file a user can point voxanon at, damaged six ways: one line naming the file once, exit status 4.

Each loader is fed a truncated file, random bytes, an empty file, a valid checkpoint of another kind, a file
with the right keys and wrong shapes, and a pickle that would create a marker file if it were unpickled
unsafely (it must not be). Loaders a command reaches are driven through ``voxanon.cli.main`` (stderr must be
one line); the others through their Python function (the ModelError's message must be one line). The files
of the right and of another kind are built by the real models' constructors, so their keys are real.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import pathlib
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from tests.helpers.asv_ssl_checkpoint import write_asv_ssl
from tests.helpers.audio import make_data_dir
from tests.helpers.dvector_data import SMALL as SMALL_DVECTOR
from tests.helpers.dvector_data import write_quantised
from tests.helpers.nac_checkpoint import quantizer_state
from tests.helpers.speechbrain_ecapa_checkpoint import speechbrain_state_dict
from voxanon.errors import EXIT_MODEL, ModelError

BAD_KINDS = ("truncated", "random", "empty", "other_kind", "wrong_shapes", "hostile")
SMALL_ECAPA = dict(n_mels=16, channels=(16, 16, 16, 48), kernel_sizes=(5, 3, 3, 1), dilations=(1, 2, 3, 1),
                   attention_channels=8, res2net_scale=4, se_channels=8, embedding_dim=8)
SMALL_SB = dict(c=64, last=192, att=32, se=32)
TINY_HIFIGAN = dict(upsample_rates=(4, 4), upsample_kernel_sizes=(8, 8), upsample_initial_channel=16, num_mels=8,
                    n_fft=64, hop_size=16, win_size=64, sampling_rate=4000, fmax=2000.0)


class Hostile:
    """Unpickled unsafely, this would create the file ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return pathlib.Path.touch, (self.marker,)


# -- files of each kind, from the real constructors ------------------------------------------------------------
def ecapa_checkpoint(path: Path, **changes) -> None:
    from voxanon.models.speaker.ecapa import EcapaConfig, EcapaTdnn, save_ecapa

    save_ecapa(path, EcapaTdnn(EcapaConfig(**{**SMALL_ECAPA, **changes})))


def ecapa_wrong_shapes(path: Path) -> None:
    from voxanon.models.speaker.ecapa import EcapaConfig, EcapaTdnn

    other = EcapaTdnn(EcapaConfig(**{**SMALL_ECAPA, "channels": (24, 24, 24, 72)}))
    torch.save({"config": dataclasses.asdict(EcapaConfig(**SMALL_ECAPA)), "model": other.state_dict()}, path)


def ge2e_state() -> dict[str, torch.Tensor]:
    import resemblyzer

    return resemblyzer.VoiceEncoder("cpu", verbose=False).state_dict()


def ge2e_checkpoint(path: Path) -> None:
    torch.save({"model_state": ge2e_state()}, path)


def ge2e_wrong_shapes(path: Path) -> None:
    torch.save({"model_state": {**ge2e_state(), "linear.weight": torch.zeros(8, 256)}}, path)


def speechbrain_wrong_shapes(path: Path) -> None:
    torch.save({**speechbrain_state_dict(**SMALL_SB), "fc.conv.bias": torch.zeros(7)}, path)


def dvector_checkpoint(path: Path) -> None:
    from voxanon.models.speaker.dvector_net import DVectorNet, save_dvector

    save_dvector(path, DVectorNet(SMALL_DVECTOR))


def onnx_dvector_model(path: Path) -> None:
    from voxanon.models.speaker.dvector_net import DVectorNet

    write_quantised(DVectorNet(SMALL_DVECTOR), path, per_channel=False)


def dvector_wrong_shapes(path: Path) -> None:
    from voxanon.models.speaker.dvector_net import DVectorNet, save_dvector

    save_dvector(path, DVectorNet(SMALL_DVECTOR))
    ckpt = torch.load(path, weights_only=True)
    torch.save({**ckpt, "model": DVectorNet(dataclasses.replace(SMALL_DVECTOR, lstm_hidden=8)).state_dict()}, path)


def hifigan_checkpoint(path: Path, **changes) -> None:
    from voxanon.models.vocoder.hifigan import Generator, HifiganConfig

    torch.save({"generator": Generator(HifiganConfig(**{**TINY_HIFIGAN, **changes})).state_dict()}, path)


def ser_checkpoint(path: Path, channels: int = 16, state_channels: int | None = None) -> None:
    from voxanon.models.ser.compact import CHECKPOINT_FORMAT, CompactSERNet

    labels = ["ang", "hap", "neu", "sad"]
    net = CompactSERNet(channels=state_channels or channels, n_classes=len(labels))
    torch.save({"format": CHECKPOINT_FORMAT, "labels": labels, "config": {"channels": channels},
                "state_dict": net.state_dict(), "meta": {}}, path)


def flow_checkpoint(path: Path, hidden: int = 8, state_hidden: int | None = None) -> None:
    import numpy as np

    from voxanon.models.flow import save_flow
    from voxanon.models.flow.model import EmbeddingFlow, VelocityField

    save_flow(EmbeddingFlow(VelocityField(4, hidden=state_hidden or hidden, layers=1), np.zeros(4), np.ones(4),
                            encoder="toy"), path)
    if state_hidden:
        ckpt = torch.load(path, weights_only=True)
        torch.save({**ckpt, "config": {**ckpt["config"], "hidden": hidden}}, path)


def quantizer_wrong_shapes(path: Path) -> None:
    torch.save({**quantizer_state(hidden=24), "fc.bias": torch.zeros(3)}, path)


def asv_ssl_wrong_shapes(folder: Path, name: str) -> None:
    path = folder / name
    ckpt = torch.load(path, weights_only=True)
    state = ckpt["model"] if "model" in ckpt else ckpt
    key = next(k for k, v in state.items() if v.ndim >= 2)
    state[key] = torch.zeros(state[key].shape[0] + 1, *state[key].shape[1:])
    torch.save(ckpt, path)


# -- how each loader is reached ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Loader:
    """``write_good``/``write_other``/``write_wrong_shapes`` write a file at the path; ``run`` loads it and returns
    ``(what the user sees, exit status)``; ``file`` is where the file lies inside the test's folder."""

    name: str
    run: Callable[[Path, Path], tuple[str, int]]
    write_good: Callable[[Path], None]
    write_other: Callable[[Path], None] | None
    write_wrong_shapes: Callable[[Path], None] | None
    file: str = "model.pt"
    setup: Callable[[Path], None] | None = None


def cli(argv: list[str]) -> tuple[str, int]:
    from voxanon.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    return err.getvalue(), status


def privacy(spec: str) -> Callable[[Path, Path], tuple[str, int]]:
    def run(tmp: Path, path: Path) -> tuple[str, int]:
        data = make_data_dir(tmp / "corpus", utts_per_speaker=1)
        return cli(["evaluate", "privacy", "--enroll", str(data), "--trials", str(data), "--encoder",
                    f"{spec}:{path if spec != 'ecapa_ssl' else path.parent}", "--cache", str(tmp / "cache"),
                    "--quiet"])
    return run


def vpc_asv(tmp: Path, path: Path) -> tuple[str, int]:
    from tests.helpers.vpc_tree import write_data

    write_data(tmp / "kit" / "data", "2024", "")
    return cli(["evaluate", "vpc", str(tmp / "kit" / "data"), "--exp", str(tmp / "kit" / "exp"), "--asv",
                f"dvector:{path}", "--cache", str(tmp / "cache"), "--n-boot", "5", "--quiet"])


def anonymize(method: str, param: str) -> Callable[[Path, Path], tuple[str, int]]:
    def run(tmp: Path, path: Path) -> tuple[str, int]:
        data = make_data_dir(tmp / "corpus", utts_per_speaker=1)
        return cli(["anonymize", str(data), str(tmp / "out"), "--method", method, "--param", f"{param}={path}",
                    "--quiet"])
    return run


def python(load: Callable[[Path], object]) -> Callable[[Path, Path], tuple[str, int]]:
    def run(tmp: Path, path: Path) -> tuple[str, int]:
        try:
            load(path)
        except ModelError as exc:
            return str(exc), exc.exit_code
        raise AssertionError(f"{path} was loaded")
    return run


def hifigan(path: Path) -> None:
    from voxanon.models.vocoder.hifigan import HifiganConfig, load_generator

    load_generator(path, HifiganConfig(**TINY_HIFIGAN))


def ser(path: Path) -> None:
    from voxanon.models.ser.compact import CompactSER

    CompactSER.load(path)


def flow(path: Path) -> None:
    from voxanon.models.flow import load_flow

    load_flow(path)


def quantizer(path: Path) -> None:
    from voxanon.models.nac.quantizer import load_quantizer

    load_quantizer(path)


def resume(path: Path) -> None:
    from voxanon.training.trainer import Budget, Trainer

    Trainer(Budget(epochs=1), state={}, checkpoint=path).resume()


def resume_steps(path: Path) -> None:
    from voxanon.training.trainer import Run

    Run.start(str(path.parent), SimpleNamespace(minutes=None, epochs=1, seed=0), "cpu", 0)


def kit_checkpoint(path: Path) -> None:
    from voxanon.models.speechbrain.weights import read_state

    read_state(path)


def onnx_dvector(path: Path) -> None:
    from voxanon.models.speaker.dvector import OnnxDVector

    OnnxDVector(path)


def ctc(path: Path) -> None:
    from voxanon.models.asr.ctc import CtcAsr

    CtcAsr(path)


def bottleneck(path: Path) -> None:
    from voxanon.models.asr.bottleneck import load_recogniser

    load_recogniser(path)


def acoustic(path: Path) -> None:
    from voxanon.models.acoustic.inference import AcousticModel

    AcousticModel.from_file(path)


def ltf(path: Path) -> None:
    from voxanon.models.ltf.inference import LtfModel

    LtfModel.from_file(path)


LOADERS = [
    Loader("ge2e", privacy("ge2e"), ge2e_checkpoint, ecapa_checkpoint, ge2e_wrong_shapes),
    Loader("ecapa", privacy("ecapa"), ecapa_checkpoint, ge2e_checkpoint, ecapa_wrong_shapes),
    Loader("speechbrain", privacy("speechbrain"), lambda p: torch.save(speechbrain_state_dict(**SMALL_SB), p),
           ecapa_checkpoint, speechbrain_wrong_shapes),
    Loader("dvector", privacy("dvector"), dvector_checkpoint, ecapa_checkpoint, dvector_wrong_shapes),
    Loader("vpc-asv-dvector", vpc_asv, dvector_checkpoint, ge2e_checkpoint, dvector_wrong_shapes),
    Loader("ecapa_ssl", privacy("ecapa_ssl"), lambda p: None, ecapa_checkpoint,
           lambda p: asv_ssl_wrong_shapes(p.parent, p.name), file="asv_ssl/embedding_model.ckpt",
           setup=lambda tmp: write_asv_ssl(tmp / "asv_ssl")),
    Loader("ecapa_ssl-wavlm", privacy("ecapa_ssl"), lambda p: None, ecapa_checkpoint,
           lambda p: asv_ssl_wrong_shapes(p.parent, p.name), file="asv_ssl/WavLM-Large.pt",
           setup=lambda tmp: write_asv_ssl(tmp / "asv_ssl")),
    Loader("anonymize-b5", anonymize("b5", "model"), ser_checkpoint, ser_checkpoint, None),
    Loader("anonymize-ltf", anonymize("ltf", "model"), ser_checkpoint, ser_checkpoint, None),
    Loader("anonymize-f3va-flow", anonymize("f3va", "flow"), flow_checkpoint, ser_checkpoint,
           lambda p: flow_checkpoint(p, 8, 16)),
    Loader("hifigan", python(hifigan), hifigan_checkpoint, ecapa_checkpoint,
           lambda p: hifigan_checkpoint(p, upsample_initial_channel=32)),
    Loader("ser-fold", python(ser), ser_checkpoint, dvector_checkpoint, lambda p: ser_checkpoint(p, 16, 8)),
    Loader("speaker-flow", python(flow), flow_checkpoint, ser_checkpoint, lambda p: flow_checkpoint(p, 8, 16)),
    Loader("quantizer", python(quantizer), lambda p: torch.save(quantizer_state(hidden=24), p), ecapa_checkpoint,
           quantizer_wrong_shapes),
    Loader("resume", python(resume), ser_checkpoint, ser_checkpoint, None, file="run/last.pt"),
    Loader("resume-steps", python(resume_steps), ser_checkpoint, None, None, file="run/checkpoint.pt"),
    Loader("kit-checkpoint", python(kit_checkpoint), lambda p: torch.save(speechbrain_state_dict(**SMALL_SB), p),
           ecapa_checkpoint, None),
    Loader("ctc", python(ctc), ser_checkpoint, ser_checkpoint, None),
    Loader("bottleneck", python(bottleneck), ser_checkpoint, ser_checkpoint, None),
    Loader("acoustic", python(acoustic), ser_checkpoint, ser_checkpoint, None),
    Loader("ltf", python(ltf), ser_checkpoint, ser_checkpoint, None),
    Loader("onnx-dvector", python(onnx_dvector), onnx_dvector_model, ecapa_checkpoint, None, file="model.onnx"),
]


def write_bad(kind: str, loader: Loader, path: Path, marker: Path) -> None:
    """The damaged file ``kind`` at ``path``."""
    if kind == "truncated":
        loader.write_good(path)      # kit files are left as set up
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif kind == "random":
        path.write_bytes(os.urandom(4096))
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "other_kind":
        loader.write_other(path)
    elif kind == "wrong_shapes":
        loader.write_wrong_shapes(path)
    elif kind == "hostile":
        path.write_bytes(pickle.dumps({"model": Hostile(marker)}, protocol=2))


def slow(loader: Loader, kind: str) -> bool:
    """Runs that start worker processes (anonymize: ~15 s each) or write a kit's data folder."""
    return loader.name.startswith("anonymize-") or (loader.name == "vpc-asv-dvector" and kind != "hostile")


CASES = [pytest.param(loader, kind, id=f"{loader.name}-{kind}", marks=[pytest.mark.slow] if slow(loader, kind) else [])
         for loader in LOADERS for kind in BAD_KINDS
         if not (kind == "wrong_shapes" and loader.write_wrong_shapes is None)
         and not (kind == "other_kind" and loader.write_other is None)]


@pytest.mark.parametrize(("loader", "kind"), CASES)
def test_a_bad_model_file_is_one_line_with_exit_status_4(loader: Loader, kind: str, tmp_path: Path,
                                                        one_torch_thread) -> None:
    path = tmp_path / loader.file
    path.parent.mkdir(parents=True, exist_ok=True)
    if loader.setup is not None:
        loader.setup(tmp_path)
    marker = tmp_path / "marker"
    write_bad(kind, loader, path, marker)
    said, status = loader.run(tmp_path, path)
    lines = [line for line in said.splitlines() if line.strip()]
    assert status == EXIT_MODEL, said
    assert len(lines) == 1, said
    assert said.count(str(path)) == 1, said
    assert "weights_only=False" not in said and "weights_only` set to `False" not in said, said
    assert "Traceback" not in said and "internal error" not in said, said
    assert not marker.exists()
    if kind == "hostile" and not path.suffix == ".onnx":
        assert "refused: voxanon loads weights only" in said, said
    if kind in ("truncated", "empty", "random"):
        assert "cannot be read" in said or "cannot be loaded" in said, said


def test_the_hostile_pickle_would_run_code_if_unpickled_unsafely(tmp_path: Path) -> None:
    """The test's hostile file is real: plain ``pickle.loads`` creates the marker."""
    marker = tmp_path / "marker"
    pickle.loads(pickle.dumps({"model": Hostile(marker)}, protocol=2))
    assert marker.exists()


def test_each_reason_is_voxanon_s_own(tmp_path: Path) -> None:
    from voxanon.models.checkpoint import load_checkpoint

    cases = {"empty": (b"", "empty file"), "random": (b"\x13\x37" * 100, "not a zip or pickle file"),
             "damaged": (b"\x80\x02 not a checkpoint", "damaged pickle"),
             "cut": (pickle.dumps({"a": list(range(100))}, protocol=2)[:50], "truncated pickle"),
             "plain": (pickle.dumps({"a": [1]}, protocol=4), "a plain pickle (protocol 4), not a PyTorch checkpoint"),
             "hostile": (pickle.dumps(Hostile(tmp_path / "marker"), protocol=4),
                         "unsupported global 'pathlib.Path.touch' refused: voxanon loads weights only")}
    for name, (data, reason) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ModelError, match=r"^test model \S+ cannot be read \((.*)\); check the path") as err:
            load_checkpoint(tmp_path / name, "test model", ModelError)
        assert f"({reason})" in str(err.value), str(err.value)
    assert not (tmp_path / "marker").exists()
