"""The compact SER recipe: an interrupted training resumes to the same model."""

import json

import pytest
import torch

from voxanon.audio.synthetic import speech_like
from voxanon.models.ser.compact import CompactSER
from voxanon.models.ser.features import LogMel
from voxanon.training import trainer
from voxanon.training.ser import CompactSerSettings, train_ser

SR = 16000


def test_resume_gives_the_same_model(tmp_path, monkeypatch):
    logmel = LogMel(SR)
    data = [(logmel([speech_like(0.5, SR, f0=100 + 40 * (i % 4), seed=i)])[0][0].half(), i % 4) for i in range(12)]
    settings = CompactSerSettings(epochs=3, batch_size=4, channels=16, crop_frames=40)
    full = train_ser(data, tmp_path / "a", settings, quiet=True)
    assert full.model == tmp_path / "a" / "ser.pt" and full.metric is None
    assert [json.loads(ln) for ln in full.log.read_text().splitlines()] == full.history

    real_save, calls = trainer.save_atomic, []

    def interrupted(obj, path):
        calls.append(path)
        real_save(obj, path)
        if len(calls) == 2:  # after the second epoch's checkpoint
            raise KeyboardInterrupt

    monkeypatch.setattr(trainer, "save_atomic", interrupted)
    with pytest.raises(KeyboardInterrupt):
        train_ser(data, tmp_path / "b", settings, quiet=True)
    assert not (tmp_path / "b" / "ser.pt").exists() and (tmp_path / "b" / "checkpoint.pt").exists()
    monkeypatch.setattr(trainer, "save_atomic", real_save)
    resumed = train_ser(data, tmp_path / "b", settings, quiet=True)
    assert not (tmp_path / "b" / "checkpoint.pt").exists()
    assert resumed.summary["losses"] == full.summary["losses"] and resumed.history == full.history
    a, b = CompactSER.load(full.model), CompactSER.load(resumed.model)
    for key, value in a.net.state_dict().items():
        assert torch.equal(value, b.net.state_dict()[key]), key
