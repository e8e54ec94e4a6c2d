"""WavLM checkpoints in Microsoft's unilm layout (``WavLM-Large.pt``, as kNN-VC ships it) → transformers ``WavLMModel``.

The original release is a ``torch.save`` dict ``{"cfg": {...}, "model": state_dict}``
of ``unilm/wavlm/WavLM.py``. :func:`transformers_config` builds a
``WavLMConfig`` from ``cfg`` (layers, dims, heads, conv stack, positional
convolution, pre/post layer norm, relative-position buckets and distance),
:func:`unilm_key_map` lists every key that ``cfg`` implies with the
transformers key it becomes, and :func:`load_unilm_wavlm` checks the state
dict against both (the first missing, unexpected or mis-shaped key is named)
before loading it. The layout differences: the conv blocks are
``Sequential(conv, dropout, norm, GELU)`` (``conv_layers.i.0`` = conv,
``.2`` = group norm, ``.2.1`` = layer norm inside a transpose sandwich), the
attention's gated relative position bias is ``grep_linear``/``grep_a``/
``relative_attention_bias`` (layer 0 only), and the conv-feature layer norm is
the top-level ``layer_norm``.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping

import torch

from voxanon.models.checkpoint import check_state_keys, load_checkpoint
from voxanon.models.content.base import ContentError
from voxanon.models.model_files import model_file_error, require_keys

#: what a layer's unilm sub-key becomes under ``encoder.layers.<i>.``
_LAYER_KEYS = {
    **{f"self_attn.{p}_proj.{w}": f"attention.{p}_proj.{w}" for p in "qkv" for w in ("weight", "bias")},
    "self_attn.out_proj.weight": "attention.out_proj.weight",
    "self_attn.out_proj.bias": "attention.out_proj.bias",
    "self_attn.grep_linear.weight": "attention.gru_rel_pos_linear.weight",
    "self_attn.grep_linear.bias": "attention.gru_rel_pos_linear.bias",
    "self_attn.grep_a": "attention.gru_rel_pos_const",
    "self_attn_layer_norm.weight": "layer_norm.weight",
    "self_attn_layer_norm.bias": "layer_norm.bias",
    "fc1.weight": "feed_forward.intermediate_dense.weight",
    "fc1.bias": "feed_forward.intermediate_dense.bias",
    "fc2.weight": "feed_forward.output_dense.weight",
    "fc2.bias": "feed_forward.output_dense.bias",
    "final_layer_norm.weight": "final_layer_norm.weight",
    "final_layer_norm.bias": "final_layer_norm.bias",
}
#: unilm's ``WavLMConfig`` defaults (``cfg`` only overrides some of them)
_DEFAULTS = {"extractor_mode": "default", "encoder_layers": 12, "encoder_embed_dim": 768,
             "encoder_ffn_embed_dim": 3072, "encoder_attention_heads": 12, "activation_fn": "gelu",
             "layer_norm_first": False, "conv_bias": False, "conv_pos": 128, "conv_pos_groups": 16,
             "conv_feature_layers": "[(512,10,5)] + [(512,3,2)] * 4 + [(512,2,2)] * 2",
             "relative_position_embedding": False, "num_buckets": 320, "max_distance": 1280,
             "gru_rel_pos": False}


def parse_conv_layers(spec: str) -> list[tuple[int, int, int]]:
    """``[(dim, kernel, stride), ...]`` from unilm's ``conv_feature_layers`` expression, without ``eval``.

    Accepts list/tuple literals of ints combined with ``+`` and ``*`` (e.g.
    ``"[(512,10,5)] + [(512,3,2)] * 4"``); anything else is a ContentError.
    """
    def value(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [value(e) for e in node.elts]
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
            left, right = value(node.left), value(node.right)
            return left + right if isinstance(node.op, ast.Add) else left * right
        raise ValueError(ast.dump(node))

    try:
        layers = value(ast.parse(spec, mode="eval").body)
        layers = [tuple(int(x) for x in layer) for layer in layers]
    except (SyntaxError, ValueError, TypeError) as exc:
        raise ContentError(f"WavLM cfg: conv_feature_layers {spec!r} is not a list of (dim, kernel, stride)") from exc
    if not layers or any(len(layer) != 3 for layer in layers):
        raise ContentError(f"WavLM cfg: conv_feature_layers {spec!r} is not a list of (dim, kernel, stride)")
    return layers


def full_cfg(cfg: Mapping) -> dict:
    """unilm's defaults updated with the checkpoint's ``cfg`` (as ``WavLMConfig(cfg)`` does)."""
    return {**_DEFAULTS, **cfg}


def transformers_config(cfg: Mapping):
    """transformers ``WavLMConfig`` equivalent to a unilm ``cfg`` dict; ContentError for what it cannot express."""
    from transformers import WavLMConfig

    c = full_cfg(cfg)
    if c["extractor_mode"] not in ("default", "layer_norm"):
        raise ContentError(f"WavLM cfg: extractor_mode {c['extractor_mode']!r} is not default or layer_norm")
    if c["activation_fn"] != "gelu":
        raise ContentError(f"WavLM cfg: activation_fn {c['activation_fn']!r} is not supported (only gelu)")
    if not (c["relative_position_embedding"] and c["gru_rel_pos"]):
        raise ContentError("WavLM cfg: relative_position_embedding and gru_rel_pos must both be true "
                           "(every released WavLM uses gated relative position bias)")
    conv = parse_conv_layers(c["conv_feature_layers"])
    return WavLMConfig(
        hidden_size=c["encoder_embed_dim"], num_hidden_layers=c["encoder_layers"],
        num_attention_heads=c["encoder_attention_heads"], intermediate_size=c["encoder_ffn_embed_dim"],
        hidden_act="gelu", feat_extract_activation="gelu",
        feat_extract_norm="layer" if c["extractor_mode"] == "layer_norm" else "group",
        do_stable_layer_norm=bool(c["layer_norm_first"]), conv_bias=bool(c["conv_bias"]),
        conv_dim=[d for d, _, _ in conv], conv_kernel=[k for _, k, _ in conv], conv_stride=[s for _, _, s in conv],
        num_conv_pos_embeddings=c["conv_pos"], num_conv_pos_embedding_groups=c["conv_pos_groups"],
        num_buckets=c["num_buckets"], max_bucket_distance=c["max_distance"],
        apply_spec_augment=False, layerdrop=0.0)


def unilm_key_map(cfg: Mapping, pos_g: str, pos_v: str) -> dict[str, str]:
    """Every state-dict key of unilm's ``WavLM(cfg)`` → its transformers ``WavLMModel`` key.

    ``pos_g``/``pos_v`` are the transformers names of the positional convolution's
    weight-norm magnitude and direction (they depend on the torch version).
    ``post_extract_proj`` exists only when the conv width differs from the model width.
    """
    c = full_cfg(cfg)
    conv = parse_conv_layers(c["conv_feature_layers"])
    fe = "feature_extractor.conv_layers"
    keys = {"mask_emb": "masked_spec_embed"}
    for i in range(len(conv)):
        keys[f"{fe}.{i}.0.weight"] = f"{fe}.{i}.conv.weight"
        if c["conv_bias"]:
            keys[f"{fe}.{i}.0.bias"] = f"{fe}.{i}.conv.bias"
        norm = "2.1" if c["extractor_mode"] == "layer_norm" else "2" if i == 0 else None
        if norm:
            keys.update({f"{fe}.{i}.{norm}.{w}": f"{fe}.{i}.layer_norm.{w}" for w in ("weight", "bias")})
    keys.update({f"layer_norm.{w}": f"feature_projection.layer_norm.{w}" for w in ("weight", "bias")})
    if conv[-1][0] != c["encoder_embed_dim"]:
        keys.update({f"post_extract_proj.{w}": f"feature_projection.projection.{w}" for w in ("weight", "bias")})
    keys.update({"encoder.pos_conv.0.bias": "encoder.pos_conv_embed.conv.bias",
                 "encoder.pos_conv.0.weight_g": pos_g, "encoder.pos_conv.0.weight_v": pos_v,
                 "encoder.layer_norm.weight": "encoder.layer_norm.weight",
                 "encoder.layer_norm.bias": "encoder.layer_norm.bias"})
    for i in range(c["encoder_layers"]):
        keys.update({f"encoder.layers.{i}.{k}": f"encoder.layers.{i}.{v}" for k, v in _LAYER_KEYS.items()})
    keys["encoder.layers.0.self_attn.relative_attention_bias.weight"] = "encoder.layers.0.attention.rel_attn_embed.weight"
    return keys


def convert_state(state: Mapping[str, torch.Tensor], cfg: Mapping, expected: Mapping[str, torch.Tensor],
                  what: str) -> dict[str, torch.Tensor]:
    """The transformers state dict of a unilm ``state``, checked key by key against ``expected`` (any device).

    Raises ContentError naming the first missing, unexpected or mis-shaped unilm key.
    """
    pos, proj = "encoder.pos_conv_embed.conv.", "feature_projection.projection."
    g, v = ((pos + "parametrizations.weight.original0", pos + "parametrizations.weight.original1")
            if pos + "parametrizations.weight.original0" in expected else (pos + "weight_g", pos + "weight_v"))
    key_map = unilm_key_map(cfg, g, v)
    targets = set(key_map.values())
    drift = sorted(targets.difference(expected)) + [k for k in expected if k not in targets and not k.startswith(proj)]
    if drift:
        raise ContentError(f"{what}: transformers' WavLMModel and the unilm layout differ at {drift[0]!r}; "
                           f"use a transformers version whose WavLM has the same modules (tested with 5.24)")
    check_state_keys(state, {src: tuple(expected[dst].shape) for src, dst in key_map.items()}, what,
                     ContentError, "is this a WavLM checkpoint in the unilm layout, and does its cfg fit its weights?")
    out = {dst: state[src].float() for src, dst in key_map.items()}
    if proj + "weight" not in out:                       # no post_extract_proj: conv width == model width
        out[proj + "weight"] = torch.eye(expected[proj + "weight"].shape[0])
        out[proj + "bias"] = torch.zeros(expected[proj + "bias"].shape)
    return out


def read_checkpoint(path: str | os.PathLike) -> tuple[dict, dict[str, torch.Tensor]]:
    """``(cfg, model state dict)`` of a unilm ``WavLM*.pt``, or ContentError saying what is wrong."""
    path = os.fspath(path)
    what, expected = "WavLM checkpoint", "a unilm WavLM checkpoint {'cfg', 'model'} (e.g. WavLM-Large.pt)"
    todo = "give such a file (for a save_pretrained directory use hf:<dir>)"
    ckpt = require_keys(load_checkpoint(path, what, ContentError, expected=expected, todo=todo), ("cfg", "model"),
                        what, path, ContentError, expected=expected, todo=todo)
    if not isinstance(ckpt["cfg"], Mapping) or not isinstance(ckpt["model"], Mapping):
        raise model_file_error(ContentError, what, path, "has 'cfg' or 'model' that is not a dict", expected=expected,
                               todo=todo)
    return dict(ckpt["cfg"]), dict(ckpt["model"])


def load_unilm_wavlm(path: str | os.PathLike):
    """transformers ``WavLMModel`` (eval mode) holding the weights of a unilm-layout checkpoint."""
    cfg, state = read_checkpoint(path)
    return wavlm_from_state(cfg, state, f"WavLM checkpoint {os.fspath(path)}")


def wavlm_from_state(cfg: Mapping, state: Mapping[str, torch.Tensor], what: str):
    """transformers ``WavLMModel`` (eval mode) holding a unilm ``cfg`` and state dict (``what`` names them).

    The model is built on the meta device and takes the tensors as they are
    (meta tensors give a meta model: a shape check that allocates nothing).
    """
    from transformers import WavLMModel

    with torch.device("meta"):
        model = WavLMModel(transformers_config(cfg))
    model.load_state_dict(convert_state(state, cfg, model.state_dict(), what), strict=True, assign=True)
    return model.eval()
