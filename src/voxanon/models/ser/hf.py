"""Any transformers audio-classification checkpoint as an emotion recognizer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from voxanon.audio.io import resample
from voxanon.data.iemocap import EMOTIONS, vpc_emotion
from voxanon.models.model_files import short_reason
from voxanon.models.ser.base import EmotionRecognizer, SERError, length_batches


class TransformersSER(EmotionRecognizer):
    """A transformers audio-classification checkpoint with labels mapped to the VPC classes."""

    def __init__(self, source: str):
        from transformers import AutoFeatureExtractor, AutoModelForAudioClassification

        local = Path(source).is_dir()
        try:
            self.extractor = AutoFeatureExtractor.from_pretrained(source, local_files_only=local)
            self.model = AutoModelForAudioClassification.from_pretrained(source, local_files_only=local).eval()
        except (OSError, ValueError) as exc:
            raise SERError(f"cannot load transformers audio-classification model {source!r}: "
                           f"{short_reason(exc)}") from exc
        self.name = f"transformers:{source}"
        self.sample_rate = int(getattr(self.extractor, "sampling_rate", 16000))
        id2label = {int(k): str(v) for k, v in self.model.config.id2label.items()}
        n_out = self.model.config.num_labels
        self.mapping = np.zeros((n_out, len(EMOTIONS)), dtype=np.float32)
        self.excluded_labels: list[str] = []
        for i in range(n_out):
            emo = vpc_emotion(id2label.get(i, ""))
            if emo is None:
                self.excluded_labels.append(id2label.get(i, str(i)))
            else:
                self.mapping[i, EMOTIONS.index(emo)] = 1.0
        self.missing_classes = [e for j, e in enumerate(EMOTIONS) if not self.mapping[:, j].any()]
        if len(self.missing_classes) == len(EMOTIONS):
            raise SERError(f"{source}: none of the model's labels {sorted(id2label.values())} "
                           f"maps to the VPC classes {EMOTIONS}")

    def predict_proba(self, wavs: list[np.ndarray], sr: int, *, batch_size: int = 16) -> np.ndarray:
        wavs = [resample(np.asarray(w, dtype=np.float32), sr, self.sample_rate) for w in wavs]
        out = np.zeros((len(wavs), len(self.labels)), dtype=np.float32)
        for idx in length_batches([len(w) for w in wavs], batch_size):
            inputs = self.extractor([wavs[i] for i in idx], sampling_rate=self.sample_rate,
                                    padding=True, return_tensors="pt")
            with torch.inference_mode():
                proba = torch.softmax(self.model(**inputs).logits.float(), dim=1).numpy()
            mass = proba @ self.mapping
            out[idx] = mass / np.maximum(mass.sum(axis=1, keepdims=True), 1e-12)
        return out
