"""``AcousticModel``: a trained acoustic network (``conv`` or ``dit``) with the encoders and vocoder it was
trained against."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import torch

from voxanon.errors import ModelError
from voxanon.models.acoustic.features import (
    SourceFeatures,
    network_content,
    source_features,
)
from voxanon.models.acoustic.networks import build_net, config_from_dict
from voxanon.models.checkpoint import check_state_keys, load_checkpoint
from voxanon.models.model_files import looks_like

#: the ``format`` field of a shipped acoustic model file
FORMAT = "voxanon-acoustic/1"


class AcousticError(ModelError):
    """An acoustic-model file that is missing, of another format or does not match its config."""


@dataclasses.dataclass(frozen=True)
class ModelSpecs:
    """Which content encoder, speaker encoder and vocoder a model was trained with."""

    content: str = "whisper-tiny:3"
    speaker: str = "ge2e"
    vocoder: str = "hifigan-universal"


def model_file(net, specs: ModelSpecs, meta: dict | None = None, half: bool = True) -> dict:
    """The saved form of a model: format, network kind, config, specs, ``meta`` and the (fp16 by default) state
    dict."""
    state = {k: (v.detach().half() if half and v.is_floating_point() else v.detach()).cpu().clone()
             for k, v in net.state_dict().items()}
    return {"format": FORMAT, "kind": net.kind, "config": dataclasses.asdict(net.cfg), "specs": dataclasses.asdict(specs),
            "meta": meta or {}, "state": state}


def net_from_file(saved: dict, what: str) -> tuple:
    """Rebuild the network (fp32) of :func:`model_file`'s dict, checking format and every key's shape."""
    if not isinstance(saved, dict) or saved.get("format") != FORMAT:
        raise AcousticError(f"{what} is {looks_like(saved)}; expected a {FORMAT!r} checkpoint; "
                            "give a model.pt of 'voxanon train acoustic'")
    try:
        cfg = config_from_dict(saved.get("kind", "conv"), saved["config"])
        specs = ModelSpecs(**saved["specs"])
    except (KeyError, TypeError, ValueError) as exc:
        raise AcousticError(f"{what}: bad config: {exc}") from None
    net = build_net(cfg)
    expected = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    check_state_keys(saved["state"], expected, what, AcousticError, "the file was written by another model layout")
    net.load_state_dict({k: v.float() for k, v in saved["state"].items()})
    return net.eval(), specs, dict(saved.get("meta") or {})


class AcousticModel:
    """Speaker-conditioned synthesis: source features + a speaker embedding -> log-mels -> waveform.

    Attributes
    ----------
    content_spec, speaker_spec, vocoder_spec : the specs of the models it was trained against
    device : torch device the network runs on
    config : the network's config (:class:`AcousticConfig` or :class:`DiTConfig`)
    meta : what the training recorded (command, data, losses)
    """

    def __init__(self, net, specs: ModelSpecs, device: str = "cpu", meta: dict | None = None,
                 name: str = "") -> None:
        self.device = torch.device(device)
        self.net = net.to(self.device).eval()
        self.config = net.cfg
        self.content_spec, self.speaker_spec, self.vocoder_spec = specs.content, specs.speaker, specs.vocoder
        self.meta = meta or {}
        self.name = name

    @classmethod
    def from_file(cls, path: str | os.PathLike, device: str = "cpu") -> AcousticModel:
        """Load a model file written by ``voxanon train acoustic`` (``model.pt``)."""
        saved = load_checkpoint(path, "acoustic model", AcousticError, expected=f"a {FORMAT!r} checkpoint",
                                todo="give a model.pt of 'voxanon train acoustic'")
        net, specs, meta = net_from_file(saved, f"acoustic model {os.fspath(path)}")
        return cls(net, specs, device, meta, name=os.fspath(path))

    def encoder(self):
        """The content encoder (loaded once per process)."""
        from voxanon.models.content import load_content_encoder

        return load_content_encoder(self.content_spec)

    def vocoder(self):
        """The vocoder (loaded once per process)."""
        from voxanon.models.vocoder import load_vocoder

        return load_vocoder(self.vocoder_spec)

    def speaker_encoder(self):
        """The speaker encoder whose embeddings condition the model."""
        from voxanon.models.speaker import load_encoder

        return load_encoder(self.speaker_spec)

    def features(self, wav: np.ndarray, sr: int) -> SourceFeatures:
        """Content and pitch of ``wav`` at the vocoder's frame times."""
        vocoder = self.vocoder()
        return source_features(wav, sr, self.encoder(), rate=vocoder.sample_rate, hop=vocoder.hop_length)

    @property
    def kind(self) -> str:
        """The network's architecture: ``conv`` or ``dit``."""
        return self.net.kind

    @property
    def n_speakers(self) -> int:
        """Size of the model's speaker table (0: the model takes speaker embeddings)."""
        return getattr(self.config, "n_speakers", 0)

    def speaker_input(self, speaker) -> torch.Tensor:
        """The network's ``(1, ...)`` speaker input: an embedding ``(speaker_dim,)`` or a table index."""
        what = self.name or "acoustic model"
        if self.n_speakers:
            if not isinstance(speaker, (int, np.integer)) or not 0 <= speaker < self.config.n_speakers:
                raise AcousticError(f"{what}: speaker {speaker!r} is not an index of its table of "
                                    f"{self.config.n_speakers} training speakers (0..{self.config.n_speakers - 1})")
            return torch.tensor([int(speaker)], device=self.device)
        emb = np.asarray(speaker, dtype=np.float32).reshape(-1)
        if len(emb) != self.config.speaker_dim:
            raise AcousticError(f"{what}: speaker embedding has {len(emb)} dims, the "
                                f"model takes {self.config.speaker_dim} ({self.speaker_spec})")
        return torch.as_tensor(emb, device=self.device)[None]

    @torch.inference_mode()
    def mel(self, features: SourceFeatures, speaker, sampling=None,
            known: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """``(T, n_mels)`` float32 log-mels of ``features`` in the voice of ``speaker``: an embedding
        ``(dim,)``, or the index of a training speaker for a model with a speaker table. ``sampling``: the
        ODE settings of a ``dit`` model (:class:`~voxanon.models.acoustic.dit.Sampling`; None: its defaults).
        ``known`` (``dit`` only): (log-mels (T, n_mels), mask (T,) true where kept); only the other frames are
        generated (speech editing)."""
        spk = self.speaker_input(speaker)
        content = network_content(features.content, self.config.content_norm)
        as_t = lambda a: torch.as_tensor(np.asarray(a, dtype=np.float32), device=self.device)[None]  # noqa: E731
        extra = {}
        if known is not None:
            if self.kind != "dit":
                raise AcousticError(f"{self.name or 'acoustic model'}: a {self.kind} model cannot edit spans; "
                                    "a dit backbone (voxanon train f3va) can")
            extra["known"] = (as_t(known[0]), torch.as_tensor(np.asarray(known[1], dtype=bool), device=self.device)[None])
        return self.net.generate(as_t(content), as_t(features.pitch), spk, sampling, **extra)[0].float().cpu().numpy()

    def convert(self, wav: np.ndarray, sr: int, speaker, sampling=None) -> tuple[np.ndarray, int]:
        """``wav`` re-synthesised in the voice of ``speaker`` (see :meth:`mel`): (waveform, vocoder rate)."""
        vocoder = self.vocoder()
        return vocoder.synthesize(self.mel(self.features(wav, sr), speaker, sampling)), vocoder.sample_rate
