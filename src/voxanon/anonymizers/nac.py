"""VPC 2024 baseline B4 (Panariello et al., ICASSP 2024): a neural audio codec language model, from its real weights.

The source's content becomes Bark semantic tokens (HuBERT base layer 9 and
the kit's quantiser); Bark's coarse model continues a pseudo-speaker's voice
prompt with the first two EnCodec codebooks for those tokens (temperature
0.7), its fine model adds the other six (0.5), and EnCodec decodes 24 kHz
speech, resampled here to the input's rate and cut or padded to its length
(Bark's 49.9 vs HuBERT's 50 tokens a second make it ~0.2 % longer). Nothing
of the source but its semantic tokens reaches the output.

Pseudo-speakers: the 2024 kit (``anon_nac``, utterance level) draws one voice
uniformly from its voice folder for each utterance; here the draw comes from
the utterance's rng (the speaker's with ``--level speaker``, so a speaker keeps
one voice, where the kit's speaker-level option deals voices out evenly over
the speakers of a set). ``voice`` fixes one.

Every part is a pretrained network that no package installable here ships;
:mod:`voxanon.models.nac.weights` says where each is looked for, and building
``b4`` without them is a ConfigError that lists what to put where
(docs/baselines.md, B4).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from voxanon.anonymizers.base import Anonymizer, Chunking, param
from voxanon.audio.io import fit_length, resample
from voxanon.errors import ConfigError, DataError
from voxanon.ranges import Range

#: HuBERT's input rate, and its receptive field there: the shortest input that gives one semantic token
SOURCE_RATE, MIN_SOURCE_SAMPLES = 16_000, 400


class B4(Anonymizer):
    """VPC 2024 B4: Bark semantic tokens -> Bark coarse/fine in a pseudo-speaker's voice -> EnCodec (needs weights)."""

    name = "b4"
    needs_model = True
    offline = False
    # inputs up to 44 s (every VPC utterance) run in one piece, as in the kit; longer ones in chunks
    chunking = Chunking(seconds=40.0, overlap=2.0)

    @dataclasses.dataclass(frozen=True)
    class Config:
        model: str = param("suno/bark", "Bark (coarse, fine, EnCodec): a BarkModel folder or a hub id in the "
                                        "Hugging Face cache (suno/bark, as the kit; suno/bark-small)")
        hubert: str = param("facebook/hubert-base-ls960", "HuBERT of the semantic tokens: a HubertModel folder or "
                                                          "a hub id in the cache")
        quantizer: str = param("", "HuBERT-to-semantic-token quantiser (.pth); empty = quantifier_hubert_base_"
                                   "ls960_14.pth of GitMylo/bark-voice-cloning in the cache, or coqui TTS's "
                                   "tokenizer.pth")
        voices: str = param("", "pseudo-speaker pool: a folder of Bark voice prompts (.npz, one per file or "
                                "subfolder; the kit's suno_voices/v2); empty = the Bark folder's v2 presets")
        voice: str = param("", "one voice of the pool for every utterance; empty = drawn per utterance")
        coarse_temperature: float = param(0.7, "sampling temperature of the coarse tokens (0 = arg-max)",
                                          range=Range(0))
        fine_temperature: float = param(0.5, "sampling temperature of the fine tokens (0 = arg-max)",
                                        range=Range(0))
        device: str = param("cpu", "torch device (cpu, cuda, cuda:1, ...)")
        threads: int = param(0, "torch threads (0 = torch's default)", range=Range(0))

    def __init__(self, config=None, **params) -> None:
        from voxanon.models.nac.weights import locate

        super().__init__(config, **params)
        c = self.config
        self.weights = locate(c.model, c.hubert, c.quantizer, c.voices, who=self.name)
        self._model = None
        self._voices = None
        self._last: dict[str, Any] | None = None

    def voices(self) -> list:
        """The pseudo-speaker pool (:class:`voxanon.models.nac.prompts.VoicePrompt`), sorted by name."""
        if self._voices is None:
            from voxanon.models.nac.prompts import folder_pool, preset_pool

            pool = folder_pool(self.weights.voices) if self.weights.voices else preset_pool(self.weights.bark)
            if self.config.voice and self.config.voice not in [v.name for v in pool]:
                shown = ", ".join(v.name for v in pool[:8]) + (", ..." if len(pool) > 8 else "")
                raise ConfigError(f"parameter voice: {self.config.voice!r} is not in the pool of {len(pool)} "
                                  f"voices ({shown})")
            self._voices = pool
        return self._voices

    def model(self):
        """The loaded :class:`voxanon.models.nac.model.NacLM` (on first use)."""
        if self._model is None:
            import torch

            from voxanon.models.nac.model import NacLM

            c = self.config
            try:
                device = torch.device(c.device)
            except RuntimeError as exc:
                raise ConfigError(f"parameter device: {c.device!r} is not a torch device ({exc})") from None
            if device.type == "cuda" and not torch.cuda.is_available():
                raise ConfigError(f"parameter device: {c.device!r}, but torch sees no CUDA device here")
            if c.threads > 0:
                torch.set_num_threads(c.threads)
            self._model = NacLM(self.weights, str(device))
        return self._model

    def prepare(self, *, quiet: bool = False) -> None:
        """Read the voice pool once before workers start (a bad prompt or ``voice`` fails the run early)."""
        self.voices()

    def anonymize(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        pool = self.voices()
        if self.config.voice:
            voice = next(v for v in pool if v.name == self.config.voice)
        else:
            voice = pool[int(rng.integers(len(pool)))]
        seed = int(rng.integers(2**63))
        source = resample(np.asarray(wav, dtype=np.float32), sr, SOURCE_RATE)
        if len(source) < MIN_SOURCE_SAMPLES:
            raise DataError(f"{self.name}: input of {1000 * len(wav) / sr:.1f} ms is shorter than HuBERT's "
                            f"{1000 * MIN_SOURCE_SAMPLES / SOURCE_RATE:.0f} ms window; it has no semantic token")
        model = self.model()
        c = self.config
        out = model.generate(source, voice, seed, c.coarse_temperature, c.fine_temperature)
        self._last = {"voice": voice.name}
        return fit_length(resample(out, model.sample_rate, sr), len(wav)), sr

    def report(self) -> dict[str, Any] | None:
        """The pseudo-speaker (voice prompt) of the last utterance."""
        return self._last
