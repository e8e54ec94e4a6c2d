"""Recording conditions as an axis of the benchmark: the same systems and attackers under a telephone line,
noise or a reverberant room (:mod:`voxanon.dsp.conditions`).

A condition is applied in one of two places:

* ``input``: to the corpus before anonymization (every set the run reads, the
  attackers' training and dev sets included): does the anonymizer still work on
  speech recorded that way? Every system anonymizes the degraded corpus; the
  attackers enroll, train and are scored on it, and the original row is the
  degraded corpus itself.
* ``output``: to each system's anonymized sets before the attacker and the
  recogniser: does the channel between the anonymizer and the attacker change
  privacy? The informed attackers anonymize their enrollment and training data
  with the system and so get them through the channel too; the ignorant
  attacker enrolls on clean original speech. The original row is the degraded
  corpus, as for ``input`` (original speech through the channel), and is
  computed once for both.

Each degraded set is written by the corpus runner (:func:`condition_set`:
resumable, one generator per utterance from ``sha256(f"{seed}/condition/<name>/<utt>")``)
into ``OUT/conditions/<condition>/<source>/<set>-<content digest>``; a result file
``<utt>.json`` beside each output whose level was scaled down (or whose room
was drawn) says so. The evaluations under a condition are the privacy attacks
(every scenario and rung of the profile) and the WER (of the run's recogniser and
of any second one the profile names), each a stage cached like
the clean run's, so rerunning recomputes only what changed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from voxanon.anonymizers.base import Anonymizer, param
from voxanon.dsp.conditions import Condition, parse_condition
from voxanon.errors import ConfigError
from voxanon.evaluation.evaluator import PRIVACY, Column
from voxanon.jobs.benchmark.records import (
    BenchmarkResults,
    ConditionRun,
    Summary,
    summarize,
)

INPUT, OUTPUT = "input", "output"
#: where a condition can be applied, in report order
PLACES = (INPUT, OUTPUT)


@dataclass(frozen=True)
class ChannelConfig:
    condition: str = param("telephone", "recording condition (voxanon.dsp.conditions.parse_condition)")


class Channel(Anonymizer):
    """A recording condition in the anonymizer's shape, so the corpus runner applies it (never registered:
    it hides no speaker, it degrades the recording)."""

    name = "condition"
    Config = ChannelConfig

    def __init__(self, config: ChannelConfig | None = None, **params: Any) -> None:
        super().__init__(config, **params)
        self.condition = parse_condition(self.config.condition)
        self._report: dict[str, Any] | None = None

    def anonymize(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        out, gain, drawn = self.condition.apply(wav, sr, rng)
        self._report = None
        if gain < 1.0 or drawn:
            self._report = {"condition": self.condition.name, **drawn}
            if gain < 1.0:
                self._report["scaled_down_db"] = round(float(20 * np.log10(gain)), 2)
        return out, sr

    def report(self) -> dict[str, Any] | None:
        return self._report


def parse_conditions(text: str | list[str] | tuple[str, ...]) -> tuple[Condition, ...]:
    """Conditions from ``"telephone,noise10,reverb"`` (or a list of names), each once, in order; ConfigError for
    an unknown name or one whose library is not installed."""
    names = text.split(",") if isinstance(text, str) else list(text)
    out = [parse_condition(n) for n in names if n.strip()]
    if not out:
        raise ConfigError("no recording condition given: e.g. --conditions telephone,noise10,reverb600")
    for condition in out:
        condition.check()
    return tuple(dict.fromkeys(out))


def parse_places(text: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """``input``, ``output`` or both (``"input,output"``), in :data:`PLACES` order."""
    names = {n.strip() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()}
    unknown = sorted(names - set(PLACES))
    if unknown or not names:
        raise ConfigError(f"condition place(s) {', '.join(unknown) or '(none)'}: use input, output or both")
    return tuple(p for p in PLACES if p in names)


def condition_seed(seed: int, condition: Condition) -> str:
    """The seed of a condition's per-utterance generators: other draws than the anonymizers' for one utterance."""
    return f"{seed}/condition/{condition.name}"


def condition_set(condition: Condition, src: Path, dst: Path, *, seed: int, jobs: int | None,
                  quiet: bool) -> int:
    """Write ``src`` (a data directory) under ``condition`` into ``dst``; returns the failed utterance count."""
    from voxanon.jobs.runner.anonymize import anonymize_corpus

    summary = anonymize_corpus(src, dst, Channel(condition=condition.name), seed=condition_seed(seed, condition),
                               jobs=jobs, quiet=quiet)
    return summary.failed


def condition_summary(results: BenchmarkResults, run: ConditionRun) -> Summary:
    """The summary rows of ``run``: the clean run's columns, read from the condition's records."""
    return summarize(replace(results, systems=run.systems))


def condition_columns(summaries: list[Summary]) -> list[Column]:
    """The summary columns that have a value under some condition (privacy and WER), in summary order."""
    if not summaries:
        return []
    return [c for c in summaries[0].columns if c.csv
            and any(r[c.name] is not None for s in summaries for r in s.rows)]


def compared_columns(summary: Summary) -> list[Column]:
    """The columns set beside the clean run's under each condition: the privacy headline and every required
    utility measure of the ranking (the strongest attacker's EER, the WER)."""
    return [c for c in summary.columns if c.csv and c.rank and (c.rank.role == PRIVACY or c.rank.required)]


def condition_rows(results: BenchmarkResults, clean: Summary) -> list[dict[str, Any]]:
    """``conditions.csv``: one row per system, condition and place with its summary values and the change against
    the clean run (``d_eer``, ``d_wer``: condition minus clean, in points)."""
    runs = list(results.conditions)
    summaries = [condition_summary(results, run) for run in runs]
    columns = condition_columns(summaries)
    clean_rows = {r.system: r for r in clean.rows}
    out = []
    for run, summary in zip(runs, summaries):
        for r in summary.rows:
            row = {"system": r.system, "condition": run.name, "applied_to": run.applied_to}
            row.update((c.name, r[c.name]) for c in columns)
            base = clean_rows.get(r.system)
            for c in compared_columns(clean):
                now, before = r.values.get(c.name), base.values.get(c.name) if base else None
                row[f"d_{c.name}"] = now - before if now is not None and before is not None else None
            out.append(row)
    return out
