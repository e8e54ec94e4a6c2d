"""Small random B4 checkpoints in the published layouts, built with the real configuration classes.

Bark (``BarkModel.save_pretrained``: BarkConfig with Bark's real vocabularies, windows, EnCodec rate and hop, tiny
widths), its voice presets (``speaker_embeddings_path.json`` + ``.npy``, as the hub's ``suno/bark``), HuBERT
(``HubertModel``: the real convolution front end, 10 layers of width 32) and the quantiser (a torch state dict with
the published key names, plus the ``.info`` its training script appends). :func:`hub_cache` lays them out as the
Hugging Face hub cache does, so B4 finds them with its defaults.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import torch

HUBERT_DIM = 32
#: per-voice prompt lengths: semantic tokens, and the 75 / 49.9 coarse and fine frames per token
PROMPT_SEMANTIC = 100
PROMPT_FRAMES = round(PROMPT_SEMANTIC * 75 / 49.9)


def bark_config():
    """A tiny BarkConfig with the real token layout (vocabularies, 1024 positions, EnCodec 24 kHz / hop 320)."""
    from transformers import BarkConfig, EncodecConfig

    sub = dict(block_size=1024, num_layers=1, num_heads=2, hidden_size=16, dropout=0.0)
    codec = EncodecConfig(sampling_rate=24_000, audio_channels=1, target_bandwidths=[1.5, 3.0, 6.0, 12.0, 24.0],
                          hidden_size=16, num_filters=4, num_residual_layers=1, upsampling_ratios=[8, 5, 4, 2],
                          codebook_size=1024, num_lstm_layers=2, normalize=False, chunk_length_s=None, overlap=None)
    return BarkConfig(
        semantic_config=dict(sub, input_vocab_size=129_600, output_vocab_size=10_048),
        coarse_acoustics_config=dict(sub, input_vocab_size=12_096, output_vocab_size=12_096),
        fine_acoustics_config=dict(sub, input_vocab_size=1056, output_vocab_size=1056, n_codes_total=8,
                                   n_codes_given=1),
        codec_config=codec.to_dict())


def random_prompt(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A voice prompt of random tokens with Bark's shapes and dtypes."""
    return {"semantic_prompt": rng.integers(0, 10_000, PROMPT_SEMANTIC),
            "coarse_prompt": rng.integers(0, 1024, (2, PROMPT_FRAMES)),
            "fine_prompt": rng.integers(0, 1024, (8, PROMPT_FRAMES))}


def save_bark(folder: Path, voices: tuple[str, ...] = ("v2/en_speaker_0", "v2/en_speaker_1", "v2/de_speaker_0",
                                                        "en_speaker_0"), seed: int = 0) -> Path:
    """A random BarkModel folder with voice presets ``voices`` (hub layout); returns it."""
    from transformers import BarkModel

    torch.manual_seed(seed)
    model = BarkModel(bark_config())
    with torch.no_grad():  # EnCodec's codebooks start as zeros (k-means fills them in training): make them count
        for layer in model.codec_model.quantizer.layers:
            layer.codebook.embed.normal_()
    model.save_pretrained(folder)
    rng = np.random.default_rng(seed)
    table: dict = {"repo_or_path": "suno/bark"}
    for name in voices:
        entry = {}
        for key, arr in random_prompt(rng).items():
            rel = f"speaker_embeddings/{name}_{key}.npy"
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            np.save(folder / rel, arr)
            entry[key] = rel
        table[name] = entry
    (folder / "speaker_embeddings_path.json").write_text(json.dumps(table), encoding="utf-8")
    return folder


def save_hubert(folder: Path, seed: int = 0) -> Path:
    """A random HubertModel folder: HuBERT base's front end and layout, 10 layers of width 32."""
    from transformers import HubertConfig, HubertModel

    torch.manual_seed(seed)
    config = HubertConfig(hidden_size=HUBERT_DIM, num_hidden_layers=10, num_attention_heads=2, intermediate_size=48,
                          conv_dim=(16,) * 7, num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2,
                          feat_extract_norm="group", do_stable_layer_norm=False)
    HubertModel(config).eval().save_pretrained(folder)
    return folder


def quantizer_state(hidden: int = 24, intermediate: int | None = None, seed: int = 0) -> dict[str, torch.Tensor]:
    """The quantiser's state dict under the published keys, random, for HuBERT_DIM-d input."""
    torch.manual_seed(seed)
    lstm = torch.nn.LSTM(HUBERT_DIM, hidden, 2, batch_first=True)
    state = {f"lstm.{k}": v for k, v in lstm.state_dict().items()}
    if intermediate:
        mid = torch.nn.Linear(hidden, intermediate)
        state.update({f"intermediate.{k}": v for k, v in mid.state_dict().items()})
    fc = torch.nn.Linear(intermediate or hidden, 10_000)
    state.update({f"fc.{k}": v for k, v in fc.state_dict().items()})
    return state


def save_quantizer(path: Path, hidden: int = 24, intermediate: int | None = None, seed: int = 0,
                   info: dict | None = None) -> Path:
    """The quantiser checkpoint as its training script writes it: ``torch.save`` of the state dict, then ``.info``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(quantizer_state(hidden, intermediate, seed), path)
    info = info if info is not None else {"input_size": HUBERT_DIM, "hidden_size": hidden, "output_size": 10_000,
                                          "version": 1 if intermediate else 0}
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr(f"{path.stem}/.info", json.dumps(info))
    return path


def hub_cache(root: Path) -> Path:
    """A Hugging Face hub cache at ``root`` holding suno/bark, facebook/hubert-base-ls960 and the quantiser."""
    def snapshot(repo: str) -> Path:
        folder = root / f"models--{repo.replace('/', '--')}"
        (folder / "refs").mkdir(parents=True, exist_ok=True)
        (folder / "refs" / "main").write_text("0123abcd", encoding="utf-8")
        (folder / "snapshots" / "0123abcd").mkdir(parents=True)
        return folder / "snapshots" / "0123abcd"

    save_bark(snapshot("suno/bark"))
    save_hubert(snapshot("facebook/hubert-base-ls960"))
    save_quantizer(snapshot("GitMylo/bark-voice-cloning") / "quantifier_hubert_base_ls960_14.pth")
    return root
