"""``voxanon train``: every model voxanon trains: the acoustic models and content codes the resynthesising
anonymizers use (``acoustic``, ``asrbn``, ``bottleneck``, ``f3va``, ``ltf``, ``speaker-flow``), the semi-informed
attacker (``attacker``) and the per-fold emotion recognisers (``ser``).

The handlers are in :mod:`voxanon.cli.handlers.train`.
"""

from __future__ import annotations

import argparse

from voxanon.cli import group, lazy

#: epochs of ``train speaker-flow`` when neither --epochs nor --minutes is given
FLOW_EPOCHS = 200


def _add_training_args(p: argparse.ArgumentParser, *, init_help: str) -> None:
    """The options of the acoustic-model commands (acoustic, asrbn, f3va)."""
    p.add_argument("data_dirs", nargs="+", help="training data directories (Kaldi: wav.scp, utt2spk)")
    p.add_argument("--out", required=True, help="output folder: checkpoint.pt, train_log.jsonl, model.pt, model.json")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--minutes", type=float, default=45.0, help="training time budget (default 45)")
    budget.add_argument("--epochs", type=float, help="train for this many epochs instead of a time budget")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="cpu, cuda or auto (default)")
    p.add_argument("--init", help=init_help)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--cache", help="feature cache folder (default $VOXANON_CACHE/acoustic)")
    p.add_argument("--content", default="whisper-tiny:3", help="content encoder spec (default whisper-tiny:3)")
    p.add_argument("--speaker", default="ge2e", help="speaker encoder spec (default ge2e)")
    p.add_argument("--perturbed", type=int, default=1, help="voice-perturbed copies per training utterance")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--segment", type=int, default=192, help="training segment length (vocoder frames)")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--max-valid", type=int, default=48, help="validation utterances (at most; default 48)")
    p.add_argument("--quiet", action="store_true")


def _add_conv_args(p: argparse.ArgumentParser) -> None:
    """The sizes of the conv network."""
    p.add_argument("--channels", type=int, default=192, help="width of the network")
    p.add_argument("--dilations", type=int, nargs="+", default=[1, 2, 4, 8, 1, 2, 4, 8],
                   help="one residual block per dilation")


def register(commands) -> None:
    models = group(commands, "train", "train the models of anonymizers, attackers and emotion recognisers", "MODEL")

    p = models.add_parser("acoustic", help="speaker-conditioned acoustic model (content + pitch + speaker "
                                                   "embedding -> HiFi-GAN mels); reruns resume")
    _add_training_args(p, init_help="fine-tune: start from 'default' (the shipped model) or a model.pt")
    _add_conv_args(p)
    p.add_argument("--valid", help="validation data directory (held-out speakers)")
    p.set_defaults(handler=lazy("train:acoustic"))

    p = models.add_parser("asrbn", help="VPC B5/B6 acoustic model: vector-quantised content + pitch + "
                                                "one-hot training speaker -> HiFi-GAN mels; reruns resume")
    _add_training_args(p, init_help="start from the weights of 'default' (the shipped acoustic model), 'b5', "
                                    "'b6' or a model.pt wherever names and shapes match; a model with codes "
                                    "learnt in a recogniser keeps its quantiser unless --bottleneck is given")
    _add_conv_args(p)
    p.add_argument("--codebook", type=int, default=48, help="codewords of the content quantiser (default 48, "
                                                            "the VPC 2024 B5/B6 models' vq_48)")
    p.add_argument("--bottleneck", help="take the quantiser (projection and codebook) from this model.pt of "
                                        "'voxanon train bottleneck' instead of fitting k-means; --content must be "
                                        "its encoder")
    p.set_defaults(handler=lazy("train:asrbn"))

    p = models.add_parser("bottleneck", help="B5/B6 content codes: a vector-quantised bottleneck learnt "
                                                     "inside a recogniser of characters (CTC) or of each frame's "
                                                     "phone; reruns resume")
    p.add_argument("data_dirs", nargs="+", help="training data directories (Kaldi: wav.scp, utt2spk, text)")
    p.add_argument("--out", required=True, help="output folder: checkpoint.pt, train_log.jsonl, model.pt, model.json")
    p.add_argument("--valid", help="validation data directory with transcripts (default: one held-out utterance "
                                   "of each of up to --max-valid training speakers)")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--epochs", type=int, default=30, help="epochs (default 30)")
    budget.add_argument("--minutes", type=float, help="train for this many minutes instead")
    p.add_argument("--content", default="whisper-tiny:3", help="content encoder spec (default whisper-tiny:3); "
                                                               "the acoustic model must use the same")
    p.add_argument("--codebook", type=int, default=48, help="codewords (default 48, as the VPC's B5/B6)")
    p.add_argument("--dim", type=int, default=64, help="bottleneck dimensions (default 64)")
    p.add_argument("--targets", choices=("chars", "phones"), default="chars",
                   help="what the codes are trained to recognise: the transcript's characters (CTC, default) or "
                        "each frame's phone of a pocketsphinx forced alignment (one linear map per code)")
    p.add_argument("--jobs", type=int, default=0, help="processes aligning phones (0: all cores)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="cpu, cuda or auto (default)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--cache", help="feature cache folder (default $VOXANON_CACHE/acoustic; shared with asrbn)")
    p.add_argument("--perturbed", type=int, default=1, help="voice-perturbed copies per training utterance")
    p.add_argument("--clean-copy", action="store_true", help="also train on each utterance's clean content "
                                                             "(lowered the frame phone error of real speech)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup-epochs", type=int, default=2, help="epochs without quantising first; the codebook then "
                                                                 "starts as k-means through the trained projection")
    p.add_argument("--decay-epochs", type=int, default=30, help="the learning rate's cosine falls to a tenth over "
                                                                 "this many epochs, whatever the budget (default 30)")
    p.add_argument("--max-valid", type=int, default=48, help="held-out utterances without --valid (default 48)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(handler=lazy("train:bottleneck"))

    p = models.add_parser("f3va", help="F3-VA backbone: DiT conditional flow matching on HiFi-GAN mels from "
                                               "VQ content + pitch + speaker embedding; reruns resume")
    _add_training_args(p, init_help="fine-tune: start from a model.pt of 'voxanon train f3va'")
    p.add_argument("--valid", help="validation data directory (held-out speakers)")
    p.add_argument("--width", type=int, default=192, help="transformer width (default 192; paper-size 1024)")
    p.add_argument("--depth", type=int, default=4, help="DiT blocks (default 4; paper-size 22)")
    p.add_argument("--heads", type=int, default=3, help="attention heads (default 3; paper-size 16)")
    p.add_argument("--ff-mult", type=int, default=2, help="feed-forward width in multiples of --width")
    p.add_argument("--codebook", type=int, default=64, help="k-means VQ codewords of the content (0: no VQ)")
    p.add_argument("--cfg-dropout", type=float, default=0.1,
                   help="fraction of rows trained without conditions, for classifier-free guidance (0: off)")
    p.add_argument("--sigma-min", type=float, default=1e-5, help="CFM noise floor")
    p.add_argument("--prior", default="", help="start the flow from this conv acoustic model's prediction "
                   "(a shipped name such as 'default', or a model.pt of 'voxanon train acoustic'; frozen, stored "
                   "in the backbone) instead of N(0, I): the CPU design (docs/f3va.md)")
    p.set_defaults(handler=lazy("train:f3va"), lr=5e-4, max_valid=16)

    p = models.add_parser("ltf", help="'Listen to the Features' generator: content features -> upsampler -> "
                                              "FVQ -> bi-GRU -> HiFi-GAN, trained on a content loss; reruns resume")
    p.add_argument("data_dirs", nargs="+", help="training data directories (Kaldi: wav.scp, utt2spk)")
    p.add_argument("--out", required=True, help="output folder: checkpoint.pt, train_log.jsonl, model.pt, model.json")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--minutes", type=float, default=40.0, help="training time budget (default 40)")
    budget.add_argument("--epochs", type=float, help="train for this many epochs instead (paper: 100)")
    p.add_argument("--content", default="whisper-tiny:3",
                   help="frozen encoder spec (default whisper-tiny:3; the paper's: hf:<wav2vec2-base dir>:9)")
    p.add_argument("--codebook-size", type=int, default=2048, help="FVQ codewords (paper: 2048 or 65536)")
    p.add_argument("--code-dim", type=int, default=8, help="FVQ codeword length (paper: 8 or 16)")
    p.add_argument("--gru-dim", type=int, default=256, help="bi-GRU units per direction")
    p.add_argument("--vocoder", default="v1-16k", choices=("v1-16k", "v2-16k"),
                   help="HiFi-GAN generator size (v1-16k: V1, 13.9 M; v2-16k: V2, 0.9 M, --init scratch only)")
    p.add_argument("--output", default="mel", choices=("mel", "waveform"),
                   help="mel (default, the CPU design): emit HiFi-GAN log-mels, trained through a map onto "
                        "Whisper's, vocoded by the frozen universal HiFi-GAN; waveform: the paper's loop with "
                        "HiFi-GAN inside (the --device cuda recipe)")
    p.add_argument("--lambda-c", type=float, default=1.0, help="content-loss weight")
    p.add_argument("--lambda-s", type=float, default=0.0,
                   help="speaker-loss weight (0: no speaker branch; paper: lambda_c/lambda_s 10 to 40)")
    p.add_argument("--no-grl", action="store_true", help="speaker branch without gradient reversal (a probe)")
    p.add_argument("--init", default="universal", choices=("universal", "scratch"),
                   help="HiFi-GAN generator start: the universal V1 retimed to 16 kHz (default) or random")
    p.add_argument("--batch-size", type=int, default=8, help="segments per step (paper: 128)")
    p.add_argument("--segment", type=int, default=16640, help="segment length in samples (default 16640, 52 frames)")
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--lr-decay", type=float, default=0.999, help="learning-rate factor per epoch")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="cpu, cuda or auto (default)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(handler=lazy("train:ltf"))

    t = models.add_parser("speaker-flow", help="the F3-VA pseudo-speaker flow (flow matching on a speaker pool)")
    t.add_argument("pool", metavar="POOL.npz",
                   help="pool from 'voxanon data speaker-pool' (utterance level preferred)")
    t.add_argument("--out", required=True, help="output checkpoint (.pt); a .json log is written beside it")
    t.add_argument("--epochs", type=int, default=None,
                   help=f"epochs (default {FLOW_EPOCHS} unless --minutes is given)")
    t.add_argument("--minutes", type=float, default=None, help="wall-time budget")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--device", default="cpu", help="cpu or cuda")
    t.add_argument("--hidden", type=int, default=512, help="hidden width of the velocity MLP")
    t.add_argument("--layers", type=int, default=3, help="hidden layers of the velocity MLP")
    t.add_argument("--threads", type=int, default=0,
                   help="CPU threads (default 0: torch's default; 1 is fastest on a busy machine)")
    t.add_argument("--fp32", action="store_true", help="store float32 weights (default float16)")
    t.add_argument("--quiet", action="store_true")
    t.set_defaults(handler=lazy("train:speaker_flow"))

    t = models.add_parser("attacker", help="the semi-informed attacker: an ECAPA-TDNN trained on a (anonymized) "
                                           "training data dir")
    t.add_argument("data_dir")
    t.add_argument("out_dir")
    t.add_argument("--recipe", choices=("small", "vpc"), default="small",
                   help="small: 128/384-channel ECAPA, batch 32, cyclic LR 1e-5..2e-3 over 2 epochs (default); "
                        "vpc: the VPC 2024 attacker recipe, ECAPA 512/1536, attention 128, SE 128, reflect padding, "
                        "batch 256, cyclic LR 1e-8..1e-2 (half cycle 65000 steps), weight decay 2e-6")
    t.add_argument("--dev-enroll", help="dev enrollment data dir: select the epoch on dev trials (with --dev-trials)")
    t.add_argument("--dev-trials", nargs="+", help="dev trial data dirs (trials_f, trials_m)")
    t.add_argument("--epochs", type=int, help="default 10")
    t.add_argument("--batch-size", type=int, help="default 32 (vpc: 256)")
    t.add_argument("--chunk-seconds", type=float, help="default 3.0")
    t.add_argument("--lr-min", type=float, help="default 1e-5 (vpc: 1e-8)")
    t.add_argument("--lr-max", type=float, help="default 2e-3 (vpc: 1e-2)")
    t.add_argument("--weight-decay", type=float, help="default 2e-5 (vpc: 2e-6)")
    t.add_argument("--step-size", type=int, help="optimizer steps from lr-min to lr-max (vpc: 65000)")
    t.add_argument("--cycle-epochs", type=float, help="cyclic LR period in epochs, instead of --step-size (default 2)")
    t.add_argument("--full", action="store_true",
                   help="with --recipe small: speechbrain's VoxCeleb ECAPA size (1024/3072 channels; "
                        "larger than the VPC attacker)")
    t.add_argument("--channels", type=int, help="channels of the TDNN and SE-Res2Net layers (MFA gets 3x)")
    t.add_argument("--embedding-dim", type=int)
    t.add_argument("--attention-channels", type=int)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--device", default="auto", help="cpu, cuda or auto")
    t.add_argument("--quiet", action="store_true")
    t.set_defaults(handler=lazy("train:attacker"))

    t = models.add_parser("ser", help="one compact emotion recogniser (SER) per IEMOCAP fold, on original data")
    t.add_argument("data_dir", help="data directory with utt2emo and spk2fold (e.g. IEMOCAP_all)")
    t.add_argument("out_dir", help="where fold_<k>/ser.pt are written (reruns resume)")
    t.add_argument("--folds", help="comma-separated folds to train (default: all in spk2fold)")
    t.add_argument("--epochs", type=int, default=15)
    t.add_argument("--batch-size", type=int, default=32)
    t.add_argument("--channels", type=int, default=128, help="network width")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--quiet", action="store_true", help="no progress lines")
    t.set_defaults(handler=lazy("train:ser"))
