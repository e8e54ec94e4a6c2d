"""The VPC 2024 kit's ``exp/asr`` and ``exp/ser`` folders, generated with random weights, and their forward pass.

The real checkpoints are not on these machines. The folders written here have
the kit's file names (``hyperparams.yaml``, ``wav2vec2.ckpt``, ``asr.ckpt``,
``tokenizer.ckpt``; ``fold_<k>/CKPT+<n>/`` with ``model.ckpt`` and
``label_encoder.txt``), hyperparams in the layout of
speechbrain/asr-wav2vec2-librispeech and speechbrain/emotion-recognition-wav2vec2-IEMOCAP,
and state-dict keys written out here from the modules speechbrain saves
(its wav2vec2 lobe holds transformers' ``Wav2Vec2Model`` as ``model``; its
``Linear`` an ``nn.Linear`` as ``w``; ``VanillaNN`` names its layers ``linear``,
``act``, ``linear_0`` ...), independently of :mod:`voxanon.models.speechbrain`.
The forward pass below is written from the tensors (no transformers, no voxanon
module), so the loader is checked against the layout and the computation, not
against itself.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

#: facebook/wav2vec2-large-960h-lv60-self as the kit's ASR uses it (torchaudio's LV60K bundle has the same sizes)
LV60 = {"conv_dim": [512] * 7, "conv_kernel": [10, 3, 3, 3, 3, 2, 2], "conv_stride": [5, 2, 2, 2, 2, 2, 2],
        "conv_bias": True, "feat_extract_norm": "layer", "do_stable_layer_norm": True, "hidden_size": 1024,
        "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096,
        "num_conv_pos_embeddings": 128, "num_conv_pos_embedding_groups": 16}
#: facebook/wav2vec2-base, the encoder of speechbrain's IEMOCAP emotion classifier (the kit's SER folds)
BASE = {**LV60, "conv_bias": False, "feat_extract_norm": "group", "do_stable_layer_norm": False, "hidden_size": 768,
        "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072}
#: the same structures, small (the real kernels and strides: 20 ms frames, 400-sample receptive field)
SMALL_LV60 = {**LV60, "conv_dim": [24] * 7, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
              "intermediate_size": 64, "num_conv_pos_embeddings": 16, "num_conv_pos_embedding_groups": 4}
SMALL_BASE = {**BASE, "conv_dim": [24] * 7, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
              "intermediate_size": 64, "num_conv_pos_embeddings": 16, "num_conv_pos_embedding_groups": 4}

LV60_HUB, BASE_HUB = "facebook/wav2vec2-large-960h-lv60-self", "facebook/wav2vec2-base"
SNAPSHOT = "0123456789abcdef0123456789abcdef01234567"
#: text the test tokenizer is trained on (LibriSpeech style: upper case, apostrophes)
SENTENCES = ["THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG", "HE SAID IT'S A PITY WE CAN'T STAY",
             "MY VOICE IS MY PASSWORD VERIFY ME", "A ZEBRA QUIETLY EXAMINED SIX JUGS"]
#: speechbrain CategoricalEncoder file of the IEMOCAP classifier
LABEL_ENCODER = "'neu' => 0\n'ang' => 1\n'hap' => 2\n'sad' => 3\n================\n'starting_index' => 0\n"
IEMOCAP_ORDER = ("neu", "ang", "hap", "sad")

ASR_HPARAMS = """\
# ################################
# Model: wav2vec2 + DNN + CTC  (the layout of speechbrain/asr-wav2vec2-librispeech; sizes of this test)
# ################################
sample_rate: 16000
wav2vec2_hub: facebook/wav2vec2-large-960h-lv60-self

# Model parameters
activation: !name:torch.nn.LeakyReLU
dnn_layers: 2
dnn_neurons: {dnn}
freeze_wav2vec: True

# Outputs
output_neurons: {n_out}

# Decoding parameters
blank_index: 0
bos_index: 1
eos_index: 2

enc: !new:speechbrain.lobes.models.VanillaNN.VanillaNN
   input_shape: [null, null, {hidden}]
   activation: !ref <activation>
   dnn_blocks: !ref <dnn_layers>
   dnn_neurons: !ref <dnn_neurons>

wav2vec2: !new:speechbrain.lobes.models.huggingface_wav2vec.HuggingFaceWav2Vec2
   source: !ref <wav2vec2_hub>
   output_norm: True
   freeze: !ref <freeze_wav2vec>
   save_path: wav2vec2_checkpoint

ctc_lin: !new:speechbrain.nnet.linear.Linear
   input_size: !ref <dnn_neurons>
   n_neurons: !ref <output_neurons>

log_softmax: !new:speechbrain.nnet.activations.Softmax
   apply_log: True

ctc_cost: !name:speechbrain.nnet.losses.ctc_loss
   blank_index: !ref <blank_index>

asr_model: !new:torch.nn.ModuleList
   - [!ref <enc>, !ref <ctc_lin>]

tokenizer: !new:sentencepiece.SentencePieceProcessor

encoder: !new:speechbrain.nnet.containers.LengthsCapableSequential
   wav2vec2: !ref <wav2vec2>
   enc: !ref <enc>
   ctc_lin: !ref <ctc_lin>
   log_softmax: !ref <log_softmax>

decoding_function: !name:speechbrain.decoders.ctc_greedy_decode
   blank_id: !ref <blank_index>

modules:
   encoder: !ref <encoder>

pretrainer: !new:speechbrain.utils.parameter_transfer.Pretrainer
   loadables:
      wav2vec2: !ref <wav2vec2>
      asr: !ref <asr_model>
      tokenizer: !ref <tokenizer>
"""

#: the speechbrain 1.x style: a Sequential of Linear/BatchNorm1d/LeakyReLU/Dropout, 1.x's lobe, a CTCTextEncoder
ASR_HPARAMS_SEQUENTIAL = ASR_HPARAMS.replace("""\
enc: !new:speechbrain.lobes.models.VanillaNN.VanillaNN
   input_shape: [null, null, {hidden}]
   activation: !ref <activation>
   dnn_blocks: !ref <dnn_layers>
   dnn_neurons: !ref <dnn_neurons>
""", """\
enc: !new:speechbrain.nnet.containers.Sequential
   input_shape: [null, null, {hidden}]
   linear1: !name:speechbrain.nnet.linear.Linear
      n_neurons: !ref <dnn_neurons>
      bias: True
   bn1: !name:speechbrain.nnet.normalization.BatchNorm1d
   activation: !new:torch.nn.LeakyReLU
   drop: !new:torch.nn.Dropout
      p: 0.15
   linear2: !name:speechbrain.nnet.linear.Linear
      n_neurons: !ref <dnn_neurons>
      bias: True
   bn2: !name:speechbrain.nnet.normalization.BatchNorm1d
   activation2: !new:torch.nn.LeakyReLU
""").replace("lobes.models.huggingface_wav2vec.HuggingFaceWav2Vec2",
             "lobes.models.huggingface_transformers.wav2vec2.Wav2Vec2").replace(
    "sentencepiece.SentencePieceProcessor", "speechbrain.dataio.encoder.CTCTextEncoder")

SER_HPARAMS = """\
# the layout of speechbrain/emotion-recognition-wav2vec2-IEMOCAP (the interface the kit loads); sizes of this test
HPARAMS_NEEDED: ["encoder_dim", "out_n_neurons", "label_encoder", "softmax"]
MODULES_NEEDED: ["wav2vec2", "avg_pool", "output_mlp"]
wav2vec2_hub: facebook/wav2vec2-base
wav2vec2_folder: wav2vec2_checkpoint
pretrained_path: speechbrain/emotion-recognition-wav2vec2-IEMOCAP
encoder_dim: {hidden}
out_n_neurons: 4

wav2vec2: !new:speechbrain.lobes.models.huggingface_wav2vec.HuggingFaceWav2Vec2
    source: !ref <wav2vec2_hub>
    output_norm: True
    freeze: True
    save_path: !ref <wav2vec2_folder>

avg_pool: !new:speechbrain.nnet.pooling.StatisticsPooling
    return_std: False

output_mlp: !new:speechbrain.nnet.linear.Linear
    input_size: !ref <encoder_dim>
    n_neurons: !ref <out_n_neurons>
    bias: False

model: !new:torch.nn.ModuleList
    - [!ref <output_mlp>]

modules:
    wav2vec2: !ref <wav2vec2>
    output_mlp: !ref <output_mlp>
    avg_pool: !ref <avg_pool>

softmax: !new:speechbrain.nnet.activations.Softmax

label_encoder: !new:speechbrain.dataio.encoder.CategoricalEncoder

pretrainer: !new:speechbrain.utils.parameter_transfer.Pretrainer
    loadables:
        wav2vec2: !ref <wav2vec2>
        model: !ref <model>
        label_encoder: !ref <label_encoder>
    paths:
        wav2vec2: !ref <pretrained_path>/wav2vec2.ckpt
        model: !ref <pretrained_path>/model.ckpt
        label_encoder: !ref <pretrained_path>/label_encoder.txt
"""


def wav2vec2_shapes(cfg: dict, *, legacy_weight_norm: bool = True, masked: bool = True) -> dict[str, tuple]:
    """Key → shape of speechbrain's wav2vec2 lobe state dict (``model.`` + transformers' Wav2Vec2Model keys)."""
    d, ffn = cfg["hidden_size"], cfg["intermediate_size"]
    shapes: dict[str, tuple] = {"model.masked_spec_embed": (d,)} if masked else {}
    c_in = 1
    for i, (c, k) in enumerate(zip(cfg["conv_dim"], cfg["conv_kernel"])):
        p = f"model.feature_extractor.conv_layers.{i}."
        shapes[p + "conv.weight"] = (c, c_in, k)
        if cfg["conv_bias"]:
            shapes[p + "conv.bias"] = (c,)
        if cfg["feat_extract_norm"] == "layer" or i == 0:          # LayerNorm on every layer, GroupNorm on the first
            shapes[p + "layer_norm.weight"] = (c,)
            shapes[p + "layer_norm.bias"] = (c,)
        c_in = c
    shapes.update({"model.feature_projection.layer_norm.weight": (c_in,),
                   "model.feature_projection.layer_norm.bias": (c_in,),
                   "model.feature_projection.projection.weight": (d, c_in),
                   "model.feature_projection.projection.bias": (d,)})
    k, groups = cfg["num_conv_pos_embeddings"], cfg["num_conv_pos_embedding_groups"]
    g, v = (("weight_g", "weight_v") if legacy_weight_norm
            else ("parametrizations.weight.original0", "parametrizations.weight.original1"))
    shapes.update({"model.encoder.pos_conv_embed.conv.bias": (d,),
                   f"model.encoder.pos_conv_embed.conv.{g}": (1, 1, k),
                   f"model.encoder.pos_conv_embed.conv.{v}": (d, d // groups, k),
                   "model.encoder.layer_norm.weight": (d,), "model.encoder.layer_norm.bias": (d,)})
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.encoder.layers.{i}."
        for proj in ("k_proj", "v_proj", "q_proj", "out_proj"):
            shapes[p + f"attention.{proj}.weight"] = (d, d)
            shapes[p + f"attention.{proj}.bias"] = (d,)
        shapes.update({p + "layer_norm.weight": (d,), p + "layer_norm.bias": (d,),
                       p + "feed_forward.intermediate_dense.weight": (ffn, d),
                       p + "feed_forward.intermediate_dense.bias": (ffn,),
                       p + "feed_forward.output_dense.weight": (d, ffn), p + "feed_forward.output_dense.bias": (d,),
                       p + "final_layer_norm.weight": (d,), p + "final_layer_norm.bias": (d,)})
    return shapes


def vanilla_nn_shapes(n_in: int, dnn: int, n_out: int, blocks: int = 2) -> dict[str, tuple]:
    """``asr.ckpt``: ModuleList [VanillaNN (linear, act, linear_0, act_0 ...), ctc_lin]."""
    shapes, n = {}, n_in
    for b in range(blocks):
        name = "linear" if b == 0 else f"linear_{b - 1}"
        shapes.update({f"0.{name}.w.weight": (dnn, n), f"0.{name}.w.bias": (dnn,)})
        n = dnn
    return {**shapes, "1.w.weight": (n_out, dnn), "1.w.bias": (n_out,)}


def sequential_shapes(n_in: int, dnn: int, n_out: int) -> dict[str, tuple]:
    """``asr.ckpt`` of the Sequential variant: linear1, bn1, linear2, bn2, then ctc_lin."""
    shapes = {}
    for i, n in ((1, n_in), (2, dnn)):
        shapes.update({f"0.linear{i}.w.weight": (dnn, n), f"0.linear{i}.w.bias": (dnn,)})
        shapes.update({f"0.bn{i}.norm.{k}": (dnn,) for k in ("weight", "bias", "running_mean", "running_var")})
        shapes[f"0.bn{i}.norm.num_batches_tracked"] = ()
    return {**shapes, "1.w.weight": (n_out, dnn), "1.w.bias": (n_out,)}


def random_state(shapes: dict[str, tuple], seed: int) -> dict[str, torch.Tensor]:
    """Random weights: norm gains near 1, matrices scaled by their fan-in, running variances positive."""
    gen = torch.Generator().manual_seed(seed)
    state = {}
    for key, shape in shapes.items():
        if key.endswith("num_batches_tracked"):
            state[key] = torch.tensor(1000)
            continue
        x = torch.randn(shape, generator=gen)
        if key.endswith(("norm.weight", "weight_g", "original0")):
            x = 1.0 + 0.1 * x
        elif key.endswith("running_var"):
            x = 0.5 + torch.rand(shape, generator=gen)
        elif len(shape) > 1:
            x = x / (int(np.prod(shape[1:])) ** 0.5)
        else:
            x = 0.1 * x
        state[key] = x
    return state


def write_hub_cache(save_dir: Path, hub: str, cfg: dict) -> None:
    """``config.json`` and ``preprocessor_config.json`` where speechbrain's lobe caches them (``cache_dir``)."""
    snap = save_dir / f"models--{hub.replace('/', '--')}" / "snapshots" / SNAPSHOT
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps({"model_type": "wav2vec2", "architectures": ["Wav2Vec2ForCTC"],
                                                  "feat_extract_activation": "gelu", "hidden_act": "gelu",
                                                  "layer_norm_eps": 1e-5, **cfg}))
    (snap / "preprocessor_config.json").write_text(json.dumps(
        {"do_normalize": True, "feature_extractor_type": "Wav2Vec2FeatureExtractor", "feature_size": 1,
         "padding_side": "right", "padding_value": 0.0, "return_attention_mask": True, "sampling_rate": 16000}))


def sentencepiece_model() -> bytes:
    """A char sentencepiece model as speechbrain trains them (``<unk>`` = 0, shared with the CTC blank)."""
    spm = __import__("sentencepiece")
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(SENTENCES * 5), model_writer=out, model_type="char",
                                   vocab_size=29, character_coverage=1.0, unk_id=0, bos_id=-1, eos_id=-1,
                                   pad_id=-1, minloglevel=2)
    return out.getvalue()


def write_asr_folder(folder: Path, cfg: dict = SMALL_LV60, *, dnn: int = 48, seed: int = 0,
                     sequential: bool = False) -> dict[str, dict[str, torch.Tensor]]:
    """A kit-shaped ``exp/asr``; returns the state dicts written, by file name."""
    folder.mkdir(parents=True)
    if sequential:
        labels = ["<blank>", " ", *sorted(set("".join(SENTENCES)) - {" "})]
        (folder / "tokenizer.ckpt").write_text("".join(f"{lab!r} => {i}\n" for i, lab in enumerate(labels))
                                               + "================\n'starting_index' => 0\n'blank_label' => "
                                               "'<blank>'\n")
        n_out, template, asr_shapes = len(labels), ASR_HPARAMS_SEQUENTIAL, sequential_shapes
    else:
        (folder / "tokenizer.ckpt").write_bytes(sentencepiece_model())
        n_out, template, asr_shapes = 29, ASR_HPARAMS, vanilla_nn_shapes
    (folder / "hyperparams.yaml").write_text(template.format(dnn=dnn, n_out=n_out, hidden=cfg["hidden_size"]))
    write_hub_cache(folder / "wav2vec2_checkpoint", LV60_HUB, cfg)
    states = {"wav2vec2.ckpt": random_state(wav2vec2_shapes(cfg), seed),
              "asr.ckpt": random_state(asr_shapes(cfg["hidden_size"], dnn, n_out), seed + 1)}
    for name, state in states.items():
        torch.save(state, folder / name)
    return states


def write_ser_fold(folder: Path, cfg: dict = SMALL_BASE, *, seed: int = 0) -> dict[str, dict[str, torch.Tensor]]:
    """One kit-shaped ``exp/ser/fold_<k>/CKPT+<n>`` folder (parametrized weight-norm names, as newer transformers
    save them); returns the state dicts written, by file name."""
    folder.mkdir(parents=True)
    (folder / "hyperparams.yaml").write_text(SER_HPARAMS.format(hidden=cfg["hidden_size"]))
    (folder / "custom_interface.py").write_text("# the kit's CustomEncoderWav2vec2Classifier (never run here)\n")
    (folder / "label_encoder.txt").write_text(LABEL_ENCODER)
    write_hub_cache(folder / "wav2vec2_checkpoint", BASE_HUB, cfg)
    states = {"wav2vec2.ckpt": random_state(wav2vec2_shapes(cfg, legacy_weight_norm=False), seed),
              "model.ckpt": random_state({"0.w.weight": (4, cfg["hidden_size"])}, seed + 1)}
    for name, state in states.items():
        torch.save(state, folder / name)
    return states


# ---------------------------------------------------------------- the forward pass, from the tensors


def _ln(x: torch.Tensor, state: dict, key: str) -> torch.Tensor:
    return F.layer_norm(x, x.shape[-1:], state[key + ".weight"], state[key + ".bias"], eps=1e-5)


def _attention(s: dict, p: str, heads: int, h: torch.Tensor) -> torch.Tensor:
    """Multi-head self-attention of layer ``p`` on ``(batch, frames, dims)``, no mask."""
    b, n, d = h.shape
    q, k, v = (F.linear(h, s[p + f"attention.{c}_proj.weight"], s[p + f"attention.{c}_proj.bias"])
               .view(b, n, heads, d // heads).transpose(1, 2) for c in "qkv")
    a = torch.softmax(q @ k.transpose(-1, -2) / (d // heads) ** 0.5, dim=-1) @ v
    return F.linear(a.transpose(1, 2).reshape(b, n, d), s[p + "attention.out_proj.weight"],
                    s[p + "attention.out_proj.bias"])


def _feed_forward(s: dict, p: str, h: torch.Tensor) -> torch.Tensor:
    """The feed-forward block of layer ``p``."""
    h = F.linear(h, s[p + "feed_forward.intermediate_dense.weight"], s[p + "feed_forward.intermediate_dense.bias"])
    h = F.gelu(h)
    return F.linear(h, s[p + "feed_forward.output_dense.weight"], s[p + "feed_forward.output_dense.bias"])


def reference_wav2vec2(state: dict, cfg: dict, wav: torch.Tensor) -> torch.Tensor:
    """transformers-free wav2vec2 of ``(batch, samples)``, no attention mask: ``(batch, frames, hidden)``."""
    s = {k[len("model."):]: v for k, v in state.items()}
    x = wav[:, None]
    for i, (c, stride) in enumerate(zip(cfg["conv_dim"], cfg["conv_stride"])):
        p = f"feature_extractor.conv_layers.{i}."
        x = F.conv1d(x, s[p + "conv.weight"], s.get(p + "conv.bias"), stride=stride)
        if cfg["feat_extract_norm"] == "layer":
            x = _ln(x.transpose(1, 2), s, p + "layer_norm").transpose(1, 2)
        elif i == 0:                                                   # GroupNorm with one group per channel
            x = F.group_norm(x, c, s[p + "layer_norm.weight"], s[p + "layer_norm.bias"], eps=1e-5)
        x = F.gelu(x)
    x = F.linear(_ln(x.transpose(1, 2), s, "feature_projection.layer_norm"),
                 s["feature_projection.projection.weight"], s["feature_projection.projection.bias"])
    pos = "encoder.pos_conv_embed.conv."
    g, v = ((s[pos + "weight_g"], s[pos + "weight_v"]) if pos + "weight_g" in s
            else (s[pos + "parametrizations.weight.original0"], s[pos + "parametrizations.weight.original1"]))
    k = cfg["num_conv_pos_embeddings"]
    conv = F.conv1d(x.transpose(1, 2), g * v / v.norm(dim=(0, 1), keepdim=True), s[pos + "bias"], padding=k // 2,
                    groups=cfg["num_conv_pos_embedding_groups"])
    x = x + F.gelu(conv[..., :-1] if k % 2 == 0 else conv).transpose(1, 2)
    stable = cfg["do_stable_layer_norm"]
    if not stable:
        x = _ln(x, s, "encoder.layer_norm")
    heads = cfg["num_attention_heads"]
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layers.{i}."
        if stable:                                                     # pre-LN layers, final norm after the stack
            x = x + _attention(s, p, heads, _ln(x, s, p + "layer_norm"))
            x = x + _feed_forward(s, p, _ln(x, s, p + "final_layer_norm"))
        else:                                                          # post-LN layers
            x = _ln(x + _attention(s, p, heads, x), s, p + "layer_norm")
            x = _ln(x + _feed_forward(s, p, x), s, p + "final_layer_norm")
    return _ln(x, s, "encoder.layer_norm") if stable else x


def reference_lobe(state: dict, cfg: dict, batch: torch.Tensor) -> torch.Tensor:
    """speechbrain's lobe: the waveform normalised over each padded row, wav2vec2, then each item over (T, D)."""
    out = reference_wav2vec2(state, cfg, F.layer_norm(batch, batch.shape[1:]))
    return F.layer_norm(out, out.shape[1:])


def reference_asr_log_probs(states: dict, cfg: dict, batch: torch.Tensor, *, sequential: bool = False
                            ) -> torch.Tensor:
    """The kit's EncoderASR encoder on a zero-padded batch: lobe, DNN, ctc_lin, log-softmax."""
    h, asr = reference_lobe(states["wav2vec2.ckpt"], cfg, batch), states["asr.ckpt"]
    if sequential:
        for i in (1, 2):
            h = F.linear(h, asr[f"0.linear{i}.w.weight"], asr[f"0.linear{i}.w.bias"])
            p = f"0.bn{i}.norm."
            h = (h - asr[p + "running_mean"]) / torch.sqrt(asr[p + "running_var"] + 1e-5) * asr[p + "weight"] \
                + asr[p + "bias"]
            h = F.leaky_relu(h, 0.01)
    else:
        for name in ("linear", "linear_0"):
            h = F.leaky_relu(F.linear(h, asr[f"0.{name}.w.weight"], asr[f"0.{name}.w.bias"]), 0.01)
    return torch.log_softmax(F.linear(h, asr["1.w.weight"], asr["1.w.bias"]), dim=-1)


def reference_greedy(log_probs: torch.Tensor, lengths: list[int], blank: int = 0) -> list[list[int]]:
    """The kit's greedy CTC: each item over round(float32(len / longest) * frames) frames, repeats merged, blanks
    dropped."""
    frames, longest, out = log_probs.shape[1], max(lengths), []
    for lp, n in zip(log_probs, lengths):
        keep = int(np.round(np.float32(np.float32(n) / np.float32(longest)) * np.float32(frames)))
        ids, prev = [], None
        for t in lp[:keep].argmax(dim=-1).tolist():
            if t != prev and t != blank:
                ids.append(t)
            prev = t
        out.append(ids)
    return out


def reference_ser_proba(states: dict, cfg: dict, wav: np.ndarray) -> np.ndarray:
    """The kit's classify_batch on one waveform: softmax(output_mlp(frame mean of the lobe)), IEMOCAP order."""
    h = reference_lobe(states["wav2vec2.ckpt"], cfg, torch.from_numpy(wav)[None])
    return torch.softmax(h.mean(dim=1) @ states["model.ckpt"]["0.w.weight"].T, dim=-1)[0].numpy()
