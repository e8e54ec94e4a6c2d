"""`voxanon evaluate vpc` end to end on a miniature kit tree of each edition (generated checkpoints, kit file names).

The ASV EER is checked against an independent computation (one-utterance embeddings, mean enrollment,
cosine, speechbrain's threshold sweep); the summary must hold the kit's blocks and columns.
"""

from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.helpers.metrics_reference import speechbrain_eer
from tests.helpers.vpc_tree import SUFFIX, write_data, write_vpc_tree
from voxanon.cli import main
from voxanon.data.vpc_kit import find_kit_layout
from voxanon.errors import DataError, ModelError
from voxanon.evaluation.vpc import kit_trial_dir, ser_rows
from voxanon.jobs.report.vpc_summary import parse_summary
from voxanon.jobs.vpc import kit_asv_spec, run_vpc
from voxanon.models.speaker import load_encoder

KIT = Path(__file__).parents[1] / "fixtures" / "vpc"


@pytest.fixture(scope="module", params=["2024", "2026"])
def run(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"vpc{request.param}")
    data, exp = write_vpc_tree(root, request.param)
    results = run_vpc(data, root / "out", suffix=SUFFIX, exp=exp, asr=f"vpc2024:{exp / 'asr'}", ser=exp / "ser",
                      n_boot=10, quiet=True, now=datetime(2026, 12, 5, 17, 0))
    return request.param, data, exp, root / "out", results


def _reference_eer(data, exp, edition, enrolls, trials):
    spec = (f"speechbrain:{exp / 'asv_orig' / 'embedding_model.ckpt'}" if edition == "2024"
            else f"ecapa_ssl:{exp / 'asv_ssl'}")
    encoder = load_encoder(spec)

    def embed(folder):
        out = {}
        for line in (folder / "wav.scp").read_text().splitlines():
            utt, path = line.split(maxsplit=1)
            wav, sr = sf.read(path, dtype="float32")
            out[utt] = encoder.embed([wav], sr)[0]
        return out
    enroll_emb = embed(data / enrolls)
    spk_of = dict(line.split() for line in (data / enrolls / "utt2spk").read_text().splitlines())
    test_emb = embed(data / trials)
    tar, non = [], []
    for line in (data / trials / "trials").read_text().splitlines():
        spk, utt, label = line.split()
        model = np.mean([e for u, e in enroll_emb.items() if spk_of[u] == spk], axis=0)
        score = model @ test_emb[utt] / np.linalg.norm(model) / np.linalg.norm(test_emb[utt])
        (tar if label == "target" else non).append(score)
    return speechbrain_eer(tar, non)[0]


def test_summary_has_the_kits_blocks_and_columns(run):
    edition, _, _, out, _ = run
    mine = parse_summary((out / "results_summary.txt").read_text())
    kit = parse_summary((KIT / f"result_for_rank_mcadams_{edition}.txt").read_text())
    assert list(mine) == list(kit)
    for title in kit:
        assert sorted(mine[title][0]) == sorted(kit[title][0]), title
        assert [(r["index"], r["split"]) for r in mine[title]] == [(r["index"], r["split"]) for r in kit[title]]
    genders = {r["gender"] for r in mine["ASV_eval^anon"]}
    assert genders == ({"f", "m"} if edition == "2024" else {"mixed"})


def test_asv_rows_follow_the_editions_scoring(run):
    edition, data, exp, _, results = run
    rows = results["asv"]
    assert [r["index"] for r in rows] == list(range(len(rows)))  # the kit's DataFrame order: pair x (oo, oa, aa)
    first = rows[0]
    assert (first["enrollment"], first["trial"]) == ("original", "original")
    trials = "libri_dev_trials_f" if edition == "2024" else "libri_dev_trials_mixed"
    assert first["eer"] == pytest.approx(_reference_eer(data, exp, edition, "libri_dev_enrolls", trials), abs=1e-3)
    aa = [r["eer"] for r in rows if r["split"] == "test" and r["enrollment"] == r["trial"] == "anon"]
    assert results["ranking_eer"]["pretrained"]["test"] == pytest.approx(np.mean(aa))
    assert len(aa) == (2 if edition == "2024" else 1)


def test_asr_scores_the_trial_lists_of_dev_and_test(run):
    results = run[-1]
    assert [(r["split"], r["asr"], r["index"]) for r in results["asr"]] == [
        ("dev", "original", 0), ("test", "original", 1), ("dev", "anon", 4), ("test", "anon", 5)]
    assert {r["n_scored"] for r in results["asr"]} == {12}  # 4 speakers x 3 trial utterances, f + m or mixed


def test_ser_averages_the_five_folds(run):
    _, _, _, _, results = run
    assert [(r["split"], r["ser"]) for r in results["ser"]] == [
        ("dev", "anon"), ("dev", "original"), ("test", "anon"), ("test", "original")]
    for row in results["ser"]:
        assert sorted(s["fold"] for s in row["speakers"].values()) == ["1", "2", "3", "4", "5"]
        assert row["uar"] == pytest.approx(np.mean([s["uar"] for s in row["speakers"].values()]))
        assert set(row["acc"]) == {"neu", "ang", "hap", "sad"}


def test_cli_without_suffix_scores_the_original_only(tmp_path, capsys):
    data, exp = write_vpc_tree(tmp_path / "kit", "2024", suffix="")
    status = main(["evaluate", "vpc", str(data), "--exp", str(exp), "--out", str(tmp_path / "out"), "--n-boot", "5",
                   "--quiet"])
    assert status == 0
    blocks = parse_summary((tmp_path / "out" / "results_summary.txt").read_text())
    assert list(blocks) == ["ASV_eval"]
    assert [(r["index"], r["split"], r["gender"], r["enrollment"], r["trial"]) for r in blocks["ASV_eval"]] == [
        ("0", "dev", "f", "original", "original"), ("3", "dev", "m", "original", "original"),
        ("6", "test", "f", "original", "original"), ("9", "test", "m", "original", "original")]
    assert "---- ASV_eval results ----" in capsys.readouterr().out


def test_anonymize_with_the_kit_suffix_writes_sets_the_protocol_reads(tmp_path):
    """`voxanon anonymize --suffix` names copies as the kits do, with the metadata the protocol needs."""
    data = tmp_path / "data"
    write_data(data, "2026", suffix="")
    layout = find_kit_layout(data)
    names = [n for p in layout.pairs for n in (p.enrolls, p.trials)] + [f"IEMOCAP_{s}" for s in layout.iemocap]
    for name in dict.fromkeys(names):
        assert main(["anonymize", "--method", "mcadams", "--suffix", "_mcadams", "--jobs", "1", "--quiet",
                     str(data / name), str(data)]) == 0
    anon = find_kit_layout(data, suffix="_mcadams")
    assert anon.edition == "2026"
    trials = kit_trial_dir(anon, anon.pairs[0], anonymized=True)
    assert trials.path == data / "libri_dev_trials_mixed_mcadams"
    assert trials.trials == kit_trial_dir(anon, anon.pairs[0], anonymized=False).trials
    assert all(Path(p).is_relative_to(trials.path) for p in trials.wav_scp.values())
    copy = data / "IEMOCAP_test_mcadams"
    assert (copy / "spk2fold").read_text() == (data / "IEMOCAP_test" / "spk2fold").read_text()
    assert (copy / "utt2emo").read_text() == (data / "IEMOCAP_test" / "utt2emo").read_text()


def test_kit_model_folders_give_encoder_specs(tmp_path):
    (tmp_path / "asv_orig" / "CKPT+2024-01-01").mkdir(parents=True)
    ckpt = tmp_path / "asv_orig" / "CKPT+2024-01-01" / "embedding_model.ckpt"
    ckpt.write_bytes(b"")
    assert kit_asv_spec(tmp_path / "asv_orig", "2024") == f"speechbrain:{ckpt}"
    (tmp_path / "asv_orig" / "embedding_model.ckpt").write_bytes(b"")
    assert kit_asv_spec(tmp_path / "asv_orig", "2024") == f"speechbrain:{tmp_path / 'asv_orig' / 'embedding_model.ckpt'}"
    assert kit_asv_spec(tmp_path / "asv_ssl", "2026") == f"ecapa_ssl:{tmp_path / 'asv_ssl'}"
    with pytest.raises(ModelError, match=r"asv_anon: no embedding_model.ckpt .*--asv SPEC"):
        kit_asv_spec(tmp_path / "asv_anon", "2024")


def test_fold_without_model_is_named(run):
    _, data, _, _, _ = run
    folds = {"2": object()}
    with pytest.raises(DataError, match=r"IEMOCAP_dev/spk2fold: speaker 'Ses01F' is in fold '1', which has no model "
                                        r"\(models for folds \['2'\]\)"):
        ser_rows(find_kit_layout(data), folds)
