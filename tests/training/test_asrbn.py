"""VPC B5/B6 offline: the k-means vector quantiser, ``voxanon train asrbn`` and the speaker-table acoustic model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.helpers.acoustic_data import CLIP, train_dir, train_log
from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.registry import build
from voxanon.audio.io import load_audio
from voxanon.cli import main
from voxanon.errors import EXIT_PARTIAL, ConfigError, ModelError
from voxanon.models.acoustic.inference import (
    AcousticError,
    AcousticModel,
    ModelSpecs,
    model_file,
)
from voxanon.models.acoustic.model import AcousticConfig, AcousticNet
from voxanon.models.acoustic.vq import VectorQuantizer, kmeans
from voxanon.models.checkpoint import save_atomic
from voxanon.training.asrbn import hold_out

TINY = AcousticConfig(channels=16, dilations=(1, 2), codebook_size=8, n_speakers=3)


def test_kmeans_finds_separated_clusters_and_respects_the_size():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(5, 6)) * 10
    frames = np.concatenate([c + 0.1 * rng.normal(size=(40, 6)) for c in centres])
    book = kmeans(frames, 5, np.random.default_rng(1))
    assert book.shape == (5, 6) and book.dtype == np.float32
    # every true centre has a centroid next to it
    assert np.linalg.norm(centres[:, None] - book[None], axis=-1).min(1).max() < 0.2
    assert len(np.unique(kmeans(frames, 12, np.random.default_rng(2)), axis=0)) == 12   # no empty cluster survives
    with pytest.raises(ValueError, match="3 frames cannot make 4"):
        kmeans(frames[:3], 4, rng)


def test_quantiser_codes_are_in_range_and_outputs_are_codebook_rows():
    vq = VectorQuantizer(7, 4)
    book = np.random.default_rng(0).normal(size=(7, 4)).astype(np.float32)
    vq.set_codebook(book)
    x = torch.randn(2, 30, 4)
    q, codes = vq(x)
    assert codes.shape == (2, 30) and codes.dtype == torch.int64 and 0 <= int(codes.min()) and int(codes.max()) < 7
    assert torch.equal(q, torch.from_numpy(book)[codes])                              # each frame is a codebook row
    brute = torch.cdist(x.reshape(-1, 4), torch.from_numpy(book)).argmin(1).reshape(2, 30)
    assert torch.equal(codes, brute)                                                 # the nearest one
    assert torch.equal(vq(torch.from_numpy(book)[None])[1][0], torch.arange(7))      # a codeword maps to itself
    with pytest.raises(ValueError, match=r"\(7, 4\)"):
        vq.set_codebook(book[:5])


def test_speaker_table_net_round_trips_and_the_speaker_matters(tmp_path):
    torch.manual_seed(0)
    net = AcousticNet(TINY)
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.2)
    net.vq.set_codebook(np.random.default_rng(0).normal(size=(8, 384)))
    content, pitch = torch.randn(1, 30, 384), torch.randn(1, 30, 2)
    out = net(content, pitch, torch.tensor([1])).detach()
    assert out.shape == (1, 30, 80)
    # content enters only through its codes: moving a frame towards its own codeword changes nothing
    q = net.vq(content)[0]
    assert torch.allclose(net(content + 0.1 * (q - content), pitch, torch.tensor([1])), out, atol=1e-5)
    save_atomic(model_file(net, ModelSpecs()), tmp_path / "m.pt")
    model = AcousticModel.from_file(tmp_path / "m.pt")
    assert model.n_speakers == 3 and model.config.codebook_size == 8
    assert torch.equal(model.net.vq.codebook, net.vq.codebook.half().float())
    again = model.net(content, pitch, torch.tensor([1])).detach()
    assert float((again - out).abs().max()) < 0.05 * float(out.abs().max())
    assert float((model.net(content, pitch, torch.tensor([2])).detach() - again).abs().mean()) > 1e-3
    for bad in (3, -1, 1.0, np.zeros(256)):
        with pytest.raises(AcousticError, match="not an index of its table of 3"):
            model.speaker_input(bad)


def test_hold_out_takes_the_last_utterance_of_evenly_spaced_speakers():
    rows = [(f"{s}{i}", s, f"{s}{i}.wav") for s in "abcd" for i in range(3)] + [("e0", "e", "e0.wav")]
    train, valid = hold_out(rows, 2)
    assert [r[0] for r in valid] == ["a2", "d2"] and len(train) == len(rows) - 2
    assert {r[0] for r in hold_out(rows, 10)[1]} == {"a2", "b2", "c2", "d2"}       # "e" has one utterance only
    assert hold_out(rows, 0) == (rows, [])


@pytest.mark.slow
def test_train_asrbn_writes_resumes_and_starts_from_an_acoustic_model(tmp_path, capsys):
    data = train_dir(tmp_path)
    out = tmp_path / "run"
    common = [str(data), "--cache", str(tmp_path / "cache"), "--codebook", "8", "--channels", "16",
              "--dilations", "1", "2", "--batch-size", "2", "--segment", "16", "--device", "cpu", "--threads", "1"]
    assert main(["train", "asrbn", *common, "--out", str(out), "--epochs", "0.3"]) == EXIT_PARTIAL
    assert "skipping utterance a-bad" in capsys.readouterr().err
    summary = json.loads((out / "model.json").read_text())
    assert summary["config"]["codebook_size"] == 8 and summary["config"]["n_speakers"] == 2
    assert [s.rsplit(":", 1)[1] for s in summary["speakers"]] == ["a", "b"]
    # held out: the last utterance of each speaker (a-bad, skipped, and b-1); trained on a-0, a-1, b-0
    assert summary["data"]["train_utterances"] == 3 and summary["data"]["valid_utterances"] == 1
    assert "valid_l1" in train_log(out)[-1] and summary["steps"] == train_log(out)[-1]["step"]
    model = AcousticModel.from_file(out / "model.pt")
    assert model.n_speakers == 2 and model.net.vq.codebook.abs().sum() > 0            # k-means codebook installed
    assert all(v.dtype == torch.float16 for k, v in torch.load(out / "model.pt")["state"].items())

    first = summary["steps"]
    assert main(["train", "asrbn", *common, "--out", str(out), "--epochs", "0.6"]) == EXIT_PARTIAL
    assert f"resuming at step {first}" in capsys.readouterr().err
    steps = [r["step"] for r in train_log(out)]
    assert steps == sorted(set(steps)) and steps[-1] > first
    resumed = AcousticModel.from_file(out / "model.pt")
    assert torch.equal(resumed.net.vq.codebook, model.net.vq.codebook)                # the codebook stays fixed

    torch.manual_seed(1)
    source = AcousticNet(AcousticConfig(channels=16, dilations=(1, 2)))
    save_atomic(model_file(source, ModelSpecs()), tmp_path / "init.pt")
    tuned = tmp_path / "tuned"
    assert main(["train", "asrbn", *common, "--out", str(tuned), "--epochs", "0.01", "--lr", "0",
                 "--init", str(tmp_path / "init.pt")]) == EXIT_PARTIAL
    meta = json.loads((tuned / "model.json").read_text())
    assert meta["init_not_copied"] == ["speakers.weight", "vq.codebook"]
    got = AcousticModel.from_file(tuned / "model.pt").net
    assert torch.allclose(got.content_in.weight, source.content_in.weight.half().float())
    # a start trained on another content encoder (other width) gives every weight that does not read the content
    narrow = AcousticNet(AcousticConfig(channels=16, dilations=(1, 2), content_dim=8))
    save_atomic(model_file(narrow, ModelSpecs()), tmp_path / "narrow.pt")
    assert main(["train", "asrbn", *common, "--out", str(tmp_path / "wide"), "--epochs", "0.01", "--lr", "0",
                 "--init", str(tmp_path / "narrow.pt")]) == EXIT_PARTIAL
    meta = json.loads((tmp_path / "wide" / "model.json").read_text())
    assert meta["config"]["content_dim"] == 384 and "content_in.weight" in meta["init_not_copied"]
    got = AcousticModel.from_file(tmp_path / "wide" / "model.pt").net
    assert torch.allclose(got.pitch_in.weight, narrow.pitch_in.weight.half().float())
    # a start whose codes were learnt in a recogniser keeps its quantiser (no k-means), and with the same
    # speakers its table's rows
    learnt = AcousticNet(AcousticConfig(channels=16, dilations=(1, 2), codebook_size=8, bottleneck_dim=4,
                                        n_speakers=2))
    learnt.vq.set_codebook(np.random.default_rng(1).normal(size=(8, 4)))
    learnt.vq.set_projection(np.random.default_rng(2).normal(size=(4, 384)), np.ones(4))
    save_atomic(model_file(learnt, ModelSpecs(), meta={"speakers": summary["speakers"]}), tmp_path / "learnt.pt")
    assert main(["train", "asrbn", *common, "--out", str(tmp_path / "kept"), "--epochs", "0.01", "--lr", "0",
                 "--init", str(tmp_path / "learnt.pt")]) == EXIT_PARTIAL
    meta = json.loads((tmp_path / "kept" / "model.json").read_text())
    assert meta["init_not_copied"] == [] and meta["config"]["bottleneck_dim"] == 4
    got = AcousticModel.from_file(tmp_path / "kept" / "model.pt").net
    for name in ("codebook", "proj_weight", "proj_bias"):
        assert torch.equal(getattr(got.vq, name), getattr(learnt.vq, name).half().float())
    assert torch.equal(got.speakers.weight, learnt.speakers.weight.half().float())
    sixteen = [*common]
    sixteen[sixteen.index("--codebook") + 1] = "16"
    assert main(["train", "asrbn", *sixteen, "--out", str(tmp_path / "other"), "--epochs", "0.01",
                 "--init", str(tmp_path / "learnt.pt")]) == 2
    assert "give --codebook 8" in capsys.readouterr().err


def test_too_small_a_codebook_is_a_usage_error(tmp_path, capsys):
    assert main(["train", "asrbn", str(tmp_path), "--out", str(tmp_path / "o"), "--codebook", "1"]) == 2
    assert "--codebook 1" in capsys.readouterr().err


# --- the b5 / b6 anonymizers ------------------------------------------------------------------------------------

def _table_model(path: Path, n_speakers: int = 3) -> str:
    torch.manual_seed(0)
    net = AcousticNet(AcousticConfig(channels=16, dilations=(1, 2), codebook_size=4, n_speakers=n_speakers))
    save_atomic(model_file(net, ModelSpecs()), path)
    return str(path)


def test_b5_b6_parameters_and_usage_errors(tmp_path):
    assert build("b5").config.model == "b5" and build("b6").config.model == "b6"
    assert build("b6").config.target == -1 and build("b6").config.f0 == "model"
    for bad in ({"target": -2}, {"f0": "original"}, {"threads": -1}):
        with pytest.raises(ConfigError):
            build("b5", bad)
    model = _table_model(tmp_path / "t.pt")
    with pytest.raises(ConfigError, match="target: 3 is not a speaker"):
        build("b5", {"model": model, "target": 3}).acoustic()
    with pytest.raises(ModelError, match="has no speaker table"):
        build("b5", {"model": "default"}).acoustic()
    with pytest.raises(ModelError, match="not found"):
        build("b5", {"model": str(tmp_path / "missing.pt")}).acoustic()


def test_silence_stays_silence_without_loading_the_model():
    anon = build("b6")
    out, sr = anon.process(np.zeros(16000 * 2, dtype=np.float32), 16000, utterance_rng(0, "u"))
    assert sr == 16000 and len(out) == 32000 and not out.any() and anon._model is None


def test_target_is_drawn_per_utterance_rng_or_fixed(tmp_path):
    model = _table_model(tmp_path / "t.pt", n_speakers=50)
    anon = build("b5", {"model": model})
    wav = np.ones(160, dtype=np.float32)
    draws = [anon.pseudo_speaker(wav, 16000, utterance_rng(0, f"utt{i}")) for i in range(40)]
    assert all(0 <= d < 50 for d in draws) and len(set(draws)) > 15              # differs per utterance
    assert draws == [anon.pseudo_speaker(wav, 16000, utterance_rng(0, f"utt{i}")) for i in range(40)]
    fixed = build("b5", {"model": model, "target": 7})
    assert {fixed.pseudo_speaker(wav, 16000, utterance_rng(0, f"utt{i}")) for i in range(5)} == {7}


def _draws(params: dict) -> set[int]:
    anon = build("b5", params)
    wav = np.ones(160, dtype=np.float32)
    return {anon.pseudo_speaker(wav, 16000, utterance_rng(0, f"utt{i}")) for i in range(60)}


def test_targets_are_the_speakers_the_model_names_or_the_given_ones(tmp_path):
    torch.manual_seed(0)
    net = AcousticNet(AcousticConfig(channels=16, dilations=(1, 2), codebook_size=4, n_speakers=6))
    named = str(tmp_path / "named.pt")
    save_atomic(model_file(net, ModelSpecs(), {"targets": [1, 4]}), named)
    assert _draws({"model": named}) == {1, 4}
    assert _draws({"model": named, "targets": "all"}) == set(range(6))
    assert _draws({"model": named, "targets": "3,2,3"}) == {2, 3}
    assert build("b5", {"model": named, "targets": "3,2,3"}).target_speakers() == [2, 3]
    assert _draws({"model": _table_model(tmp_path / "t.pt", n_speakers=6)}) == set(range(6))  # none named: all
    assert _draws({"model": named, "target": 5}) == {5}                      # a fixed target wins
    for bad in ("1;2", "", "-1", "eng"):
        with pytest.raises(ConfigError, match="not model, all or comma-separated"):
            build("b5", {"targets": bad})
    with pytest.raises(ConfigError, match=r"\[6\] are not speakers"):
        build("b5", {"model": named, "targets": "0,6"}).acoustic()


def test_shipped_b5_and_b6_draw_among_their_english_voices():
    for method, n_targets, n_speakers in (("b5", 16, 54), ("b6", 84, 200)):
        anon = build(method)
        names = [anon.acoustic().meta["speakers"][i].rsplit(":", 1)[-1] for i in anon.target_speakers()]
        assert len(names) == n_targets and all(re.match(r"[fm]-[ab][fm]_", n) for n in names)
        assert build(method, {"targets": "all"}).target_speakers() == list(range(n_speakers))


def test_set_model_targets_names_the_matching_speakers(tmp_path):
    import subprocess
    import sys

    torch.manual_seed(0)
    net = AcousticNet(AcousticConfig(channels=16, dilations=(1, 2), codebook_size=4, n_speakers=4))
    names = ["real:alsa", "train:f-af_kore", "train:f-jf_alpha", "train:m-bm_lewis"]
    path = tmp_path / "m.pt"
    save_atomic(model_file(net, ModelSpecs(), {"speakers": names}), path)
    (tmp_path / "m.json").write_text(json.dumps({"speakers": names, "file_bytes": 1}))
    tool = Path(__file__).resolve().parents[2] / "tools/set_model_targets.py"
    run = subprocess.run([sys.executable, str(tool), str(path), "--match", ":[fm]-[ab][fm]_", "--why", "English"],
                         capture_output=True, text=True, check=True)
    assert "2 of 4 speakers are targets: f-af_kore, m-bm_lewis" in run.stdout
    model = AcousticModel.from_file(path)
    assert model.meta["targets"] == [1, 3] and model.meta["targets_rule"]["why"] == "English"
    summary = json.loads((tmp_path / "m.json").read_text())
    assert summary["targets"] == [1, 3] and summary["file_bytes"] == path.stat().st_size
    assert all(torch.equal(a, b) for a, b in zip(model.net.state_dict().values(), net.half().float().state_dict()
                                                                                      .values()))
    assert _draws({"model": str(path)}) == {1, 3}
    fails = subprocess.run([sys.executable, str(tool), str(path), "--match", "nobody", "--why", "x"],
                           capture_output=True, text=True)
    assert fails.returncode != 0 and "finds none of its 4 speakers" in fails.stderr


@pytest.mark.slow
@pytest.mark.parametrize("method", ["b5", "b6"])
def test_shipped_models_convert_real_speech_into_their_targets_voices(method):
    from voxanon.models.speaker import load_encoder

    wav, sr = load_audio(CLIP)
    wav = wav[: 3 * sr]
    model = build(method).acoustic()
    # b5: codes learnt from frame phones, 50 Kokoro voices + 4 real speakers; b6: k-means codes, 200 Kokoro voices
    assert model.n_speakers == {"b5": 54, "b6": 200}[method] and model.config.codebook_size == 48
    assert model.config.bottleneck_dim == {"b5": 64, "b6": 0}[method]
    table = model.net.speakers.weight.detach().numpy()
    a, b = np.unravel_index(np.argmin(table @ table.T), table.shape[:1] * 2)       # the two most different rows
    anon_a = build(method, {"target": int(a)})
    out_a, out_sr = anon_a.process(wav, sr, utterance_rng(0, "u"))
    out_b, _ = build(method, {"target": int(b)}).process(wav, sr, utterance_rng(0, "u"))
    assert out_sr == sr and len(out_a) == len(wav) and np.isfinite(out_a).all() and np.abs(out_a).max() > 0.01
    assert np.array_equal(anon_a.process(wav, sr, utterance_rng(0, "v"))[0], out_a)   # same input, same bytes
    src, emb_a, emb_b = load_encoder("ge2e").embed([wav, out_a, out_b], sr)
    assert emb_a @ emb_b < 0.9                       # two targets, two voices
    assert emb_a @ src < 0.9 and emb_b @ src < 0.9   # neither is the source's
