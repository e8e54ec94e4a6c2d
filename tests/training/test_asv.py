"""The ECAPA attacker recipe on generated multi-speaker audio: learns, resumes, rejects bad input."""

import json

import numpy as np
import pytest
import torch

from tests.helpers.speaker_corpus import TINY_ECAPA, make_corpus
from voxanon.audio.synthetic import speech_like
from voxanon.data.kaldi import DataDir, DataError
from voxanon.evaluation.attacker_training import train_attacker
from voxanon.models.speaker import load_encoder
from voxanon.models.speaker.ecapa import EcapaConfig
from voxanon.training.asv import (
    AAMSoftmax,
    AsvSettings,
    sample_chunks,
    split_utterances,
)
from voxanon.training.trainer import CheckpointError

torch.set_num_threads(1)


def _cfg(epochs):
    return AsvSettings(model=TINY_ECAPA, epochs=epochs, batch_size=16, chunk_seconds=1.0, chunks_per_utt=2,
                       val_fraction=0.25, lr_max=5e-3, cycle_epochs=4)


@pytest.mark.slow
def test_training_learns_and_resumes(tmp_path):
    data = make_corpus(tmp_path / "data")
    first = train_attacker(data, tmp_path / "out", _cfg(2), quiet=True)
    assert [h["epoch"] for h in first.history] == [1, 2]
    resumed = train_attacker(data, tmp_path / "out", _cfg(6), quiet=True)
    assert [h["epoch"] for h in resumed.history] == list(range(1, 7))
    assert resumed.history[:2] == first.history
    assert resumed.best < 25.0, resumed.history  # chance is 50 %
    assert [json.loads(ln) for ln in resumed.log.read_text().splitlines()] == resumed.history
    assert resumed.model == tmp_path / "out" / "best.pt"
    enc = load_encoder(f"ecapa:{resumed.model}")
    assert enc.dim == 32 and enc.embed([speech_like(0.5)], 16000).shape == (1, 32)


def test_resume_is_exact(tmp_path):
    data = make_corpus(tmp_path / "data", n_spk=3, n_utt=4, dur=0.6)
    cfg = AsvSettings(model=TINY_ECAPA, epochs=2, batch_size=8, chunk_seconds=0.5, val_fraction=0.5)
    straight = train_attacker(data, tmp_path / "a", cfg, quiet=True)
    train_attacker(data, tmp_path / "b", AsvSettings(**{**cfg.__dict__, "epochs": 1}), quiet=True)
    resumed = train_attacker(data, tmp_path / "b", cfg, quiet=True)
    assert resumed.history == straight.history and resumed.final == straight.final
    a = torch.load(tmp_path / "a" / "last.pt", weights_only=True)["states"]["model"]
    b = torch.load(tmp_path / "b" / "last.pt", weights_only=True)["states"]["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_short_utterances_tiled_and_reported(tmp_path, capsys):
    data = make_corpus(tmp_path / "data", n_spk=2, n_utt=4, dur=0.3)
    cfg = AsvSettings(model=TINY_ECAPA, epochs=1, batch_size=8, chunk_seconds=0.5, val_fraction=0.5)
    res = train_attacker(data, tmp_path / "o", cfg)
    assert len(res.summary["short_utts_tiled"]) == 4
    assert "shorter than 0.5 s are tiled" in capsys.readouterr().out


def test_single_speaker_rejected(tmp_path):
    data = make_corpus(tmp_path / "data", n_spk=1, n_utt=3, dur=0.3)
    with pytest.raises(DataError, match="1 speaker"):
        train_attacker(data, tmp_path / "o", _cfg(1), quiet=True)


def test_corrupt_resume_checkpoint(tmp_path):
    data = make_corpus(tmp_path / "data", n_spk=2, n_utt=4, dur=0.3)
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "last.pt").write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="last.pt cannot be read"):
        train_attacker(data, tmp_path / "o", AsvSettings(model=TINY_ECAPA, epochs=1, chunk_seconds=0.5,
                                                        val_fraction=0.5), quiet=True)


def test_split_and_chunks():
    data = DataDir(utt2spk={f"a{i}": "a" for i in range(10)} | {"b0": "b"})
    train, val = split_utterances(data, 0.1, 0)
    assert len(val) == 1 and "b0" in train and not set(train) & set(val)
    rng = np.random.default_rng(0)
    chunks = sample_chunks([np.ones((5, 3), np.float16), np.arange(60, dtype=np.float16).reshape(20, 3)], 8, rng)
    assert chunks.shape == (2, 8, 3) and np.allclose(chunks.mean(axis=1), 0)


def test_aam_margin_raises_loss():
    torch.manual_seed(0)
    emb, labels = torch.randn(8, 4), torch.randint(0, 3, (8,))
    with_margin = AAMSoftmax(4, 3, 0.2, 30.0)
    no_margin = AAMSoftmax(4, 3, 0.0, 30.0)
    no_margin.load_state_dict(with_margin.state_dict())
    assert with_margin(emb, labels) > no_margin(emb, labels)


def test_vpc_recipe_settings():
    cfg = AsvSettings.vpc()
    assert cfg.model.channels == (512, 512, 512, 512, 1536)
    assert (cfg.model.attention_channels, cfg.model.se_channels, cfg.model.padding_mode) == (128, 128, "reflect")
    assert (cfg.batch_size, cfg.lr_min, cfg.lr_max, cfg.weight_decay, cfg.step_size) == (256, 1e-8, 1e-2, 2e-6, 65000)
    assert EcapaConfig.full().channels[0] == 1024  # speechbrain's VoxCeleb model, not the VPC attacker
    assert AsvSettings.vpc(step_size=7).step_size == 7
