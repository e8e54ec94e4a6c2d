"""The 2026 semi-informed attacker fine-tuned on a miniature kit tree's anonymized train-clean-360, then evaluated."""

import json
from dataclasses import replace

import pytest
import torch

from tests.helpers.vpc_tree import SUFFIX, TRAIN_UTTS, write_vpc_tree
from voxanon.cli import main
from voxanon.data.vpc_kit import find_kit_layout
from voxanon.errors import ConfigError, DataError
from voxanon.jobs.vpc import finetune_kit_asv, run_vpc
from voxanon.models.speaker import load_encoder
from voxanon.models.speaker.ecapa_ssl import read_ecapa_state
from voxanon.training.ecapa_ssl import EcapaSslSettings

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return write_vpc_tree(tmp_path_factory.mktemp("vpc2026"), "2026")


def test_the_kit_recipe_on_the_kit_tree(tmp_path, tree):
    """The kit's chunk and crop lengths (3 s, 10 s) on the tree's 3 s utterances; the evaluator loads the result."""
    data, exp = tree
    layout = find_kit_layout(data, "2026", SUFFIX)
    res = finetune_kit_asv(layout, f"ecapa_ssl:{exp / 'asv_ssl'}", tmp_path / "ft", EcapaSslSettings(batch_size=8),
                           quiet=True)
    speakers, summary = 4, res.summary
    assert summary["speakers"] == speakers and summary["epoch"] == 2 and summary["val_chunks"] == speakers
    assert summary["train_chunks"] == speakers * (TRAIN_UTTS - 1)
    assert summary["steps_per_epoch"] == summary["train_chunks"] // 8
    assert res.model == tmp_path / "ft" / f"CKPT+{summary['best_epoch']}" / "embedding_model.ckpt"
    assert res.best == summary["best_val_loss"] and res.log == tmp_path / "ft" / "train_log.txt"
    best = read_ecapa_state(res.model)
    enc = load_encoder(f"ecapa_ssl:{tmp_path / 'ft'}")
    assert all(torch.equal(enc.model.ecapa.state_dict()[k], v) for k, v in best.items())


def test_bad_inputs(tmp_path, tree):
    data, exp = tree
    layout = find_kit_layout(data, "2026", SUFFIX)
    with pytest.raises(DataError, match="train-clean-360_other: no anonymized training set"):
        finetune_kit_asv(replace(layout, suffix="_other"), str(exp / "asv_ssl"), tmp_path / "o")
    with pytest.raises(ConfigError, match="no anonymized data suffix"):
        finetune_kit_asv(replace(layout, suffix=""), str(exp / "asv_ssl"), tmp_path / "o")
    with pytest.raises(ConfigError, match="2026 protocol, not 2024's"):
        finetune_kit_asv(replace(layout, edition="2024"), str(exp / "asv_ssl"), tmp_path / "o")
    with pytest.raises(ConfigError, match="is a speechbrain spec"):
        finetune_kit_asv(layout, "speechbrain:x.ckpt", tmp_path / "o")
    # the default output, exp/asv_anon<suffix>, holds the tree's own model: not overwritten, not shadowing
    with pytest.raises(ConfigError, match=f"asv_anon{SUFFIX} already holds an embedding_model.ckpt"):
        run_vpc(data, tmp_path / "out", suffix=SUFFIX, exp=exp, quiet=True, finetune=EcapaSslSettings(batch_size=8))


def test_fine_tuning_options_need_finetune_asv(tmp_path, tree, capsys):
    data, exp = tree
    assert main(["evaluate", "vpc", str(data), "--exp", str(exp), "--suffix", SUFFIX, "--epochs", "3",
                 "--out", str(tmp_path / "out")]) != 0
    assert "--epochs set the fine-tuning: add --finetune-asv" in capsys.readouterr().err


def test_evaluate_vpc_finetune_asv_end_to_end_and_rerun(tmp_path, tree, capsys):
    data, exp = tree
    args = ["evaluate", "vpc", str(data), "--exp", str(exp), "--suffix", SUFFIX, "--edition", "2026",
            "--finetune-asv", "--asv-anon", str(tmp_path / "asv_anon"), "--batch-size", "8", "--epochs", "2",
            "--n-boot", "5", "--quiet", "--out", str(tmp_path / "out")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "fine-tuned ASV_eval^anon: " in out and "---- ASV_eval^anon results ----" in out
    results = json.loads((tmp_path / "out" / "vpc_results.json").read_text())
    assert results["models"]["asv_anon"] == f"ecapa_ssl:{tmp_path / 'asv_anon'}"
    assert [h["epoch"] for h in results["asv_anon_training"]["history"]] == [1, 2]
    assert results["ranking_eer"]["retrained"]
    # a rerun finds the finished fine-tuning (nothing trained again) and scores the same
    first_ckpt = (tmp_path / "asv_anon" / "CKPT+2" / "embedding_model.ckpt").stat().st_mtime_ns
    assert main(args) == 0
    again = json.loads((tmp_path / "out" / "vpc_results.json").read_text())
    assert (tmp_path / "asv_anon" / "CKPT+2" / "embedding_model.ckpt").stat().st_mtime_ns == first_ckpt
    assert again["asv_anon_training"]["history"] == results["asv_anon_training"]["history"]
    assert again["ranking_eer"] == results["ranking_eer"]
