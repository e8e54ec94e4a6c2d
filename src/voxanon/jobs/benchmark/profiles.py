"""Benchmark profiles: how much work ``voxanon benchmark`` does (light to import: the CLI lists them)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from voxanon.evaluation.scenarios import (
    AA_BACKEND,
    AA_FINETUNED,
    AA_FINETUNED_DVECTOR,
    AA_SEMI,
)


@dataclass(frozen=True)
class Profile:
    """How much work a benchmark does.

    ``corpus_engine``, ``corpus_size``, ``corpus_language`` and ``corpus_accented`` say which ``voxanon data
    synth`` corpus a run without ``--data`` builds. ``splits`` get the privacy attacks, ``wer_splits`` the ASR (its most costly
    utility measure); ``systems`` limits the default system list (None: all offline).
    ``rungs`` are the semi-informed attackers trained per system
    (:mod:`voxanon.evaluation.ladder`); ``ecapa_recipe`` (``small`` or ``vpc``)
    and ``attacker_epochs`` are rung (c)'s, ``finetune_epochs`` rung (b)'s.
    ``extra_evaluators`` names evaluators of
    :data:`~voxanon.evaluation.evaluator.OPTIONAL_EVALUATORS` run besides the default ones; ``check_asrs`` the
    recognisers whose WER is measured beside the run's ASR (a judge that a model trained against Whisper's
    encoder cannot have learnt to please). ``conditions`` are recording conditions
    (:mod:`voxanon.dsp.conditions` names) under which privacy and WER are measured again, applied to the
    ``condition_places``: ``input`` (before anonymization) and/or ``output`` (after it)
    (:mod:`voxanon.jobs.benchmark.conditions`).

    The evaluators read their options from these fields (an option names its profile key:
    :func:`voxanon.evaluation.evaluator.option`) and from ``settings``, ``NAME.FIELD`` -> value (e.g.
    ``{"ser.epochs": 15}``; ``voxanon benchmark --set``), which wins over the field.
    """

    name: str
    corpus_engine: str
    corpus_size: str
    splits: tuple[str, ...]
    wer_splits: tuple[str, ...]
    attacker_epochs: int
    ser_epochs: int
    n_boot: int
    quality_utts: int
    listen_utts: int
    rungs: tuple[str, ...]
    ecapa_recipe: str
    finetune_epochs: int
    systems: tuple[str, ...] | None = None
    extra_evaluators: tuple[str, ...] = ()
    check_asrs: tuple[str, ...] = ()
    conditions: tuple[str, ...] = ()
    condition_places: tuple[str, ...] = ("input", "output")
    corpus_language: str = "en"
    corpus_accented: bool = False  # other languages' voices fill dev and test (a corpus in another language)
    settings: dict[str, Any] = field(default_factory=dict)

    def values(self) -> dict[str, Any]:
        """What the evaluators' options are read from: every field by name, then each ``settings`` entry."""
        return {**{k: v for k, v in asdict(self).items() if k != "settings"}, **self.settings}

    def record(self) -> dict[str, Any]:
        """The profile as ``results.json`` holds it (``settings`` only where some are given)."""
        out = asdict(self)
        if not self.settings:
            del out["settings"]
        return out


#: the default profile's anonymizers (besides the original)
DEFAULT_SYSTEMS = ("admixture", "cascade", "chain", "f0_mean_reversion", "f0_noise", "f0_scale", "mcadams",
                   "segment_scaling", "world")
#: the neural profile's: the two seed papers' models, trained here and shipped
NEURAL_SYSTEMS = ("ltf", "f3va")
#: the multilingual profile's: the anonymizers with no English model inside (docs/experiments/multilingual.md:
#: on Spanish speech the cascade and kNN-VC lose most words through their English recogniser, encoder and targets)
MULTILINGUAL_SYSTEMS = ("mcadams", "world")

#: the main job's profile
MAIN = Profile("default", "kokoro", "small", ("dev", "test"), ("test",), attacker_epochs=8, ser_epochs=10, n_boot=1000,
               quality_utts=8, listen_utts=4, rungs=(AA_BACKEND, AA_FINETUNED, AA_SEMI), ecapa_recipe="small",
               finetune_epochs=3, systems=DEFAULT_SYSTEMS)

PROFILES = {
    # CI and first contact: three systems, test split, short training; the cheap rungs: back-end and small ECAPA.
    # The formant corpus: it builds in under a minute, the Kokoro `small` one in 4.4 minutes on 2 idle cores
    "quick": Profile("quick", "formant", "small", ("test",), ("test",), attacker_epochs=4, ser_epochs=6, n_boot=200,
                     quality_utts=4, listen_utts=2, rungs=(AA_BACKEND, AA_SEMI), ecapa_recipe="small",
                     finetune_epochs=0, systems=("mcadams", "world")),
    # the main job: the signal-processing and cascade anonymizers on the small Kokoro corpus; attacks on dev and
    # test, WER on test. The neural kNN-VC family is left to `full`: its anonymization, three retrained rungs
    # and one-off target build would push this profile past its 20-minute budget with the corpus cached
    # (BENCHMARKS.md, "Speed and memory"; docs/experiments/performance.md). LTF and F3-VA likewise, so they have their own profile below
    "default": MAIN,
    # the default's corpus, attackers and measures for the shipped neural models (LTF, F3-VA): run into the
    # main job's folder, it reuses the corpus and the original's evaluations and adds only their work; LTF was
    # trained against Whisper's encoder, so pocketsphinx's WER stands beside Whisper's
    "neural": replace(MAIN, name="neural", systems=NEURAL_SYSTEMS, check_asrs=("pocketsphinx",)),
    # BENCHMARKS.md's leaderboard: the default's corpus, seed, attackers and measures for every offline anonymizer,
    # with pocketsphinx's WER beside Whisper's (several systems were trained against Whisper's encoder), and rung
    # (b) from both pretrained encoders (GE2E and the d-vector). The systems of the default profile get the
    # default's numbers; the nine others add about two hours on 2 cores
    "leaderboard": replace(MAIN, name="leaderboard", systems=None, check_asrs=("pocketsphinx",),
                           rungs=(AA_BACKEND, AA_FINETUNED, AA_FINETUNED_DVECTOR, AA_SEMI)),
    # the main job again under a telephone line, noise at 10 dB SNR and a room of RT60 0.6 s, each applied to the
    # input (before anonymization) and to the output (before the attackers): privacy (every attacker, the
    # trained rungs retrained) and WER per condition. Each condition and place costs about one main job without
    # its emotion and quality measures, so this is not the default; run into the main job's folder it reuses the
    # clean results
    "conditions": replace(MAIN, name="conditions", conditions=("telephone", "noise10", "reverb600")),
    # the default's corpus size, attackers and measures on a corpus in another language (Spanish unless
    # `--language` names another): its speakers, sentences and recogniser (whisper-base:<language>, WER) are that
    # language's; pocketsphinx is English only, so there is no second recogniser. Accented speakers: a language's
    # own packs give some genders two dev and two test speakers (warps of one voice), too few for an EER; other
    # languages' voices reading it fill the size's count (docs/experiments/multilingual.md)
    "multilingual": replace(MAIN, name="multilingual", systems=MULTILINGUAL_SYSTEMS, corpus_language="es",
                            corpus_accented=True),
    # every offline anonymizer (kNN-VC included); more speakers and trials for tighter intervals; rung (c) with
    # the VPC recipe, a GPU recipe: on one CPU core its epochs are slow (docs/experiments/attackers.md, "Rung (c)
    # against epochs and training-set size"), so on 2 cores this profile takes many hours.
    # Only here: content privacy (C-EER; adds the ASR of every system's training set) and SER learnability
    # (adds 5 SER trainings per system), each past the default profile's 20-minute budget; ASR learnability
    # (a CTC head on frozen Whisper features trained per system, docs/experiments/learnability.md)
    # likewise
    "full": Profile("full", "kokoro", "default", ("dev", "test"), ("dev", "test"), attacker_epochs=15, ser_epochs=15,
                    n_boot=1000, quality_utts=40, listen_utts=6,
                    rungs=(AA_BACKEND, AA_FINETUNED, AA_FINETUNED_DVECTOR, AA_SEMI),
                    ecapa_recipe="vpc", finetune_epochs=5,
                    extra_evaluators=("content", "learnability", "learnability-asr"), check_asrs=("pocketsphinx",)),
}
