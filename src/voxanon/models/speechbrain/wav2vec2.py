"""speechbrain's Hugging Face wav2vec2 lobe on transformers' ``Wav2Vec2Model``, without speechbrain.

What the lobe computes (``extract_features`` of speechbrain 0.5.16's
``lobes/models/huggingface_wav2vec.py`` ``HuggingFaceWav2Vec2``, the same in
1.x's ``Wav2Vec2``) on a zero-padded batch ``(batch, samples)``:

1. if the hub model's feature extractor has ``do_normalize``:
   ``F.layer_norm(wav, wav.shape[1:])``, each row over its whole padded length;
2. transformers ``Wav2Vec2Model``, without an attention mask: the VPC kit's two
   users never pass lengths to it (EncoderASR's ``LengthsCapableSequential``
   gives lengths only to layers whose ``forward`` has a ``lengths`` argument,
   and the lobe's is called ``wav_lens``; the SER interface calls it on the
   waveform alone);
3. if ``output_norm``: ``F.layer_norm(out, out.shape[1:])``, each item over all
   its frames and dimensions at once.

Because of 1 and 3 an item's output depends on the padding of its batch, as in
the kit.

Configuration. speechbrain downloads the ``source`` hub model's ``config.json``
and ``preprocessor_config.json`` at run time (into the lobe's ``save_path``);
the kit's ``exp/`` folders do not ship them (its download script fetches only
the release zips, and ``save_path`` is relative to the working directory). They
are looked for, in this order, in ``source`` as a folder and in the hub-cache
layout ``<save_path>/models--<org>--<name>/snapshots/*/`` (both relative to the
model folder); otherwise the values of the hub models the 2024 kit uses are
those of :data:`HUB_CONFIGS`. The weights are the lobe's state dict,
``model.<Wav2Vec2Model key>``; ``model.masked_spec_embed`` (used only in
training) may be there or not.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from voxanon.models.speechbrain.hparams import Node, SbFolderError

#: speechbrain's wav2vec2 lobes (0.5.x; 1.0-1.0.x; later releases)
LOBES = ("speechbrain.lobes.models.huggingface_wav2vec.HuggingFaceWav2Vec2",
         "speechbrain.lobes.models.huggingface_transformers.wav2vec2.Wav2Vec2",
         "speechbrain.integrations.huggingface.wav2vec2.Wav2Vec2")

_FRONT_END = {"conv_dim": [512] * 7, "conv_kernel": [10, 3, 3, 3, 3, 2, 2], "conv_stride": [5, 2, 2, 2, 2, 2, 2],
              "feat_extract_activation": "gelu", "hidden_act": "gelu", "num_conv_pos_embeddings": 128,
              "num_conv_pos_embedding_groups": 16, "layer_norm_eps": 1e-5}
#: structural values of the hub configs the 2024 kit's models download (their ``config.json``), with
#: ``do_normalize`` of their ``preprocessor_config.json``: facebook/wav2vec2-large-960h-lv60-self (the ASR,
#: ``exp/asr``; the same architecture as torchaudio's WAV2VEC2_ASR_LARGE_LV60K_960H bundle) and
#: facebook/wav2vec2-base (speechbrain's IEMOCAP emotion recipe, the kit's ``exp/ser`` folds)
HUB_CONFIGS = {
    "facebook/wav2vec2-large-960h-lv60-self": {
        **_FRONT_END, "conv_bias": True, "feat_extract_norm": "layer", "do_stable_layer_norm": True,
        "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096,
        "do_normalize": True},
    "facebook/wav2vec2-base": {
        **_FRONT_END, "conv_bias": False, "feat_extract_norm": "group", "do_stable_layer_norm": False,
        "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
        "do_normalize": True},
}


class Wav2Vec2Lobe(nn.Module):
    """The lobe: transformers ``Wav2Vec2Model`` as ``model``, with speechbrain's input and output layer norms."""

    def __init__(self, config: object, normalize_wav: bool, output_norm: bool):
        from transformers import Wav2Vec2Model

        super().__init__()
        self.model = Wav2Vec2Model(config)
        self.normalize_wav, self.output_norm = normalize_wav, output_norm
        self.kernels, self.strides = tuple(config.conv_kernel), tuple(config.conv_stride)

    @property
    def receptive_field(self) -> int:
        """Input samples the convolutions need for one output frame (400 at wav2vec2's sizes: 25 ms)."""
        n = 1
        for k, s in zip(reversed(self.kernels), reversed(self.strides)):
            n = (n - 1) * s + k
        return n

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        if self.normalize_wav:
            wav = F.layer_norm(wav, wav.shape[1:])
        out = self.model(wav).last_hidden_state
        return F.layer_norm(out, out.shape[1:]) if self.output_norm else out


def _cached(folder: Path, source: str, save_path: str) -> Path | None:
    """The folder holding ``source``'s config files, if the model folder has them (see the module notes)."""
    candidates = [folder / source]
    cache = folder / save_path / f"models--{source.replace('/', '--')}" / "snapshots"
    if save_path and cache.is_dir():
        candidates += sorted(p for p in cache.iterdir() if p.is_dir())
    return next((p for p in candidates if (p / "config.json").is_file()), None)


def hub_config(node: Node, folder: Path, where: Path) -> dict:
    """The ``Wav2Vec2Config`` values and ``do_normalize`` of a lobe node's ``source`` (see the module notes)."""
    source = str(node.kwargs.get("source", ""))
    if "hubert" in source or "wavlm" in source:
        raise SbFolderError(f"{where}: {source} is a HuBERT/WavLM lobe; only wav2vec2 lobes are supported")
    found = _cached(folder, source, str(node.kwargs.get("save_path") or ""))
    if found is None:
        if source not in HUB_CONFIGS:
            raise SbFolderError(f"{where}: the wav2vec2 source {source!r} needs its config.json (known offline: "
                                f"{', '.join(HUB_CONFIGS)}); put config.json and preprocessor_config.json of "
                                f"{source} in {folder / source}")
        return dict(HUB_CONFIGS[source])
    try:
        values = json.loads((found / "config.json").read_text(encoding="utf-8"))
        pre = found / "preprocessor_config.json"
        normalize = json.loads(pre.read_text(encoding="utf-8")).get("do_normalize", True) if pre.is_file() else True
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SbFolderError(f"{found}: cannot read the wav2vec2 config ({exc})") from exc
    if values.get("model_type", "wav2vec2") != "wav2vec2":
        raise SbFolderError(f"{found / 'config.json'}: model_type {values.get('model_type')!r} is not wav2vec2")
    return {**values, "do_normalize": bool(normalize)}


def build_lobe(node: Node, folder: Path, state: dict[str, torch.Tensor], where: Path) -> tuple[Wav2Vec2Lobe, int]:
    """The lobe of a hyperparams node, shaped for its checkpoint ``state``; with its output size.

    Built on the current default device (the meta device, to be filled by
    :func:`voxanon.models.speechbrain.weights.fill`).
    """
    from transformers import Wav2Vec2Config

    if node.target not in LOBES:
        raise SbFolderError(f"{where}: {node.target!r} is not one of speechbrain's wav2vec2 lobes ({', '.join(LOBES)})")
    if node.kwargs.get("output_all_hiddens"):
        raise SbFolderError(f"{where}: a wav2vec2 lobe with output_all_hiddens is not supported")
    values = hub_config(node, folder, where)
    normalize = values.pop("do_normalize")
    config = Wav2Vec2Config(**values)
    config.apply_spec_augment = False
    config.mask_time_prob = 0.05 if "model.masked_spec_embed" in state else 0.0
    config.mask_feature_prob = 0.0
    return Wav2Vec2Lobe(config, normalize, bool(node.kwargs.get("output_norm", False))), config.hidden_size
