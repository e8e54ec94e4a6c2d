"""A trained LTF generator with its frozen encoder: waveform in, anonymized waveform out (``model.pt`` files).

A generator trained in the mel domain (``output="mel"``) emits HiFi-GAN log-mels at 100 frames/s; they are
resampled to the universal HiFi-GAN's 86.13 frames/s and vocoded by it (22.05 kHz), then resampled to the
input's rate.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import torch

from voxanon.audio.io import check_waveform, fit_length, resample
from voxanon.errors import ModelError
from voxanon.models.checkpoint import build_from_config, load_format, load_state_checked
from voxanon.models.ltf.melmap import resample_frames, vocoder_frames
from voxanon.models.ltf.model import LtfConfig, LtfNet

FORMAT = "voxanon-ltf-1"


def model_file(net: LtfNet, meta: dict) -> dict:
    """The contents of a ``model.pt``: format tag, config, fp16 generator weights, ``meta`` (the training summary)."""
    return {"format": FORMAT, "config": dataclasses.asdict(net.cfg),
            "model": {k: v.half() if v.is_floating_point() else v for k, v in net.state_dict().items()},
            "meta": meta}


class LtfModel:
    """The generator of a ``model.pt`` and the content encoder it was trained on."""

    def __init__(self, net: LtfNet, meta: dict | None = None) -> None:
        from voxanon.models.content import load_content_encoder

        self.net = net.eval()
        self.meta = meta or {}
        self.encoder = load_content_encoder(net.cfg.content)
        self.vocoder = None
        if net.cfg.output == "mel":
            from voxanon.models.vocoder import load_vocoder

            self.vocoder = load_vocoder("hifigan-universal")

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> LtfModel:
        """Load a ``model.pt`` of ``voxanon train ltf``; ModelError names what is wrong with it."""
        what, todo = "LTF model", "give the model.pt written by 'voxanon train ltf'"
        ckpt = load_format(path, what, ModelError, FORMAT, ("config", "model"), todo=todo)
        net = build_from_config(lambda: LtfNet(LtfConfig.from_dict(ckpt["config"])), what, path, ModelError, todo=todo)
        load_state_checked(net, ckpt["model"], f"{what} {os.fspath(path)}", ModelError,
                           "the weights do not fit the file's own config; train again")
        return cls(net, ckpt.get("meta"))

    @property
    def sample_rate(self) -> int:
        return self.net.sample_rate if self.vocoder is None else self.vocoder.sample_rate

    @torch.inference_mode()
    def convert(self, wav: np.ndarray, sr: int) -> np.ndarray:
        """``wav`` regenerated from its content features, at ``sr`` and of the same length."""
        check_waveform(wav)
        x = resample(np.asarray(wav, dtype=np.float32), sr, self.encoder.sample_rate)
        content = torch.from_numpy(self.encoder.encode(x, self.encoder.sample_rate))[None]
        out = self.net(content)[0]
        if self.vocoder is not None:
            out = self.vocoder.synthesize(resample_frames(out, vocoder_frames(out.shape[-1]))[0].T.numpy())
        else:
            out = out[0].numpy()
        return fit_length(resample(out, self.sample_rate, sr), len(wav))
