"""``voxanon data speaker-pool`` and ``voxanon train speaker-flow`` end to end (real GE2E on tiny audio)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from voxanon.anonymizers.pseudo import load_pool, make_generator
from voxanon.cli import main
from voxanon.models.flow import load_flow


@pytest.mark.slow
def test_pool_and_flow_commands(data_dir, tmp_path, capsys):
    out = tmp_path / "pool.npz"
    assert main(["data", "speaker-pool", str(data_dir), "--out", str(out), "--level", "utterance",
                 "--max-utts", "1", "--quiet"]) == 0
    pool = load_pool(out)
    assert pool.speakers.tolist() == ["spk1", "spk2", "spk3"] and pool.genders.tolist() == ["f", "m", "f"]
    assert pool.encoder == "ge2e" and pool.utt_embeddings.shape == (3, 256)
    # one utterance per speaker: the speaker embedding is that utterance's
    np.testing.assert_allclose(pool.embeddings, pool.utt_embeddings[np.argsort(pool.utt_speakers)], atol=1e-6)
    flow_path = tmp_path / "flow.pt"
    assert main(["train", "speaker-flow", str(out), "--out", str(flow_path), "--epochs", "1", "--hidden", "32",
                 "--layers", "1", "--quiet"]) == 0
    log = json.loads((tmp_path / "flow.pt.json").read_text())
    assert log["epochs"] == 1 and log["points"] == 3 and log["pool"] == str(out)
    flow = load_flow(flow_path)
    pseudo = make_generator("f3va", flow=flow, w=0.5)(pool.embeddings[0], np.random.default_rng(0))
    assert pseudo.shape == (256,)


def test_commands_report_bad_input(data_dir, tmp_path, capsys):
    (data_dir / "spk2gender").write_text("spk1 f\nspk3 f\n")
    assert main(["data", "speaker-pool", str(data_dir), "--out", str(tmp_path / "p.npz")]) == 3
    err = capsys.readouterr().err
    assert "spk2gender" in err and "'spk2'" in err
    (tmp_path / "bad.npz").write_bytes(b"nope")
    assert main(["train", "speaker-flow", str(tmp_path / "bad.npz"), "--out", str(tmp_path / "f.pt")]) == 3
    assert "bad.npz: not a readable .npz" in capsys.readouterr().err
    assert not (tmp_path / "p.npz").exists() and not (tmp_path / "f.pt").exists()
