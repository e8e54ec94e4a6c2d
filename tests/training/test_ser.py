"""The compact SER recipe: an interrupted training resumes to the same model."""

import pytest
import torch

from voxanon.audio.synthetic import speech_like
from voxanon.models.ser.features import LogMel
from voxanon.training import trainer
from voxanon.training.ser import CompactSerSettings, train_ser

SR = 16000


def test_resume_gives_the_same_model(tmp_path, monkeypatch):
    logmel = LogMel(SR)
    feats = [logmel([speech_like(0.5, SR, f0=100 + 40 * (i % 4), seed=i)])[0][0].half() for i in range(12)]
    targets = [i % 4 for i in range(12)]
    settings = CompactSerSettings(epochs=3, batch_size=4, channels=16, crop_frames=40)
    full = train_ser(feats, targets, tmp_path / "a.pt", settings, quiet=True)

    real_save, calls = trainer.save_atomic, []

    def interrupted(obj, path):
        calls.append(path)
        real_save(obj, path)
        if len(calls) == 2:  # after the second epoch's checkpoint
            raise KeyboardInterrupt

    monkeypatch.setattr(trainer, "save_atomic", interrupted)
    with pytest.raises(KeyboardInterrupt):
        train_ser(feats, targets, tmp_path / "b.pt", settings, quiet=True)
    assert not (tmp_path / "b.pt").exists() and (tmp_path / "b.pt.partial").exists()
    monkeypatch.setattr(trainer, "save_atomic", real_save)
    resumed = train_ser(feats, targets, tmp_path / "b.pt", settings, quiet=True)
    assert not (tmp_path / "b.pt.partial").exists()
    assert resumed.meta["losses"] == full.meta["losses"]
    for key, value in full.net.state_dict().items():
        assert torch.equal(value, resumed.net.state_dict()[key]), key
