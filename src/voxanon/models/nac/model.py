"""B4's whole model: source speech -> Bark semantic tokens -> coarse -> fine -> EnCodec, in a prompt's voice.

The semantic tokens are the kit's: HuBERT base's layer 9 (transformers ``HubertModel``, raw 16 kHz input, no
normalisation) through the quantiser of :mod:`.quantizer`. The kit loads the source at 24 kHz and resamples it to
16 kHz for HuBERT; here a source is resampled once, straight to 16 kHz.
"""

from __future__ import annotations

import numpy as np
import torch

from voxanon.errors import ModelError
from voxanon.models.nac.bark import (
    BARK,
    coarse_tokens,
    codec_decode,
    fine_tokens,
    load_bark,
)
from voxanon.models.nac.prompts import VoicePrompt
from voxanon.models.nac.quantizer import HUBERT_LAYER, load_quantizer
from voxanon.models.nac.weights import NacWeights

#: longest input HuBERT encodes in one pass (longer ones go in overlapping windows)
MAX_SECONDS = 60.0


class NacLM:
    """The located weights of B4, loaded: semantic-token extractor, Bark coarse and fine models, EnCodec."""

    sample_rate = BARK.sample_rate

    def __init__(self, weights: NacWeights, device: str = "cpu") -> None:
        from voxanon.models.content.hf import HfContent

        self.device = torch.device(device)
        self.content = HfContent.from_dir(weights.hubert, HUBERT_LAYER, max_seconds=MAX_SECONDS).to(self.device)
        self.quantizer = load_quantizer(weights.quantizer).to(self.device)
        if self.quantizer.input_size != self.content.dim or self.quantizer.output_size != BARK.semantic_vocab:
            raise ModelError(f"{weights.quantizer}: the quantiser maps {self.quantizer.input_size}-d features to "
                             f"{self.quantizer.output_size} tokens; B4 needs {self.content.dim}-d ({weights.hubert}) "
                             f"to {BARK.semantic_vocab}")
        self.coarse, self.fine, self.codec = load_bark(weights.bark, str(self.device))

    def semantic_tokens(self, wav: np.ndarray) -> np.ndarray:
        """Bark semantic tokens ``(T,)`` of a 16 kHz waveform: HuBERT layer 9, then the quantiser's arg-max."""
        with torch.inference_mode():
            features = self.content.encode_tensor(torch.from_numpy(np.asarray(wav, dtype=np.float32)).to(self.device))
            return self.quantizer.tokens(features).cpu().numpy()

    def generate(self, wav: np.ndarray, voice: VoicePrompt | None, seed: int, coarse_temperature: float,
                 fine_temperature: float) -> np.ndarray:
        """The 24 kHz waveform of a 16 kHz source spoken in ``voice``'s voice (None: no prompt); seeded."""
        generator = torch.Generator(device=self.device).manual_seed(seed)
        semantic = self.semantic_tokens(wav)
        coarse = coarse_tokens(self.coarse, semantic, voice, coarse_temperature, generator)
        fine = fine_tokens(self.fine, coarse, voice, fine_temperature, generator)
        return codec_decode(self.codec, fine)
