"""``voxanon evaluate``: privacy (speaker verification attacks; C-EER from transcripts), utility (WER, emotion
UAR), learnability (SER and ASR trained on anonymized speech), conversations (per-speaker privacy, DER, cpWER,
overlap leaks) and a VPC kit's own protocol.

The handlers are in :mod:`voxanon.cli.handlers.evaluate`.
"""

from __future__ import annotations

import argparse

from voxanon.cli import group, lazy
from voxanon.ranges import Range

_SIDES = {"orig": "original", "anon": "anonymized"}


def add_normalization_option(p) -> None:
    """The ``--normalization`` option of the commands that score WER."""
    from voxanon.metrics.text import NORMALIZERS

    p.add_argument("--normalization", default="vpc", choices=sorted(NORMALIZERS),
                   help="text normalisation before scoring: vpc (the VPC's: case, , ! ? .), spoken (also every "
                        "other mark, numbers spelt out, titles in full: for Whisper; `voxanon benchmark` scores with "
                        "it) or basic (any language: lower case, marks removed, Latin accents folded) (default: vpc)")


def _add_model_options(p: argparse.ArgumentParser) -> None:
    from voxanon.models.asr import DEFAULT_ASR

    a = p.add_argument_group("ASR")
    a.add_argument("--asr-backend", default=DEFAULT_ASR, metavar="SPEC",
                   help=f"whisper-tiny, whisper-base[:<language>] (multilingual), pocketsphinx, wav2vec2:<dir or hub "
                        f"name> or ctc:<model.pt> (a CTC model "
                        f"trained by `voxanon evaluate learnability asr`) (default: {DEFAULT_ASR})")
    a.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    a.add_argument("--threads", type=int, default=0, help="CPU threads of the ASR (default 0: library default)")
    add_normalization_option(a)
    a.add_argument("--unit", choices=("word", "char"), default="word",
                   help="count errors in words (WER) or characters (CER: for Chinese, Japanese and other languages "
                        "written without spaces) (default: word)")
    a.add_argument("--n-boot", type=Range(1).option(int), default=1000,
                   help="bootstrap replicates of the WER interval (>= 1)")
    a.add_argument("--cache-dir", help="hypothesis cache (default: OUT/asr_cache); reruns decode nothing twice")
    s = p.add_argument_group("SER")
    s.add_argument("--ser-models", help="folder of per-fold SER models (fold_<k>/ser.pt)")
    s.add_argument("--ser-model", help="one SER model spec for all utterances")


def _encoder_option(p: argparse.ArgumentParser) -> None:
    from voxanon.models.text_speaker import KINDS

    p.add_argument("--encoder", choices=KINDS, default=KINDS[0], help="text speaker encoder trained on --train")


def _add_recipe_options(p: argparse.ArgumentParser) -> None:
    from voxanon.training.ctc import RECIPES

    p.add_argument("--recipe", default="whisper", choices=sorted(RECIPES),
                   help="whisper: a CTC head on frozen Whisper tiny.en features (default); scratch: a BiLSTM-CTC "
                        "trained from nothing on log-mels")
    p.add_argument("--epochs", type=int, help="training epochs (default: the recipe's, "
                   + ", ".join(f"{n} {r.epochs}" for n, r in RECIPES.items()) + ")")


def _add_learnability_args(p: argparse.ArgumentParser, holds: str) -> None:
    """The arguments of both learnability tasks (``holds``: what the training data directories hold)."""
    p.add_argument("anonymized", help=f"the anonymized training data directory ({holds})")
    p.add_argument("original", help="the original data directory it was made from")
    p.add_argument("--models", required=True, help="where the models trained on ANONYMIZED go (reused)")
    p.add_argument("--reference-models", required=True, help="where the models trained on ORIGINAL go (reused)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", help="write the result (JSON) here")
    p.add_argument("--quiet", action="store_true", help="no progress lines")


def register(commands) -> None:
    from voxanon.data.vpc_kit import EDITIONS
    from voxanon.evaluation.scenarios import SCENARIOS

    what = group(commands, "evaluate", "privacy, utility and learnability of (anonymized) speech", "WHAT")

    p = what.add_parser("privacy", help="speaker-verification attacks (EER and more)")
    p.add_argument("--enroll", required=True, help="original enrollment data dir (e.g. libri_dev_enrolls)")
    p.add_argument("--trials", required=True, nargs="+", help="original trial data dirs (trials_f, trials_m)")
    p.add_argument("--anon-enroll", help="anonymized enrollment data dir")
    p.add_argument("--anon-trials", nargs="+", help="anonymized trial data dirs")
    for sc in SCENARIOS.values():
        p.add_argument(f"--{sc.flag.replace('_', '-')}", action="store_true",
                       help=f"{sc.title}: {_SIDES[sc.enroll]} enrollment, {_SIDES[sc.trials]} trials, "
                            f"{sc.attacker} encoder")
    p.add_argument("--encoder", default="ge2e", help="pretrained encoder spec: ge2e, ecapa:CKPT, speechbrain:CKPT")
    p.add_argument("--attacker", help="checkpoint of 'voxanon train attacker' (best.pt) for --aa-semi")
    p.add_argument("--cache", default=".voxanon-cache/embeddings", help="embedding cache directory")
    p.add_argument("--out", help="write the results (JSON) here")
    p.add_argument("--n-boot", type=Range(1).option(int), default=1000,
                   help="bootstrap replicates of the EER interval (>= 1)")
    p.add_argument("--device", default="auto", help="cpu, cuda or auto")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(handler=lazy("evaluate:privacy"))

    p = what.add_parser("utility", help="WER/CER (--asr) and emotion UAR (--ser) of data directories")
    p.add_argument("data_dirs", nargs="+", metavar="DATA_DIR",
                   help="data directories scored side by side, in the order given (e.g. originals, then anonymized)")
    p.add_argument("--asr", action="store_true", help="word/character error rates against 'text'")
    p.add_argument("--ser", action="store_true", help="emotion recognition UAR against 'utt2emo'")
    p.add_argument("--out", default="results/utility", help="results folder (default: results/utility)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.defer(_add_model_options)
    p.set_defaults(handler=lazy("evaluate:utility"))

    p = what.add_parser(
        "content-privacy", help="content-based re-identification: C-EER of a text speaker encoder on transcripts")
    p.add_argument("--train", required=True, help="training data dir whose transcripts train the text encoder")
    p.add_argument("--enroll", required=True, help="enrollment data dir (e.g. anonymized libri_test_enrolls)")
    p.add_argument("--trials", required=True, nargs="+", help="trial data dirs (trials_f, trials_m)")
    p.add_argument("--transcripts", default="reference",
                   help="'reference': the text files (oracle transcripts); or an ASR backend run on the audio: "
                        "whisper-tiny, pocketsphinx, wav2vec2:<dir>")
    p.defer(_encoder_option)
    p.add_argument("--asr-cache", default=".voxanon-cache/asr", help="ASR hypothesis cache directory")
    p.add_argument("--out", help="write the result (JSON) here")
    p.add_argument("--n-boot", type=Range(1).option(int), default=1000,
                   help="bootstrap replicates of the EER interval (>= 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="ASR device: cpu, cuda or auto")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(handler=lazy("evaluate:content_privacy"))

    p = what.add_parser("conversations", help="anonymized conversations: per-speaker EER, DER, cpWER, overlap leak",
                        description="Evaluate a conversation corpus (`voxanon data conversations`) and, with "
                                    "--anonymized, an anonymized copy of its recordings: speaker verification on the "
                                    "non-overlapped turns (OO; OA ignorant; AA lazy-informed with --anon-enroll), "
                                    "DER and speaker-count error of a diarizer, cpWER of the ASR on the reference "
                                    "turns, and how close the overlapped regions stay to the speakers talking there.")
    p.add_argument("corpus", help="the conversation corpus folder (data/conversations, data/enrolls)")
    p.add_argument("--anonymized", help="the anonymized recordings: a data directory (`voxanon anonymize "
                                        "CORPUS/data/conversations OUT`) or a folder of <recording>.wav")
    p.add_argument("--anon-enroll", help="the anonymized enrollment data directory (for AA lazy-informed)")
    p.add_argument("--system", default="anonymized", help="name of the anonymized side in the results")
    p.add_argument("--out", required=True, help="results folder (results.json, *.csv, cuts and caches)")
    p.add_argument("--encoder", action="append", metavar="SPEC",
                   help="pretrained attacker encoder (repeatable; default ge2e)")
    p.add_argument("--diarizer", default="oracle",
                   help="oracle (the reference RTTM: DER 0, the floor), voxanon[:ENCODER] (conversation mode's "
                        "diarizer) or none (default: oracle)")
    p.add_argument("--oracle-count", action="store_true", help="tell the diarizer the number of speakers")
    p.add_argument("--collar", type=Range(0).option(float), default=0.25,
                   help="forgiveness collar around reference boundaries, seconds (default 0.25, as md-eval)")
    p.add_argument("--asr", default="whisper-tiny", help="ASR spec for cpWER, or none (default: whisper-tiny)")
    p.add_argument("--cache", help="embedding and hypothesis cache (default: OUT/cache; runs may share one)")
    p.add_argument("--normalization", default="spoken",
                   help="text normalisation before cpWER (as `evaluate utility`; default: spoken, as the benchmark)")
    p.add_argument("--n-boot", type=Range(1).option(int), default=1000,
                   help="bootstrap replicates of the EER interval (>= 1)")
    p.add_argument("--device", default="cpu", help="cpu, cuda or auto (default: cpu)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(handler=lazy("evaluate:conversations"))

    p = what.add_parser("vpc", help="a VPC edition's protocol on a kit data/ folder (results_summary)")
    p.add_argument("data", help="the kit's data/ folder (libri_{dev,test}_enrolls, ..._trials_*, IEMOCAP_{dev,test})")
    p.add_argument("--edition", choices=EDITIONS,
                   help="2024: per-gender trial lists (trials_f, trials_m), EER averaged; 2026: the mixed lists "
                        "(trials_mixed) only (default: 2026 when mixed lists exist, else 2024)")
    p.add_argument("--suffix", default="", help="the kit's anon_data_suffix: anonymized sets are <set><suffix> "
                                                "(e.g. _mcadams); without it only the original (OO) is scored")
    p.add_argument("--exp", default="exp", help="the kit's exp/ folder with its models (default: exp)")
    p.add_argument("--asv", help="pretrained ASV spec (default: speechbrain:<exp/asv_orig/...embedding_model.ckpt> "
                                 "for 2024, ecapa_ssl:<exp/asv_ssl> for 2026)")
    p.add_argument("--asv-anon", help="the attacker retrained on anonymized data (ASV_eval^anon; default: "
                                      "exp/asv_anon<suffix> when it exists); with --finetune-asv, the folder the "
                                      "fine-tuning writes")
    p.add_argument("--asr", help="ASR spec for the WER of the trial lists, e.g. vpc2024:exp/asr (default: no ASR)")
    p.add_argument("--ser", help="the kit's exp/ser folder (fold_<k> models) for the IEMOCAP UAR (default: no SER)")
    p.add_argument("--out", default="results/vpc", help="results folder (default: results/vpc)")
    p.add_argument("--cache", help="embedding and hypothesis cache (default: OUT/cache)")
    p.add_argument("--n-boot", type=Range(1).option(int), default=1000,
                   help="bootstrap replicates of voxanon's EER intervals (>= 1)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    p.add_argument("--quiet", action="store_true")
    f = p.add_argument_group("fine-tuning the 2026 semi-informed attacker (as the kit's eval_post)")
    f.add_argument("--finetune-asv", action="store_true",
                   help="first fine-tune the pretrained ecapa_ssl (--asv, default exp/asv_ssl) on the anonymized "
                        "train-clean-360<suffix> into exp/asv_anon<suffix> (or --asv-anon DIR), then evaluate with "
                        "it; a rerun resumes an interrupted fine-tuning")
    f.add_argument("--epochs", type=Range(1).option(int), help="fine-tuning epochs (default 2, as the kit)")
    f.add_argument("--batch-size", type=Range(1).option(int), help="fine-tuning batch size (default 32, as the kit)")
    f.add_argument("--lr", type=Range(0, lo_open=True).option(float),
                   help="AdamW learning rate and top of the cyclic schedule (default 0.01, as the kit)")
    p.set_defaults(handler=lazy("evaluate:vpc"))

    tasks = what.add_parser("learnability", help="a recogniser trained on anonymized speech, tested on original "
                                                 "speech: SER (UAR) or ASR (WER)").add_subparsers(
        dest="learnability_task", metavar="TASK")
    p = tasks.add_parser("ser", help="the per-fold SER trained on anonymized speech, tested on original speech",
                         description="Learnability of an anonymized emotion set: the per-fold compact SER is "
                                     "trained on ANONYMIZED and each original held-out fold of ORIGINAL is scored "
                                     "with the model that never heard its speakers; the reference row is the same "
                                     "recipe trained on ORIGINAL (trained into --reference-models when absent).")
    _add_learnability_args(p, "utt2emo, spk2fold")
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--channels", type=int, default=128, help="network width")
    p.set_defaults(handler=lazy("evaluate:learnability_ser"))

    p = tasks.add_parser(
        "asr", help="a CTC ASR trained on anonymized speech, tested on original speech",
        description="ASR learnability: a character CTC recogniser is trained on ANONYMIZED (a training set with "
                    "'text') and the same recipe on ORIGINAL (the reference row); both are scored (WER, CER) on "
                    "the original --test sets. Finished models are reused; an interrupted training resumes.")
    _add_learnability_args(p, "wav.scp, text")
    p.add_argument("--test", action="append", required=True, metavar="DIR",
                   help="an original test data directory (repeat: e.g. the female and male trial sets)")
    p.add_argument("--minutes", type=float, help="wall-clock cap per training (stops after the epoch past it)")
    p.add_argument("--device", default="cpu", help="cpu, cuda or auto (default: cpu)")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (default 0: torch's default)")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap replicates of the WER intervals")
    p.add_argument("--cache-dir", help="feature and hypothesis cache (default: a 'cache' folder beside --models)")
    p.defer(_add_recipe_options)
    p.defer(add_normalization_option)
    p.set_defaults(handler=lazy("evaluate:learnability_asr"))
