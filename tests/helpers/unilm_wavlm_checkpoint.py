"""Random WavLM checkpoints written the way Microsoft's unilm release stores them (``{"cfg", "model"}``).

The key names and shapes follow ``unilm/wavlm/WavLM.py`` module by module
(listed here by hand, independently of ``voxanon.models.content.unilm``), so
the converter is tested against the layout and not against itself.
"""

from __future__ import annotations

import torch

#: WavLM-Large's cfg as the release stores it (the keys that shape the network)
LARGE_CFG = {"extractor_mode": "layer_norm", "encoder_layers": 24, "encoder_embed_dim": 1024,
             "encoder_ffn_embed_dim": 4096, "encoder_attention_heads": 16, "activation_fn": "gelu",
             "layer_norm_first": True, "conv_bias": False, "normalize": True,
             "conv_feature_layers": "[(512,10,5)] + [(512,3,2)] * 4 + [(512,2,2)] * 2",
             "conv_pos": 128, "conv_pos_groups": 16, "relative_position_embedding": True,
             "num_buckets": 320, "max_distance": 800, "gru_rel_pos": True, "dropout": 0.1, "mask_prob": 0.65}

#: the same structure, small: 2 layers of 64 dims, 32-channel conv stack of stride 320
SMALL_CFG = {**LARGE_CFG, "encoder_layers": 2, "encoder_embed_dim": 64, "encoder_ffn_embed_dim": 128,
             "encoder_attention_heads": 4, "conv_pos": 16, "conv_pos_groups": 4, "num_buckets": 32,
             "max_distance": 100,
             "conv_feature_layers": "[(32,10,5)] + [(32,3,2)] * 4 + [(32,2,2)] * 2"}


def unilm_shapes(cfg: dict) -> dict[str, tuple[int, ...]]:
    """Key → shape of unilm's ``WavLM(cfg).state_dict()`` (cfg with every structural key, as above)."""
    conv = eval(cfg["conv_feature_layers"])  # noqa: S307 - test-owned literal
    d, ffn, heads = cfg["encoder_embed_dim"], cfg["encoder_ffn_embed_dim"], cfg["encoder_attention_heads"]
    shapes: dict[str, tuple[int, ...]] = {"mask_emb": (d,)}
    c_in = 1
    for i, (c, k, _) in enumerate(conv):
        shapes[f"feature_extractor.conv_layers.{i}.0.weight"] = (c, c_in, k)   # Conv1d
        if cfg["conv_bias"]:
            shapes[f"feature_extractor.conv_layers.{i}.0.bias"] = (c,)
        if cfg["extractor_mode"] == "layer_norm":                              # (Transpose, LayerNorm, Transpose)
            shapes[f"feature_extractor.conv_layers.{i}.2.1.weight"] = (c,)
            shapes[f"feature_extractor.conv_layers.{i}.2.1.bias"] = (c,)
        elif i == 0:                                                           # GroupNorm(c, c)
            shapes["feature_extractor.conv_layers.0.2.weight"] = (c,)
            shapes["feature_extractor.conv_layers.0.2.bias"] = (c,)
        c_in = c
    if c_in != d:
        shapes["post_extract_proj.weight"] = (d, c_in)
        shapes["post_extract_proj.bias"] = (d,)
    k = cfg["conv_pos"]
    shapes.update({"encoder.pos_conv.0.bias": (d,), "encoder.pos_conv.0.weight_g": (1, 1, k),
                   "encoder.pos_conv.0.weight_v": (d, d // cfg["conv_pos_groups"], k)})
    for i in range(cfg["encoder_layers"]):
        p = f"encoder.layers.{i}."
        if i == 0:
            shapes[p + "self_attn.relative_attention_bias.weight"] = (cfg["num_buckets"], heads)
        for proj in ("k_proj", "v_proj", "q_proj", "out_proj"):
            shapes[p + f"self_attn.{proj}.weight"] = (d, d)
            shapes[p + f"self_attn.{proj}.bias"] = (d,)
        shapes.update({p + "self_attn.grep_linear.weight": (8, d // heads), p + "self_attn.grep_linear.bias": (8,),
                       p + "self_attn.grep_a": (1, heads, 1, 1),
                       p + "self_attn_layer_norm.weight": (d,), p + "self_attn_layer_norm.bias": (d,),
                       p + "fc1.weight": (ffn, d), p + "fc1.bias": (ffn,), p + "fc2.weight": (d, ffn),
                       p + "fc2.bias": (d,), p + "final_layer_norm.weight": (d,), p + "final_layer_norm.bias": (d,)})
    shapes["encoder.layer_norm.weight"] = (d,)
    shapes["encoder.layer_norm.bias"] = (d,)
    shapes["layer_norm.weight"] = (c_in,)
    shapes["layer_norm.bias"] = (c_in,)
    return shapes


def random_state(cfg: dict, seed: int = 0) -> dict[str, torch.Tensor]:
    """Random weights of unilm's layout (norm gains near 1, weights scaled so activations stay O(1))."""
    gen = torch.Generator().manual_seed(seed)
    state = {}
    for key, shape in unilm_shapes(cfg).items():
        x = torch.randn(shape, generator=gen)
        if key.endswith(("norm.weight", ".2.1.weight", ".2.weight", "weight_g", "grep_a")):
            x = 1.0 + 0.1 * x
        elif len(shape) > 1 and "relative_attention_bias" not in key:
            x = x / shape[1] ** 0.5 / (shape[2] if len(shape) > 2 else 1) ** 0.5
        else:
            x = 0.1 * x
        state[key] = x
    return state


def write_checkpoint(path, cfg: dict = SMALL_CFG, seed: int = 0) -> dict[str, torch.Tensor]:
    """Save ``{"cfg": cfg, "model": random_state(cfg)}`` at ``path``; returns the state dict."""
    state = random_state(cfg, seed)
    torch.save({"cfg": dict(cfg), "model": state}, path)
    return state
