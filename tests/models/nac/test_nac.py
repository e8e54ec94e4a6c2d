"""B4's model parts on small random checkpoints in the published layouts, each against an independent computation.

The semantic tokens against a hand-written numpy LSTM over transformers' full HuBERT forward; the coarse and fine
loops against transformers' own ``BarkCoarseModel.generate`` / ``BarkFineModel.generate`` with the same prompt and
greedy decoding; the codec step against ``EncodecModel.decode``.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.helpers.nac_checkpoint import (
    HUBERT_DIM,
    PROMPT_FRAMES,
    random_prompt,
    save_bark,
    save_hubert,
    save_quantizer,
)
from voxanon.errors import ConfigError, ModelError
from voxanon.models.nac import weights
from voxanon.models.nac.bark import (
    BARK,
    coarse_history,
    coarse_tokens,
    codec_decode,
    fine_tokens,
    load_bark,
)
from voxanon.models.nac.prompts import check_prompt, folder_pool, preset_pool
from voxanon.models.nac.quantizer import load_quantizer

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def bark_dir(tmp_path_factory) -> Path:
    return save_bark(tmp_path_factory.mktemp("bark") / "suno-bark")


@pytest.fixture(scope="module")
def bark(bark_dir):
    return load_bark(bark_dir)


@pytest.fixture(scope="module")
def voice(bark_dir):
    return preset_pool(bark_dir)[0]


def _generation_configs():
    from transformers.models.bark.generation_configuration_bark import (
        BarkCoarseGenerationConfig,
        BarkFineGenerationConfig,
        BarkSemanticGenerationConfig,
    )

    return BarkSemanticGenerationConfig(), BarkCoarseGenerationConfig(), BarkFineGenerationConfig()


def _history(voice) -> dict[str, torch.Tensor]:
    return {"semantic_prompt": torch.from_numpy(voice.semantic), "coarse_prompt": torch.from_numpy(voice.coarse),
            "fine_prompt": torch.from_numpy(voice.fine)}


def test_layout_is_transformers_bark_generation_defaults() -> None:
    semantic, coarse, fine = _generation_configs()
    assert (BARK.semantic_vocab, BARK.semantic_rate_hz) == (semantic.semantic_vocab_size, semantic.semantic_rate_hz)
    assert (BARK.coarse_semantic_pad, BARK.coarse_infer, BARK.coarse_rate_hz, BARK.n_coarse) == (
        coarse.coarse_semantic_pad_token, coarse.coarse_infer_token, coarse.coarse_rate_hz, coarse.n_coarse_codebooks)
    assert (BARK.max_coarse_input, BARK.max_coarse_history, BARK.sliding_window) == (
        coarse.max_coarse_input_length, coarse.max_coarse_history, coarse.sliding_window_len)
    assert (BARK.max_fine_history, BARK.fine_window, BARK.n_fine) == (
        fine.max_fine_history_length, fine.max_fine_input_length, fine.n_fine_codebooks)
    assert BARK.max_semantic_history == 209  # floor(630 / (75 / 49.9 * 2))


def test_coarse_history_trims_the_prompt_as_bark_does(voice) -> None:
    semantic, flat = coarse_history(voice)
    n = min(209, len(voice.semantic), int(2 * PROMPT_FRAMES / BARK.ratio))  # 100 even tokens, 150 frames
    assert np.array_equal(semantic, voice.semantic[-n:])
    assert len(flat) == round(n * BARK.ratio) - 2
    assert flat[0] == voice.coarse[0, -round(n * BARK.ratio) // 2] + 10_000  # frame-major, codebook 0 first
    assert flat[1] == voice.coarse[1, -round(n * BARK.ratio) // 2] + 11_024
    assert [a.size for a in coarse_history(None)] == [0, 0]


@pytest.mark.parametrize("n_semantic", [7, 150, pytest.param(700, marks=pytest.mark.slow)])  # under one window;
# several; past the semantic history
def test_greedy_coarse_tokens_match_transformers_generate(bark, voice, n_semantic) -> None:
    coarse = bark[0]
    # transformers' AlternatingCodebooksLogitsProcessor leaves the ids after the second codebook (12 048 ..)
    # unmasked on the second codebook's steps, where Bark's code only looks at the codebook's 1024 logits: zero
    # their weights so that (a random model's) arg-max never lands there and the two decodings can agree
    saved = coarse.lm_head.weight.detach().clone()
    with torch.no_grad():
        coarse.lm_head.weight[10_000 + 2 * 1024:] = 0
    try:
        semantic = np.random.default_rng(n_semantic).integers(0, 10_000, n_semantic)
        mine = coarse_tokens(coarse, semantic, voice, 0.0)
        semantic_config, coarse_config, _ = _generation_configs()
        ref = coarse.generate(torch.from_numpy(semantic)[None], semantic_generation_config=semantic_config,
                              coarse_generation_config=coarse_config, codebook_size=1024,
                              history_prompt=_history(voice), do_sample=False)
    finally:
        with torch.no_grad():
            coarse.lm_head.weight.copy_(saved)
    ref = ref[0].numpy().reshape(-1, 2).T - 10_000 - np.array([[0], [1024]])
    assert mine.shape == (2, int(np.floor(n_semantic * BARK.ratio / 2)))
    assert np.array_equal(mine, ref)


def test_greedy_fine_tokens_match_transformers_generate(bark, voice) -> None:
    fine = bark[1]
    coarse = np.random.default_rng(1).integers(0, 1024, (2, 700))  # > 1024 frames with the history: 2 windows
    mine = fine_tokens(fine, coarse, voice, 0.0)
    semantic_config, coarse_config, fine_config = _generation_configs()
    flat = torch.from_numpy((coarse + np.array([[0], [1024]])).T.reshape(1, -1) + 10_000)
    ref = fine.generate(flat, semantic_generation_config=semantic_config, coarse_generation_config=coarse_config,
                        fine_generation_config=fine_config, codebook_size=1024, history_prompt=_history(voice),
                        temperature=None)[0].numpy()
    assert mine.shape == (8, 700) and np.array_equal(mine[:2], coarse)
    assert np.array_equal(mine, ref)


def test_codec_decode_matches_encodec_decode(bark) -> None:
    codec = bark[2]
    codes = np.random.default_rng(2).integers(0, 1024, (8, 40))
    out = codec_decode(codec, codes)
    with torch.inference_mode():
        ref = codec.decode(torch.from_numpy(codes)[None, None], [None])[0][0, 0].numpy()
    assert out.shape == (40 * 320,)
    np.testing.assert_allclose(out, ref, atol=1e-6)
    assert np.std(out) > 0


def test_sampling_is_seeded(bark, voice) -> None:
    semantic = np.random.default_rng(3).integers(0, 10_000, 60)

    def run(seed):
        generator = torch.Generator().manual_seed(seed)
        coarse = coarse_tokens(bark[0], semantic, voice, 0.7, generator)
        return coarse, fine_tokens(bark[1], coarse, voice, 0.5, generator)

    (c1, f1), (c2, f2), (c3, f3) = run(5), run(5), run(6)
    assert np.array_equal(c1, c2) and np.array_equal(f1, f2)
    assert not np.array_equal(c1, c3) and not np.array_equal(f1, f3)
    assert c1.min() >= 0 and c1.max() < 1024 and f1.min() >= 0 and f1.max() < 1024


def _lstm(x: np.ndarray, state: dict[str, torch.Tensor], layer: int) -> np.ndarray:
    """One LSTM layer written out (PyTorch's gate order: input, forget, cell, output)."""
    w_ih, w_hh = (state[f"lstm.weight_{k}_l{layer}"].numpy().astype(np.float64) for k in ("ih", "hh"))
    bias = (state[f"lstm.bias_ih_l{layer}"] + state[f"lstm.bias_hh_l{layer}"]).numpy().astype(np.float64)
    n = w_hh.shape[1]
    h, c, out = np.zeros(n), np.zeros(n), []

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))

    for frame in x:
        gates = w_ih @ frame + w_hh @ h + bias
        i, f, g, o = sigmoid(gates[:n]), sigmoid(gates[n:2 * n]), np.tanh(gates[2 * n:3 * n]), sigmoid(gates[3 * n:])
        c = f * c + i * g
        h = o * np.tanh(c)
        out.append(h)
    return np.array(out)


@pytest.mark.parametrize("intermediate", [None, 40])  # the published version 0 (LSTM -> fc) and version 1
def test_semantic_tokens_match_a_hand_written_forward(tmp_path, intermediate) -> None:
    from transformers import HubertModel

    from tests.helpers.audio import LIBRIVOX
    from voxanon.audio.io import load_audio
    from voxanon.models.nac.model import NacLM

    hubert_dir = save_hubert(tmp_path / "hubert")
    path = save_quantizer(tmp_path / "q.pth", intermediate=intermediate)
    wav, sr = load_audio(LIBRIVOX / "sense_and_sensibility_01_austen_64kb-0930.flac")
    assert sr == 16000
    model = NacLM.__new__(NacLM)  # only the semantic part: no Bark needed
    model.device = torch.device("cpu")
    from voxanon.models.content.hf import HfContent

    model.content = HfContent.from_dir(hubert_dir, 9)
    model.quantizer = load_quantizer(path)
    tokens = model.semantic_tokens(wav)

    with torch.inference_mode():
        features = HubertModel.from_pretrained(hubert_dir)(torch.from_numpy(wav)[None], output_hidden_states=True)
    x = features.hidden_states[9][0].double().numpy()
    state = torch.load(path, weights_only=True)
    h = _lstm(_lstm(x, state, 0), state, 1)
    if intermediate:
        h = h @ state["intermediate.weight"].double().numpy().T + state["intermediate.bias"].double().numpy()
    logits = h @ state["fc.weight"].double().numpy().T + state["fc.bias"].double().numpy()
    assert len(tokens) == len(x) == (len(wav) - 400) // 320 + 1
    assert np.mean(tokens == logits.argmax(1)) > 0.99  # float32 vs float64: a near-tie may flip
    assert len(set(tokens.tolist())) > 1


def test_quantizer_checkpoint_errors(tmp_path) -> None:
    bad_info = save_quantizer(tmp_path / "a.pth", info={"input_size": 768, "hidden_size": 24, "output_size": 10_000,
                                                         "version": 0})
    with pytest.raises(ModelError, match=r"a.pth: its .info declares"):
        load_quantizer(bad_info)
    (tmp_path / "b.pth").write_bytes(b"not a checkpoint")
    with pytest.raises(ModelError, match=r"quantiser checkpoint .*b.pth cannot be read \(not a zip or pickle file\)"):
        load_quantizer(tmp_path / "b.pth")
    torch.save({"w": torch.zeros(2)}, tmp_path / "c.pth")
    with pytest.raises(ModelError, match=r"c.pth is a state dict .* without key .lstm.weight_ih_l0."):
        load_quantizer(tmp_path / "c.pth")
    plain = tmp_path / "d.pth"  # no .info: sizes from the tensors
    torch.save(torch.load(bad_info, weights_only=True), plain)
    assert not any(n.endswith("/.info") for n in zipfile.ZipFile(plain).namelist())
    q = load_quantizer(plain)
    assert (q.input_size, q.lstm.hidden_size, q.output_size, q.intermediate) == (HUBERT_DIM, 24, 10_000, None)


def test_prompt_pools_in_the_kit_and_bark_layouts(tmp_path, bark_dir) -> None:
    rng = np.random.default_rng(4)
    kit = tmp_path / "suno_voices" / "v2"
    for name in ("en_speaker_3", "de_speaker_1"):
        (kit / name).mkdir(parents=True)
        np.savez(kit / name / f"{name}.npz", **random_prompt(rng))
    np.savez(kit / "fr_speaker_2.npz", **random_prompt(rng))  # Bark's assets/prompts layout
    (kit / "notes.txt").write_text("not a voice", encoding="utf-8")
    assert [v.name for v in folder_pool(kit)] == ["de_speaker_1", "en_speaker_3", "fr_speaker_2"]
    presets = preset_pool(bark_dir)
    assert [v.name for v in presets] == ["v2/de_speaker_0", "v2/en_speaker_0", "v2/en_speaker_1"]  # v2 only
    np.savez(kit / "en_speaker_3" / "second.npz", **random_prompt(rng))
    with pytest.raises(ModelError, match=r"en_speaker_3.*has 2 prompts"):
        folder_pool(kit)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelError, match="no voice prompts"):
        folder_pool(empty)


def test_malformed_prompts_are_refused() -> None:
    good = random_prompt(np.random.default_rng(5))
    assert check_prompt("v", good, "here").coarse.shape == (2, PROMPT_FRAMES)
    cases = [({"fine_prompt": None}, "has no fine_prompt"),
             ({"coarse_prompt": good["coarse_prompt"][:1]}, r"coarse_prompt .* shape \(1, 150\)"),
             ({"semantic_prompt": good["semantic_prompt"] + 10_000}, "integers 0..9999"),
             ({"fine_prompt": good["fine_prompt"].astype(float)}, "integers 0..1023"),
             ({"coarse_prompt": good["coarse_prompt"][:, :50]}, "50 coarse frames for 100 semantic tokens")]
    for change, message in cases:
        arrays = {**good, **change}
        arrays = {k: v for k, v in arrays.items() if v is not None}
        with pytest.raises(ModelError, match=message):
            check_prompt("v", arrays, "here")


def test_preset_paths_must_stay_inside_the_bark_folder(tmp_path, bark_dir) -> None:
    folder = tmp_path / "bark"
    shutil.copytree(bark_dir / "speaker_embeddings", folder / "speaker_embeddings")
    table = json.loads((bark_dir / "speaker_embeddings_path.json").read_text(encoding="utf-8"))
    table = {"v2/x": {**table["v2/en_speaker_0"], "fine_prompt": "../../etc/passwd"}}
    (folder / "speaker_embeddings_path.json").write_text(json.dumps(table), encoding="utf-8")
    with pytest.raises(ModelError, match=r"fine_prompt of voice 'v2/x' is not a file inside"):
        preset_pool(folder)


def test_bark_folders_that_cannot_run_b4(tmp_path, bark_dir) -> None:
    config = json.loads((bark_dir / "config.json").read_text(encoding="utf-8"))
    config["coarse_acoustics_config"]["block_size"] = 512
    config["codec_config"]["upsampling_ratios"] = [8, 5, 4, 4]
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (folder / "model.safetensors").symlink_to(bark_dir / "model.safetensors")
    with pytest.raises(ModelError, match=r"coarse context 512 < 947; codec hop 640"):
        load_bark(folder)


def test_weights_are_found_in_the_hub_cache_or_named(tmp_path, monkeypatch, bark_dir) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    with pytest.raises(ConfigError) as info:
        weights.locate("", "", "", "")
    message = str(info.value)
    for part in ("Bark (suno/bark)", "HuBERT (facebook/hubert-base-ls960)", "quantiser (quantifier_hubert_base_"
                 "ls960_14.pth)", str(tmp_path / "hub" / "models--suno--bark" / "snapshots"),
                 str(tmp_path / "data" / "tts" / "suno" / "bark_v0" / "tokenizer.pth"), "--param model="):
        assert part in message
    snap = tmp_path / "hub" / "models--facebook--hubert-base-ls960" / "snapshots"
    save_hubert(snap / "old")
    (snap / "new").mkdir()  # refs/main names an incomplete snapshot: the complete one is used
    (snap.parent / "refs").mkdir()
    (snap.parent / "refs" / "main").write_text("new", encoding="utf-8")
    kit_quantizer = save_quantizer(tmp_path / "data" / "tts" / "suno" / "bark_v0" / "tokenizer.pth")
    found = weights.locate(str(bark_dir), "", "", "")
    assert (found.bark, found.hubert, found.quantizer, found.voices) == (bark_dir, snap / "old", kit_quantizer, None)
    with pytest.raises(ConfigError, match=r"is not a transformers model folder"):
        weights.locate(str(tmp_path), "", "", "")
    with pytest.raises(ConfigError, match=r"voices \(nowhere\): no such folder"):
        weights.locate(str(bark_dir), "", "", "nowhere")
