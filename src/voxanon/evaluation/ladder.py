"""The semi-informed attacker ladder as evaluators: each rung retrained on the system's own anonymized speech.

Rungs (names in :mod:`voxanon.evaluation.scenarios`):

* ``AA-backend`` (a): the pretrained encoder's embeddings with an LDA/PLDA
  back-end fitted on the anonymized training set (the VPC 2020 semi-informed
  attacker; :mod:`voxanon.evaluation.backend_attacker`);
* ``AA-finetuned`` (b): the pretrained GE2E fine-tuned on it
  (:mod:`voxanon.training.ge2e`);
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
    stage_key,
)
from voxanon.evaluation.fingerprint import data_fingerprint, model_fingerprint
from voxanon.evaluation.results import (
    AttackerTraining,
    PrivacyResult,
    from_dict,
    to_dict,
)
from voxanon.evaluation.scenarios import AA_BACKEND, AA_FINETUNED, AA_SEMI

#: the split every rung is selected on (as the VPC selects its attacker on dev)
SELECT_SPLIT = "dev"
RUNGS = (AA_BACKEND, AA_FINETUNED, AA_SEMI)
#: the ECAPA recipes of rung (c)
ECAPA_RECIPES = ("small", "vpc")


@dataclass(frozen=True)
class LadderSettings:
    """One rung on one split; ``encoder`` is the pretrained model it starts from (None: from scratch)."""

    rung: str
    split: str
    encoder: str | None
    training: Any  # BackendTraining (a), FinetuneSettings (b) or TrainConfig (c)
    n_boot: int
    seed: int


def rung_training(rung: str, run: RunSettings) -> Any:
    """The training settings of ``rung`` for a run.

    Rung (c) with the ``vpc`` recipe keeps every VPC 2024 hyper-parameter but
    scales the cyclic learning rate to the corpus (a half cycle per epoch):
    the VPC's 65 000-step half cycle never leaves 1e-8 on a corpus of a few
    steps per epoch (see :meth:`TrainConfig.vpc`).
    """
    if rung == AA_BACKEND:
        from voxanon.evaluation.backend_attacker import BackendTraining

        return BackendTraining()
    if rung == AA_FINETUNED:
        from voxanon.training.ge2e import FinetuneSettings

        return FinetuneSettings(epochs=run.finetune_epochs)
    if rung == AA_SEMI:
        from voxanon.training.asv import TrainConfig

        if run.ecapa_recipe == "small":
            return TrainConfig(epochs=run.attacker_epochs)
        if run.ecapa_recipe == "vpc":
            return TrainConfig.vpc(epochs=run.attacker_epochs, step_size=None, cycle_epochs=2.0)
        raise ConfigError(f"unknown ECAPA recipe {run.ecapa_recipe!r}; choose from {', '.join(ECAPA_RECIPES)}")
    raise ConfigError(f"unknown attacker rung {rung!r}; choose from {', '.join(RUNGS)}")


class LadderEvaluator(Evaluator):
    """A semi-informed attacker rung, trained on the system's anonymized training set, attacking one split."""

    kind = "privacy"
    Settings = LadderSettings

    @classmethod
    def plan(cls, run: RunSettings) -> list[Evaluator]:
        encoders = {AA_BACKEND: run.pretrained, AA_FINETUNED: "ge2e", AA_SEMI: None}  # (b) fine-tunes GE2E
        return [cls(LadderSettings(rung, split, encoders[rung], rung_training(rung, run), run.n_boot, run.seed))
                for split in run.splits for rung in run.rungs]

    @property
    def slot(self) -> tuple[str, ...]:
        return (self.settings.rung, self.settings.split)

    @property
    def group(self) -> str:
        return f"ladder {self.settings.rung}"  # the rung's training on dev serves every split

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
                **self.training_inputs(data)}

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
        """Train and select the rung on ``data`` (or read back the finished training)."""
        s = self.settings
        out = self.training_dir(data, env.cache_dir)
        done = out / "training.json"
        if done.is_file():
            return from_dict(AttackerTraining, json.loads(done.read_text(encoding="utf-8")), str(done))
        ins = self.training_inputs(data)
        args = (ins["train"], ins["dev_enroll"], [ins["dev_trials_f"], ins["dev_trials_m"]])
        if s.rung == AA_BACKEND:
            from voxanon.evaluation.backend_attacker import train_backend

            path, log = train_backend(*args, self._pretrained(env), out, s.training, seed=s.seed,
                                      cache_dir=env.cache_dir / "embeddings", quiet=env.quiet)
            model = str(path)
        elif s.rung == AA_FINETUNED:
            from voxanon.evaluation.attacker_training import train_ge2e

            path, log = train_ge2e(*args, s.training, out, seed=s.seed, device=env.device, quiet=env.quiet)
            model = f"ge2e:{path}"
        else:
            from voxanon.evaluation.attacker_training import train_ecapa

            path, log = train_ecapa(*args, s.training, out, seed=s.seed, device=env.device, quiet=env.quiet)
            model = f"ecapa:{path}"
        training = AttackerTraining(rung=s.rung, model=model, train=str(ins["train"]), selected_on=SELECT_SPLIT,
                                    val_eer=min(e["val_eer"] for e in log), history=log)
        write_text(done, json.dumps(to_dict(training), indent=1))
        return training

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
            from voxanon.evaluation.privacy import evaluate_privacy
            from voxanon.models.speaker import load_encoder

            encoder = env.model(training.model, lambda spec: load_encoder(spec, device=env.device))
            res = evaluate_privacy(enroll, trials, encoder, cache_dir=cache, n_boot=self.settings.n_boot,
                                   quiet=env.quiet, keep_scores=False)
        return dataclasses.replace(res, scenario=self.settings.rung, training=training)
