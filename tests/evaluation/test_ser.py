"""SER: compact model training, fold routing, scoring, bad input, transformers loader."""

from __future__ import annotations

import argparse
import json
import shutil

import numpy as np
import pytest
import torch

from tests.helpers.emotion_corpus import make_emotion_corpus
from voxanon.audio.synthetic import speech_like
from voxanon.cli import main
from voxanon.cli.handlers.evaluate import utility_ser
from voxanon.data.iemocap import EMOTIONS
from voxanon.data.kaldi import DataError, read_data_dir, write_data_dir
from voxanon.evaluation.results import SerResult, from_dict, to_dict
from voxanon.evaluation.ser import (
    evaluate_ser,
    fold_model_path,
    is_synthetic,
    train_folds,
)
from voxanon.jobs.report.utility import format_ser_report
from voxanon.models.ser import SERError, load_ser
from voxanon.models.ser.compact import CompactSER, CompactSERNet
from voxanon.models.ser.features import LogMel

torch.set_num_threads(1)
SR = 16000

def _train(data_dir, models, epochs, channels):
    assert main(["train", "ser", str(data_dir), str(models), "--epochs", str(epochs), "--channels", str(channels),
                 "--batch-size", "16", "--quiet"]) == 0


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Quickly trained (1 epoch) fold models: enough for routing and bookkeeping tests."""
    root = tmp_path_factory.mktemp("ser")
    data_dir = make_emotion_corpus(root / "data")
    _train(data_dir, root / "models", epochs=1, channels=16)
    return data_dir, root / "models"


def test_training_loss_decreases_and_beats_chance(trained, tmp_path):
    data_dir, _ = trained
    _train(data_dir, tmp_path / "models", epochs=8, channels=32)
    for fold in "12345":
        losses = CompactSER.load(fold_model_path(tmp_path / "models", fold)).meta["losses"]
        assert len(losses) == 8 and losses[-1] < 0.6 * losses[0]
    result = evaluate_ser(data_dir, tmp_path / "models", quiet=True)
    assert result.uar_mean > 70.0  # chance is 25 %
    assert result.n_utterances == 160 and result.smoke_test_only is False
    assert np.array(result.confusion).sum() == 160
    assert from_dict(SerResult, json.loads(json.dumps(to_dict(result)))) == result  # serialisable, round trip


def test_fold_routing_never_scores_a_training_speaker(trained):
    data_dir, models = trained
    data = read_data_dir(data_dir)
    result = evaluate_ser(data_dir, models, quiet=True)
    train_spk = {f: set(CompactSER.load(fold_model_path(models, f)).meta["train_speakers"]) for f in "12345"}
    assert {r["utt"] for r in result.utterances} == set(data.utts)
    for row in result.utterances:
        assert row["fold"] == data.spk2fold[row["spk"]]
        assert row["spk"] not in train_spk[row["fold"]]
        assert result.folds[row["fold"]].model.endswith(f"fold_{row['fold']}/ser.pt")
    # every other speaker was in the training set of that fold's model
    for fold, spks in train_spk.items():
        assert spks == {s for s, f in data.spk2fold.items() if f != fold}


def test_wrong_model_for_a_fold_is_refused(trained, tmp_path):
    data_dir, models = trained
    shutil.copytree(models, tmp_path / "models")
    shutil.copy(fold_model_path(models, "1"), fold_model_path(tmp_path / "models", "2"))
    with pytest.raises(SERError, match="fold 2 was trained on scored speaker"):
        evaluate_ser(data_dir, tmp_path / "models", quiet=True)


def test_bad_labels_unreadable_audio_and_synthetic_marker(trained, tmp_path):
    data_dir, models = trained
    data = read_data_dir(data_dir)
    data.utt2emo["S1F_neu_0"] = "fru"
    bad = tmp_path / "broken.wav"
    bad.write_bytes(b"RIFF garbage")
    data.wav_scp["S2M_sad_1"] = str(bad)
    write_data_dir(data, tmp_path / "d")
    (tmp_path / "d" / "SYNTHETIC").write_text("")
    result = evaluate_ser(tmp_path / "d", models, quiet=True)
    assert result.excluded_labels == {"fru": 1}
    assert list(result.failed_audio) == ["S2M_sad_1"]
    assert result.n_utterances == 158
    assert result.smoke_test_only is True and "smoke test only" in result.message
    text = format_ser_report(result)
    assert "WARNING" in text and "unreadable audio, skipped: S2M_sad_1" in text


def test_a_model_learns_the_classes_its_data_has(trained, tmp_path):
    """EmoFilm has fear and no neutral: its models learn those four classes; a model that lacks one is refused."""
    data_dir, vpc_models = trained
    data = read_data_dir(data_dir)
    data.utt2emo = {u: "fear" if e == "neu" else e for u, e in data.utt2emo.items()}
    write_data_dir(data, tmp_path / "d")
    _train(tmp_path / "d", tmp_path / "models", epochs=1, channels=16)
    model = CompactSER.load(fold_model_path(tmp_path / "models", "1"))
    assert model.labels == ("sad", "ang", "hap", "fea") and model.net.head[-1].out_features == 4
    result = evaluate_ser(tmp_path / "d", tmp_path / "models", quiet=True)
    assert set(result.labels) <= {"sad", "ang", "hap", "fea"} and "fea" in result.labels
    assert {r["hyp"] for r in result.utterances} <= set(model.labels)
    with pytest.raises(SERError, match=r"cannot predict \['fea'\]"):
        evaluate_ser(tmp_path / "d", vpc_models, quiet=True)


def test_synthetic_marker_corpus_json(tmp_path):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "set").mkdir()
    assert not is_synthetic(tmp_path / "corpus" / "set")
    (tmp_path / "corpus" / "corpus.json").write_text(json.dumps({"synthetic": True}))
    assert is_synthetic(tmp_path / "corpus" / "set")
    (tmp_path / "corpus" / "corpus.json").write_text(json.dumps({"synthetic": False}))
    assert not is_synthetic(tmp_path / "corpus" / "set")


def test_fold_errors(tmp_path):
    data_dir = make_emotion_corpus(tmp_path / "d", per_class=1, folds=2, duration=0.3)
    with pytest.raises(DataError, match="fold '7' has no speakers"):
        train_folds(data_dir, tmp_path / "m", folds=["7"], quiet=True)
    one = make_emotion_corpus(tmp_path / "one", per_class=1, folds=1, duration=0.3)
    with pytest.raises(DataError, match="fold 1 has no training utterances"):
        train_folds(one, tmp_path / "m", quiet=True)
    with pytest.raises(SERError, match="no model for fold 1"):
        evaluate_ser(data_dir, tmp_path / "nothing", quiet=True)
    assert main(["train", "ser", str(one), str(tmp_path / "m"), "--quiet"]) == 3  # a DataError


def test_evaluate_utility_cli_writes_tables(trained, tmp_path, capsys):
    data_dir, models = trained
    data = read_data_dir(data_dir)
    anon = tmp_path / "data_anon"
    write_data_dir(data, anon)
    (anon / "SYNTHETIC").write_text("")
    out = tmp_path / "res"
    assert main(["evaluate", "utility", str(data_dir), str(anon), "--ser", "--ser-models", str(models),
                 "--out", str(out), "--quiet"]) == 0
    saved = json.loads((out / "ser_results.json").read_text())["sets"]
    assert [s["data_dir"] for s in saved] == [str(data_dir), str(anon)]
    rows = (out / "ser_folds.tsv").read_text().splitlines()
    assert len(rows) == 1 + 2 * 6 and rows[6].startswith(f"{data_dir}\tmean\t{saved[0]['uar_mean']:.3f}")
    assert len((out / "ser_utterances.tsv").read_text().splitlines()) == 1 + 2 * 160
    printed = capsys.readouterr().out
    assert "UAR mean over folds" in printed and "(smoke test only)" in printed
    args = argparse.Namespace(data_dirs=[str(data_dir)], ser_models=str(tmp_path / "none"), ser_model=None,
                              out=str(out), batch_size=8, quiet=True)
    with pytest.raises(SERError, match="no model for fold 1"):  # the command line prints it, exit 4
        utility_ser(args)


def test_batched_prediction_equals_unbatched():
    torch.manual_seed(0)
    model = CompactSER(CompactSERNet(channels=16))
    wavs = [speech_like(d, SR, seed=i) for i, d in enumerate((0.3, 1.1, 0.05, 0.7, 0.9))]
    one = np.concatenate([model.predict_proba([w], SR) for w in wavs])
    batched = model.predict_proba(wavs, SR, batch_size=8)
    np.testing.assert_allclose(batched, one, atol=1e-5)
    assert np.allclose(batched.sum(axis=1), 1.0)


def test_load_ser_spec_errors(tmp_path):
    with pytest.raises(SERError, match="expected 'voxanon"):
        load_ser("model.pt")
    with pytest.raises(SERError, match="unknown kind"):
        load_ser("onnx:model.onnx")
    with pytest.raises(SERError, match="not found"):
        load_ser(f"voxanon:{tmp_path / 'missing.pt'}")
    torch.save({"weights": 1}, tmp_path / "other.pt")
    with pytest.raises(SERError, match="other.pt is a dict of 1 key .*; expected a .voxanon-ser"):
        load_ser(f"voxanon:{tmp_path / 'other.pt'}")


def _tiny_wav2vec2(path, id2label):
    from transformers import (
        Wav2Vec2Config,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2ForSequenceClassification,
    )

    config = Wav2Vec2Config(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                            conv_dim=(8, 8), conv_stride=(5, 4), conv_kernel=(10, 8), num_conv_pos_embeddings=8,
                            num_conv_pos_embedding_groups=2, classifier_proj_size=8, feat_extract_norm="layer",
                            id2label=id2label, label2id={v: k for k, v in id2label.items()})
    torch.manual_seed(0)
    model = Wav2Vec2ForSequenceClassification(config).eval()
    Wav2Vec2FeatureExtractor(sampling_rate=16000, return_attention_mask=True, do_normalize=True).save_pretrained(path)
    model.save_pretrained(path)
    return model


def test_transformers_loader_maps_labels(tmp_path):
    id2label = {0: "Neutral", 1: "hap", 2: "angry", 3: "sad", 4: "excited", 5: "fru"}
    reference = _tiny_wav2vec2(tmp_path / "tiny", id2label)
    model = load_ser(f"transformers:{tmp_path / 'tiny'}")
    assert model.labels == EMOTIONS and model.excluded_labels == ["fru"] and model.missing_classes == []
    wavs = [speech_like(0.5, SR, f0=f0, seed=i) for i, f0 in enumerate((100, 150, 220))]
    proba = model.predict_proba(wavs, SR, batch_size=3)
    for w, p in zip(wavs, proba):
        x = torch.from_numpy((w - w.mean()) / np.sqrt(w.var() + 1e-7))[None]
        with torch.no_grad():
            q = torch.softmax(reference(x).logits, dim=1)[0].numpy()
        expect = np.array([q[0], q[3], q[2], q[1] + q[4]]) / (1 - q[5])  # neu, sad, ang, hap
        np.testing.assert_allclose(p, expect, atol=1e-4)
    assert model.predict(wavs, SR) == [EMOTIONS[i] for i in proba.argmax(axis=1)]


def test_transformers_loader_without_vpc_labels(tmp_path):
    _tiny_wav2vec2(tmp_path / "tiny", {0: "dog", 1: "cat"})
    with pytest.raises(SERError, match="none of the model's labels"):
        load_ser(f"transformers:{tmp_path / 'tiny'}")


def test_logmel_frames_and_tone_band():
    logmel = LogMel(SR)
    t = np.arange(SR) / SR
    feats, n = logmel([np.sin(2 * np.pi * 1000 * t).astype(np.float32), np.zeros(100, np.float32)])
    assert feats.shape == (2, 80, 1 + (SR - 400) // 160) and n.tolist() == [feats.shape[2], 1]
    peak_band = int(feats[0].mean(dim=1).argmax())
    assert abs(float(logmel.filters[:, peak_band].argmax()) * SR / logmel.n_fft - 1000) < 60
    assert torch.all(feats[1, :, 1:] == 0)
