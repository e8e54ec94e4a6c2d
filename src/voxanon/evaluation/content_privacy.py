"""Content-based re-identification (C-EER): speaker verification from *what* is said.

A text speaker encoder (:mod:`voxanon.models.text_speaker`) is trained on the
transcripts of a training set; then, exactly as the acoustic attack
(:mod:`voxanon.evaluation.privacy`), a speaker's enrollment model is the mean of
its enrollment utterances' embeddings, a trial's score is the cosine with the
trial utterance's embedding, and the metrics are computed per gender of the
enrolled speaker with the same functions (C-EER = their EER).

Transcripts come either from the ``text`` files (``reference``: an oracle
transcript, the upper bound of what an ASR could give the attacker) or from an
ASR backend run on the (anonymized) audio, through the hypothesis cache of
:mod:`voxanon.evaluation.asr` (decoded once, shared with the WER evaluation).
An utterance without a transcript (no ``text`` line, unreadable audio, ASR
failure) is left out and listed with the reason; a speaker left without any
enrollment transcript loses its trials, also listed. An empty transcript is
kept (the attacker learns nothing from it; its embedding is the prior).

:class:`ContentPrivacyEvaluator` is an evaluator of the benchmark contract; it
is not in the default plan (it adds ASR of the training set to each system's
time): it is one of :data:`~voxanon.evaluation.evaluator.OPTIONAL_EVALUATORS`,
which the ``full`` profile adds.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voxanon.data import layout
from voxanon.data.kaldi import DataDir, DataError, read_data_dir
from voxanon.evaluation.evaluator import Column, Env, Evaluator, RunSettings, SystemData
from voxanon.evaluation.privacy import (
    TrialScores,
    cosine_scores,
    enrollment_models,
    privacy_metrics,
    trial_sets,
)
from voxanon.evaluation.results import ContentPrivacyResult
from voxanon.models.text_speaker import TextSpeakerEncoder, train_text_encoder

#: transcript source meaning the reference ``text`` (oracle transcripts)
REFERENCE = "reference"

#: data directory -> (transcripts by utterance, utterances without one -> reason)
Transcriber = Callable[[DataDir], tuple[dict[str, str], dict[str, str]]]


def reference_transcripts(data: DataDir) -> tuple[dict[str, str], dict[str, str]]:
    """The ``text`` lines of ``data``; utterances without one are listed as missing."""
    missing = {u: f"{data.path}: no line in text" for u in data.utts if u not in data.text}
    return {u: data.text[u] for u in data.utts if u in data.text}, missing


def asr_transcriber(asr, cache_dir: str | os.PathLike, *, quiet: bool = False) -> Transcriber:
    """Transcripts by ``asr`` of the audio of a data directory, through the ASR hypothesis cache."""
    from voxanon.evaluation.asr import transcribe

    def run(data: DataDir) -> tuple[dict[str, str], dict[str, str]]:
        hyps, failed, _ = transcribe(data, data.utts, asr, cache_dir, quiet=quiet)
        return hyps, {u: f"{data.path}: {why}" for u, why in failed.items()}

    return run


@dataclass
class ContentScores:
    """Scored trials, the trained encoder and what was left out."""

    trials: TrialScores
    encoder: TextSpeakerEncoder
    n_train: int
    n_empty: int
    missing: dict[str, str]


def score_content(train: DataDir, enroll: DataDir, trial_dirs: list[DataDir], transcripts: Transcriber, *,
                  encoder: str = "tfidf", seed: int = 0) -> ContentScores:
    """Train a text speaker encoder on ``train``'s transcripts and score every trial from transcripts."""
    trial_dirs = trial_sets(enroll, trial_dirs)
    missing: dict[str, str] = {}
    train_text, miss = transcripts(train)
    missing.update(miss)
    if not train_text:
        raise DataError(f"{train.path}: no training utterance has a transcript")
    utts = list(train_text)
    model = train_text_encoder(encoder, [train_text[u] for u in utts], [train.utt2spk[u] for u in utts], seed=seed)

    enroll_text, miss = transcripts(enroll)
    missing.update(miss)
    texts = dict(enroll_text)
    enrolled = enroll.subset(list(enroll_text)).spk2utt
    wanted = sorted({t.enroll_spk for td in trial_dirs for t in td.trials})
    for spk in wanted:
        if spk not in enrolled:
            missing[f"speaker {spk}"] = (f"{enroll.path}: no enrollment utterance has a transcript; "
                                         "its trials are left out")
    speakers = [s for s in wanted if s in enrolled]
    if not speakers:
        raise DataError(f"{enroll.path}: no enrolled speaker has an enrollment transcript")
    trial_text = []
    for td in trial_dirs:
        got, miss = transcripts(td)
        missing.update(miss)
        trial_text.append(got)
        texts.update(got)
    ids = list(texts)
    emb = dict(zip(ids, model.embed([texts[u] for u in ids])))
    models = enrollment_models(enroll.subset(list(enroll_text)), emb, speakers)
    spk_index = {s: i for i, s in enumerate(speakers)}
    parts = []
    for td, got in zip(trial_dirs, trial_text):
        kept = [t for t in td.trials if t.utt in got and t.enroll_spk in spk_index]
        utts = sorted({t.utt for t in kept})
        utt_index = {u: i for i, u in enumerate(utts)}
        tests = np.stack([emb[u] for u in utts]) if utts else np.zeros((0, model.dim), np.float32)
        parts.append(TrialScores(
            enroll_spk=np.array([t.enroll_spk for t in kept], dtype=str),
            utt=np.array([t.utt for t in kept], dtype=str),
            score=cosine_scores(models, np.array([spk_index[t.enroll_spk] for t in kept], dtype=int), tests,
                                np.array([utt_index[t.utt] for t in kept], dtype=int)),
            target=np.array([t.target for t in kept], dtype=bool),
            gender=np.array([enroll.spk2gender[t.enroll_spk] for t in kept], dtype=str)))
    trials = TrialScores.concatenate(parts)
    n_empty = sum(1 for u in ids if not texts[u].strip())
    return ContentScores(trials, model, len(train_text), n_empty, missing)


def evaluate_content_privacy(train, enroll, trial_dirs: list, transcripts: Transcriber, source: str, *,
                             encoder: str = "tfidf", n_boot: int = 1000, seed: int = 0) -> ContentPrivacyResult:
    """C-EER per gender of a text speaker encoder trained on ``train`` (paths or data directories).

    ``source`` names where the transcripts came from (``reference`` or the ASR backend's name).
    """
    train, enroll = (d if isinstance(d, DataDir) else read_data_dir(d) for d in (train, enroll))
    tds = [td if isinstance(td, DataDir) else read_data_dir(td) for td in trial_dirs]
    sc = score_content(train, enroll, tds, transcripts, encoder=encoder, seed=seed)
    by_gender, eer_mean, fairness = privacy_metrics(sc.trials, n_boot=n_boot, seed=seed)
    return ContentPrivacyResult(encoder=sc.encoder.name, transcripts=source, train=str(train.path),
                                enroll=str(enroll.path), trials=[str(td.path) for td in tds], by_gender=by_gender,
                                eer_mean=eer_mean, n_train=sc.n_train, n_empty=sc.n_empty, missing=sc.missing,
                                fairness=fairness)


@dataclass(frozen=True)
class ContentPrivacySettings:
    """C-EER on one split from ``transcripts`` (``reference`` or an ASR spec) with a trained ``encoder`` kind."""

    transcripts: str
    split: str
    encoder: str
    n_boot: int
    seed: int


class ContentPrivacyEvaluator(Evaluator):
    """Content attack on a system: text encoder trained on its training set's transcripts, C-EER on a split.

    Enrollment and trials are the system's own sets (anonymized for an
    anonymized system); with ASR transcripts the training set is transcribed
    from the system's (anonymized) training audio too.
    """

    kind = "content"
    Settings = ContentPrivacySettings

    @classmethod
    def plan(cls, run: RunSettings, options) -> list[Evaluator]:
        return [cls(ContentPrivacySettings(source, split, "tfidf", run.n_boot, run.seed))
                for split in run.splits for source in (REFERENCE, run.asr)]

    @property
    def slot(self) -> tuple[str, ...]:
        return (self.settings.transcripts, self.settings.split)

    def applies(self, data: SystemData) -> bool:
        return layout.TRAIN in data.sets

    def inputs(self, data: SystemData) -> dict[str, Path]:
        enroll, trial_f, trial_m = layout.split_sets(self.settings.split)
        return {"train": data.sets[layout.TRAIN], "enroll": data.sets[enroll], "trials_f": data.sets[trial_f],
                "trials_m": data.sets[trial_m]}

    def models(self, data: SystemData) -> dict[str, str]:
        return {} if self.settings.transcripts == REFERENCE else {"asr": self.settings.transcripts}

    @classmethod
    def columns(cls, results) -> list[Column]:
        """``c_eer``: the mean C-EER on the primary split from the run's ASR transcripts, ``c_eer_reference``
        from the reference text (both only where the content attack ran)."""
        def c_eer(source: str | None):
            def value(record, results) -> float | None:
                res = record.get(cls.kind, source or results.settings.asr, results.settings.primary.split)
                return res.eer_mean if res else None
            return value

        return [Column("c_eer", c_eer(None), header="C-EER (ASR)", omit_missing=True),
                Column("c_eer_reference", c_eer(REFERENCE), header="C-EER (reference text)", omit_missing=True)]

    @classmethod
    def section(cls, results, page) -> tuple[str, str] | None:
        """How far each system moved content linkage (C-EER from ASR transcripts) from the original's."""
        c_eer = cls.columns(results)[0]
        systems = results.systems.items()
        original = next((c_eer.value(record, results) for _, record in systems if record.method is None), None)
        items = "".join(f"<li>{html.escape(t)}</li>" for name, record in systems if record.method is not None
                        and (t := content_shift_sentence(name, c_eer.value(record, results), original)))
        return ("Content privacy", f"<p>How much each system moved content linkage (C-EER):</p><ul>{items}</ul>"
                ) if items else None

    def run(self, data: SystemData, env: Env) -> ContentPrivacyResult:
        s = self.settings
        dirs = self.inputs(data)
        if s.transcripts == REFERENCE:
            transcripts, source = reference_transcripts, REFERENCE
        else:
            from voxanon.models.asr import load_asr

            asr = env.model(s.transcripts, load_asr)
            transcripts, source = asr_transcriber(asr, env.cache_dir / "asr", quiet=env.quiet), asr.name
        return evaluate_content_privacy(dirs["train"], dirs["enroll"], [dirs["trials_f"], dirs["trials_m"]],
                                        transcripts, source, encoder=s.encoder, n_boot=s.n_boot, seed=s.seed)


def content_shift_sentence(system: str, c_eer: float | None, original: float | None) -> str | None:
    """One sentence: how far ``system``'s C-EER (ASR transcripts) moved from the original's (None: either is
    missing)."""
    if c_eer is None or original is None:
        return None
    d = c_eer - original
    return (f"{system}: C-EER {c_eer:.1f} %, {abs(d):.1f} points {'above' if d >= 0 else 'below'} "
            f"the original's {original:.1f} %.")
