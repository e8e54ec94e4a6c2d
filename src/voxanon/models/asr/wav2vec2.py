"""wav2vec2 CTC recognisers loaded with transformers (the VPC's evaluation ASR class).

The source is a local directory written by ``save_pretrained`` (model and
processor) or a hub name such as ``facebook/wav2vec2-large-960h-lv60-self``,
which needs the local Hugging Face cache or a network connection. Batches are
sorted by length and padded; models whose feature extractor asks for an
attention mask get one, the others see zero padding (as they were trained).
Greedy CTC decoding, each item's logits cut to its own length.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from voxanon.models.asr.base import AsrBackend, AsrError
from voxanon.models.model_files import short_reason


def _source_id(source: str) -> str:
    """Cache id of a model source: a hub name as is, a local directory with a digest of its files."""
    path = Path(source)
    if not path.is_dir():
        return source
    digest = hashlib.sha256()
    for f in sorted(p for p in path.iterdir() if p.is_file()):
        stat = f.stat()
        digest.update(f"{f.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return f"{path.resolve().name}@{digest.hexdigest()[:12]}"


class Wav2Vec2Backend(AsrBackend):
    """A wav2vec2 (or compatible) CTC model with its processor, greedy decoding."""

    def __init__(self, source: str, *, device: str = "cpu", threads: int = 0, batch_size: int = 8) -> None:
        try:
            import torch
            from transformers import AutoModelForCTC, AutoProcessor
        except ImportError as exc:
            raise AsrError("wav2vec2 backends need torch and transformers: pip install 'voxanon[models]'") from exc
        if threads:
            torch.set_num_threads(threads)
        local = Path(source).is_dir()
        try:
            self.processor = AutoProcessor.from_pretrained(source, local_files_only=local)
            self.model = AutoModelForCTC.from_pretrained(source, local_files_only=local).to(device).eval()
        except (OSError, ValueError) as exc:
            raise AsrError(f"cannot load wav2vec2 model {source!r} (a save_pretrained directory, or a hub "
                           f"name that is cached or reachable): {short_reason(exc)}") from exc
        self.sample_rate = int(self.processor.feature_extractor.sampling_rate)
        self.use_mask = bool(getattr(self.processor.feature_extractor, "return_attention_mask", False))
        self.device, self.batch_size = device, batch_size
        self.name = f"wav2vec2:{_source_id(source)}"

    def _transcribe(self, wavs: list[np.ndarray]) -> list[str]:
        order = sorted(range(len(wavs)), key=lambda i: len(wavs[i]))
        out = [""] * len(wavs)
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            for i, text in zip(idx, self._decode_batch([wavs[i] for i in idx])):
                out[i] = text
        return out

    def _decode_batch(self, wavs: list[np.ndarray]) -> list[str]:
        import torch

        inputs = self.processor(wavs, sampling_rate=self.sample_rate, return_tensors="pt", padding=True,
                                return_attention_mask=self.use_mask)
        kwargs = {"input_values": inputs["input_values"].to(self.device)}
        if self.use_mask:
            kwargs["attention_mask"] = inputs["attention_mask"].to(self.device)
        with torch.inference_mode():
            logits = self.model(**kwargs).logits
        lengths = self.model._get_feat_extract_output_lengths(torch.tensor([len(w) for w in wavs]))
        ids = logits.argmax(dim=-1).cpu()
        return [self.processor.decode(ids[i, : int(n)]).strip() for i, n in enumerate(lengths)]
