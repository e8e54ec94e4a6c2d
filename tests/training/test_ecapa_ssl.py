"""Fine-tuning the VPC 2026 ``ecapa_ssl`` attacker on generated checkpoints (real key names, tiny shapes)."""

import numpy as np
import pytest
import soundfile as sf
import torch

from tests.helpers.asv_ssl_checkpoint import write_asv_ssl
from tests.helpers.speaker_corpus import make_corpus
from tests.helpers.speechbrain_ecapa_checkpoint import speechbrain_state_dict
from tests.helpers.vpc_tree import SMALL_ECAPA
from voxanon.audio.synthetic import speech_like
from voxanon.data.kaldi import DataDir
from voxanon.errors import ConfigError, DataError
from voxanon.models.speaker import EncoderError, load_encoder
from voxanon.models.speaker.ecapa_ssl import (
    best_checkpoint_folder,
    read_ecapa_state,
    standardize,
)
from voxanon.training.ecapa_ssl import (
    EcapaSslSettings,
    KitBatches,
    load_pretrained,
    train_ecapa_ssl,
)
from voxanon.training.trainer import CheckpointError

#: chunks and crops scaled to the corpus' 1 s utterances; no dropout (its 1000-2000 sample stretches are sized for
#: 3 s chunks: they would wipe out most of a 0.5 s one)
SMALL = dict(batch_size=8, chunk_seconds=0.5, wavlm_seconds=0.8, lr=0.005, lr_min=1e-3, step_size=10, augment=False)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("asv_ssl")
    write_asv_ssl(folder, seed=0)
    return folder


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("corpus"), n_spk=4, n_utt=6, dur=1.0)


def test_loss_falls_and_the_result_loads_as_the_kits_layout(tmp_path, pretrained, corpus):
    res = train_ecapa_ssl(corpus, tmp_path / "ft", EcapaSslSettings(epochs=8, **SMALL), pretrained=pretrained,
                          quiet=True)
    hist, summary = res.history, res.summary
    assert [h["epoch"] for h in hist] == list(range(1, 9))
    assert summary["train_chunks"] == 40 and summary["val_chunks"] == 8 and summary["steps_per_epoch"] == 5
    assert hist[-1]["loss"] < 0.7 * hist[0]["loss"], hist                      # about 11 -> 4
    # 8 chunks: noisy; four epochs barely moved it on one machine (6.8 -> 6.7), eight take it to about half
    assert summary["best_epoch"] > 1 and res.best < 0.8 * hist[0]["val_loss"], hist
    # the kit's layout: CKPT+<epoch>/{embedding_model.ckpt, WavLM-Large.pt}, train_log.txt read by the kit's selection
    for h in hist:
        assert (tmp_path / "ft" / f"CKPT+{h['epoch']}" / "WavLM-Large.pt").read_bytes() == \
            (pretrained / "WavLM-Large.pt").read_bytes()
    lines = res.log.read_text().splitlines()
    assert len(lines) == 8 and lines[0].startswith("epoch: 1, lr: ") and "valid loss: " in lines[0]
    best = tmp_path / "ft" / f"CKPT+{summary['best_epoch']}"
    assert res.best == summary["best_val_loss"] == min(h["val_loss"] for h in hist) and res.model.parent == best
    assert best_checkpoint_folder(tmp_path / "ft") == str(best)
    # trained: the ECAPA moved away from the pretrained one; WavLM frozen (the file is the pretrained one)
    start = read_ecapa_state(pretrained / "embedding_model.ckpt")
    tuned = read_ecapa_state(best / "embedding_model.ckpt")
    assert set(tuned) == set(start)
    assert not torch.equal(start["fc.conv.weight"], tuned["fc.conv.weight"])
    assert not torch.equal(start["weighted_sum.layer_weights"], tuned["weighted_sum.layer_weights"])
    # what the evaluator loads is the best epoch
    enc = load_encoder(f"ecapa_ssl:{tmp_path / 'ft'}")
    assert torch.equal(enc.model.ecapa.state_dict()["fc.conv.weight"], tuned["fc.conv.weight"])
    emb = enc.embed([speech_like(0.7, seed=3)], 16000)
    assert emb.shape == (1, 24) and np.isclose(np.linalg.norm(emb), 1.0, atol=1e-5)


def test_an_interrupted_run_resumes_to_the_same_weights(tmp_path, pretrained, corpus, monkeypatch):
    cfg = EcapaSslSettings(epochs=2, cache_gb=0, **{**SMALL, "augment": True})  # the dropout draws resume too
    straight = train_ecapa_ssl(corpus, tmp_path / "a", pretrained=pretrained, settings=cfg, quiet=True)
    calls, real = [0], KitBatches.__call__

    def dies_in_epoch_2(self, *args):
        calls[0] += 1
        if calls[0] == 5 + 1 + 3:       # epoch 1: 5 steps and 1 validation batch; killed at step 3 of epoch 2
            raise KeyboardInterrupt
        return real(self, *args)

    monkeypatch.setattr(KitBatches, "__call__", dies_in_epoch_2)
    with pytest.raises(KeyboardInterrupt):
        train_ecapa_ssl(corpus, tmp_path / "b", pretrained=pretrained, settings=cfg, quiet=True)
    monkeypatch.setattr(KitBatches, "__call__", real)
    assert not (tmp_path / "b" / "CKPT+2").exists()
    assert len((tmp_path / "b" / "train_log.txt").read_text().splitlines()) == 1
    counted = KitBatches.chunk_count
    monkeypatch.setattr(KitBatches, "chunk_count", lambda self, utt: pytest.fail("counted again"))
    resumed = train_ecapa_ssl(corpus, tmp_path / "b", cfg, pretrained=pretrained, quiet=True)   # the saved counts serve
    monkeypatch.setattr(KitBatches, "chunk_count", counted)
    assert [h["epoch"] for h in resumed.history] == [1, 2]
    assert resumed.history == straight.history
    a = read_ecapa_state(tmp_path / "a" / "CKPT+2" / "embedding_model.ckpt")
    b = read_ecapa_state(tmp_path / "b" / "CKPT+2" / "embedding_model.ckpt")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert (tmp_path / "a" / "train_log.txt").read_text() == (tmp_path / "b" / "train_log.txt").read_text()


def test_keeping_in_memory_changes_only_the_speed(tmp_path, pretrained, corpus):
    kept = train_ecapa_ssl(corpus, tmp_path / "kept", EcapaSslSettings(epochs=2, **SMALL), pretrained=pretrained,
                           quiet=True)
    streamed = train_ecapa_ssl(corpus, tmp_path / "streamed", EcapaSslSettings(epochs=2, cache_gb=0, **SMALL),
                               pretrained=pretrained, quiet=True)
    for a, b in zip(kept.history, streamed.history):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-4)
        assert a["val_loss"] == pytest.approx(b["val_loss"], rel=1e-4)


def test_batches_follow_the_kit(tmp_path, pretrained):
    """Examples per utterance: its loud fixed chunks; Fbank of a random chunk; WavLM of a standardised 0.8 s crop or
    of the utterance padded with zeros to 0.8 s."""
    sr = 16000
    long_wav = speech_like(2.2, seed=1).astype(np.float32)
    long_wav[sr // 2:sr] = 0                                   # the second 0.5 s chunk is silent: not counted
    short_wav = speech_like(0.6, seed=2).astype(np.float32)
    for name, wav in (("long", long_wav), ("short", short_wav)):
        sf.write(tmp_path / f"{name}.wav", wav, sr, subtype="FLOAT")
    data = DataDir(wav_scp={u: str(tmp_path / f"{u}.wav") for u in ("long", "short")},
                   utt2spk={"long": "a", "short": "b"}, path=tmp_path)
    model, _, _ = load_pretrained(pretrained)
    batches = KitBatches(data, model, EcapaSslSettings(**SMALL), "cpu")
    assert batches.chunk_count("long") == 3 and batches.chunk_count("short") == 1
    seen = []
    real = batches._wavlm
    batches._wavlm = lambda crops: (seen.extend(crops), real(crops))[1]
    rng = np.random.default_rng(7)
    feats, layers = batches(["long", "short"], rng)
    assert feats.shape == (2, 51, 80) and layers.shape[:2] == (3, 2)          # 0.5 s: 51 frames; 3 WavLM layers
    check = np.random.default_rng(7)
    chunk_start = check.integers(0, len(long_wav) - 8000 + 1)
    check.integers(0, len(short_wav) - 8000 + 1)               # the short utterance's chunk start
    crop_start = check.integers(0, len(long_wav) - 12800 + 1)
    expected_feats, _ = model.fbank(torch.from_numpy(long_wav[chunk_start:chunk_start + 8000])[None])
    assert torch.allclose(feats[0], expected_feats[0], atol=1e-5)
    std = lambda w: standardize(torch.from_numpy(w)[None], torch.tensor([len(w)]))[0].numpy()  # noqa: E731
    np.testing.assert_allclose(seen[0], std(long_wav)[crop_start:crop_start + 12800], atol=1e-6)
    np.testing.assert_array_equal(seen[1][len(short_wav):], 0)
    np.testing.assert_allclose(seen[1][:len(short_wav)], std(short_wav), atol=1e-6)
    # the short utterance's WavLM input is the same every time: kept, and not computed again
    seen.clear()
    _, again = batches(["short"], rng)
    assert seen == [] and torch.equal(again[:, 0], layers[:, 1])
    # training batches: the same chunks and crops, then frequency and time dropout of the chunks only
    plain_feats, plain_layers = batches(["long", "short"], np.random.default_rng(8))
    aug_feats, aug_layers = batches(["long", "short"], np.random.default_rng(8), augment=True)
    assert torch.equal(plain_layers, aug_layers) and not torch.allclose(plain_feats, aug_feats, atol=1e-3)


def test_bad_inputs_are_named(tmp_path, pretrained, corpus):
    cfg = EcapaSslSettings(epochs=1, **SMALL)
    with pytest.raises(EncoderError, match="not found"):
        train_ecapa_ssl(corpus, tmp_path / "o", pretrained=tmp_path / "nowhere", settings=cfg, quiet=True)
    wrong = tmp_path / "wrong"                                 # a speechbrain ECAPA (the 2024 model) beside WavLM
    wrong.mkdir()
    torch.save(speechbrain_state_dict(**SMALL_ECAPA), wrong / "embedding_model.ckpt")
    (wrong / "WavLM-Large.pt").write_bytes((pretrained / "WavLM-Large.pt").read_bytes())
    with pytest.raises(EncoderError, match="weighted_sum.layer_weights"):
        train_ecapa_ssl(corpus, tmp_path / "o", pretrained=wrong, settings=cfg, quiet=True)
    one = DataDir(wav_scp=dict(list(corpus.wav_scp.items())[:3]), utt2spk=dict(list(corpus.utt2spk.items())[:3]))
    with pytest.raises(DataError, match="1 speaker"):
        train_ecapa_ssl(one, tmp_path / "o", pretrained=pretrained, settings=cfg, quiet=True)
    with pytest.raises(DataError, match="no training chunk"):
        train_ecapa_ssl(corpus, tmp_path / "o", EcapaSslSettings(**{**SMALL, "chunk_seconds": 2.0}),
                        pretrained=pretrained, quiet=True)
    with pytest.raises(ConfigError, match="fewer than one batch"):
        train_ecapa_ssl(corpus, tmp_path / "o", EcapaSslSettings(**{**SMALL, "batch_size": 64}),
                        pretrained=pretrained, quiet=True)
    with pytest.raises(ConfigError, match="lr_min"):
        EcapaSslSettings(lr=0.01, lr_min=0.1)
    (tmp_path / "kit").mkdir()
    (tmp_path / "kit" / "embedding_model.ckpt").write_bytes(b"")
    with pytest.raises(ConfigError, match="already holds an embedding_model.ckpt"):
        train_ecapa_ssl(corpus, tmp_path / "kit", pretrained=pretrained, settings=cfg, quiet=True)
    (tmp_path / "kit_ft" / "CKPT+1").mkdir(parents=True)        # the kit's own fine-tuning output
    with pytest.raises(ConfigError, match="holds a fine-tuning voxanon did not write"):
        train_ecapa_ssl(corpus, tmp_path / "kit_ft", pretrained=pretrained, settings=cfg, quiet=True)


def test_other_settings_do_not_resume(tmp_path, pretrained, corpus):
    train_ecapa_ssl(corpus, tmp_path / "o", EcapaSslSettings(epochs=1, **SMALL), pretrained=pretrained, quiet=True)
    with pytest.raises(CheckpointError, match="other data or settings"):
        train_ecapa_ssl(corpus, tmp_path / "o", EcapaSslSettings(epochs=2, **{**SMALL, "lr": 0.02}),
                        pretrained=pretrained, quiet=True)
