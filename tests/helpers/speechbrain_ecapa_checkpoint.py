"""A speechbrain ``spkrec-ecapa-voxceleb`` ``embedding_model.ckpt`` state dict with random weights (its key names
and shapes), of any width: the kit's ``exp/asv_orig`` model for tests."""

from __future__ import annotations

import torch


def speechbrain_state_dict(n_mels=80, c=1024, last=3072, att=128, se=128, scale=8, emb=192, seed=0):
    """State dict of speechbrain's ECAPA_TDNN embedding model (defaults: the VoxCeleb model's sizes)."""
    g = torch.Generator().manual_seed(seed)
    sd = {}

    def conv(prefix, cin, cout, k):
        sd[f"{prefix}.conv.weight"] = torch.randn(cout, cin, k, generator=g) / (cin * k) ** 0.5
        sd[f"{prefix}.conv.bias"] = torch.randn(cout, generator=g) * 0.1

    def tdnn(prefix, cin, cout, k):
        conv(f"{prefix}.conv", cin, cout, k)
        bn(f"{prefix}.norm", cout)

    def bn(prefix, n):
        sd[f"{prefix}.norm.weight"] = 1 + 0.1 * torch.randn(n, generator=g)
        sd[f"{prefix}.norm.bias"] = 0.1 * torch.randn(n, generator=g)
        sd[f"{prefix}.norm.running_mean"] = 0.1 * torch.randn(n, generator=g)
        sd[f"{prefix}.norm.running_var"] = 0.5 + torch.rand(n, generator=g)
        sd[f"{prefix}.norm.num_batches_tracked"] = torch.tensor(1000)

    tdnn("blocks.0", n_mels, c, 5)
    for i in (1, 2, 3):
        tdnn(f"blocks.{i}.tdnn1", c, c, 1)
        for j in range(scale - 1):
            tdnn(f"blocks.{i}.res2net_block.blocks.{j}", c // scale, c // scale, 3)
        tdnn(f"blocks.{i}.tdnn2", c, c, 1)
        conv(f"blocks.{i}.se_block.conv1", c, se, 1)
        conv(f"blocks.{i}.se_block.conv2", se, c, 1)
    tdnn("mfa", 3 * c, last, 1)
    tdnn("asp.tdnn", 3 * last, att, 1)
    conv("asp.conv", att, last, 1)
    bn("asp_bn", 2 * last)
    sd["fc.conv.weight"] = torch.randn(emb, 2 * last, 1, generator=g) / (2 * last) ** 0.5
    sd["fc.conv.bias"] = torch.zeros(emb)
    return sd
