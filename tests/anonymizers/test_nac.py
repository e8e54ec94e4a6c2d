"""B4 end to end on small random checkpoints laid out as the Hugging Face hub cache holds the real ones.

What these cannot test: the real weights (never run here); with random networks the output is noise-like
speech-rate audio, so the checks are on the contract (rate, length, finite, seeded, the prompt matters), not quality.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.helpers.audio import LIBRIVOX
from tests.helpers.nac_checkpoint import hub_cache, random_prompt
from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.registry import build
from voxanon.audio.io import load_audio
from voxanon.cli import main
from voxanon.errors import ConfigError, DataError

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return hub_cache(tmp_path_factory.mktemp("hf") / "hub")


@pytest.fixture
def in_cache(cache, monkeypatch) -> Path:
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    return cache


@pytest.fixture(scope="module")
def b4(cache):
    """One B4 with the defaults, its weights found in the cache (loaded once for the module)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_CACHE", str(cache))
        return build("b4")


@pytest.fixture(scope="module")
def clip() -> tuple[np.ndarray, int]:
    return load_audio(LIBRIVOX / "sense_and_sensibility_01_austen_64kb-0880.flac")


def test_without_weights_b4_is_a_usage_error_naming_what_to_put_where(tmp_path, monkeypatch, data_dir,
                                                                      capsys) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    with pytest.raises(ConfigError, match=r"b4 needs pretrained weights.*Bark \(suno/bark\).*HuBERT.*quantiser"):
        build("b4")
    assert main(["anonymize", "--method", "b4", str(data_dir), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "--param model=" in err and str(tmp_path / "empty-hub" / "models--suno--bark") in err
    assert not (tmp_path / "out").exists()


def test_b4_runs_on_real_speech_with_the_kit_defaults(b4, clip) -> None:
    wav, sr = clip
    out, out_sr = b4.process(wav, sr, utterance_rng(0, "spk-utt1"))
    assert out_sr == sr and len(out) == len(wav) and out.dtype == np.float32
    assert np.isfinite(out).all() and np.std(out) > 0
    assert not np.allclose(out, wav, atol=1e-2)
    assert b4.report()["voice"] in {"v2/de_speaker_0", "v2/en_speaker_0", "v2/en_speaker_1"}
    assert (b4.config.coarse_temperature, b4.config.fine_temperature) == (0.7, 0.5)
    assert b4.model().coarse.config.block_size == 1024  # the real Bark configuration, tiny widths


def test_b4_is_seeded_and_draws_a_voice_per_utterance(b4, clip) -> None:
    wav, sr = clip[0][:16000], clip[1]
    first = b4.process(wav, sr, utterance_rng(0, "u"))[0]
    voice = b4.report()["voice"]
    assert voice == drawn_voice(b4, "u")
    assert np.array_equal(first, b4.process(wav, sr, utterance_rng(0, "u"))[0])
    keys = [f"k{i}" for i in range(30)]
    same = next(k for k in keys if drawn_voice(b4, k) == voice)  # same voice, other sampling seed
    assert not np.array_equal(first, b4.process(wav, sr, utterance_rng(0, same))[0])
    other = next(k for k in keys if drawn_voice(b4, k) != voice)
    assert not np.array_equal(first, b4.process(wav, sr, utterance_rng(0, other))[0])
    assert b4.report()["voice"] == drawn_voice(b4, other) != voice


def drawn_voice(b4, key: str) -> str:
    """The voice ``b4`` draws for utterance ``key`` at seed 0: the first draw of its rng."""
    pool = b4.voices()
    return pool[int(utterance_rng(0, key).integers(len(pool)))].name


def test_a_fixed_voice_at_another_rate_and_the_prompt_alone_changes_the_output(cache, monkeypatch, clip) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    from voxanon.audio.io import resample

    wav = resample(clip[0][:16000], 16000, 22050)
    outs = {}
    for voice in ("v2/en_speaker_0", "v2/en_speaker_1"):
        anonymizer = build("b4", {"voice": voice, "coarse_temperature": 0, "fine_temperature": 0})
        out, sr = anonymizer.process(wav, 22050, utterance_rng(4, "u"))
        assert sr == 22050 and len(out) == len(wav) and anonymizer.report() == {"voice": voice}
        outs[voice] = out
    assert not np.array_equal(*outs.values())  # same source, greedy decoding: only the prompt differs


def test_a_voice_outside_the_pool_too_short_inputs_and_unknown_devices_are_refused(in_cache) -> None:
    with pytest.raises(ConfigError, match=r"voice: 'nobody' is not in the pool of 3 voices \(v2/de_speaker_0"):
        build("b4", {"voice": "nobody"}).prepare()
    with pytest.raises(DataError, match=r"input of 20.0 ms is shorter than HuBERT's 25 ms window"):
        build("b4").anonymize(np.zeros(320, np.float32), 16000, utterance_rng(0, "u"))
    with pytest.raises(ConfigError, match=r"device: 'gpu0' is not a torch device"):
        build("b4", {"device": "gpu0"}).model()
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match=r"device: 'cuda', but torch sees no CUDA device"):
            build("b4", {"device": "cuda"}).model()


def test_a_corpus_with_the_kit_layout_voice_folder_at_speaker_level(in_cache, data_dir, tmp_path) -> None:
    from voxanon.jobs.runner.anonymize import anonymize_corpus

    rng = np.random.default_rng(7)
    voices = tmp_path / "suno_voices" / "v2"
    for name in ("p0", "p1", "p2", "p3"):
        (voices / name).mkdir(parents=True)
        np.savez(voices / name / f"{name}.npz", **random_prompt(rng))
    anonymizer = build("b4", {"voices": str(voices)})
    out = tmp_path / "anon"
    summary = anonymize_corpus(data_dir, out, anonymizer, seed=1, level="speaker", jobs=1, quiet=True)
    assert summary.failed == 0 and summary.done == 6
    chosen: dict[str, set[str]] = {}
    for record in sorted((out / "wav").glob("*.json")):
        utt = record.stem
        chosen.setdefault(utt.split("-")[0], set()).add(json.loads(record.read_text())["voice"])
        wav, sr = load_audio(out / "wav" / f"{utt}.wav")
        assert sr == 16000 and abs(len(wav) - 0.3 * 16000) <= 1
    assert len(chosen) == 3 and all(len(v) == 1 and v <= {"p0", "p1", "p2", "p3"} for v in chosen.values())
