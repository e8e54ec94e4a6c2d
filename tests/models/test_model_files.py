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
import json
import os
import pathlib
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from tests.helpers.asv_ssl_checkpoint import write_asv_ssl
from tests.helpers.audio import make_data_dir
from tests.helpers.dvector_data import SMALL as SMALL_DVECTOR
from tests.helpers.dvector_data import write_quantised
from tests.helpers.nac_checkpoint import quantizer_state
from tests.helpers.speechbrain_ecapa_checkpoint import speechbrain_state_dict
from tests.helpers.vpc_kit_folders import write_ser_fold
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
    from voxanon.models.flow import save_flow
    from voxanon.models.flow.model import EmbeddingFlow, VelocityField

    save_flow(EmbeddingFlow(VelocityField(4, hidden=state_hidden or hidden, layers=1), np.zeros(4), np.ones(4),
                            encoder="toy"), path)
    if state_hidden:
        ckpt = torch.load(path, weights_only=True)
        torch.save({**ckpt, "config": {**ckpt["config"], "hidden": hidden}}, path)


def one_shape_changed(state: dict) -> dict:
    """``state`` with its first matrix one row longer: the same keys, one shape not the model's."""
    key = next(k for k, v in state.items() if v.ndim >= 2)
    return {**state, key: torch.zeros(state[key].shape[0] + 1, *state[key].shape[1:])}


def saving(build: Callable[[], dict]) -> Callable[[Path], None]:
    """A writer of the checkpoint ``build()`` returns."""
    return lambda path: torch.save(build(), path)


def with_wrong_shapes(build: Callable[[], dict], key: str) -> Callable[[Path], None]:
    """A writer of the checkpoint ``build()`` returns, one tensor of its state dict ``key`` reshaped."""
    def write(path: Path) -> None:
        saved = build()
        torch.save({**saved, key: one_shape_changed(saved[key])}, path)
    return write


def ctc_file() -> dict:
    from voxanon.models.asr.ctc import CHECKPOINT_FORMAT, VOCAB, CtcConfig, CtcNet

    cfg = CtcConfig(in_dim=8, hidden=8, layers=1)
    return {"format": CHECKPOINT_FORMAT, "vocab": list(VOCAB), "frontend": "fbank", "config": dataclasses.asdict(cfg),
            "state_dict": CtcNet(cfg).state_dict(), "meta": {}}


def bottleneck_file() -> dict:
    from voxanon.models.asr.bottleneck import BottleneckConfig, BottleneckCtc, model_file

    return model_file(BottleneckCtc(BottleneckConfig(12, dim=4, codebook_size=5, hidden=8, layers=1)),
                      "whisper-tiny:3", {})


def acoustic_net():
    from voxanon.models.acoustic.model import AcousticConfig, AcousticNet

    return AcousticNet(AcousticConfig(channels=16, dilations=(1, 2)))


def acoustic_file() -> dict:
    from voxanon.models.acoustic.inference import ModelSpecs, model_file

    return model_file(acoustic_net(), ModelSpecs())


def ltf_file() -> dict:
    from voxanon.models.ltf.inference import model_file
    from voxanon.models.ltf.model import LtfConfig, LtfNet

    return model_file(LtfNet(LtfConfig(content_dim=8, codebook_size=4, code_dim=2, gru_dim=4, vocoder="v2-16k")), {})


def training_checkpoint(path: Path, channels: int = 16) -> None:
    """An epoch-driven run's checkpoint, written by the trainer itself, of a network ``channels`` wide."""
    from voxanon.models.ser.compact import CompactSERNet
    from voxanon.training.trainer import Budget, Trainer

    Trainer(Budget(epochs=1), state={"model": CompactSERNet(channels=channels, n_classes=4)}, checkpoint=path).save()


def acoustic_run_file() -> dict:
    """A step-driven acoustic run's checkpoint (the recipe's payload and the loop's state)."""
    from voxanon.models.acoustic.inference import ModelSpecs

    net = acoustic_net()
    return {"model": net.state_dict(), "kind": net.kind, "config": dataclasses.asdict(net.cfg),
            "specs": dataclasses.asdict(ModelSpecs()), "speakers": ["a"],
            "optimizer": torch.optim.Adam(net.parameters()).state_dict(), "step": 1, "seconds": 1.0,
            "rng": np.random.default_rng(0).bit_generator.state, "torch_rng": torch.get_rng_state()}


def onnx_dvector_wrong_shapes(path: Path) -> None:
    """The int8 d-vector graph with its first LSTM's input weights one row longer (ONNX Runtime loads it; the
    kernel refuses the weights only when it runs)."""
    import onnx
    from onnx import numpy_helper

    onnx_dvector_model(path)
    model = onnx.load(str(path))
    init = next(i for i in model.graph.initializer if i.name.startswith("onnx::LSTM") and len(i.dims) == 3)
    weights = numpy_helper.to_array(init)
    init.CopyFrom(numpy_helper.from_array(np.zeros((weights.shape[0] + 1, *weights.shape[1:]), weights.dtype),
                                          init.name))
    onnx.save(model, str(path))


def onnx_dvector_claiming(path: Path, **claims) -> None:
    """The int8 d-vector graph of ``SMALL_DVECTOR`` whose metadata names the config with ``claims`` changed."""
    from voxanon.models.speaker.dvector import CONFIG_KEY
    from voxanon.models.speaker.dvector_net import DVectorNet

    claimed = dataclasses.replace(SMALL_DVECTOR, **claims)
    write_quantised(DVectorNet(SMALL_DVECTOR), path, per_channel=False, metadata={
        "model_kind": "dvector", "schema_version": "1", CONFIG_KEY: json.dumps(claimed.metadata())})


def quantizer_wrong_shapes(path: Path) -> None:
    torch.save({**quantizer_state(hidden=24), "fc.bias": torch.zeros(3)}, path)


def kit_wrong_shapes(path: Path) -> None:
    """The kit's file as set up, one tensor reshaped."""
    ckpt = torch.load(path, weights_only=True)
    torch.save({**ckpt, "model": one_shape_changed(ckpt["model"])} if "model" in ckpt else one_shape_changed(ckpt),
               path)


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
    from voxanon.models.ser.compact import CompactSERNet
    from voxanon.training.trainer import Budget, Trainer

    Trainer(Budget(epochs=1), state={"model": CompactSERNet(channels=16, n_classes=4)}, checkpoint=path).resume()


def resume_steps(path: Path) -> None:
    """What ``voxanon train acoustic`` does first with its output folder: read the checkpoint, rebuild the net."""
    from voxanon.training.acoustic import resumed_net
    from voxanon.training.trainer import Run

    resumed_net(Run.start(str(path.parent), SimpleNamespace(minutes=None, epochs=1, seed=0), "cpu", 0))


def kit_ser_fold(path: Path) -> None:
    from voxanon.models.ser.vpc2024 import Vpc2024Ser

    Vpc2024Ser(path.parent)


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
           kit_wrong_shapes, file="asv_ssl/embedding_model.ckpt",
           setup=lambda tmp: write_asv_ssl(tmp / "asv_ssl")),
    Loader("ecapa_ssl-wavlm", privacy("ecapa_ssl"), lambda p: None, ecapa_checkpoint,
           kit_wrong_shapes, file="asv_ssl/WavLM-Large.pt",
           setup=lambda tmp: write_asv_ssl(tmp / "asv_ssl")),
    Loader("anonymize-b5", anonymize("b5", "model"), saving(acoustic_file), ser_checkpoint,
           with_wrong_shapes(acoustic_file, "state")),
    Loader("anonymize-ltf", anonymize("ltf", "model"), saving(ltf_file), ser_checkpoint,
           with_wrong_shapes(ltf_file, "model")),
    Loader("anonymize-f3va-flow", anonymize("f3va", "flow"), flow_checkpoint, ser_checkpoint,
           lambda p: flow_checkpoint(p, 8, 16)),
    Loader("hifigan", python(hifigan), hifigan_checkpoint, ecapa_checkpoint,
           lambda p: hifigan_checkpoint(p, upsample_initial_channel=32)),
    Loader("ser-fold", python(ser), ser_checkpoint, dvector_checkpoint, lambda p: ser_checkpoint(p, 16, 8)),
    Loader("speaker-flow", python(flow), flow_checkpoint, ser_checkpoint, lambda p: flow_checkpoint(p, 8, 16)),
    Loader("quantizer", python(quantizer), lambda p: torch.save(quantizer_state(hidden=24), p), ecapa_checkpoint,
           quantizer_wrong_shapes),
    Loader("resume", python(resume), training_checkpoint, ser_checkpoint, lambda p: training_checkpoint(p, 8),
           file="run/last.pt"),
    Loader("resume-steps", python(resume_steps), saving(acoustic_run_file), ser_checkpoint,
           with_wrong_shapes(acoustic_run_file, "model"), file="run/checkpoint.pt"),
    Loader("kit-ser-fold-head", python(kit_ser_fold), lambda p: None, ecapa_checkpoint, kit_wrong_shapes,
           file="fold/model.ckpt", setup=lambda tmp: write_ser_fold(tmp / "fold")),
    Loader("kit-ser-fold-wav2vec2", python(kit_ser_fold), lambda p: None, ecapa_checkpoint, kit_wrong_shapes,
           file="fold/wav2vec2.ckpt", setup=lambda tmp: write_ser_fold(tmp / "fold")),
    Loader("ctc", python(ctc), saving(ctc_file), ser_checkpoint, with_wrong_shapes(ctc_file, "state_dict")),
    Loader("bottleneck", python(bottleneck), saving(bottleneck_file), ser_checkpoint,
           with_wrong_shapes(bottleneck_file, "state_dict")),
    Loader("acoustic", python(acoustic), saving(acoustic_file), ser_checkpoint,
           with_wrong_shapes(acoustic_file, "state")),
    Loader("ltf", python(ltf), saving(ltf_file), ser_checkpoint, with_wrong_shapes(ltf_file, "model")),
    Loader("onnx-dvector", python(onnx_dvector), onnx_dvector_model, ecapa_checkpoint, onnx_dvector_wrong_shapes,
           file="model.onnx"),
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
    if loader.setup is not None:
        loader.setup(tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
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


@pytest.mark.parametrize(("claims", "reason"), [({"n_mels": 12}, "takes mel windows of shape [10, 8], but its "
                                                                  "metadata says [10, 12]"),
                                               ({"emb_dim": 6}, "gives embeddings of shape [12], but its metadata "
                                                                "says [6]")])
def test_an_onnx_dvector_whose_graph_does_not_fit_its_metadata_is_one_line(claims: dict, reason: str,
                                                                           tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    onnx_dvector_claiming(path, **claims)
    said, status = python(onnx_dvector)(tmp_path, path)
    assert status == EXIT_MODEL and len(said.splitlines()) == 1 and said.count(str(path)) == 1, said
    assert reason in said, said


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
