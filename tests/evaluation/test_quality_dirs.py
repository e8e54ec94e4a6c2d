"""Quality measures over data directories: an unchanged copy keeps every measure at its identity value."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from voxanon.audio.io import write_wav
from voxanon.audio.synthetic import speech_like
from voxanon.data.kaldi import DataDir, write_data_dir
from voxanon.evaluation.quality import evaluate_quality


def _corpus(root, scale=1.0):
    data = DataDir()
    for s, (f0, f1) in enumerate(((110, 500), (210, 700), (150, 400))):
        spk = f"s{s}"
        data.spk2gender[spk] = "m" if f0 < 160 else "f"
        for k in range(3):
            utt = f"{spk}_{k}"
            wav = speech_like(1.5, f0=f0 * scale, formants=((f1, 80), (1500, 100), (2500, 120)), seed=10 * s + k)
            write_wav(root / "wav" / f"{utt}.wav", wav, 16000)
            data.wav_scp[utt] = str(root / "wav" / f"{utt}.wav")
            data.utt2spk[utt] = spk
    return write_data_dir(data, root / "data")


@pytest.mark.slow
def test_identity_copy_has_identity_quality(tmp_path):
    orig = _corpus(tmp_path / "orig")
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "orig", copy)
    anon = copy / "data"
    (anon / "wav.scp").write_text((orig / "wav.scp").read_text().replace(str(tmp_path / "orig"), str(copy)))
    res = evaluate_quality([orig], [anon], max_utts=2, cache_dir=tmp_path / "cache", quiet=True)
    assert res.dnsmos.n == 2
    assert res.dnsmos.original == pytest.approx(res.dnsmos.anonymized)
    assert 1.0 <= res.dnsmos.original <= 5.0
    assert res.rho_f0 == pytest.approx(1.0)
    assert res.gvd_db == pytest.approx(0.0, abs=1e-9)
    assert res.deid == pytest.approx(0.0, abs=1e-9)
    assert res.gvd_speakers == 3 and res.gvd_utterances == 9
    assert np.isfinite(res.gvd_db)
