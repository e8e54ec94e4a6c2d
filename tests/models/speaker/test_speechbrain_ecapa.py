"""speechbrain ECAPA checkpoint layout: every key consumed, deterministic output, bad files rejected.

The state dict is written out (tests/helpers/speechbrain_ecapa_checkpoint.py) from speechbrain's module structure
(speechbrain/lobes/models/ECAPA_TDNN.py: TDNNBlock = conv.conv + norm.norm,
SERes2NetBlock = tdnn1, res2net_block.blocks.N, tdnn2, se_block.conv1/conv2,
then mfa, asp.tdnn/asp.conv, asp_bn, fc), independently of our module.
"""

import numpy as np
import pytest
import torch

from tests.helpers.speechbrain_ecapa_checkpoint import speechbrain_state_dict
from voxanon.audio.synthetic import speech_like
from voxanon.models.speaker import EncoderError, load_encoder
from voxanon.models.speaker.speechbrain_ecapa import load_speechbrain_ecapa

torch.set_num_threads(1)


SMALL = dict(c=64, last=192, att=32, se=32)


def test_full_layout_every_key_consumed(tmp_path):
    sd = speechbrain_state_dict()
    assert 20.5e6 < sum(v.numel() for k, v in sd.items() if "num_batches" not in k) < 21e6
    torch.save(sd, tmp_path / "embedding_model.ckpt")
    enc = load_speechbrain_ecapa(tmp_path / "embedding_model.ckpt")
    cfg = enc.model.cfg
    assert cfg.channels == (1024, 1024, 1024, 1024, 3072) and cfg.embedding_dim == 192 and enc.dim == 192
    assert cfg.res2net_scale == 8 and cfg.padding_mode == "reflect" and cfg.dilations == (1, 2, 3, 4, 1)
    ours = enc.model.state_dict()
    assert set(ours) == set(sd)
    assert all(torch.equal(ours[k], sd[k]) for k in sd)


def test_output_deterministic(tmp_path):
    path = tmp_path / "embedding_model.ckpt"
    torch.save(speechbrain_state_dict(**SMALL), path)
    wavs = [speech_like(0.6, seed=1), speech_like(1.1, f0=210, seed=2)]
    a = load_encoder(f"speechbrain:{path}").embed(wavs, 16000)
    b = load_encoder(f"speechbrain:{path}").embed(wavs, 16000)
    assert a.shape == (2, 192) and np.isfinite(a).all()
    np.testing.assert_array_equal(a, b)
    single = load_speechbrain_ecapa(path).embed(wavs[:1], 16000)
    np.testing.assert_allclose(a[:1], single, atol=1e-4)


@pytest.mark.parametrize("edit, message", [
    (lambda sd: sd.pop("blocks.2.tdnn2.norm.norm.running_var"), "1 missing: blocks.2.tdnn2.norm.norm.running_var"),
    (lambda sd: sd.__setitem__("blocks.1.extra.weight", torch.zeros(3)), "1 unexpected: blocks.1.extra.weight"),
    (lambda sd: sd.__setitem__("blocks.3.tdnn2.conv.conv.weight", torch.zeros(64, 32, 1)),
     "wrong shape: blocks.3.tdnn2.conv.conv.weight"),
    (lambda sd: sd.pop("fc.conv.weight"), "missing key 'fc.conv.weight'"),
])
def test_bad_layout_rejected(tmp_path, edit, message):
    sd = speechbrain_state_dict(**SMALL)
    edit(sd)
    torch.save(sd, tmp_path / "m.ckpt")
    with pytest.raises(EncoderError, match=message):
        load_speechbrain_ecapa(tmp_path / "m.ckpt")


def test_corrupt_file(tmp_path):
    (tmp_path / "m.ckpt").write_bytes(b"\x80\x02not a checkpoint")
    with pytest.raises(EncoderError, match=r"m.ckpt cannot be read \(damaged pickle\)"):
        load_speechbrain_ecapa(tmp_path / "m.ckpt")
    torch.save({"model": {"a": torch.zeros(1)}}, tmp_path / "n.ckpt")
    with pytest.raises(EncoderError, match=r"n.ckpt is a dict of 1 key .* expected speechbrain.s embedding_model.ckpt"):
        load_speechbrain_ecapa(tmp_path / "n.ckpt")
