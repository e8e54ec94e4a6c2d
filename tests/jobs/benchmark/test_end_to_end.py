"""The main job end to end: ``voxanon benchmark --quick`` on the offline corpus, its outputs, the report in a
real browser, and a rerun that reuses every stage."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from voxanon.data import emofilm
from voxanon.jobs.benchmark.records import SCHEMA_VERSION

pytestmark = pytest.mark.slow

SYSTEMS = ("original", "mcadams")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _benchmark(out: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "voxanon", "benchmark", "--quick", "--out", str(out), "--quiet", *extra]
    for s in SYSTEMS:
        cmd += ["--system", s]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=2400)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("benchmark")
    proc = _benchmark(out)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return out, proc


def test_results_cover_every_scenario_gender_and_measure(run):
    out, proc = run
    res = json.loads((out / "results.json").read_text())
    assert res["data"]["synthetic"] is True and res["errors"] == {}
    assert set(res["systems"]) == set(SYSTEMS)
    orig, mc = res["systems"]["original"], res["systems"]["mcadams"]
    assert set(orig["privacy"]) == {"OO", "OA", "AA-lazy", "AA-backend", "AA-semi"}  # quick's rungs: (a) and (c)
    assert set(mc["privacy"]) == {"OA", "AA-lazy", "AA-backend", "AA-semi"}
    for rung in ("AA-backend", "AA-semi"):  # trained on the system's training set, selected on dev
        training = mc["privacy"][rung]["test"]["training"]
        assert training["selected_on"] == "dev" and "mcadams" in training["train"]
        assert training["val_eer"] == min(e["val_eer"] for e in training["history"])
    for system in (orig, mc):
        for scenario in system["privacy"].values():
            r = scenario["test"]
            assert set(r["by_gender"]) == {"f", "m"}
            for g in r["by_gender"].values():
                assert 0 <= g["eer"] <= 100 and g["eer_ci"]["low"] <= g["eer"] <= g["eer_ci"]["high"]
                # 18 target trials per gender: too few for the linkability histogram
                assert g["linkability"] is None and g["min_cllr"] <= 1 + 1e-9
        assert 0 <= system["wer"]["test"]["wer"] and system["wer"]["test"]["n_scored"] > 0
        ser = system["ser"]
        assert 0 <= ser["uar_ci"][0] <= ser["uar_mean"] <= ser["uar_ci"][1] <= 100
        # EmoFilm's real clips when setup fetched them, else the TTS's acted styles (a smoke test)
        assert ser["smoke_test_only"] is not emofilm.wheel_path().is_file()
    assert mc["rtf"] > 0 and mc["failed_utterances"] == 0
    q = mc["quality"]
    assert 1 <= q["dnsmos"]["anonymized"] <= 5 and -1 <= q["rho_f0"] <= 1 and q["gvd_db"] < 0.5
    # the table printed at the end leads with the strongest attacker, names both systems and the report
    assert "strongest attacker" in proc.stdout
    assert "report:" in proc.stdout and all(s in proc.stdout for s in SYSTEMS)
    assert set(res["ranking"]["systems"]) == set(SYSTEMS)


def test_tables_and_figures_are_written(run):
    out, _ = run
    with (out / "summary.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["system"] for r in rows] == list(SYSTEMS)
    assert list(rows[0])[:3] == ["system", "attacker", "eer"]  # led by the strongest attacker
    with (out / "privacy.csv").open() as fh:
        prows = list(csv.DictReader(fh))
    assert {(r["system"], r["scenario"], r["gender"]) for r in prows} >= {
        ("mcadams", "AA-semi", "f"), ("mcadams", "AA-semi", "m"), ("original", "OO", "f")}
    for name in ("eer_vs_wer", "eer_vs_uar", "det_AA-semi", "det_AA-lazy", "gender_eer", "emotion_recall"):
        assert (out / "figures" / f"{name}.png").stat().st_size > 1000
        assert (out / "figures" / f"{name}.svg").read_text().lstrip().startswith("<?xml")


@pytest.mark.skipif(CHROMIUM is None, reason="Debian package chromium is not installed")
def test_report_loads_every_figure_and_clip_in_chromium(run, tmp_path):
    out, _ = run
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=15000"]
    url = (out / "report.html").as_uri()
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    check = re.search(r'<p id="load-check"[^>]*>', dom)
    assert check, "report did not render"
    tag = check.group(0)
    assert 'data-status="ok"' in tag, dom[check.start():check.start() + 400]
    assert 'data-images="6"' in tag and 'data-audio="4"' in tag  # 6 figures; 2 utterances x 2 systems
    shot = out / "report.png"
    subprocess.run([CHROMIUM, *flags, "--window-size=1300,2400", f"--screenshot={shot}", url],
                   capture_output=True, timeout=120)
    assert shot.stat().st_size > 10_000


def test_rerun_reuses_every_stage(run):
    out, _ = run
    stages = {p.name: p.stat().st_mtime_ns for p in (out / "stages").glob("*.json")}
    first = json.loads((out / "results.json").read_text())
    proc = _benchmark(out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert {p.name: p.stat().st_mtime_ns for p in (out / "stages").glob("*.json")} == stages
    again = json.loads((out / "results.json").read_text())
    assert again["systems"] == first["systems"]


def test_a_condition_on_the_output_adds_its_results_and_reuses_the_clean_stages(run):
    """Noise at 10 dB SNR between the anonymizer and the attackers: every attacker and the WER again, on the
    degraded sets only; the clean stages are read from the cache."""
    out, _ = run
    clean = {p.name: p.stat().st_mtime_ns for p in (out / "stages").glob("*.json")}
    proc = _benchmark(out, "--conditions", "noise10", "--condition-on", "output")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    stages = {p.name: p.stat().st_mtime_ns for p in (out / "stages").glob("*.json")}
    assert {k: v for k, v in stages.items() if k in clean} == clean  # nothing clean recomputed
    new = set(stages) - set(clean)
    assert new and all("@noise10" in name for name in new)
    res = json.loads((out / "results.json").read_text())
    assert res["schema_version"] == SCHEMA_VERSION and res["errors"] == {}
    [cond] = res["conditions"]
    assert (cond["condition"], cond["applied_to"]) == ({"name": "noise10", "kind": "noise", "snr_db": 10.0}, "output")
    orig, mc = cond["systems"]["original"], cond["systems"]["mcadams"]
    for name, system in cond["systems"].items():  # every attacker of the clean run, again
        assert set(system["privacy"]) == set(res["systems"][name]["privacy"])
    for system in (orig, mc):
        assert system["wer"]["test"]["n_scored"] > 0
        assert "/conditions/noise10/" in system["privacy"]["AA-semi"]["test"]["training"]["train"]
    with (out / "conditions.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert {r["system"] for r in rows} == set(SYSTEMS) and all(r["condition"] == "noise10" for r in rows)
    assert all(r["eer"] and r["wer"] and r["d_wer"] for r in rows)
    assert "EER % noise10 output" in proc.stdout
    assert "Recording conditions" in (out / "report.html").read_text()
