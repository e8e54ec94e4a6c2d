"""The B5/B6 bottleneck learnt inside a recogniser (of characters by CTC, or of each frame's phone): the projected
quantiser, the network, its training and ``voxanon train asrbn --bottleneck``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.helpers.acoustic_data import train_log
from tests.helpers.audio import LIBRIVOX
from voxanon.audio.io import load_audio
from voxanon.cli import main
from voxanon.errors import ConfigError, DataError
from voxanon.models.acoustic.features import normalize_content
from voxanon.models.acoustic.inference import AcousticModel
from voxanon.models.acoustic.model import AcousticConfig, AcousticNet
from voxanon.models.acoustic.vq import VectorQuantizer
from voxanon.models.asr.alignment import PHONES, SIL
from voxanon.models.asr.base import AsrError
from voxanon.models.asr.bottleneck import (
    BottleneckConfig,
    BottleneckCtc,
    load_bottleneck,
    load_recogniser,
    model_file,
    transcribe_codes,
)
from voxanon.models.asr.ctc import greedy_decode, pad, text_to_ids
from voxanon.training.acoustic_features import UttFeatures
from voxanon.training.bottleneck import (
    BottleneckRecipe,
    BottleneckSettings,
    Utterances,
    read_todo,
    validate,
)


def test_projected_quantiser_picks_the_nearest_codeword_in_the_projected_space():
    rng = np.random.default_rng(0)
    vq = VectorQuantizer(6, 3, in_dim=10)
    w, b, book = rng.normal(size=(3, 10)), rng.normal(size=3), rng.normal(size=(6, 3))
    vq.set_projection(w, b)
    vq.set_codebook(book)
    x = rng.normal(size=(2, 25, 10)).astype(np.float32)
    q, codes = vq(torch.from_numpy(x))
    brute = np.linalg.norm((x @ w.T + b)[..., None, :] - book, axis=-1).argmin(-1)   # by hand, in numpy
    assert np.array_equal(codes.numpy(), brute)
    assert q.shape == (2, 25, 3) and torch.allclose(q, torch.from_numpy(book).float()[codes])
    with pytest.raises(ValueError, match=r"\(3, 10\)"):
        vq.set_projection(w.T, b)
    with pytest.raises(ValueError, match="no projection"):
        VectorQuantizer(6, 3).set_projection(w, b)


def test_the_acoustic_net_reads_codewords_of_the_bottleneck_dimension():
    net = AcousticNet(AcousticConfig(channels=16, dilations=(1,), codebook_size=5, bottleneck_dim=4))
    assert net.vq.codebook.shape == (5, 4) and net.vq.proj_weight.shape == (4, 384)
    assert net.content_in.in_features == 4
    assert net(torch.randn(1, 7, 384), torch.randn(1, 7, 2), torch.randn(1, 256)).shape == (1, 7, 80)
    assert "proj_weight" not in dict(AcousticNet(AcousticConfig(codebook_size=5)).named_buffers())  # k-means form
    with pytest.raises(ConfigError, match="needs a codebook"):
        AcousticConfig(bottleneck_dim=4)


def test_the_head_sees_only_codewords_and_the_projection_learns_through_them():
    torch.manual_seed(0)
    net = BottleneckCtc(BottleneckConfig(12, dim=4, codebook_size=5, hidden=8, layers=1, subsample=2,
                                         dropout=0.0)).eval()
    x, lengths = torch.randn(2, 9, 12), torch.tensor([9, 6])
    log_probs, out_len, codes, vq_loss = net(x, lengths)
    assert log_probs.shape[:2] == (2, 5) and out_len.tolist() == [5, 3] and codes.shape == (2, 9)  # a code a frame
    # the VQ loss by hand: codebook term + 0.25 x commitment, over the 15 real frames only
    z = net.project(x)
    d = (net.codebook[codes] - z).square().sum(-1)
    mask = torch.arange(9)[None] < lengths[:, None]
    assert torch.allclose(vq_loss, 1.25 * (d * mask).sum() / 15)
    # a frame moved within its cell changes nothing downstream
    nudged = x.clone()
    nudged[0, 0] += 1e-4 * torch.randn(12)
    assert torch.equal(net(nudged, lengths)[2], codes) and torch.equal(net(nudged, lengths)[0], log_probs)
    # the straight-through estimator: the recognition loss reaches the projection, not the codebook
    log_probs.sum().backward()
    assert net.project.weight.grad.abs().sum() > 0 and net.codebook.grad is None
    unquantised = net(x, lengths, quantise=False)
    assert (unquantised[2] == -1).all() and float(unquantised[3]) == 0


def test_a_phone_head_maps_each_code_alone_to_the_phones(tmp_path):
    torch.manual_seed(0)
    net = BottleneckCtc(BottleneckConfig(12, dim=4, codebook_size=5, targets="phones")).eval()
    x, lengths = torch.randn(2, 9, 12), torch.tensor([9, 6])
    log_probs, out_len, codes, _ = net(x, lengths)
    assert log_probs.shape == (2, 9, len(PHONES)) and out_len.tolist() == [9, 6]     # a phone score per frame
    same = codes == codes[0, 0]
    assert torch.allclose(log_probs[same], log_probs[0, 0].expand(int(same.sum()), -1))  # one code, one answer
    # the saved form names the phones; it has no transcripts to give
    torch.save(model_file(net, "whisper-tiny:3", {}), tmp_path / "phones.pt")
    loaded, _ = load_recogniser(tmp_path / "phones.pt")
    assert loaded.cfg.targets == "phones" and torch.allclose(loaded(x, lengths)[0], log_probs, atol=1e-2)
    with pytest.raises(AsrError, match="trained on phones"):
        transcribe_codes(tmp_path / "phones.pt", [np.zeros(16000, np.float32)], 16000)
    with pytest.raises(AsrError, match="targets 'words'"):
        BottleneckConfig(12, targets="words")


def test_phone_frames_are_scored_by_cross_entropy_and_frame_error():
    torch.manual_seed(0)
    net = BottleneckCtc(BottleneckConfig(6, dim=4, codebook_size=5, targets="phones"))
    items = [_features("a", 12), _features("b", 7), _features("unaligned", 9)]
    segments = {"a": [(PHONES.index("AA"), 0.0, 0.5), (SIL, 0.5, 1.2)], "b": [(PHONES.index("S"), 0.2, 0.7)]}
    data = Utterances.aligned(items, segments, {"a": "a", "b": "b", "unaligned": "c"}, frame_rate=10.0)
    assert len(data) == 2 and data.targets[1].tolist() == [SIL, SIL] + [PHONES.index("S")] * 5
    assert data.targets[0].tolist() == [PHONES.index("AA")] * 5 + [SIL] * 7
    # the loss: mean cross-entropy over the 19 real frames, padding ignored
    recipe = BottleneckRecipe(net, torch.optim.SGD(net.parameters(), lr=0.1), data, data, BottleneckSettings(), "cpu")
    log_probs, out_len, _, _ = net(*pad(data.content))
    by_hand = -torch.cat([log_probs[i, torch.arange(len(t)), torch.as_tensor(t)]
                          for i, t in enumerate(data.targets)]).mean()
    assert torch.allclose(recipe.head_loss(log_probs, out_len, data.targets), by_hand)
    # the error rate: the share of frames whose best phone is wrong
    net.eval()
    wrong = sum(int((net(*pad([c]))[0][0].argmax(-1) != torch.as_tensor(t)).sum())
                for c, t in zip(data.content, data.targets))
    scores = validate(net, data, "cpu")
    assert scores["val_fer"] == round(100 * wrong / 19, 2) and "val_cer" not in scores
    assert set(validate(net, data, "cpu", quantise=False)) == {"warmup_fer"}


def _features(utt: str, frames: int) -> UttFeatures:
    rng = np.random.default_rng(frames)
    return UttFeatures(utt, "s", rng.normal(3, 2, size=(1, frames, 6)).astype(np.float16), np.zeros((frames, 2)),
                       np.zeros((frames, 80)), np.zeros(256))


def test_utterances_are_normalised_and_those_ctc_cannot_learn_left_out():
    items = [_features("ok", 40), _features("short", 3), _features("silent-text", 40), _features("untranscribed", 40)]
    texts = {"ok": "hello world", "short": "hello world", "silent-text": "123 !!"}
    got, left_out = Utterances.of(items, texts)
    assert left_out == ["short", "silent-text", "untranscribed"] and len(got) == 1
    # 11 symbols and a repeat need 12 output frames: 40 frames at one per 4 give 10
    assert Utterances.of(items[:1], texts, subsample=4)[1] == ["ok"] and len(Utterances.of(items[:1], texts, 3)[0]) == 1
    assert got.targets == [text_to_ids("hello world")] and got.texts == ["hello world"]
    assert np.allclose(got.content[0].mean(0), 0, atol=1e-5) and np.allclose(got.content[0].std(0), 1, atol=1e-3)


def _write_dir(path: Path, rows: dict[str, tuple[str, str]]) -> Path:
    path.mkdir(parents=True)
    (path / "wav.scp").write_text("".join(f"{u} {w}\n" for u, (w, _) in rows.items()))
    (path / "utt2spk").write_text("".join(f"{u} spk\n" for u in rows))
    if any(t for _, t in rows.values()):
        (path / "text").write_text("".join(f"{u} {t}\n" for u, (_, t) in rows.items()))
    return path


def test_training_data_needs_transcripts_and_unique_ids(tmp_path):
    a = _write_dir(tmp_path / "a", {"u1": ("/x/1.wav", "one"), "u2": ("/x/2.wav", "two")})
    todo, texts = read_todo([str(a)])
    assert [t[0] for t in todo] == ["u1", "u2"] and texts == {"u1": "one", "u2": "two"}
    with pytest.raises(DataError, match="more than one data directory"):
        read_todo([str(a), str(_write_dir(tmp_path / "b", {"u2": ("/x/3.wav", "three")}))])
    with pytest.raises(DataError, match="no transcripts"):
        read_todo([str(_write_dir(tmp_path / "c", {"u3": ("/x/4.wav", "")}))])


def test_a_file_that_is_not_a_bottleneck_is_refused(tmp_path, capsys):
    torch.save({"format": "voxanon-ctc/1"}, tmp_path / "ctc.pt")
    with pytest.raises(AsrError, match="ctc.pt is a 'voxanon-ctc/1' checkpoint; expected a 'voxanon-bottleneck/1'"):
        load_bottleneck(tmp_path / "ctc.pt")
    assert main(["train", "asrbn", str(tmp_path), "--out", str(tmp_path / "o"), "--bottleneck",
                 str(tmp_path / "ctc.pt"), "--epochs", "1"]) != 0
    assert "expected a 'voxanon-bottleneck/1' checkpoint" in capsys.readouterr().err  # before any feature is extracted


def _librivox_dir(root: Path) -> Path:
    texts = dict(line.split(" ", 1) for line in (LIBRIVOX / "text").read_text().splitlines())
    rows = {p.stem: (str(p), texts[p.stem]) for p in sorted(LIBRIVOX.glob("*.flac"))}
    data = _write_dir(root / "data", rows)
    (data / "utt2spk").write_text("".join(f"{u} {'ab'[i % 2]}\n" for i, u in enumerate(rows)))
    return data


@pytest.mark.slow
def test_train_bottleneck_learns_resumes_exactly_and_feeds_asrbn(tmp_path, capsys):
    data = _librivox_dir(tmp_path)
    common = [str(data), "--valid", str(data), "--cache", str(tmp_path / "cache"), "--codebook", "8", "--dim", "6",
              "--device", "cpu", "--threads", "1", "--batch-size", "2", "--lr", "5e-3"]
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    assert main(["train", "bottleneck", *common, "--out", str(straight), "--epochs", "6"]) == 0
    log = train_log(straight)
    assert [r["epoch"] for r in log] == [1, 2, 3, 4, 5, 6]
    assert log[-1]["ctc"] < 0.7 * log[0]["ctc"]                        # it learns to recognise from its codes
    # two warm-up epochs without codes (never selected), then the codes
    assert all("warmup_cer" in r and "val_cer" not in r and r["reseeded"] == 0 for r in log[:2])
    assert all(1 <= r["perplexity"] <= 8 and 0 <= r["reseeded"] <= 8 and "warmup_cer" not in r for r in log[2:])
    summary = json.loads((straight / "model.json").read_text())
    best = min(log[2:], key=lambda r: r["val_cer"])
    assert summary["best_val_cer"] == best["val_cer"] and summary["data"]["train_utterances"] == 3
    assert torch.load(straight / "model.pt")["meta"]["epoch"] == best["epoch"]     # the selected epoch is written
    # an interrupted run (3 epochs, then on to 6) ends with the same weights
    assert main(["train", "bottleneck", *common, "--out", str(resumed), "--epochs", "3"]) == 0
    assert main(["train", "bottleneck", *common, "--out", str(resumed), "--epochs", "6"]) == 0
    assert "resuming after epoch 3" in capsys.readouterr().err
    a, b = (torch.load(p / "checkpoint.pt")["states"]["model"] for p in (straight, resumed))
    assert all(torch.equal(a[k], b[k]) for k in a)
    # --clean-copy: each utterance's clean content is one more training utterance
    both = tmp_path / "clean_copy"
    assert main(["train", "bottleneck", *common, "--out", str(both), "--epochs", "3", "--clean-copy"]) == 0
    assert json.loads((both / "model.json").read_text())["data"]["train_utterances"] == 6

    asrbn = ["train", "asrbn", str(data), "--cache", str(tmp_path / "cache"), "--channels", "16", "--dilations", "1",
             "--batch-size", "2", "--segment", "16", "--device", "cpu", "--threads", "1", "--epochs", "0.3",
             "--bottleneck", str(straight / "model.pt")]
    assert main([*asrbn, "--out", str(tmp_path / "wrong"), "--content", "whisper-tiny:2"]) == 2
    assert "give --content whisper-tiny:3" in capsys.readouterr().err
    assert main([*asrbn, "--out", str(tmp_path / "decoder")]) == 0
    net = AcousticModel.from_file(tmp_path / "decoder" / "model.pt").net
    bn = load_bottleneck(straight / "model.pt")
    assert net.cfg.codebook_size == 8 and net.cfg.bottleneck_dim == 6
    assert np.allclose(net.vq.proj_weight.numpy(), bn.weight, atol=2e-3)        # stored in fp16
    assert np.allclose(net.vq.codebook.numpy(), bn.codebook, atol=2e-3)

    # what the codes alone say of real speech: the recogniser on the content as the decoder reads it
    wavs = [load_audio(p)[0] for p in sorted(LIBRIVOX.glob("*.flac"))]
    recogniser, _ = load_recogniser(straight / "model.pt")
    decoder = AcousticModel.from_file(tmp_path / "decoder" / "model.pt")
    by_hand = [greedy_decode(recogniser(*pad([normalize_content(decoder.features(w, 16000).content)]))[0][0])
               for w in wavs]
    assert transcribe_codes(straight / "model.pt", wavs, 16000) == by_hand



@pytest.mark.slow
def test_train_bottleneck_on_aligned_phones_learns_and_aligns_once(tmp_path, capsys):
    data = _librivox_dir(tmp_path)
    out = tmp_path / "phones"
    args = ["train", "bottleneck", str(data), "--valid", str(data), "--cache", str(tmp_path / "cache"), "--codebook",
            "8", "--dim", "6", "--device", "cpu", "--threads", "1", "--jobs", "1", "--targets", "phones",
            "--batch-size", "1", "--lr", "1e-2", "--out", str(out)]
    assert main([*args, "--epochs", "6"]) == 0
    assert "valid frame phone error" in capsys.readouterr().out
    log = train_log(out)
    assert log[-1]["ce"] < 0.7 * log[0]["ce"] and all("ctc" not in r for r in log)
    assert all("warmup_fer" in r for r in log[:2]) and all(1 <= r["perplexity"] <= 8 for r in log[2:])
    summary = json.loads((out / "model.json").read_text())
    assert summary["best_val_fer"] == min(r["val_fer"] for r in log[2:]) and not summary["data"]["left_out"]
    aligned = json.loads((out / "alignments.json").read_text())
    assert sorted(aligned) == sorted(p.stem for p in LIBRIVOX.glob("*.flac"))
    # a longer run aligns nothing again, and the decoder takes its quantiser
    assert main([*args, "--epochs", "7"]) == 0
    assert "phone alignment" not in capsys.readouterr().err
    assert load_bottleneck(out / "model.pt").codebook.shape == (8, 6)
    # a run that ends inside the warm-up has no codes yet: it says so and writes no model
    early = tmp_path / "early"
    assert main([*args[:-1], str(early), "--epochs", "2"]) == 5
    assert "no codes yet, no model.pt written" in capsys.readouterr().out and not (early / "model.pt").exists()
