"""The kits' results_summary form: voxanon writes the kit's published file again from its rows, and reads both."""

from datetime import datetime
from pathlib import Path

from voxanon.evaluation.vpc import AsrRow, AsvRow, SerRow
from voxanon.jobs.report.vpc_summary import (
    frame_text,
    parse_summary,
    results_anon,
    results_orig,
)

KIT = Path(__file__).parents[2] / "fixtures" / "vpc"


def _rows(blocks):
    ser = [SerRow(int(r["index"]), r["dataset"], r["split"], r["ser"], float(r["UAR"]),
                  {k[4:]: float(v) for k, v in r.items() if k.startswith("ACC_")}) for r in blocks["SER"]]
    asr = [AsrRow(int(r["index"]), r["dataset"], r["split"], r["asr"], float(r["WER"]), "kit", 0) for r in blocks["ASR"]]

    def asv(title):
        return [AsvRow(int(r["index"]), r["dataset"], r["split"], r["gender"], r["enrollment"], r["trial"],
                       float(r["EER"]), "kit") for r in blocks[title]]
    return ser, asv("ASV_eval"), asr, asv("ASV_eval^anon")


def _times(text):
    return [datetime.strptime(line[len("---- Time: "):-len(" ----")], "%d-%m-%y_%H:%M")
            for line in text.splitlines() if line.startswith("---- Time: ")]


def test_the_kits_2024_file_is_written_again_byte_for_byte():
    text = (KIT / "result_for_rank_mcadams_2024.txt").read_text()
    ser, asv, asr, asv_anon = _rows(parse_summary(text))
    t_orig, t_anon = _times(text)
    mine = (results_orig(edition="2024", suffix="_mcadams", asv=asv, asr=asr, ser=ser, now=t_orig) + "\n"
            + results_anon(asv_anon, now=t_anon))
    assert mine == text


def test_the_kits_2026_file_parses():
    blocks = parse_summary((KIT / "result_for_rank_mcadams_2026.txt").read_text())
    assert list(blocks) == ["SER", "ASV_eval", "ASR", "ASV_eval^anon"]
    assert blocks["ASV_eval"] == [
        {"index": "2", "dataset": "libri", "split": "dev", "gender": "mixed", "enrollment": "anon", "trial": "anon",
         "EER": "11.423"},
        {"index": "5", "dataset": "libri", "split": "test", "gender": "mixed", "enrollment": "anon", "trial": "anon",
         "EER": "7.220"}]
    assert list(blocks["SER"][0]) == ["index", "dataset", "split", "ser", "UAR", "ACC_sad", "ACC_ang", "ACC_hap",
                                      "ACC_neu"]
    # the kit's own file mixes index widths in one table (2 for row 2, 1 for row 5): voxanon writes pandas' layout
    ser, asv, asr, _ = _rows(blocks)
    assert parse_summary(results_orig(edition="2026", suffix="_mcadams", asv=asv + [
        AsvRow(0, "libri", "dev", "mixed", "original", "original", 1.0, "kit")], asr=asr, ser=ser)) == {
        k: v for k, v in blocks.items() if k != "ASV_eval^anon"}


def test_float_columns_share_their_decimals_and_nan():
    assert frame_text(["x", "EER"], [(0, ["a", 12.91]), (10, ["bb", 1.5571]), (2, ["c", float("nan")])]) == (
        "     x      EER\n"
        "0    a  12.9100\n"
        "10  bb   1.5571\n"
        "2    c      NaN")
    assert frame_text(["v"], [(0, [1.0]), (1, [2.5])]) == "     v\n0  1.0\n1  2.5"
