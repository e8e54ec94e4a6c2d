"""VPC 2024 baselines B5 and B6 offline: vector-quantised ASR content + pitch + a one-hot target speaker.

The source's content (a Whisper encoder layer, the ASR encoder: multilingual
base's layer 4 for the shipped ``b5``, tiny.en's layer 2 for ``b6``) is quantised
to 48 codes (the shipped ``b5``'s learnt to name each frame's phone by ``voxanon
train bottleneck --targets phones``, as the VPC's codes come from an ASR
model's bottleneck; the shipped ``b6``'s k-means), its F3-VA relative pitch
kept, and the acoustic model trained on those codes by ``voxanon train asrbn``
synthesises HiFi-GAN mels in the voice of one of its training speakers, drawn
per utterance from the utterance's rng among the model's target speakers (those
its file names, e.g. the shipped ``b5``'s English voices; ``targets`` picks
others, ``target`` fixes one); the universal HiFi-GAN (not fine-tuned) vocodes them.
``b5`` and ``b6`` differ only in the model they load (see docs/baselines.md).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np

from voxanon.anonymizers.base import param
from voxanon.anonymizers.embedding import Resynthesis, check_f0_mode, resynthesis_files
from voxanon.errors import ConfigError, ModelError
from voxanon.ranges import Range


class B5(Resynthesis):
    """VPC 2024 B5 offline: ASR-bottleneck codes of Whisper content + pitch -> one-hot training speaker -> HiFi-GAN."""

    name = "b5"

    @dataclasses.dataclass(frozen=True)
    class Config:
        model: str = param("b5", "acoustic model with a speaker table: b5, b6 (shipped) or a model.pt of "
                                 "voxanon train asrbn")
        target: int = param(-1, "index of the target training speaker (0 .. speakers-1); -1 = drawn per utterance",
                            range=Range(-1))
        targets: str = param("model", "the speakers drawn from: model (those the model file names as its targets, "
                                      "every speaker when it names none), all, or comma-separated indices")
        f0: str = param("model", "model (pitch level from the target speaker, contour from the source) or "
                                 "source (the source's own F0, imposed by WORLD after vocoding)")
        threads: int = param(0, "torch threads (0 = torch's default)", range=Range(0))

        def __post_init__(self) -> None:
            check_f0_mode(self.f0)
            if self.targets not in ("model", "all") and not re.fullmatch(r"\d+(,\d+)*", self.targets):
                raise ConfigError(f"parameter targets: {self.targets!r} is not model, all or comma-separated "
                                  "speaker indices")

    def __init__(self, config=None, **params) -> None:
        super().__init__(config, **params)
        self._model = None
        self._targets: list[int] = []

    def acoustic(self):
        """The acoustic model (loaded on first use); ModelError without a speaker table, ConfigError when
        ``target`` is not one of its speakers."""
        if self._model is None:
            from voxanon.models.acoustic import load_acoustic

            c = self.config
            if c.threads > 0:
                import torch

                torch.set_num_threads(c.threads)
            model = load_acoustic(c.model)
            if not model.n_speakers:
                raise ModelError(f"{self.name}: acoustic model {c.model!r} has no speaker table; give one "
                                 "written by 'voxanon train asrbn'")
            if c.target >= model.n_speakers:
                raise ConfigError(f"parameter target: {c.target} is not a speaker of model {c.model!r} "
                                  f"(0 .. {model.n_speakers - 1})")
            self._targets = target_speakers(c.targets, model.meta.get("targets"), model.n_speakers, c.model)
            self._model = model
        return self._model

    def target_speakers(self) -> list[int]:
        """The indices of the speakers a target is drawn from (``targets``)."""
        self.acoustic()
        return self._targets

    def model_files(self) -> dict[str, Path]:
        return resynthesis_files(self.config.model, "", "", "")

    def pseudo_speaker(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> int:
        """The target speaker's index: ``target``, or drawn uniformly among :meth:`target_speakers` from the
        utterance's rng."""
        if self.config.target >= 0:
            return self.config.target
        pool = self.target_speakers()
        return pool[int(rng.integers(len(pool)))]


def target_speakers(spec: str, named: list[int] | None, n_speakers: int, model: str) -> list[int]:
    """The speaker indices of the ``targets`` parameter ``spec`` for a model of ``n_speakers`` whose file names
    ``named`` (or none); ConfigError for an index outside the table."""
    if spec == "all" or (spec == "model" and not named):
        return list(range(n_speakers))
    pool = list(named) if spec == "model" else [int(i) for i in spec.split(",")]
    bad = [i for i in pool if not 0 <= i < n_speakers]
    if bad:
        raise ConfigError(f"parameter targets: {bad} are not speakers of model {model!r} (0 .. {n_speakers - 1})")
    return sorted(set(pool))


class B6(B5):
    """VPC 2024 B6 offline: as :class:`B5`, with the model of the shallower Whisper layer (see docs/baselines.md)."""

    name = "b6"

    @dataclasses.dataclass(frozen=True)
    class Config(B5.Config):
        model: str = param("b6", "acoustic model with a speaker table: b6, b5 (shipped) or a model.pt of "
                                 "voxanon train asrbn")
