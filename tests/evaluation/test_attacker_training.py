"""The ladder's attacker training: ECAPA and GE2E recipes selected on dev trials."""

import pytest
import torch

from tests.helpers.speaker_corpus import TINY_ECAPA, make_corpus, trial_dirs
from voxanon.data.kaldi import DataError
from voxanon.evaluation.attacker_training import train_attacker, train_ecapa
from voxanon.evaluation.dev_selection import dev_eer
from voxanon.models.speaker import load_encoder
from voxanon.training.asv import AsvSettings, split_utterances

torch.set_num_threads(1)


def test_train_ecapa_selects_on_dev_trials(tmp_path):
    train = make_corpus(tmp_path / "train", n_spk=4, n_utt=4, dur=0.6)
    dev = make_corpus(tmp_path / "dev", n_spk=4, n_utt=4, dur=0.6)
    enroll, trials = trial_dirs(tmp_path, dev)
    cfg = AsvSettings(model=TINY_ECAPA, epochs=2, batch_size=8, chunk_seconds=0.5, val_fraction=0.25)
    best, log = train_ecapa(train, enroll, [trials], cfg, tmp_path / "out", seed=3, quiet=True)
    assert [h["epoch"] for h in log] == [1, 2] and all({"loss", "val_eer"} <= set(h) for h in log)
    chosen = torch.load(best, weights_only=True)
    assert chosen["val_eer"] == min(h["val_eer"] for h in log)
    assert dev_eer(load_encoder(f"ecapa:{best}"), enroll, [trials]) == pytest.approx(chosen["val_eer"], abs=1e-6)


def test_dev_trials_need_no_held_out_training_utterances(tmp_path):
    # two utterances a speaker (the Kokoro corpus's small size) leave no validation split at 10 %
    train = make_corpus(tmp_path / "train", n_spk=4, n_utt=2, dur=0.6)
    enroll, trials = trial_dirs(tmp_path, make_corpus(tmp_path / "dev", n_spk=4, n_utt=4, dur=0.6))
    cfg = AsvSettings(model=TINY_ECAPA, epochs=1, batch_size=8, chunk_seconds=0.5)
    assert split_utterances(train, cfg.val_fraction, 0)[1] == []
    with pytest.raises(DataError, match="no validation utterances"):
        train_attacker(train, tmp_path / "alone", cfg, quiet=True)
    best, log = train_ecapa(train, enroll, [trials], cfg, tmp_path / "out", seed=3, quiet=True)
    assert best.is_file() and len(log) == 1
