"""The VPC 2026 kit's ``exp/asv_ssl/`` written from scratch: ``WavLM-Large.pt`` and ``embedding_model.ckpt``.

``WavLM-Large.pt`` is unilm's ``{"cfg", "model"}`` (``evaluation/privacy/asv/WavLM.py``): the
weights of a transformers ``WavLMModel`` renamed by hand to unilm's module names, so the
model they came from is the reference the loaded one is compared with.
``embedding_model.ckpt`` is the state dict of the kit's ``ECAPA_TDNN_test``
(``ecapa_model_wavlm_24layer.py``) over speechbrain 1.0.3's ECAPA blocks; its keys and
shapes are listed here by hand from those modules, in the order the kit registers them.
"""

from __future__ import annotations

import re

import torch

#: WavLM-Large's cfg as the release stores it (the keys that shape the network)
WAVLM_LARGE_CFG = {"extractor_mode": "layer_norm", "encoder_layers": 24, "encoder_embed_dim": 1024,
                   "encoder_ffn_embed_dim": 4096, "encoder_attention_heads": 16, "activation_fn": "gelu",
                   "layer_norm_first": True, "conv_bias": False, "normalize": True,
                   "conv_feature_layers": "[(512,10,5)] + [(512,3,2)] * 4 + [(512,2,2)] * 2",
                   "conv_pos": 128, "conv_pos_groups": 16, "relative_position_embedding": True,
                   "num_buckets": 320, "max_distance": 800, "gru_rel_pos": True}
#: the same structure, small: 3 layers of 32 dimensions over a 16-channel conv stack
WAVLM_SMALL_CFG = {**WAVLM_LARGE_CFG, "encoder_layers": 3, "encoder_embed_dim": 32, "encoder_ffn_embed_dim": 64,
                   "encoder_attention_heads": 4, "conv_pos": 8, "conv_pos_groups": 4, "num_buckets": 32,
                   "max_distance": 100, "conv_feature_layers": "[(16,10,5)] + [(16,3,2)] * 4 + [(16,2,2)] * 2"}
#: ``ECAPA_TDNN_test()`` as the kit builds it (its defaults) and a small one whose width fits WAVLM_SMALL_CFG
ECAPA_KIT = dict(n_mels=80, c=1024, last=3072, att=128, se=128, scale=8, emb=192)
ECAPA_SMALL = dict(n_mels=80, c=32, last=96, att=16, se=16, scale=4, emb=24)

#: transformers WavLMModel name -> unilm WavLM name, applied in turn
UNILM_NAMES = [
    (r"^masked_spec_embed$", "mask_emb"),
    (r"^(feature_extractor\.conv_layers\.\d+)\.conv\.", r"\1.0."),
    (r"^(feature_extractor\.conv_layers\.\d+)\.layer_norm\.", r"\1.2.1."),        # Transpose, LayerNorm, Transpose
    (r"^feature_projection\.layer_norm\.", "layer_norm."),
    (r"^feature_projection\.projection\.", "post_extract_proj."),
    (r"^encoder\.pos_conv_embed\.conv\.(parametrizations\.weight\.original0|weight_g)$", "encoder.pos_conv.0.weight_g"),
    (r"^encoder\.pos_conv_embed\.conv\.(parametrizations\.weight\.original1|weight_v)$", "encoder.pos_conv.0.weight_v"),
    (r"^encoder\.pos_conv_embed\.conv\.bias$", "encoder.pos_conv.0.bias"),
    (r"\.attention\.gru_rel_pos_const$", ".self_attn.grep_a"),
    (r"\.attention\.gru_rel_pos_linear\.", ".self_attn.grep_linear."),
    (r"\.attention\.rel_attn_embed\.", ".self_attn.relative_attention_bias."),
    (r"\.attention\.", ".self_attn."),
    (r"^(encoder\.layers\.\d+)\.layer_norm\.", r"\1.self_attn_layer_norm."),
    (r"\.feed_forward\.intermediate_dense\.", ".fc1."),
    (r"\.feed_forward\.output_dense\.", ".fc2."),
]


def unilm_name(key: str) -> str:
    for pattern, repl in UNILM_NAMES:
        key = re.sub(pattern, repl, key)
    return key


def reference_wavlm(cfg: dict, seed: int = 0):
    """transformers ``WavLMModel`` of ``cfg`` with random weights (norms, biases and position tables randomised too)."""
    from transformers import WavLMModel

    from voxanon.models.content.unilm import transformers_config

    torch.manual_seed(seed)
    model = WavLMModel(transformers_config(cfg)).eval()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("norm.weight", "gru_rel_pos_const")):
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g))
            elif p.dim() == 1 or "rel_attn_embed" in name:
                p.copy_(0.2 * torch.randn(p.shape, generator=g))
    return model


def unilm_state(model) -> dict[str, torch.Tensor]:
    """The model's weights under unilm's names, as ``WavLM-Large.pt`` stores them."""
    return {unilm_name(k): v.clone() for k, v in model.state_dict().items()}


def ecapa_ssl_shapes(n_layers: int, n_mels: int, c: int, last: int, att: int, se: int, scale: int,
                     emb: int) -> dict[str, tuple[int, ...]]:
    """Key -> shape of ``ECAPA_TDNN_test(...).state_dict()`` (kernels 5, 3, 3, 3, 1), in registration order."""
    shapes: dict[str, tuple[int, ...]] = {}

    def conv(p, cin, cout, k):                      # speechbrain Conv1d: .conv is the torch module
        shapes.update({f"{p}.conv.weight": (cout, cin, k), f"{p}.conv.bias": (cout,)})

    def norm(p, n):                                 # speechbrain BatchNorm1d: .norm is the torch module
        shapes.update({f"{p}.norm.{w}": (n,) for w in ("weight", "bias", "running_mean", "running_var")})
        shapes[f"{p}.norm.num_batches_tracked"] = ()

    def tdnn(p, cin, cout, k):                      # conv, activation, norm, dropout
        conv(f"{p}.conv", cin, cout, k)
        norm(f"{p}.norm", cout)

    def se_res2net(p, k):                           # tdnn1, res2net_block, tdnn2, se_block (in == out: no shortcut)
        tdnn(f"{p}.tdnn1", c, c, 1)
        for j in range(scale - 1):
            tdnn(f"{p}.res2net_block.blocks.{j}", c // scale, c // scale, k)
        tdnn(f"{p}.tdnn2", c, c, 1)
        conv(f"{p}.se_block.conv1", c, se, 1)
        conv(f"{p}.se_block.conv2", se, c, 1)

    kernels = (5, 3, 3, 3)
    tdnn("blocks.0", n_mels, c, kernels[0])
    for i in (1, 2, 3):
        se_res2net(f"blocks.{i}", kernels[i])
    for i in (0, 1, 2, 3):
        se_res2net(f"blocks_features.{i}", kernels[i])
    tdnn("mfa", 3 * c, last, 1)
    shapes["weighted_sum.layer_weights"] = (n_layers,)
    tdnn("asp.tdnn", 3 * last, att, 1)
    conv("asp.conv", att, last, 1)
    norm("asp_bn", 2 * last)
    conv("fc", 2 * last, emb, 1)
    return shapes


def random_ecapa_state(shapes: dict[str, tuple[int, ...]], seed: int = 0) -> dict[str, torch.Tensor]:
    """Random tensors of ``shapes``: convolutions scaled by fan-in, batch-norm statistics plausible."""
    g = torch.Generator().manual_seed(seed)
    state = {}
    for key, shape in shapes.items():
        if key.endswith("num_batches_tracked"):
            state[key] = torch.tensor(100)
        elif key.endswith("running_var"):
            state[key] = 0.5 + torch.rand(shape, generator=g)
        elif key.endswith(("norm.weight", "layer_weights")):
            state[key] = 1 + 0.3 * torch.randn(shape, generator=g)
        elif len(shape) == 3:
            state[key] = torch.randn(shape, generator=g) / (shape[1] * shape[2]) ** 0.5
        else:
            state[key] = 0.1 * torch.randn(shape, generator=g)
    return state


def write_asv_ssl(folder, seed: int = 0):
    """Write a small ``exp/asv_ssl`` (the kit's file names) into ``folder``; returns (reference WavLM, ECAPA state)."""
    folder.mkdir(parents=True, exist_ok=True)
    wavlm = reference_wavlm(WAVLM_SMALL_CFG, seed)
    torch.save({"cfg": WAVLM_SMALL_CFG, "model": unilm_state(wavlm)}, folder / "WavLM-Large.pt")
    ecapa = random_ecapa_state(ecapa_ssl_shapes(WAVLM_SMALL_CFG["encoder_layers"], **ECAPA_SMALL), seed)
    torch.save(ecapa, folder / "embedding_model.ckpt")
    return wavlm, ecapa
