"""The VPC attack scenarios, defined once: which side is anonymized and which attacker model scores.

Imported by the privacy evaluation, the benchmark, its report and the CLI;
kept free of numpy so the CLI can list scenarios without loading anything.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scenario:
    """One attack: enrollment side, trial side (``orig`` / ``anon``) and attacker model kind."""

    name: str
    title: str
    enroll: str
    trials: str
    attacker: str  # "pretrained" or "retrained"
    flag: str  # the `voxanon evaluate privacy` option selecting it

    @property
    def needs_anonymized(self) -> bool:
        """Whether either side is anonymized speech."""
        return "anon" in (self.enroll, self.trials)


OO, OA, AA_LAZY, AA_SEMI = "OO", "OA", "AA-lazy", "AA-semi"
SCENARIOS: dict[str, Scenario] = {s.name: s for s in (
    Scenario(OO, "OO (no anonymization)", "orig", "orig", "pretrained", "oo"),
    Scenario(OA, "OA ignorant", "orig", "anon", "pretrained", "oa"),
    Scenario(AA_LAZY, "AA lazy-informed", "anon", "anon", "pretrained", "aa_lazy"),
    Scenario(AA_SEMI, "AA semi-informed", "anon", "anon", "retrained", "aa_semi"),
)}
#: the VPC ranking metric
PRIMARY_SCENARIO = AA_SEMI
