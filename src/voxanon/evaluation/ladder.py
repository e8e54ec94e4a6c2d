"""The semi-informed attacker ladder as evaluators: each rung retrained on the system's own anonymized speech.

Rungs (names in :mod:`voxanon.evaluation.scenarios`):

* ``AA-backend`` (a): the pretrained encoder's embeddings with an LDA/PLDA
  back-end fitted on the anonymized training set (the VPC 2020 semi-informed
  attacker; :mod:`voxanon.evaluation.backend_attacker`);
* ``AA-finetuned`` and ``AA-finetuned-dvector`` (b): a pretrained encoder
  (GE2E, the VoiceFilter d-vector) fine-tuned on it, the VPC 2026 recipe
  (:mod:`voxanon.training.finetune`);
* ``AA-semi`` (c): an ECAPA-TDNN trained from scratch, small model or VPC 2024
  recipe (:func:`voxanon.evaluation.attacker_training.train_ecapa`): the VPC's
  semi-informed attacker, kept under its VPC name.

Each rung trains on the system's ``train`` set, is selected on the system's
dev trials (anonymized enrollment and trials, as it attacks), then attacks the
split's anonymized enrollment and trials. The trained model lives under
``<cache>/attackers/<system>-<rung>-<digest>``, the digest taken over
everything training depends on (rung settings, content of the training and dev
data, pretrained model, seed): the dev and test evaluators of one system share
one training, and any change trains anew. The result is a
:class:`~voxanon.evaluation.results.PrivacyResult` carrying its
:class:`~voxanon.evaluation.results.AttackerTraining` (log, dev EER).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voxanon.atomic import write_text
from voxanon.data import layout
from voxanon.errors import ConfigError
from voxanon.evaluation.evaluator import (
    Env,
    Evaluator,
    RunSettings,
    SystemData,
    option,
    stage_key,
)
from voxanon.evaluation.fingerprint import data_fingerprint, model_fingerprint
from voxanon.evaluation.privacy import PrivacyEvaluator, evaluate_privacy, privacy_result
from voxanon.evaluation.results import (
    AttackerTraining,
    PrivacyResult,
    RealVoiceCheck,
    from_dict,
    to_dict,
)
from voxanon.evaluation.scenarios import (
    AA_BACKEND,
    AA_FINETUNED,
    AA_FINETUNED_DVECTOR,
    AA_SEMI,
    title,
)

#: the split every rung is selected on (as the VPC selects its attacker on dev)
SELECT_SPLIT = "dev"
RUNGS = (AA_BACKEND, AA_FINETUNED, AA_FINETUNED_DVECTOR, AA_SEMI)
#: the pretrained encoder each fine-tuned rung (b) starts from
FINETUNED_FROM = {AA_FINETUNED: "ge2e", AA_FINETUNED_DVECTOR: "dvector"}
#: the ECAPA recipes of rung (c)
ECAPA_RECIPES = ("small", "vpc")


@dataclass(frozen=True)
class LadderSettings:
    """One rung on one split; ``encoder`` is the pretrained model it starts from (None: from scratch)."""

    rung: str
    split: str
    encoder: str | None
    training: Any  # BackendTraining (a), FinetuneSettings (b) or AsvSettings (c)
    n_boot: int
    seed: int


@dataclass(frozen=True)
class LadderOptions:
    """The rungs a run trains and attacks with, rung (c)'s ECAPA recipe (``small`` or ``vpc``) and epochs, and
    rung (b)'s fine-tuning epochs."""

    rungs: tuple[str, ...] = option((AA_BACKEND, AA_FINETUNED, AA_SEMI), profile="rungs")
    ecapa_recipe: str = option("small", profile="ecapa_recipe")
    attacker_epochs: int = option(8, profile="attacker_epochs")
    finetune_epochs: int = option(3, profile="finetune_epochs")


def semi_informed_attacker(options: LadderOptions) -> str:
    """How the run records rung (c), the VPC semi-informed attacker (``results.json`` settings)."""
    return f"ECAPA-TDNN ({options.ecapa_recipe} recipe), {options.attacker_epochs} epochs, selected on {SELECT_SPLIT}"


def rung_training(rung: str, options: LadderOptions) -> Any:
    """The training settings of ``rung`` for a run's ladder ``options``.

    Rung (c) with the ``vpc`` recipe keeps every VPC 2024 hyper-parameter but
    scales the cyclic learning rate to the corpus (a half cycle per epoch):
    the VPC's 65 000-step half cycle never leaves 1e-8 on a corpus of a few
    steps per epoch (see :meth:`AsvSettings.vpc`).
    """
    if rung == AA_BACKEND:
        from voxanon.evaluation.backend_attacker import BackendTraining

        return BackendTraining()
    if rung in FINETUNED_FROM:
        from voxanon.training.finetune import FinetuneSettings

        return FinetuneSettings(epochs=options.finetune_epochs)
    if rung == AA_SEMI:
        from voxanon.training.asv import AsvSettings

        if options.ecapa_recipe == "small":
            return AsvSettings(epochs=options.attacker_epochs)
        if options.ecapa_recipe == "vpc":
            return AsvSettings.vpc(epochs=options.attacker_epochs, step_size=None, cycle_epochs=2.0)
        raise ConfigError(f"unknown ECAPA recipe {options.ecapa_recipe!r}; choose from {', '.join(ECAPA_RECIPES)}")
    raise ConfigError(f"unknown attacker rung {rung!r}; choose from {', '.join(RUNGS)}")


class LadderEvaluator(Evaluator):
    """A semi-informed attacker rung, trained on the system's anonymized training set, attacking one split."""

    kind = PrivacyEvaluator.kind      # its rungs are attackers beside the privacy evaluator's
    Settings = LadderSettings
    Options = LadderOptions
    under_conditions = True

    @classmethod
    def plan(cls, run: RunSettings, options: LadderOptions) -> list[Evaluator]:
        encoders = {AA_BACKEND: run.pretrained, AA_SEMI: None, **FINETUNED_FROM}
        return [cls(LadderSettings(rung, split, encoders[rung], rung_training(rung, options), run.n_boot,
                                   run.seed))
                for split in run.splits for rung in options.rungs]

    @classmethod
    def section(cls, results: Any, page: Any) -> tuple[str, str] | None:
        """The trained rungs on real voices they never heard, beside the pretrained encoders they started from."""
        rungs, reference, checks = real_voice_checks(results)
        if not rungs:
            return None
        first = next(iter(next(iter(checks.values())).values()))
        rows = [["pretrained encoder (reference)"] + [page.fmt(reference[r], 1) for r in rungs]]
        rows += [[page.fmt(label)] + [page.fmt(c[r].eer if r in c else None, 1) for r in rungs]
                 for label, c in checks.items()]
        text = (f"<p>EER (%) of each trained attacker on unanonymized recordings of {first.speakers} real speakers "
                f"that no model here heard ({first.utterances} utterances, every pair a trial: "
                f"{first.target_pairs} target, {first.nontarget_pairs} non-target), one row per anonymized training "
                "set. The reference row is the pretrained encoder the rung started from (the back-end's with cosine "
                "scoring; the ECAPA trains from scratch). An attacker far above its reference learnt the corpus's "
                "voices, not what tells people apart: its privacy numbers describe synthetic voices only.</p>")
        return "Trained attackers on real voices", text + page.table(["trained on"] + [title(r) for r in rungs], rows)

    @property
    def slot(self) -> tuple[str, ...]:
        return (self.settings.rung, self.settings.split)

    @property
    def group(self) -> str:
        return f"ladder {self.settings.rung}"  # the rung's training on dev serves every split

    def extra_splits(self) -> tuple[str, ...]:
        return (SELECT_SPLIT,)  # every rung is selected on dev, whichever split it attacks

    def applies(self, data: SystemData) -> bool:
        return all(n in data.sets for n in (layout.TRAIN, *layout.split_sets(SELECT_SPLIT)))

    @staticmethod
    def training_inputs(data: SystemData) -> dict[str, Path]:
        """The data the rung trains on (``train``) and is selected on (the dev sets), by role."""
        enroll, trial_f, trial_m = layout.split_sets(SELECT_SPLIT)
        return {"train": data.sets[layout.TRAIN], "dev_enroll": data.sets[enroll],
                "dev_trials_f": data.sets[trial_f], "dev_trials_m": data.sets[trial_m]}

    def inputs(self, data: SystemData) -> dict[str, Path]:
        enroll, trial_f, trial_m = layout.split_sets(self.settings.split)
        return {"enroll": data.sets[enroll], "trials_f": data.sets[trial_f], "trials_m": data.sets[trial_m],
                **self.training_inputs(data), **({"real": real} if (real := data.original.get(layout.REAL)) else {})}

    def models(self, data: SystemData) -> dict[str, str]:
        return {"encoder": self.settings.encoder} if self.settings.encoder else {}

    def training_dir(self, data: SystemData, cache_dir: Path) -> Path:
        """Where the rung's model for ``data`` is trained: named by everything training depends on (not the split)."""
        s = self.settings
        key = {"rung": s.rung, "encoder": s.encoder, "training": dataclasses.asdict(s.training), "seed": s.seed,
               "inputs": {k: data_fingerprint(p) for k, p in sorted(self.training_inputs(data).items())},
               "models": {k: model_fingerprint(v) for k, v in sorted(self.models(data).items())}}
        return cache_dir / "attackers" / f"{data.label}-{s.rung}-{stage_key(key)}"

    def _pretrained(self, env: Env):
        from voxanon.models.speaker import load_encoder

        return env.model(self.settings.encoder, lambda spec: load_encoder(spec, device=env.device))

    def train(self, data: SystemData, env: Env) -> AttackerTraining:
        """Train and select the rung on ``data`` (or read back the finished training), with its real-voice check
        where the data has real recordings (added to a finished training that lacks it)."""
        out = self.training_dir(data, env.cache_dir)
        done = out / "training.json"
        fresh = not done.is_file()
        training = (self._fit(data, env, out) if fresh
                    else from_dict(AttackerTraining, json.loads(done.read_text(encoding="utf-8")), str(done)))
        real = data.original.get(layout.REAL)
        checked = real is not None and training.real_voices is None
        if checked:
            training = dataclasses.replace(training, real_voices=self._check_real_voices(training, real, env))
        if fresh or checked:
            write_text(done, json.dumps(to_dict(training), indent=1))
        return training

    def _fit(self, data: SystemData, env: Env, out: Path) -> AttackerTraining:
        s = self.settings
        ins = self.training_inputs(data)
        args = (ins["train"], ins["dev_enroll"], [ins["dev_trials_f"], ins["dev_trials_m"]])
        if s.rung == AA_BACKEND:
            from voxanon.evaluation.backend_attacker import train_backend

            path, log = train_backend(*args, self._pretrained(env), out, s.training, seed=s.seed,
                                      cache_dir=env.cache_dir / "embeddings", quiet=env.quiet)
            model = str(path)
        elif s.rung in FINETUNED_FROM:
            from voxanon.evaluation.attacker_training import train_finetuned

            path, log = train_finetuned(s.encoder, *args, s.training, out, seed=s.seed, device=env.device,
                                        quiet=env.quiet)
            model = f"{s.encoder}:{path}"
        else:
            from voxanon.evaluation.attacker_training import train_ecapa

            path, log = train_ecapa(*args, s.training, out, seed=s.seed, device=env.device, quiet=env.quiet)
            model = f"ecapa:{path}"
        return AttackerTraining(rung=s.rung, model=model, train=str(ins["train"]), selected_on=SELECT_SPLIT,
                                val_eer=min(e["val_eer"] for e in log), history=log)

    def _check_real_voices(self, training: AttackerTraining, real: Path, env: Env) -> RealVoiceCheck:
        """The trained model on real voices it never heard, beside the pretrained encoder it started from."""
        from voxanon.evaluation.real_voices import check_real_voices, cosine_pairs

        cache = env.cache_dir / "embeddings"
        if self.settings.rung == AA_BACKEND:
            from voxanon.models.speaker.plda import PldaBackend

            backend = PldaBackend.load(training.model)
            encoder = self._pretrained(env)
            return check_real_voices(real, encoder, encoder, lambda e: backend.score([x[None] for x in e], e),
                                     cache_dir=cache, quiet=env.quiet)
        from voxanon.models.speaker import load_encoder

        trained = env.model(training.model, lambda spec: load_encoder(spec, device=env.device))
        pretrained = self._pretrained(env) if self.settings.encoder else None
        return check_real_voices(real, trained, pretrained, cosine_pairs, cache_dir=cache, quiet=env.quiet)

    def run(self, data: SystemData, env: Env) -> PrivacyResult:
        training = self.train(data, env)
        dirs = self.inputs(data)
        enroll, trials = dirs["enroll"], [dirs["trials_f"], dirs["trials_m"]]
        cache = env.cache_dir / "embeddings"
        if self.settings.rung == AA_BACKEND:
            from voxanon.evaluation.backend_attacker import evaluate_backend
            from voxanon.models.speaker.plda import PldaBackend

            res = evaluate_backend(enroll, trials, self._pretrained(env), PldaBackend.load(training.model),
                                   cache_dir=cache, n_boot=self.settings.n_boot, quiet=env.quiet)
        else:
            from voxanon.models.speaker import load_encoder

            encoder = env.model(training.model, lambda spec: load_encoder(spec, device=env.device))
            res = evaluate_privacy(enroll, trials, encoder, cache_dir=cache, n_boot=self.settings.n_boot,
                                   quiet=env.quiet, keep_scores=False)
        return dataclasses.replace(res, scenario=self.settings.rung, training=training)


def real_voice_checks(results: Any) -> tuple[list[str], dict[str, float | None],
                                             dict[str, dict[str, RealVoiceCheck]]]:
    """The real-voice checks of a benchmark's trained rungs on its primary split: the rungs that have one, each
    rung's pretrained reference EER, and ``{system: {rung: check}}`` for the systems with any."""
    split = results.settings.primary.split
    checks = {label: {rung: p.training.real_voices for rung in RUNGS
                      if (p := privacy_result(record, rung, split)) is not None and p.training is not None
                      and p.training.real_voices is not None}
              for label, record in results.systems.items()}
    checks = {label: c for label, c in checks.items() if c}
    rungs = [r for r in RUNGS if any(r in c for c in checks.values())]
    reference = {r: next((c[r].pretrained_eer for c in checks.values() if r in c), None) for r in rungs}
    return rungs, reference, checks
