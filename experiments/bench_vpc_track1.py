"""Per-stage CPU throughput of a VPC Track 1 evaluation of B2 (McAdams) and its projected wall time.

Measured in one run, on one CPU thread, at the kit's full model sizes with generated weights (the real
checkpoints are not on these machines; speed does not depend on the weights' values):

- anonymization: voxanon's ``mcadams`` (B2) on ``--seconds`` of a LibriVox clip;
- ASV embedding: the 2024 kit's speechbrain ECAPA (``exp/asv_orig``) and the 2026 kit's ``ecapa_ssl``
  (WavLM-Large + ``ECAPA_TDNN_test``), ``embed`` of one utterance;
- attacker fine-tuning: one optimizer step of the 2026 recipe (:mod:`voxanon.training.ecapa_ssl`):
  ``--train-batch`` examples (the kit's batch: 32), each a 3 s Fbank chunk plus a 10 s crop through the
  frozen WavLM, ECAPA forward and backward, AAM softmax over 921 speakers, AdamW;
- ASR: the 2024 kit's wav2vec2 CTC model (``exp/asr``), ``transcribe``;
- SER: one IEMOCAP fold (``exp/ser/fold_1``), ``predict_proba``.

Speed is the real-time factor (process CPU seconds per audio second, median of ``--repeats`` after a
warm-up). The projection multiplies each stage's RTF by the audio the protocol puts through it (hours:
:data:`DATA_HOURS`, or a kit ``data/`` folder's ``utt2dur`` with ``--data``), counting each audio file once,
as voxanon's content-keyed caches do. The GPU column is not a measurement: it divides the FLOPs each stage
spends per audio second (counted by ``torch.utils.flop_counter.FlopCounterMode``) by an assumed sustained
rate (``--gpu-tflops``, named by ``--gpu-name``).

Usage: ``python experiments/bench_vpc_track1.py [--quick] [--seconds 8] [--repeats 3] [--train-batch 32]
[--data KIT/data] [--gpu-name NAME --gpu-tflops 10] [--cores 8]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import soundfile as sf
import torch
from torch.nn.utils import parametrize
from torch.utils.flop_counter import FlopCounterMode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the repository root: tests.helpers writes the kits' model files

from tests.helpers.asv_ssl_checkpoint import WAVLM_LARGE_CFG
from tests.helpers.speechbrain_ecapa_checkpoint import speechbrain_state_dict
from tests.helpers.vpc_kit_folders import BASE, LV60, write_asr_folder, write_ser_fold
from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.mcadams import McAdams
from voxanon.audio.io import resample
from voxanon.data.kaldi import read_data_dir
from voxanon.errors import DataError
from voxanon.jobs.perf import cpu_rtf
from voxanon.models.asr.vpc2024 import Vpc2024Asr
from voxanon.models.content.unilm import transformers_config
from voxanon.models.ser.vpc2024 import Vpc2024Ser
from voxanon.models.speaker import load_encoder
from voxanon.models.speaker.ecapa import EcapaConfig
from voxanon.models.speaker.ecapa_ssl import EcapaSsl, EcapaSslEncoder, EcapaTdnnSsl
from voxanon.training.ecapa_ssl import (
    EcapaSslRecipe,
    EcapaSslSettings,
    KitBatches,
    training_objects,
)
from voxanon.training.trainer import optimizer_step

#: hours of audio per kit set family (original side), with where each comes from (see docs/vpc.md)
DATA_HOURS = {
    # LibriSpeech dev-clean/test-clean: 5.4 h for 2703/2620 utterances (LibriSpeech paper, Table 1; corpus
    # lists), 7.3 s per utterance on average; the VPC subsets' counts are the evaluation plans'
    # (enrollment 343 + 438, trials 1978 + 1496 utterances for dev + test).
    "libri_enrolls": (343 + 438) * 7.3 / 3600,
    "libri_trials": (1978 + 1496) * 7.3 / 3600,
    # IEMOCAP: about 12 h in all (Busso et al., 2008); an upper bound for IEMOCAP_dev + IEMOCAP_test.
    "iemocap": 12.0,
    # train-clean-360: 363.6 h, 921 speakers (LibriSpeech paper, Table 1), 104 014 utterances.
    "train-clean-360": 363.6,
}
TRAIN_UTTS = 104014
#: the kit sets that make up each family, for ``--data``
FAMILIES = {"libri_enrolls": ("libri_dev_enrolls", "libri_test_enrolls"),
            "libri_trials": ("libri_dev_trials_f", "libri_dev_trials_m", "libri_test_trials_f", "libri_test_trials_m"),
            "iemocap": ("IEMOCAP_dev", "IEMOCAP_test"), "train-clean-360": ("train-clean-360",)}
#: train-clean-360's speaker count: the width of the kit's classifier
N_SPEAKERS = 921
#: the kit's documented Track 1 runtimes of B2 (2026 README, "Runtime Summary"; 2024 README)
KIT_RUNTIME = {
    "anonymization": "~2 h (2026 README, all Track 1 sets); 30 min to 10 h by core count (2024 README)",
    "attacker fine-tuning": "~10 h for eval_post, training + evaluation (2026 README)",
    "ASV (pretrained)": "not documented (eval_pre row empty in the 2026 README)",
    "ASR": "not documented", "SER": "not documented",
}


@dataclass
class Stage:
    """One measured stage: its RTF on one thread, GFLOPs per audio second and the audio hours it processes."""

    name: str
    rtf: float
    gflops: float | None
    hours: float
    note: str = ""


def random_ecapa_ssl(seed: int = 0) -> EcapaSsl:
    """The kit's ``ecapa_ssl`` at full size (WavLM-Large, all 24 layers, + ``ECAPA_TDNN_test()``), random weights."""
    from transformers import WavLMModel

    torch.manual_seed(seed)
    return EcapaSsl(WavLMModel(transformers_config(WAVLM_LARGE_CFG)), EcapaTdnnSsl(EcapaConfig.full(), 24),
                    normalize_waveform=True)


def kit_models(root: Path) -> tuple[Vpc2024Asr, Vpc2024Ser]:
    """The 2024 kit's ``exp/asr`` (asr-wav2vec2-librispeech, 317.6 M parameters) and one ``exp/ser`` fold
    (wav2vec2-base, 94.4 M) at their real sizes, random weights, written under ``root`` and loaded (one thread)."""
    write_asr_folder(root / "exp" / "asr", LV60, dnn=1024)
    write_ser_fold(root / "exp" / "ser" / "fold_1" / "CKPT+1", BASE)
    return Vpc2024Asr(root / "exp" / "asr", threads=1), Vpc2024Ser(root / "exp" / "ser" / "fold_1")


def speech_clip(seconds: float) -> np.ndarray:
    """The first LibriVox test clip at 16 kHz, repeated or cut to ``seconds`` (float32)."""
    clip = sorted((ROOT / "tests" / "fixtures" / "librivox").glob("*.flac"))[0]
    wav, sr = sf.read(clip, dtype="float32")
    return np.resize(resample(wav, sr, 16000), int(seconds * 16000)).astype(np.float32)


def flops_per_second(fn, seconds: float, *modules: torch.nn.Module) -> float:
    """GFLOPs that ``fn`` spends per audio second (matmuls, convolutions, attention; as counted by torch).

    The counter cannot run the weight-normed position convolutions of wav2vec2 and WavLM, so the
    parametrizations of ``modules`` are first folded into their weights (the same outputs; the norm of
    one weight per forward is not worth counting). Call it after timing.
    """
    for module in modules:
        for m in module.modules():
            if parametrize.is_parametrized(m):
                for name in list(m.parametrizations):
                    parametrize.remove_parametrizations(m, name)
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops() / seconds / 1e9


def kit_hours(data: Path) -> dict[str, float]:
    """Hours of each family of :data:`FAMILIES` from the ``utt2dur`` files of a kit ``data/`` folder."""
    hours = {}
    for family, sets in FAMILIES.items():
        total = 0.0
        for name in sets:
            d = read_data_dir(data / name, validate=False)
            if not d.utt2dur:
                raise DataError(f"{data / name}: no utt2dur; the kit's sets have one (or drop --data)")
            total += sum(float(v) for v in d.utt2dur.values())
        hours[family] = total / 3600
    return hours


def train_step(model, seconds: float, batch: int, repeats: int, tmp: Path) -> tuple[float, float]:
    """CPU seconds and GFLOPs of one kit fine-tuning step on ``batch`` utterances of ``seconds`` (median)."""
    folder = tmp / "train"
    (folder / "wav").mkdir(parents=True)
    wav = speech_clip(seconds)
    utts = [f"{1000 + i % 4}-1-{i:04d}" for i in range(batch)]
    for i, utt in enumerate(utts):
        sf.write(folder / "wav" / f"{utt}.wav", np.roll(wav, 1600 * i), 16000, subtype="PCM_16")
    (folder / "wav.scp").write_text("".join(f"{u} {folder / 'wav' / u}.wav\n" for u in utts))
    (folder / "utt2spk").write_text("".join(f"{u} {u.split('-')[0]}\n" for u in utts))
    spk2utt: dict[str, list[str]] = {}
    for u in utts:
        spk2utt.setdefault(u.split("-")[0], []).append(u)
    (folder / "spk2utt").write_text("".join(f"{s} {' '.join(us)}\n" for s, us in spk2utt.items()))
    cfg = EcapaSslSettings(batch_size=batch, cache_gb=0.0)  # nothing kept: every step runs WavLM, as on the full set
    batches = KitBatches(read_data_dir(folder), model, cfg, "cpu")
    classifier, optimizer, scheduler = training_objects(model, N_SPEAKERS, cfg)
    labels = np.array([int(u.split("-")[0]) - 1000 for u in utts])
    recipe = EcapaSslRecipe(batches, classifier, optimizer, np.random.default_rng(cfg.seed), (utts, labels),
                            (utts, labels), tmp, "", scheduler)
    model.wavlm.eval()
    model.ecapa.train()
    optimizer_step(recipe, (utts, labels))  # warm-up
    times = []
    for _ in range(repeats):
        start = time.process_time()
        optimizer_step(recipe, (utts, labels))
        times.append(time.process_time() - start)
    with FlopCounterMode(display=False) as counter:
        optimizer_step(recipe, (utts, labels))
    return statistics.median(times), counter.get_total_flops() / 1e9


def hms(hours: float) -> str:
    """``12.3 h`` or ``45 min``."""
    return f"{hours:.1f} h" if hours >= 1 else f"{hours * 60:.0f} min"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 s of audio, 1 repeat, a training batch of 4")
    ap.add_argument("--seconds", type=float, default=8.0, help="length of the measured utterance")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--train-batch", type=int, default=32, help="fine-tuning batch (the kit's: 32)")
    ap.add_argument("--train-seconds", type=float, default=363.6 * 3600 / TRAIN_UTTS,
                    help="length of each training utterance (default: train-clean-360's mean, 12.6 s)")
    ap.add_argument("--data", type=Path, help="a kit data/ folder: read the sets' hours from their utt2dur")
    ap.add_argument("--gpu-name", default="NVIDIA A100 (FP32, as the kits run)")
    ap.add_argument("--gpu-tflops", type=float, default=10.0,
                    help="ASSUMED sustained TFLOP/s of that GPU on these models (A100 FP32 peak: 19.5)")
    ap.add_argument("--cores", type=int, default=8, help="CPU cores of the GPU host for the CPU-only anonymization")
    args = ap.parse_args()
    if args.quick:
        args.seconds, args.repeats, args.train_batch = 3.0, 1, 4
    torch.set_num_threads(1)
    hours = kit_hours(args.data) if args.data else dict(DATA_HOURS)
    libri = hours["libri_enrolls"] + hours["libri_trials"]
    cfg = EcapaSslSettings()
    # one example per whole 3 s chunk of each utterance (about half a chunk lost per utterance), 90 % trained
    chunks = (hours["train-clean-360"] * 3600 - TRAIN_UTTS * cfg.chunk_seconds / 2) / cfg.chunk_seconds
    steps = cfg.epochs * chunks / cfg.batch_size  # training steps plus validation batches (taken at a step's cost)
    wav = speech_clip(args.seconds)
    print(f"one thread, {args.seconds:g} s utterances, median of {args.repeats}; "
          f"data: {'utt2dur of ' + str(args.data) if args.data else 'published sizes (DATA_HOURS)'}")
    stages: list[Stage] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        mcadams = McAdams()
        rtf = cpu_rtf(lambda: mcadams.anonymize(wav, 16000, utterance_rng(0, "bench")), args.seconds, args.repeats)
        stages.append(Stage("anonymization (B2 mcadams)", rtf, None,
                            libri + hours["iemocap"] + hours["train-clean-360"], "every Track 1 set, once"))
        torch.save(speechbrain_state_dict(), tmp / "embedding_model.ckpt")
        ecapa = load_encoder(f"speechbrain:{tmp / 'embedding_model.ckpt'}")
        run = partial(ecapa.embed, [wav], 16000)
        stages.append(Stage("ASV embedding, 2024 ECAPA", cpu_rtf(run, args.seconds, args.repeats),
                            flops_per_second(run, args.seconds), 3 * libri,
                            "original + anonymized (pretrained), anonymized (retrained)"))
        del ecapa
        model = random_ecapa_ssl()
        enc = EcapaSslEncoder(model, "ecapa-ssl-random")
        run = partial(enc.embed, [wav], 16000)
        rtf = cpu_rtf(run, args.seconds, args.repeats)
        stages.append(Stage("ASV embedding, 2026 ecapa_ssl", rtf, flops_per_second(run, args.seconds, model),
                            3 * libri,
                            "original + anonymized (pretrained), anonymized (retrained)"))
        step_s, step_gflop = train_step(model, args.train_seconds, args.train_batch, args.repeats, tmp)
        scale = cfg.batch_size / args.train_batch
        chunk_audio = args.train_batch * cfg.chunk_seconds
        print(f"fine-tuning step, batch {args.train_batch}: {step_s:.1f} CPU s, {step_gflop:.0f} GFLOP "
              f"({step_s / args.train_batch:.2f} CPU s per example, {step_s / chunk_audio:.2f} per second of "
              f"3 s chunk, {step_s / (args.train_batch * cfg.wavlm_seconds):.3f} per second of 10 s WavLM crop)")
        stages.append(Stage("attacker fine-tuning (2026)", step_s / chunk_audio, step_gflop / chunk_audio,
                            steps * cfg.batch_size * cfg.chunk_seconds / 3600,
                            f"{cfg.epochs} epochs x {steps / cfg.epochs:,.0f} steps of {cfg.batch_size}; "
                            f"hours of 3 s chunks (step time x {scale:g} from batch {args.train_batch})"))
        del enc, model
        asr, ser = kit_models(tmp / "kit")
        run = partial(asr.transcribe, [wav], 16000)
        rtf = cpu_rtf(run, args.seconds, args.repeats)
        stages.append(Stage("ASR (2024 wav2vec2 CTC)", rtf, flops_per_second(run, args.seconds, asr.encoder),
                            2 * hours["libri_trials"],
                            "trial sets, original + anonymized"))
        run = partial(ser.predict_proba, [wav], 16000)
        rtf = cpu_rtf(run, args.seconds, args.repeats)
        stages.append(Stage("SER (one fold)", rtf, flops_per_second(run, args.seconds, ser.lobe, ser.mlp),
                            2 * hours["iemocap"],
                            "IEMOCAP dev + test, original + anonymized, one fold per speaker"))
    gpu_rate = args.gpu_tflops * 1e3  # GFLOP/s
    print(f"\nGPU column: ASSUMPTION, not a measurement: FLOPs / {args.gpu_tflops:g} TFLOP/s sustained on "
          f"{args.gpu_name}; CPU-only stages on {args.cores} cores of its host (linear scaling assumed)\n")
    head = (f"{'stage':32s} {'RTF 1 core':>10s} {'h audio/CPU h':>13s} {'GFLOP/audio s':>13s} {'audio h':>8s} "
            f"{'CPU 1 core':>10s} {'proj. 1 GPU':>11s}  kit documented")
    print(head)
    print("-" * len(head))
    kit = {"anonymization": KIT_RUNTIME["anonymization"], "ASV": KIT_RUNTIME["ASV (pretrained)"],
           "attacker": KIT_RUNTIME["attacker fine-tuning"], "ASR": KIT_RUNTIME["ASR"], "SER": KIT_RUNTIME["SER"]}
    cpu_total = gpu_total = 0.0
    for s in stages:
        cpu_h = s.rtf * s.hours
        gpu_h = s.gflops * s.hours * 3600 / gpu_rate / 3600 if s.gflops is not None else cpu_h / args.cores
        doc = next(v for k, v in kit.items() if s.name.startswith(k))
        if "2024 ECAPA" not in s.name:  # the Track 1 (2026) total uses ecapa_ssl
            cpu_total += cpu_h
            gpu_total += gpu_h
        gflops = f"{s.gflops:13.1f}" if s.gflops is not None else f"{'(CPU only)':>13s}"
        print(f"{s.name:32s} {s.rtf:10.3f} {1 / s.rtf:13.2f} {gflops} {s.hours:8.1f} {hms(cpu_h):>10s} "
              f"{hms(gpu_h):>11s}  {doc}")
        print(f"{'':32s} ({s.note})")
    print(f"\nwhole Track 1 evaluation of B2 (2026 protocol: ecapa_ssl, fine-tuned attacker, ASR, SER): "
          f"{hms(cpu_total)} on one CPU core; projected {hms(gpu_total)} on one {args.gpu_name} "
          f"at an assumed {args.gpu_tflops:g} TFLOP/s")
    print("kit documented: ~2 h anonymization + ~10 h eval_post (eval_pre not documented)")


if __name__ == "__main__":
    main()
