"""Fine-tuning a pretrained encoder (attacker rung b), GE2E and d-vector: GE2E loss, dev selection, exact resume,
checkpoint loading."""

import pytest
import torch

from tests.helpers.dvector_data import SMALL, write_quantised
from tests.helpers.speaker_corpus import make_corpus, trial_dirs
from voxanon.errors import ConfigError
from voxanon.evaluation.attacker_training import train_finetuned
from voxanon.evaluation.dev_selection import dev_eer
from voxanon.models.speaker import EncoderError, load_encoder
from voxanon.models.speaker.dvector_net import DVectorNet, load_dvector_net
from voxanon.training.finetune import FinetuneSettings, GE2ELoss, finetune_model
from voxanon.training.trainer import CheckpointError

pytest.importorskip("resemblyzer")
torch.set_num_threads(1)


def test_ge2e_loss_prefers_clustered_embeddings():
    rng = torch.Generator().manual_seed(0)
    centres = torch.nn.functional.normalize(torch.randn(4, 1, 8, generator=rng), dim=-1)
    clustered = torch.nn.functional.normalize(centres + 0.05 * torch.randn(4, 3, 8, generator=rng), dim=-1)
    shuffled = clustered.reshape(12, 8)[torch.randperm(12, generator=rng)].reshape(4, 3, 8)
    loss = GE2ELoss()
    assert loss(clustered).item() < 0.5 * loss(shuffled).item()


def test_settings_validated():
    with pytest.raises(ValueError, match="loss"):
        FinetuneSettings(loss="triplet")
    with pytest.raises(ValueError, match="at least 2"):
        FinetuneSettings(utterances_per_speaker=1)
    with pytest.raises(ValueError, match="lr must be positive"):
        FinetuneSettings(lr=0.0)
    with pytest.raises(ConfigError, match="cannot fine-tune encoder 'ecapa'.*ge2e, dvector"):
        finetune_model("ecapa")


@pytest.fixture
def small_dvector(tmp_path, monkeypatch):
    """A small generated int8 d-vector in place of the shipped one (the real one is 3 x LSTM-768)."""
    torch.manual_seed(0)
    path = write_quantised(DVectorNet(SMALL), tmp_path / "small.int8.onnx", per_channel=False)
    monkeypatch.setattr("voxanon.models.speaker.dvector_net.model_path", lambda: path)


def _selected_eer(kind: str, best) -> float:
    """The dev EER a ``best.pt`` records, read in its own format."""
    if kind == "ge2e":
        return torch.load(best, weights_only=True)["val_eer"]
    return load_dvector_net(best)[1]["val_eer"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["ge2e", "dvector"])
def test_finetune_selects_on_dev_and_resumes_exactly(tmp_path, kind, request):
    if kind == "dvector":
        request.getfixturevalue("small_dvector")
    train = make_corpus(tmp_path / "train", n_spk=4, n_utt=3, dur=1.0)
    dev = make_corpus(tmp_path / "dev", n_spk=4, n_utt=4, dur=1.0)
    enroll, trials = trial_dirs(tmp_path, dev)
    cfg = FinetuneSettings(epochs=2, speakers_per_batch=3, utterances_per_speaker=2, steps_per_epoch=2, lr=1e-3)
    best, log = train_finetuned(kind, train, enroll, [trials], cfg, tmp_path / "a", seed=1, quiet=True)
    assert [h["epoch"] for h in log] == [0, 1, 2] and log[0]["loss"] is None
    assert all(h["loss"] > 0 for h in log[1:])
    assert _selected_eer(kind, best) == min(h["val_eer"] for h in log)
    encoder = load_encoder(f"{kind}:{best}")
    assert dev_eer(encoder, enroll, [trials]) == pytest.approx(_selected_eer(kind, best))
    # the weights moved: the last epoch's model embeds differently from the pretrained one
    last = torch.load(tmp_path / "a" / "last.pt", weights_only=False)
    pretrained = finetune_model(kind).module.state_dict()
    moved = max((last["states"]["model"][k].float() - v.float()).abs().max().item() for k, v in pretrained.items())
    assert moved > 1e-4
    # resume: one epoch, then two, equals two straight
    train_finetuned(kind, train, enroll, [trials], FinetuneSettings(**{**cfg.__dict__, "epochs": 1}), tmp_path / "b",
                    seed=1, quiet=True)
    _, resumed = train_finetuned(kind, train, enroll, [trials], cfg, tmp_path / "b", seed=1, quiet=True)
    assert resumed == log
    with pytest.raises(CheckpointError, match="other data or settings"):
        train_finetuned(kind, train, enroll, [trials], cfg, tmp_path / "b", seed=2, quiet=True)


def test_bad_checkpoint_named(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"nope")
    with pytest.raises(EncoderError, match="bad.pt"):
        load_encoder(f"ge2e:{bad}")
    with pytest.raises(EncoderError, match="not found"):
        load_encoder(f"ge2e:{tmp_path / 'missing.pt'}")
