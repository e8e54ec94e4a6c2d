"""WavLM checkpoints in Microsoft's unilm layout (kNN-VC's WavLM-Large.pt) converted to transformers.

The real WavLM-Large weights are not on these machines: the checkpoints here are
random weights written with the release's key names, structure and (for the
shape test) its exact Large sizes.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tests.helpers.unilm_wavlm_checkpoint import (
    LARGE_CFG,
    SMALL_CFG,
    unilm_shapes,
    write_checkpoint,
)
from voxanon.models.content import ContentError, load_content_encoder

pytest.importorskip("transformers")

from voxanon.models.content.unilm import (  # noqa: E402
    convert_state,
    load_unilm_wavlm,
    parse_conv_layers,
    transformers_config,
)

#: the renames, written out independently of the converter (fairseq/unilm → transformers naming)
RENAMES = [(r"feature_extractor\.conv_layers\.(\d+)\.0\.", r"feature_extractor.conv_layers.\1.conv."),
           (r"feature_extractor\.conv_layers\.(\d+)\.2\.1\.", r"feature_extractor.conv_layers.\1.layer_norm."),
           (r"^layer_norm\.", "feature_projection.layer_norm."),
           (r"^post_extract_proj\.", "feature_projection.projection."),
           (r"^mask_emb$", "masked_spec_embed"), (r"encoder\.pos_conv\.0\.", "encoder.pos_conv_embed.conv."),
           (r"self_attn\.relative_attention_bias", "attention.rel_attn_embed"),
           (r"self_attn\.grep_linear", "attention.gru_rel_pos_linear"),
           (r"self_attn\.grep_a", "attention.gru_rel_pos_const"),
           (r"self_attn_layer_norm", "layer_norm"), (r"self_attn\.", "attention."),
           (r"\.fc1\.", ".feed_forward.intermediate_dense."), (r"\.fc2\.", ".feed_forward.output_dense.")]


def hf_name(key: str) -> str:
    for pattern, repl in RENAMES:
        key = re.sub(pattern, repl, key)
    return key


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("wavlm") / "WavLM-Small.pt"
    return path, write_checkpoint(path, SMALL_CFG, seed=1)


def test_every_tensor_lands_in_the_transformers_model(small):
    path, state = small
    model = load_unilm_wavlm(path)
    got = model.state_dict()
    pos = model.encoder.pos_conv_embed.conv
    for key, value in state.items():
        if key.startswith("encoder.pos_conv.0.weight_"):
            continue
        torch.testing.assert_close(got[hf_name(key)], value, rtol=0, atol=0, msg=key)
    # weight norm over the kernel axis (dim=2): w = g * v / ||v|| with the norm over output and input channels
    g, v = state["encoder.pos_conv.0.weight_g"], state["encoder.pos_conv.0.weight_v"]
    torch.testing.assert_close(pos.weight, g * v / v.norm(dim=(0, 1), keepdim=True))
    cfg = model.config
    assert (cfg.num_hidden_layers, cfg.hidden_size, cfg.num_attention_heads, cfg.intermediate_size) == (2, 64, 4, 128)
    assert (cfg.do_stable_layer_norm, cfg.feat_extract_norm, cfg.max_bucket_distance) == (True, "layer", 100)


def reference_front_end(state: dict, cfg: dict, wav: torch.Tensor) -> torch.Tensor:
    """Input to the first transformer layer, computed from the unilm tensors by hand (pre-LN WavLM)."""
    x = wav[None, None]
    for i, (_, _, stride) in enumerate(parse_conv_layers(cfg["conv_feature_layers"])):
        x = F.conv1d(x, state[f"feature_extractor.conv_layers.{i}.0.weight"], stride=stride)
        p = f"feature_extractor.conv_layers.{i}.2.1."
        x = F.gelu(F.layer_norm(x.transpose(1, 2), x.shape[1:2], state[p + "weight"], state[p + "bias"]).transpose(1, 2))
    x = F.layer_norm(x.transpose(1, 2), x.shape[1:2], state["layer_norm.weight"], state["layer_norm.bias"])
    x = F.linear(x, state["post_extract_proj.weight"], state["post_extract_proj.bias"])
    g, v = state["encoder.pos_conv.0.weight_g"], state["encoder.pos_conv.0.weight_v"]
    k = cfg["conv_pos"]
    pos = F.conv1d(x.transpose(1, 2), g * v / v.norm(dim=(0, 1), keepdim=True), state["encoder.pos_conv.0.bias"],
                   padding=k // 2, groups=cfg["conv_pos_groups"])
    pos = pos[..., :-1] if k % 2 == 0 else pos                            # unilm's SamePad
    return (x + F.gelu(pos).transpose(1, 2))[0]


def reference_position_bias(table: torch.Tensor, n: int, max_distance: int) -> torch.Tensor:
    """``(heads, n, n)`` relative position bias: T5-style log buckets, half per direction."""
    rel = torch.arange(n)[None, :] - torch.arange(n)[:, None]
    half = table.shape[0] // 2
    exact = half // 2
    dist = rel.abs()
    far = exact + (torch.log(dist.clamp(min=1).float() / exact) / np.log(max_distance / exact)
                   * (half - exact)).long()
    bucket = (rel > 0).long() * half + torch.where(dist < exact, dist, far.clamp(max=half - 1))
    return table[bucket].permute(2, 0, 1)


def reference_layer(x: torch.Tensor, state: dict, i: int, heads: int, bias: torch.Tensor) -> torch.Tensor:
    """One pre-LN WavLM layer on ``(T, D)`` from the unilm tensors: attention with gated relative position bias."""
    p = {k.split(f"encoder.layers.{i}.")[1]: v for k, v in state.items() if k.startswith(f"encoder.layers.{i}.")}
    n, d = x.shape
    h = F.layer_norm(x, (d,), p["self_attn_layer_norm.weight"], p["self_attn_layer_norm.bias"])

    def split(y):                                                         # (T, D) -> (heads, T, D / heads)
        return y.view(n, heads, -1).transpose(0, 1)

    q, k, v = (split(F.linear(h, p[f"self_attn.{c}_proj.weight"], p[f"self_attn.{c}_proj.bias"])) for c in "qkv")
    proj = F.linear(split(h), p["self_attn.grep_linear.weight"], p["self_attn.grep_linear.bias"])
    gate_a, gate_b = torch.sigmoid(proj.view(heads, n, 2, 4).sum(-1)).chunk(2, dim=-1)
    gate = gate_a * (gate_b * p["self_attn.grep_a"][0] - 1.0) + 2.0     # (heads, T, 1)
    scores = q @ k.transpose(1, 2) / (d // heads) ** 0.5 + gate * bias
    attn = (scores.softmax(-1) @ v).transpose(0, 1).reshape(n, d)
    x = x + F.linear(attn, p["self_attn.out_proj.weight"], p["self_attn.out_proj.bias"])
    h = F.layer_norm(x, (d,), p["final_layer_norm.weight"], p["final_layer_norm.bias"])
    return x + F.linear(F.gelu(F.linear(h, p["fc1.weight"], p["fc1.bias"])), p["fc2.weight"], p["fc2.bias"])


def test_encoder_spec_layers_and_front_end(small):
    path, state = small
    enc = load_content_encoder(f"wavlm-pt:{path}:2")
    assert (enc.layer, enc.n_layers, enc.dim, enc.frame_rate, enc.sample_rate) == (2, 2, 64, 50.0, 16000)
    wav = np.random.default_rng(2).normal(0, 0.1, 16000).astype(np.float32)
    with torch.inference_mode():
        hidden = enc.model(torch.from_numpy(wav)[None], output_hidden_states=True).hidden_states
        ref0 = reference_front_end(state, SMALL_CFG, torch.from_numpy(wav))
    assert len(hidden) == 3 and hidden[0].shape == (1, 49, 64)
    np.testing.assert_allclose(hidden[0][0].numpy(), ref0.numpy(), atol=1e-5)
    # every layer from the one before, with layer 0's bias table shared by all layers (49 frames reach the log buckets)
    bias = reference_position_bias(state["encoder.layers.0.self_attn.relative_attention_bias.weight"], 49,
                                   SMALL_CFG["max_distance"])
    for i in (0, 1):
        ref = reference_layer(hidden[i][0], state, i, SMALL_CFG["encoder_attention_heads"], bias)
        np.testing.assert_allclose(hidden[i + 1][0].numpy(), ref.numpy(), atol=1e-4)
    np.testing.assert_allclose(enc.encode(wav, 16000), hidden[2][0].numpy(), atol=1e-5)
    assert not np.allclose(hidden[1][0].numpy(), hidden[2][0].numpy(), atol=1e-2)   # the layers do something
    # a lower layer runs only the layers up to it, and gives what the full model gives at that layer
    first = load_content_encoder(f"wavlm-pt:{path}:1")
    assert first.layer == 1 and len(first.model.encoder.layers) == 1 and len(enc.model.encoder.layers) == 2
    np.testing.assert_allclose(first.encode(wav, 16000), hidden[1][0].numpy(), atol=1e-5)
    with pytest.raises(ContentError, match="layer 6 does not exist"):      # default layer 6 (kNN-VC's) needs >= 6
        load_content_encoder(f"wavlm-pt:{path}")


def test_large_shapes_map_onto_transformers_wavlm_large():
    """WavLM-Large's 488 tensors at their real shapes (on the meta device: nothing is allocated)."""
    from transformers import WavLMModel

    config = transformers_config(LARGE_CFG)
    with torch.device("meta"):
        model = WavLMModel(config)
        state = {k: torch.empty(s) for k, s in unilm_shapes(LARGE_CFG).items()}
    out = convert_state(state, LARGE_CFG, model.state_dict(), "WavLM-Large")
    assert len(state) == 488 and set(out) == set(model.state_dict())
    assert sum(t.numel() for t in state.values()) == sum(p.numel() for p in model.parameters()) == 315_453_120
    assert (config.num_hidden_layers, config.hidden_size, int(np.prod(config.conv_stride))) == (24, 1024, 320)


def test_wrong_checkpoints_name_the_key(tmp_path):
    def save(name, cfg=SMALL_CFG, drop=(), add=None, obj=None):
        from tests.helpers.unilm_wavlm_checkpoint import random_state

        state = {k: v for k, v in random_state(cfg).items() if k not in drop}
        state.update(add or {})
        torch.save(obj if obj is not None else {"cfg": cfg, "model": state}, tmp_path / name)
        return f"wavlm-pt:{tmp_path / name}:1"

    with pytest.raises(ContentError, match=r"missing key 'encoder.layers.1.fc2.bias'"):
        load_content_encoder(save("a.pt", drop=("encoder.layers.1.fc2.bias",)))
    with pytest.raises(ContentError, match=r"unexpected key 'encoder.layers.2.fc1.weight'"):
        load_content_encoder(save("b.pt", add={"encoder.layers.2.fc1.weight": torch.zeros(128, 64)}))
    with pytest.raises(ContentError, match=r"'encoder.layers.0.fc1.weight' has shape \(128, 64\), expected "
                                           r"\(256, 64\)"):
        bad = save("c.pt")
        torch.save({"cfg": {**SMALL_CFG, "encoder_ffn_embed_dim": 256}, "model": torch.load(tmp_path / "c.pt")["model"]},
                   tmp_path / "c.pt")
        load_content_encoder(bad)
    with pytest.raises(ContentError, match="d.pt is a dict of 1 key .*without key 'cfg'; expected a unilm WavLM"):
        load_content_encoder(save("d.pt", obj={"generator": {}}))
    with pytest.raises(ContentError, match="gru_rel_pos"):
        load_content_encoder(save("e.pt", cfg={**SMALL_CFG, "gru_rel_pos": False}))
    with pytest.raises(ContentError, match="not found"):
        load_content_encoder(f"wavlm-pt:{tmp_path / 'none.pt'}")
    with pytest.raises(ContentError, match="conv_feature_layers"):
        parse_conv_layers("__import__('os').getcwd()")
    assert parse_conv_layers("[(512,10,5)] + [(512,3,2)] * 4 + [(512,2,2)] * 2")[-2:] == [(512, 2, 2)] * 2
