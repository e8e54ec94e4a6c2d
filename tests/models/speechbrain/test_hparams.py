"""HyperPyYAML read without speechbrain: tags kept, references resolved, model folders and their files found."""

from __future__ import annotations

import pytest

from tests.helpers.vpc_kit_folders import ASR_HPARAMS, LABEL_ENCODER, SER_HPARAMS
from voxanon.errors import ModelError
from voxanon.models.speechbrain.hparams import (
    Node,
    SbFolderError,
    checkpoint_folder,
    file_of,
    load_hparams,
    loadable_files,
    node_at,
)
from voxanon.models.speechbrain.labels import read_label_encoder


def test_kit_hyperparams_resolve_with_identity(tmp_path):
    path = tmp_path / "hyperparams.yaml"
    path.write_text(ASR_HPARAMS.format(dnn=1024, n_out=31, hidden=1024))
    hp = load_hparams(path)
    enc, encoder = hp["enc"], hp["modules"]["encoder"]
    assert isinstance(enc, Node) and (enc.kind, enc.target) == ("new", "speechbrain.lobes.models.VanillaNN.VanillaNN")
    assert enc.kwargs == {"input_shape": [None, None, 1024], "activation": hp["activation"], "dnn_blocks": 2,
                          "dnn_neurons": 1024}
    assert (hp["activation"].kind, hp["activation"].name) == ("name", "LeakyReLU")
    # one object per entry, however often it is referenced: the encoder chain, the ModuleList and the pretrainer
    assert list(encoder.kwargs) == ["wav2vec2", "enc", "ctc_lin", "log_softmax"]
    assert encoder.kwargs["enc"] is enc and hp["asr_model"].args == [[enc, hp["ctc_lin"]]]
    assert hp["pretrainer"].kwargs["loadables"]["asr"] is hp["asr_model"]
    assert hp["ctc_lin"].kwargs == {"input_size": 1024, "n_neurons": 31}
    assert hp["decoding_function"].kind == "name" and hp["decoding_function"].kwargs == {"blank_id": 0}
    assert hp["tokenizer"].args == [] and hp["tokenizer"].target == "sentencepiece.SentencePieceProcessor"
    assert node_at(hp, "modules", "encoder", where=path) is encoder
    with pytest.raises(SbFolderError, match=r"no '!name:' entry at modules.encoder"):
        node_at(hp, "modules", "encoder", where=path, kind="name")


def test_string_references_copies_and_nested_keys(tmp_path):
    path = tmp_path / "h.yaml"
    path.write_text(SER_HPARAMS.format(hidden=768) + "deep: {a: [1, {b: x}]}\nfar: !ref <deep[a][1][b]>\n"
                    "copied: !copy <output_mlp>\nscalar_tag: !PLACEHOLDER\nseed: !apply:torch.manual_seed [3]\n"
                    "numbers: [1e-5, 1.e-8, -2E+3, 12, 0x1f, '1e-5']\n")
    hp = load_hparams(path)
    assert hp["pretrainer"].kwargs["paths"]["label_encoder"] == \
        "speechbrain/emotion-recognition-wav2vec2-IEMOCAP/label_encoder.txt"
    assert hp["wav2vec2"].kwargs["save_path"] == "wav2vec2_checkpoint"
    assert hp["far"] == "x"
    assert hp["copied"] is not hp["output_mlp"] and hp["copied"].kwargs == hp["output_mlp"].kwargs
    assert (hp["scalar_tag"].kind, hp["scalar_tag"].args) == ("PLACEHOLDER", [])
    assert (hp["seed"].kind, hp["seed"].target, hp["seed"].args) == ("apply", "torch.manual_seed", [3])
    assert hp["numbers"] == [1e-5, 1e-8, -2000.0, 12, 31, "1e-5"] and isinstance(hp["numbers"][0], float)


@pytest.mark.parametrize("text, message", [
    ("a: !ref <nothing>\n", r"!ref <nothing> names nothing"),
    ("a: !ref <b>\nb: !ref <a>\n", "names nothing|circular"),
    ("a: [!ref <a>]\n", "circular"),
    ("- 1\n- 2\n", "expected a mapping"),
    ("a: [\n", "not a readable hyperparams file"),
])
def test_bad_hyperparams_are_refused(tmp_path, text, message):
    path = tmp_path / "hyperparams.yaml"
    path.write_text(text)
    with pytest.raises(SbFolderError, match=message):
        load_hparams(path)


def test_missing_hyperparams_is_a_model_error(tmp_path):
    with pytest.raises(ModelError, match="needs its hyperparams.yaml"):
        load_hparams(tmp_path / "hyperparams.yaml")


def test_checkpoint_folder_follows_the_kits_scan(tmp_path):
    assert checkpoint_folder(tmp_path) == tmp_path                       # no CKPT entry: the folder itself
    for name in ("CKPT+3", "CKPT12", "CKPT+7"):
        (tmp_path / name).mkdir()
    assert checkpoint_folder(tmp_path) == tmp_path / "CKPT12"            # the largest number
    (tmp_path / "CKPT+2024-02-20+10-00-00+00").mkdir()                  # speechbrain's own naming: int() fails,
    assert checkpoint_folder(tmp_path) == tmp_path                       # the kit's scan finds nothing
    with pytest.raises(SbFolderError, match="is not a folder"):
        checkpoint_folder(tmp_path / "none")


def test_loadable_files_are_found_as_the_pretrainer_finds_them(tmp_path):
    (tmp_path / "hyperparams.yaml").write_text(SER_HPARAMS.format(hidden=8))
    hp = load_hparams(tmp_path / "hyperparams.yaml")
    for name in ("wav2vec2.ckpt", "model.ckpt", "label_encoder.txt", "label_encoder.ckpt"):
        (tmp_path / name).write_text("x")
    files = loadable_files(tmp_path, hp, tmp_path)
    assert {k: p.name for k, (p, _) in files.items()} == {
        "wav2vec2": "wav2vec2.ckpt", "model": "model.ckpt", "label_encoder": "label_encoder.ckpt"}
    assert files["model"][1] is hp["model"]
    assert file_of(files, hp["label_encoder"], tmp_path, "label encoder").name == "label_encoder.ckpt"
    (tmp_path / "label_encoder.ckpt").unlink()                         # the paths entry's base name instead
    assert loadable_files(tmp_path, hp, tmp_path)["label_encoder"][0].name == "label_encoder.txt"
    (tmp_path / "label_encoder.txt").unlink()
    with pytest.raises(SbFolderError, match=r"loadable 'label_encoder' \(label_encoder.ckpt or label_encoder.txt\)"):
        loadable_files(tmp_path, hp, tmp_path)
    with pytest.raises(SbFolderError, match="does not load the softmax"):
        file_of(files, hp["softmax"], tmp_path, "softmax")


def test_label_encoder_files(tmp_path):
    path = tmp_path / "label_encoder.txt"
    path.write_text(LABEL_ENCODER)
    assert read_label_encoder(path) == {0: "neu", 1: "ang", 2: "hap", 3: "sad"}
    path.write_text("'<blank>' => 0\n' ' => 1\n\"'\" => 2\n================\n'blank_label' => '<blank>'\n")
    assert read_label_encoder(path) == {0: "<blank>", 1: " ", 2: "'"}
    path.write_text("'neu' => 0\n'ang' -> 1\n")
    with pytest.raises(SbFolderError, match=r"label_encoder.txt:2: expected"):
        read_label_encoder(path)
    path.write_text("'neu' => 0\n'ang' => 2\n")
    with pytest.raises(SbFolderError, match=r"indices \[0, 2\] are not 0..n-1"):
        read_label_encoder(path)
    path.write_text("'neu' => 0\n'ang' => 0\n")
    with pytest.raises(SbFolderError, match=":2: expected a new"):
        read_label_encoder(path)
