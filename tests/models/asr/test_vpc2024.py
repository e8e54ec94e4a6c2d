"""The VPC 2024 kit's ``exp/asr`` (speechbrain EncoderASR) read without speechbrain.

The real checkpoint (speechbrain/asr-wav2vec2-librispeech, 1.27 GB) is not on
these machines: the folders are generated (``tests.helpers.vpc_kit_folders``) with the kit's file
names, hyperparams layout and key names, small, and the loader's output is
checked against a forward pass written from the tensors.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.helpers.vpc_kit_folders import (
    ASR_HPARAMS,
    LV60,
    SMALL_LV60,
    reference_asr_log_probs,
    reference_greedy,
    vanilla_nn_shapes,
    wav2vec2_shapes,
    write_asr_folder,
)
from voxanon.audio.synthetic import speech_like
from voxanon.metrics.text import normalize_vpc
from voxanon.models.asr import AsrError, load_asr
from voxanon.models.asr.vpc2024 import Vpc2024Asr, ctc_greedy

pytest.importorskip("transformers")
torch.set_num_threads(1)
try:                                       # the kit's tokenizer is a sentencepiece model (the optional vpc extra)
    import sentencepiece as spm
except ImportError:
    spm = None
needs_sentencepiece = pytest.mark.skipif(spm is None, reason="needs sentencepiece: pip install 'voxanon[vpc]'")

#: utterance lengths in wav.scp order (ties keep that order in the kit's stable sort); 10 make two batches of 8
LENGTHS = [9000, 16000, 5000, 12000, 16000, 7000, 400, 11000, 3000, 14000]


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kit") / "exp" / "asr"
    return folder, write_asr_folder(folder)


@pytest.fixture(scope="module")
def wavs():
    return [speech_like(n / 16000, f0=100 + 10 * i, seed=i)[:n] for i, n in enumerate(LENGTHS)]


def _padded(batch):
    out = torch.zeros(len(batch), max(len(w) for w in batch))
    for row, w in zip(out, batch):
        row[: len(w)] = torch.from_numpy(w)
    return out


def test_greedy_ctc_on_known_logits():
    # frames' best classes: 0 3 3 0 3 5 5 0 | 2 2 ; blank 0
    best = [[0, 3, 3, 0, 3, 5, 5, 0, 2, 2], [1, 1, 0, 1, 2, 2, 2, 0, 4, 4]]
    log_probs = torch.full((2, 10, 6), -9.0)
    for b, row in enumerate(best):
        for t, c in enumerate(row):
            log_probs[b, t, c] = -0.1
    rel = torch.tensor([1.0, 0.75])                       # 0.75 * 10 = 7.5 frames: rounds half to even (8)
    assert ctc_greedy(log_probs, rel, blank=0) == [[3, 3, 5, 2], [1, 1, 2]]
    assert ctc_greedy(log_probs, torch.tensor([0.85, 0.65]), blank=0) == [[3, 3, 5], [1, 1, 2]]  # 8.5 -> 8, 6.5 -> 6
    assert ctc_greedy(log_probs, rel, blank=-1) == [[0, 3, 0, 3, 0, 2], [1, 0, 1, 2, 0]]      # -1: the last class
    assert ctc_greedy(log_probs, torch.tensor([0.0, 0.04]), blank=0) == [[], []]


@needs_sentencepiece
def test_sentencepiece_tokenizer_turns_ids_into_the_kits_text(kit):
    folder, _ = kit
    asr = Vpc2024Asr(folder)
    sp = spm.SentencePieceProcessor(model_file=str(folder / "tokenizer.ckpt"))
    ids = sp.encode("HE SAID IT'S A PITY")
    assert asr.tokenizer.decode(ids) == "HE SAID IT'S A PITY" and 0 not in ids
    assert normalize_vpc(asr.tokenizer.decode(ids)) == asr.tokenizer.decode(ids)   # scored as the kit scores it
    # what the greedy decoder gives from CTC frames with blanks and repeats
    frames = [0, ids[0], ids[0], 0, *[t for i in ids[1:] for t in (i, i, 0)]]
    log_probs = torch.nn.functional.one_hot(torch.tensor(frames), sp.get_piece_size()).float()[None].log()
    assert asr.tokenizer.decode(ctc_greedy(log_probs, torch.tensor([1.0]), 0)[0]) == "HE SAID IT'S A PITY"
    with pytest.raises(AsrError, match="emitted token 29, which its tokenizer"):
        asr.tokenizer.decode([3, 29])


@needs_sentencepiece
def test_transcripts_equal_the_kits_batches_and_the_reference(kit, wavs):
    folder, states = kit
    asr = load_asr(f"vpc2024:{folder}")
    assert isinstance(asr, Vpc2024Asr) and asr.batch_size == 8 and asr.name.startswith("vpc2024:asr@")
    texts = asr.transcribe(wavs, 16000)
    sp = spm.SentencePieceProcessor(model_file=str(folder / "tokenizer.ckpt"))
    # the kit: wav.scp order sorted by length, longest first (stable), batches of 8
    order = sorted(range(len(wavs)), key=lambda i: -len(wavs[i]))
    assert order[:2] == [1, 4]
    expected = {}
    for start in (0, 8):
        idx = order[start:start + 8]
        batch = [wavs[i] for i in idx]
        ref = reference_asr_log_probs(states, SMALL_LV60, _padded(batch))
        got, rel = asr.log_probs(batch)
        torch.testing.assert_close(got, ref, atol=2e-5, rtol=1e-4)
        assert rel.dtype == torch.float32
        for i, ids in zip(idx, reference_greedy(ref, [len(w) for w in batch])):
            expected[i] = sp.decode_ids(ids)
    assert texts == [expected[i] for i in range(len(wavs))]
    assert all(texts) and len(set(texts)) == len(texts)
    # the lobe's layer norms cover the padding: an utterance alone is not scored as in its batch
    alone, _ = asr.log_probs([wavs[0]])
    in_batch, _ = asr.log_probs([wavs[i] for i in order[:8]])
    frames = alone.shape[1]
    assert not torch.allclose(alone[0], in_batch[order.index(0), :frames], atol=1e-3)
    # resampled input reaches the model at 16 kHz
    assert asr.transcribe([wavs[1][::2].copy()], 8000)[0] != ""


def test_sequential_dnn_and_ctc_text_encoder(tmp_path, wavs):
    folder = tmp_path / "asr"
    states = write_asr_folder(folder, sequential=True, seed=4)
    asr = Vpc2024Asr(folder, batch_size=4)
    batch = [wavs[i] for i in (1, 4, 9, 3)]
    got, _ = asr.log_probs(batch)
    ref = reference_asr_log_probs(states, SMALL_LV60, _padded(batch), sequential=True)
    torch.testing.assert_close(got, ref, atol=2e-5, rtol=1e-4)
    labels = ["<blank>", " ", *sorted(set("THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG'") - {" "})]
    texts = asr.transcribe(batch, 16000)
    assert texts == ["".join(labels[t] for t in ids) for ids in reference_greedy(ref, [len(w) for w in batch])]


@needs_sentencepiece
def test_latest_ckpt_folder_is_used(tmp_path):
    write_asr_folder(tmp_path / "asr" / "CKPT+2", seed=1)
    write_asr_folder(tmp_path / "asr" / "CKPT+10", seed=2)
    newest = Vpc2024Asr(tmp_path / "asr")
    assert newest.name == Vpc2024Asr(tmp_path / "asr" / "CKPT+10").name != Vpc2024Asr(tmp_path / "asr" / "CKPT+2").name


def test_full_size_keys_and_shapes(tmp_path, monkeypatch):
    """asr-wav2vec2-librispeech at its real sizes (317 M parameters, on the meta device: nothing allocated).

    The folder holds no wav2vec2 config (as the kit's), so the loader takes lv60-self's from its table; the keys
    and shapes it expects must be those written out here from the real hyperparams.
    """
    from voxanon.models.speechbrain import model as sb_model
    from voxanon.models.speechbrain.hparams import load_hparams, node_at

    folder = tmp_path / "asr"
    folder.mkdir()
    (folder / "hyperparams.yaml").write_text(ASR_HPARAMS.format(dnn=1024, n_out=31, hidden=1024))
    files = {"wav2vec2.ckpt": wav2vec2_shapes(LV60), "asr.ckpt": vanilla_nn_shapes(1024, 1024, 31)}
    for name, shapes in files.items():
        torch.save({k: torch.empty(s, device="meta") for k, s in shapes.items()}, folder / name)
    (folder / "tokenizer.ckpt").write_bytes(b"")
    monkeypatch.setattr(sb_model, "check_filled", lambda module, where: None)   # meta tensors stay meta
    hp = load_hparams(folder / "hyperparams.yaml")
    (encoder,), _ = sb_model.load_modules(folder, hp, folder, [node_at(hp, "modules", "encoder", where=folder)])
    got = {k: tuple(v.shape) for k, v in encoder.state_dict().items()}
    assert len(got) == sum(map(len, files.values()))
    n_params = sum(int(np.prod(s)) for shapes in files.values() for s in shapes.values())
    assert sum(v.numel() for v in encoder.state_dict().values()) == n_params == 315_438_720 + 2_130_975
    lobe = encoder["wav2vec2"]
    assert (lobe.model.config.num_attention_heads, lobe.normalize_wav, lobe.output_norm) == (16, True, True)
    assert lobe.receptive_field == 400 and list(encoder) == ["wav2vec2", "enc", "ctc_lin", "log_softmax"]


@needs_sentencepiece
def test_wrong_folders_name_the_first_wrong_key(tmp_path, kit):
    folder, states = kit

    def variant(name, **files):
        import shutil

        target = tmp_path / name
        shutil.copytree(folder, target)
        for file, content in files.items():
            if isinstance(content, bytes):
                (target / file).write_bytes(content)
            elif content is None:
                (target / file).unlink()
            else:
                torch.save(content, target / file)
        return f"vpc2024:{target}"

    w2v = states["wav2vec2.ckpt"]
    first = "model.feature_extractor.conv_layers.0.conv.bias"
    with pytest.raises(AsrError, match=rf"missing key '{first}' \(2 missing\)"):
        load_asr(variant("a", **{"wav2vec2.ckpt": {k: v for k, v in w2v.items()
                                                   if k not in (first, "model.encoder.layer_norm.bias")}}))
    with pytest.raises(AsrError, match=r"asr.ckpt: unexpected key '0.linear_1.w.weight'"):
        load_asr(variant("b", **{"asr.ckpt": {**states["asr.ckpt"], "0.linear_1.w.weight": torch.zeros(2, 2)}}))
    with pytest.raises(AsrError, match=r"'1.w.weight' has shape \(29, 47\), expected \(29, 48\)"):
        load_asr(variant("c", **{"asr.ckpt": {**states["asr.ckpt"], "1.w.weight": torch.zeros(29, 47)}}))
    with pytest.raises(AsrError, match="wav2vec2.ckpt cannot be read"):
        load_asr(variant("d", **{"wav2vec2.ckpt": b"not a checkpoint"}))
    with pytest.raises(AsrError, match="tokenizer.ckpt: not a sentencepiece model"):
        load_asr(variant("e", **{"tokenizer.ckpt": b"garbage"}))
    with pytest.raises(AsrError, match=r"missing the file of loadable 'asr' \(asr.ckpt\)"):
        load_asr(variant("f", **{"asr.ckpt": None}))
    with pytest.raises(AsrError, match="needs its hyperparams.yaml"):
        load_asr(variant("g", **{"hyperparams.yaml": None}))
    with pytest.raises(AsrError, match="expected a state dict of tensors"):
        load_asr(variant("h", **{"asr.ckpt": {"model": "x"}}))
    hparams = (folder / "hyperparams.yaml").read_text()
    for name, (old, new), message in [
        ("i", ("ctc_greedy_decode", "S2SRNNBeamSearcher"), "is not speechbrain's greedy CTC decoder"),
        ("j", ("torch.nn.LeakyReLU", "torch.nn.PReLU"), r"activation 'torch.nn.PReLU' is not supported"),
        ("k", ("wav2vec2_hub: facebook/wav2vec2-large-960h-lv60-self", "wav2vec2_hub: facebook/wav2vec2-xls-r-300m"),
         r"source 'facebook/wav2vec2-xls-r-300m' needs its config.json"),
    ]:
        with pytest.raises(AsrError, match=message):
            load_asr(variant(name, **{"hyperparams.yaml": hparams.replace(old, new).encode()}))
    with pytest.raises(AsrError, match="is not a folder"):
        load_asr(f"vpc2024:{tmp_path / 'nowhere'}")
    with pytest.raises(AsrError, match="needs 400 or more"):
        Vpc2024Asr(folder).log_probs([np.zeros(399, np.float32)])
