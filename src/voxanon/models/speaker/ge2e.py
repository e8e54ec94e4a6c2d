"""GE2E speaker encoder with the weights bundled in the ``resemblyzer`` wheel (offline).

Each utterance is volume-normalised and has long silences trimmed (resemblyzer's
own preprocessing), cut into 1.6 s partials; the partials of a whole batch go
through the LSTM together and each utterance's embedding is the L2-normalised
mean of its partial embeddings (as ``VoiceEncoder.embed_utterance``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from voxanon.audio.io import check_waveform, resample
from voxanon.models.checkpoint import check_state_keys, load_checkpoint
from voxanon.models.model_files import require_keys
from voxanon.models.speaker.base import EncoderError, SpeakerEncoder, file_digest

#: partial utterances per second and minimum coverage of the last one (resemblyzer's defaults)
_RATE, _MIN_COVERAGE = 1.3, 0.75
#: partials per LSTM forward pass
_CHUNK = 256
#: what a GE2E checkpoint holds, and what to do when a file does not
EXPECTED = "resemblyzer's {'model_state': <GE2E LSTM state dict>}, e.g. the best.pt of a GE2E fine-tuning"
TODO = "point ge2e: to such a file, or use 'ge2e' for the bundled weights"
#: tensors of the GE2E training loss that resemblyzer's pretrained.pt keeps beside the network's
_LOSS_KEYS = ("similarity_weight", "similarity_bias")


def read_ge2e_state(path: Path, model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The state dict of a GE2E checkpoint, checked key by key against ``model`` (resemblyzer's VoiceEncoder)."""
    what = "GE2E checkpoint"
    ckpt = load_checkpoint(path, what, EncoderError, expected=EXPECTED, todo=TODO)
    state = require_keys(ckpt, ("model_state",), what, path, EncoderError, expected=EXPECTED, todo=TODO)["model_state"]
    if isinstance(state, dict):
        state = {k: v for k, v in state.items() if k not in _LOSS_KEYS}
    check_state_keys(state, {k: tuple(v.shape) for k, v in model.state_dict().items()}, f"{what} {path}",
                     EncoderError, f"expected {EXPECTED}")
    return state


class GE2EEncoder(SpeakerEncoder):
    """resemblyzer's GE2E model (256-d, 16 kHz): the bundled pretrained weights, or a fine-tuned checkpoint.

    Parameters
    ----------
    weights : path, optional
        A checkpoint in resemblyzer's format (``{"model_state": ...}``), e.g. the
        ``best.pt`` of :func:`voxanon.evaluation.attacker_training.train_finetuned`.
    model : resemblyzer.VoiceEncoder, optional
        Use this (training) model as it is; the encoder is then named ``name``.
    """

    sample_rate = 16000
    dim = 256

    def __init__(self, device: str = "cpu", weights: str | Path | None = None, model=None,
                 name: str = "ge2e-training") -> None:
        try:
            import resemblyzer
            from resemblyzer import audio as ge2e_audio
        except ImportError as exc:
            raise EncoderError(f"the 'ge2e' encoder needs resemblyzer and webrtcvad: {exc}") from exc
        self._audio = ge2e_audio
        self.device = device
        if model is not None:
            self._model, self.name = model, name
            return
        path = Path(weights) if weights else Path(resemblyzer.__file__).resolve().parent / "pretrained.pt"
        self._model = resemblyzer.VoiceEncoder(device=device, verbose=False)   # the bundled weights, replaced:
        self._model.load_state_dict(read_ge2e_state(path, self._model))
        self._model.eval()
        self.name = f"ge2e-{file_digest(path)}"

    def preprocess(self, wav: np.ndarray) -> np.ndarray:
        """Volume normalisation and silence trimming; keeps the untrimmed audio if VAD finds no speech."""
        wav = self._audio.normalize_volume(wav.astype(np.float64), self._audio.audio_norm_target_dBFS,
                                           increase_only=True) if np.any(wav) else wav
        trimmed = self._audio.trim_long_silences(np.clip(wav, -1.0, 1.0))
        return (trimmed if len(trimmed) >= self.sample_rate // 2 else wav).astype(np.float32)

    def mel(self, wav: np.ndarray) -> np.ndarray:
        """Log-mel frames (n_frames, 40) of a preprocessed 16 kHz waveform, as the model takes them."""
        return self._audio.wav_to_mel_spectrogram(wav)

    def _partials(self, wav: np.ndarray) -> np.ndarray:
        """Mel spectrograms of the utterance's partials, shape (n_partials, 160, 40)."""
        wav_slices, mel_slices = self._model.compute_partial_slices(len(wav), _RATE, _MIN_COVERAGE)
        if wav_slices[-1].stop >= len(wav):
            wav = np.pad(wav, (0, wav_slices[-1].stop - len(wav)))
        mel = self.mel(wav)
        return np.stack([mel[s] for s in mel_slices])

    def embed(self, wavs: list[np.ndarray], sr: int) -> np.ndarray:
        """Embed a batch of waveforms; returns L2-normalised ``(N, 256)`` float32."""
        if not wavs:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts, owner = [], []
        for i, wav in enumerate(wavs):
            check_waveform(np.asarray(wav), f"utterance {i} of the batch")
            p = self._partials(self.preprocess(resample(np.asarray(wav, dtype=np.float32), sr, self.sample_rate)))
            parts.append(p)
            owner.extend([i] * len(p))
        mels = np.concatenate(parts)
        out = []
        self._model.eval()
        with torch.inference_mode():
            for start in range(0, len(mels), _CHUNK):
                batch = torch.from_numpy(mels[start:start + _CHUNK]).to(self.device)
                out.append(self._model(batch).cpu().numpy())
        partial = np.concatenate(out)
        sums = np.zeros((len(wavs), self.dim))
        np.add.at(sums, np.asarray(owner), partial)
        return (sums / np.linalg.norm(sums, axis=1, keepdims=True)).astype(np.float32)
