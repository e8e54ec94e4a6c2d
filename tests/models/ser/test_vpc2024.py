"""The VPC 2024 kit's ``exp/ser`` (a speechbrain wav2vec2 classifier per IEMOCAP fold) read without speechbrain.

The real fold checkpoints are not on these machines: ``exp/ser`` is generated
(``tests.helpers.vpc_kit_folders``) with the kit's layout (``fold_<k>/CKPT+<n>/``), file names,
hyperparams and key names, small, and the probabilities are checked against a
forward pass written from the tensors.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from tests.helpers.vpc_kit_folders import (
    BASE,
    IEMOCAP_ORDER,
    LABEL_ENCODER,
    SER_HPARAMS,
    SMALL_BASE,
    reference_ser_proba,
    wav2vec2_shapes,
    write_ser_fold,
)
from voxanon.audio.synthetic import speech_like
from voxanon.data.iemocap import EMOTIONS
from voxanon.models.ser import SERError, load_ser
from voxanon.models.ser.vpc2024 import Vpc2024Ser, load_vpc2024_ser_folds

pytest.importorskip("transformers")
torch.set_num_threads(1)
#: EMOTIONS columns in the classifier's (IEMOCAP label encoder's) order
COLUMNS = [IEMOCAP_ORDER.index(e) for e in EMOTIONS]


@pytest.fixture(scope="module")
def exp_ser(tmp_path_factory):
    root = tmp_path_factory.mktemp("kit") / "exp" / "ser"
    states = {"1": write_ser_fold(root / "fold_1" / "CKPT+4", seed=1),
              "2": write_ser_fold(root / "fold_2" / "CKPT+12", seed=2)}
    write_ser_fold(root / "fold_2" / "CKPT+3", seed=9)                  # an older checkpoint, not used
    return root, states


@pytest.fixture(scope="module")
def wavs():
    return [speech_like(d, f0=f0, seed=i) for i, (d, f0) in enumerate([(1.0, 110), (0.6, 220), (1.0, 180), (0.3, 95)])]


def test_folds_map_to_their_classifiers(exp_ser, wavs):
    root, states = exp_ser
    folds = load_vpc2024_ser_folds(root)
    assert sorted(folds) == ["1", "2"] and len(folds) == 2 and folds._models == {}
    for fold in ("1", "2"):
        model = folds[fold]
        assert model is folds[fold] and model.labels == EMOTIONS
        proba = model.predict_proba(wavs, 16000, batch_size=2)
        ref = np.stack([reference_ser_proba(states[fold], SMALL_BASE, w)[COLUMNS] for w in wavs])
        np.testing.assert_allclose(proba, ref, atol=1e-5)
        assert model.predict(wavs, 16000) == [EMOTIONS[i] for i in ref.argmax(axis=1)]
    assert not np.allclose(folds["1"].predict_proba(wavs, 16000), folds["2"].predict_proba(wavs, 16000), atol=1e-3)
    assert folds["2"].name.startswith("vpc2024:fold_2@") and folds["1"].name != folds["2"].name
    with pytest.raises(KeyError):
        folds["3"]


def test_batches_equal_one_at_a_time(exp_ser, wavs):
    root, _ = exp_ser
    model = load_ser(f"vpc2024:{root / 'fold_1'}")
    assert isinstance(model, Vpc2024Ser)
    same = [wavs[0], wavs[2], wavs[0][::-1].copy(), wavs[1]]            # three of one length, one shorter
    together = model.predict_proba(same, 16000, batch_size=8)
    alone = np.concatenate([model.predict_proba([w], 16000) for w in same])
    np.testing.assert_allclose(together, alone, atol=1e-6)
    # 8 kHz input is resampled to the model's 16 kHz
    assert model.predict_proba([wavs[0][::2].copy()], 8000).shape == (1, 4)


def test_full_size_keys_and_shapes(tmp_path, monkeypatch):
    """A fold at wav2vec2-base's real sizes (94.4 M parameters, meta device) with the loader's own config table."""
    from voxanon.models.speechbrain import model as sb_model
    from voxanon.models.speechbrain.hparams import load_hparams, node_at

    folder = tmp_path / "CKPT+1"
    folder.mkdir()
    (folder / "hyperparams.yaml").write_text(SER_HPARAMS.format(hidden=768))
    (folder / "label_encoder.txt").write_text(LABEL_ENCODER)
    files = {"wav2vec2.ckpt": wav2vec2_shapes(BASE), "model.ckpt": {"0.w.weight": (4, 768)}}
    for name, shapes in files.items():
        torch.save({k: torch.empty(s, device="meta") for k, s in shapes.items()}, folder / name)
    monkeypatch.setattr(sb_model, "check_filled", lambda module, where: None)
    hp = load_hparams(folder / "hyperparams.yaml")
    nodes = [node_at(hp, "modules", k, where=folder) for k in ("wav2vec2", "output_mlp")]
    (lobe, mlp), _ = sb_model.load_modules(folder, hp, folder, nodes)
    got = {**{k: tuple(v.shape) for k, v in lobe.state_dict().items()},
           **{"0." + k: tuple(v.shape) for k, v in mlp.state_dict().items()}}
    assert got == {k.replace("weight_g", "parametrizations.weight.original0")
                   .replace("weight_v", "parametrizations.weight.original1"): s
                   for shapes in files.values() for k, s in shapes.items()}
    assert sum(int(np.prod(s)) for s in got.values()) == 94_371_712 + 3_072
    assert (lobe.model.config.num_attention_heads, lobe.model.config.feat_extract_norm) == (12, "group")


def test_wrong_folders_are_refused(tmp_path, exp_ser):
    root, states = exp_ser

    def fold(name, edit):
        target = tmp_path / name / "fold_1" / "CKPT+4"
        shutil.copytree(root / "fold_1" / "CKPT+4", target)
        edit(target)
        return target.parent

    w2v = states["1"]["wav2vec2.ckpt"]
    key = "model.encoder.layers.1.feed_forward.output_dense.weight"
    with pytest.raises(SERError, match=rf"missing key '{key}'"):
        Vpc2024Ser(fold("a", lambda d: torch.save({k: v for k, v in w2v.items() if k != key}, d / "wav2vec2.ckpt")))
    with pytest.raises(SERError, match=r"model.ckpt: key '0.w.weight' has shape \(5, 32\), expected \(4, 32\)"):
        Vpc2024Ser(fold("b", lambda d: torch.save({"0.w.weight": torch.zeros(5, 32)}, d / "model.ckpt")))
    with pytest.raises(SERError, match="are not the kit's four classes"):
        Vpc2024Ser(fold("c", lambda d: (d / "label_encoder.txt").write_text("'neu' => 0\n'ang' => 1\n'hap' => 2\n"
                                                                             "'fru' => 3\n")))
    with pytest.raises(SERError, match="avg_pool must be"):
        Vpc2024Ser(fold("d", lambda d: (d / "hyperparams.yaml").write_text(
            (d / "hyperparams.yaml").read_text().replace("return_std: False", "return_std: True"))))
    with pytest.raises(SERError, match=r"missing the file of loadable 'model' \(model.ckpt\)"):
        Vpc2024Ser(fold("e", lambda d: (d / "model.ckpt").unlink()))
    with pytest.raises(SERError, match="fold_<k> folders holding hyperparams.yaml.*has none"):
        load_vpc2024_ser_folds(fold("f", lambda d: (d / "hyperparams.yaml").unlink()).parent)
    with pytest.raises(SERError, match="none found"):
        load_vpc2024_ser_folds(tmp_path)
    with pytest.raises(SERError, match="run on the CPU only"):
        load_ser("voxanon:x.pt", device="cuda")
