"""Speaker-embedding anonymization (VPC B1 family, T10, F3-VA's speaker anonymizer).

Speech is split into content (a Whisper tiny.en layer), the normalised pitch
contour and a speaker embedding (GE2E); the embedding is replaced by a
pseudo-speaker's, drawn per utterance by one of the generators of
:mod:`voxanon.anonymizers.pseudo` (``pool``, ``same_gender``,
``cross_gender``, ``gaussian``, ``f3va``), and the speaker-conditioned
acoustic model of :mod:`voxanon.models.acoustic` turns the three back into
HiFi-GAN mels, vocoded by the universal HiFi-GAN.

The pseudo-speaker is drawn once per utterance from the source's embedding of
the whole utterance (at most :data:`EMBED_SECONDS`); long inputs are then
converted in chunks that all use it, so the voice stays one voice.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from voxanon.anonymizers.base import Anonymizer, Chunking, param
from voxanon.audio.io import fit_length, resample
from voxanon.dsp.world import transfer_f0
from voxanon.errors import ConfigError
from voxanon.heap import release_free_memory
from voxanon.ranges import Range

F0_MODES = ("model", "source")
#: seconds of the source (from its start) whose embedding drives the pseudo-speaker draw
EMBED_SECONDS = 60.0


def check_f0_mode(f0: str) -> None:
    """ConfigError unless ``f0`` is one of :data:`F0_MODES`."""
    if f0 not in F0_MODES:
        raise ConfigError(f"parameter f0: {f0!r} is not one of {', '.join(F0_MODES)}")


def resynthesis_files(model: str, generator: str, pool: str, flow: str) -> dict[str, Path]:
    """What a resynthesis anonymizer's output depends on: the acoustic model ``model`` and the pseudo-speaker
    ``generator``'s pool or flow (the shipped ones when ``pool`` / ``flow`` are empty)."""
    from voxanon.anonymizers.pseudo.defaults import (
        DEFAULT_FLOW,
        DEFAULT_POOL,
        default_file,
    )
    from voxanon.models.acoustic import shipped_path

    found = {"model": shipped_path(model)}
    if generator == "f3va":
        found["flow"] = Path(flow) if flow else default_file(DEFAULT_FLOW)
    elif generator:
        found["pool"] = Path(pool) if pool else default_file(DEFAULT_POOL)
    return found


def load_parts(c, generator: str, pool: str) -> tuple:
    """(acoustic model ``c.model``, its speaker encoder, the pseudo-speaker ``generator`` with the parameters of
    config ``c`` it takes and ``pool``, or for ``f3va`` the flow ``c.flow``), with ``c.threads`` torch threads."""
    from voxanon.anonymizers.pseudo import PARAMS, load_pool, make_generator
    from voxanon.models.acoustic import load_acoustic
    from voxanon.models.speaker import load_encoder

    if c.threads > 0:
        import torch

        torch.set_num_threads(c.threads)
    model = load_acoustic(c.model)
    flow = None
    if c.flow and generator == "f3va":
        from voxanon.models.flow import load_flow

        flow = load_flow(c.flow)
    params = {k: getattr(c, k) for k in PARAMS[generator]}
    made = make_generator(generator, pool=load_pool(pool) if pool else None, flow=flow, **params)
    return model, load_encoder(model.speaker_spec), made


class Resynthesis(Anonymizer):
    """Resynthesis by the acoustic model in one target voice per utterance (an embedding or a table index).

    Subclasses give the model (:meth:`acoustic`) and the per-utterance target (:meth:`pseudo_speaker`); their
    ``Config`` has ``f0``. Long inputs are converted chunk by chunk, every chunk in that one voice.
    """

    sample_rate = 16000
    needs_model = True
    #: 20-s chunks inside one 30-s Whisper window, 1 s of context each side: bounded memory at any duration
    chunking = Chunking(seconds=20.0, overlap=1.0, fade=0.05)

    def acoustic(self):
        """The :class:`~voxanon.models.acoustic.inference.AcousticModel` that synthesises."""
        raise NotImplementedError

    def pseudo_speaker(self, wav: np.ndarray, sr: int, rng: np.random.Generator):
        """The target voice drawn for this utterance."""
        raise NotImplementedError

    def resynthesize(self, wav: np.ndarray, sr: int, speaker) -> tuple[np.ndarray, int]:
        """``wav``'s content and pitch contour in the voice of ``speaker``: (waveform, vocoder rate)."""
        return self.acoustic().convert(wav, sr, speaker)

    def convert(self, wav: np.ndarray, sr: int, speaker) -> np.ndarray:
        """``wav`` spoken by ``speaker``, at ``sr`` and of the same length."""
        if not np.any(wav):
            return np.zeros(len(wav), dtype=np.float32)
        out, out_sr = self.resynthesize(wav, sr, speaker)
        out = fit_length(resample(out, out_sr, sr), len(wav))
        if self.config.f0 == "source":
            out = transfer_f0(out, wav, sr)
        release_free_memory()  # each chunk's working memory goes back (see voxanon.heap)
        return out.astype(np.float32)

    def anonymize(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        if not np.any(wav):
            return np.zeros(len(wav), dtype=np.float32), sr
        return self.convert(wav, sr, self.pseudo_speaker(wav, sr, rng)), sr

    def process(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        """One target voice per utterance; long inputs converted chunk by chunk with it."""
        cuts = self.chunking.bounds(wav, sr)
        if len(cuts) == 2 or not np.any(wav):
            return self.anonymize(wav, sr, rng)
        speaker = self.pseudo_speaker(wav, sr, rng)
        pieces = (self.convert(wav[a:b], sr, speaker) for a, b in self.chunking.spans(cuts, sr))
        return self.chunking.join(pieces, cuts, sr), sr


class Embedding(Resynthesis):
    """Replace the speaker embedding with a pseudo-speaker's and resynthesise content + pitch with it."""

    name = "embedding"

    @dataclasses.dataclass(frozen=True)
    class Config:
        generator: str = param("pool", "pseudo-speaker generator: pool, same_gender, cross_gender, gaussian or f3va")
        model: str = param("default", "acoustic model: default (shipped) or a checkpoint of voxanon train acoustic")
        pool: str = param("", "speaker pool .npz (voxanon data speaker-pool); empty = the shipped pool")
        flow: str = param("", "f3va: speaker flow checkpoint (voxanon train speaker-flow); empty = the shipped flow")
        n_far: int = param(200, "pool: farthest pool speakers considered", range=Range(1))
        n_avg: int = param(100, "pool: of those, how many are averaged", range=Range(1))
        alpha: float = param(0.0, "gaussian: weight of the source in the mix (0 = ignore it)", range=Range(0, 1))
        w: float = param(0.0, "f3va: weight of the source's latent (1 = the source, 0 = random)", range=Range(-1, 1))
        w_range: tuple[float, float] | None = param(
            None, "f3va: draw w per utterance uniformly in [lo, hi] (the paper's dynamic mode)", range=Range(-1, 1))
        solver: str = param("euler", "f3va: ODE solver (euler, midpoint, rk4)")
        steps: int = param(16, "f3va: ODE steps", range=Range(1, 1000))
        f0: str = param("model", "model (pitch level from the pseudo-speaker, contour from the source) or "
                                 "source (the source's own F0, imposed by WORLD after vocoding; VPC B1)")
        threads: int = param(0, "torch threads (0 = torch's default)", range=Range(0))

        def __post_init__(self) -> None:
            from voxanon.anonymizers.pseudo import GENERATORS

            if self.generator not in GENERATORS:
                raise ConfigError(f"parameter generator: {self.generator!r} is not one of {', '.join(GENERATORS)}")
            check_f0_mode(self.f0)

    def __init__(self, config=None, **params) -> None:
        super().__init__(config, **params)
        self._parts = None

    def parts(self):
        """(acoustic model, speaker encoder, generator), loaded on first use."""
        if self._parts is None:
            self._parts = load_parts(self.config, self.config.generator, self.config.pool)
        return self._parts

    def acoustic(self):
        return self.parts()[0]

    def model_files(self) -> dict[str, Path]:
        c = self.config
        return resynthesis_files(c.model, c.generator, c.pool, c.flow)

    def pseudo_speaker(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> np.ndarray:
        """The pseudo-speaker embedding drawn for this utterance."""
        _, encoder, generator = self.parts()
        source = encoder.embed([wav[: int(EMBED_SECONDS * sr)]], sr)[0]
        return generator(source, rng)


class B1(Embedding):
    """VPC 2024 baseline B1: pool pseudo-speaker (200 farthest, 100 averaged) resynthesised with the source's F0.

    The VPC's B1 uses x-vectors and a neural source-filter model fed the original F0; here GE2E embeddings and
    the speaker-conditioned acoustic model + HiFi-GAN, with the source's F0 imposed by WORLD after vocoding.
    """

    name = "b1"

    @dataclasses.dataclass(frozen=True)
    class Config(Embedding.Config):
        f0: str = param("source", "model (pitch level from the pseudo-speaker) or source (the source's F0; VPC B1)")
