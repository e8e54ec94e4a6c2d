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
#: the VPC ranking metric (rung c of the attacker ladder); reports show it beside the strongest attacker
PRIMARY_SCENARIO = AA_SEMI

#: rungs (a) and (b) of the semi-informed attacker ladder (rung c is AA-semi); run by the benchmark only.
#: Rung (b) is a pretrained encoder fine-tuned on anonymized speech: GE2E, or the VoiceFilter d-vector
AA_BACKEND, AA_FINETUNED, AA_FINETUNED_DVECTOR = "AA-backend", "AA-finetuned", "AA-finetuned-dvector"
RUNG_TITLES = {AA_BACKEND: "AA semi-informed (a): GE2E + LDA/PLDA back-end",
               AA_FINETUNED: "AA semi-informed (b): fine-tuned GE2E",
               AA_FINETUNED_DVECTOR: "AA semi-informed (b): fine-tuned d-vector"}
#: every attacker by how much it knows; on equal EER the one that knows less is named the strongest
ATTACKER_ORDER = (OO, OA, AA_LAZY, AA_BACKEND, AA_FINETUNED, AA_FINETUNED_DVECTOR, AA_SEMI)


def applicable(anonymized: bool, retrained: bool) -> list[str]:
    """The scenarios that data and attackers at hand allow: those on anonymized speech only with it, AA-semi
    only with a retrained attacker (what ``voxanon evaluate privacy`` runs when no scenario is named)."""
    return [name for name, sc in SCENARIOS.items()
            if (anonymized or not sc.needs_anonymized) and (retrained or sc.attacker == "pretrained")]


def title(name: str) -> str:
    """Readable name of an attack scenario or ladder rung."""
    return SCENARIOS[name].title if name in SCENARIOS else RUNG_TITLES.get(name, name)


def strongest_attacker(eers: dict[str, float | None]) -> tuple[str, float] | None:
    """The attacker with the lowest EER among those that ran (``None`` values did not run).

    Ties (exactly equal EERs) go to the attacker that knows less, in
    :data:`ATTACKER_ORDER` (the cheaper attack already reaches that EER);
    names outside that order come after it, alphabetically. None when no
    attacker ran.
    """
    ran = [(eer, ATTACKER_ORDER.index(n) if n in ATTACKER_ORDER else len(ATTACKER_ORDER), n)
           for n, eer in eers.items() if eer is not None]
    if not ran:
        return None
    eer, _, name = min(ran)
    return name, eer


def overstatement(eers: dict[str, float | None]) -> dict[str, float]:
    """How many EER points each weaker attacker overstated privacy, against the strongest (in ladder order)."""
    best = strongest_attacker(eers)
    if best is None:
        return {}
    order = sorted((n for n, e in eers.items() if e is not None and n != best[0]),
                   key=lambda n: (ATTACKER_ORDER.index(n) if n in ATTACKER_ORDER else len(ATTACKER_ORDER), n))
    return {n: eers[n] - best[1] for n in order}
