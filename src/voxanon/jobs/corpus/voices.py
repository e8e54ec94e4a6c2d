"""Synthetic speakers: Debian TTS voices multiplied by vocal-tract-length warps.

A *base voice* is an engine voice. Voices recorded from real people come
first: flite's CMU voices (``slt`` female; ``kal16``, ``awb``, ``rms`` male),
festival's ``cmu_us_slt_arctic_hts`` (female) and ``ked_diphone`` (male), the
MBROLA US voices through espeak-ng when installed; then espeak-ng's formant
voices: an accent (``en-us``, ``en-gb-x-rp``, ``en-gb-scotland``) with a
variant. flite ``kal`` (8 kHz) and festival ``kal_diphone`` repeat flite
``kal16``'s speaker and are left out.

A *speaker* is a base voice with a warp factor ``a``: the synthesized signal
is resampled as if recorded at ``a`` times its rate, which scales formants,
F0 and tempo by ``a`` (the tempo change is undone by asking the engine for
rate ``1/a``). Warps make speakers that a speaker encoder tells apart; pitch
alone does not. Gender comes from the base voice; the warps are kept on that
gender's side (female: 0.95 ... 1.10, male: 0.90 ... 1.05, never more than
5 % toward the other gender), so the label stays true. espeak-ng speakers
also get a pitch setting (0.92, 1.0 or 1.08, chosen from a hash of the id),
which costs nothing there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from voxanon.jobs.corpus.seeding import unit
from voxanon.models.tts import cli_engines as tts

#: warp factors per gender (see the module docstring)
WARPS = {"f": (0.95, 1.0, 1.05, 1.1), "m": (0.9, 0.95, 1.0, 1.05)}
ESPEAK_ACCENTS = ("en-us", "en-gb-x-rp", "en-gb-scotland")
ESPEAK_PITCHES = (0.92, 1.0, 1.08)
ESPEAK_VARIANTS = {
    "f": ("f1", "f2", "f3", "f4", "f5", "Alicia", "Andrea", "Annie", "aunty", "belinda", "linda", "steph",
          "steph2", "steph3", "anika", "grandma"),
    "m": ("m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "adam", "Alex", "Andy", "antonio", "benjamin",
          "boris", "caleb", "david", "Denis", "Diogo", "ed", "edward", "edward2", "Gene", "Gene2", "gustave",
          "Henrique", "Hugo", "iven", "iven2", "iven3", "iven4", "Jacky", "john", "Lee", "marcelo", "Marco",
          "Mario", "max", "Michael", "michel", "miguel", "Mike", "norbert", "pablo", "paul", "pedro", "quincy",
          "rob", "robert", "sandro", "shelby", "travis", "victor", "zac"),
}
#: voices recorded from real speakers: (engine, voice, gender, recorded speaker)
RECORDED_VOICES = (
    ("flite", "slt", "f", "CMU ARCTIC slt"),
    ("festival", "cmu_us_slt_arctic_hts", "f", "CMU ARCTIC slt"),
    ("espeak-ng", "mb-us1", "f", "MBROLA us1"),
    ("flite", "kal16", "m", "CMU kal"),
    ("flite", "awb", "m", "CMU ARCTIC awb"),
    ("flite", "rms", "m", "CMU ARCTIC rms"),
    ("festival", "ked_diphone", "m", "CMU ked"),
    ("espeak-ng", "mb-us2", "m", "MBROLA us2"),
    ("espeak-ng", "mb-us3", "m", "MBROLA us3"),
    ("espeak-ng", "mb-en1", "m", "MBROLA en1"),
)


@dataclass(frozen=True)
class BaseVoice:
    """One engine voice with its gender; ``recorded`` names the real speaker it derives from, if any."""

    engine: str
    voice: str
    gender: str
    recorded: str = ""

    @property
    def key(self) -> str:
        """Id-safe name, e.g. ``flite-slt`` or ``espeak-ng-en-us-f3``."""
        return re.sub(r"[^A-Za-z0-9]+", "-", f"{self.engine}-{self.voice}").strip("-")


@dataclass(frozen=True)
class Speaker:
    """A synthetic speaker: base voice, warp factor, pitch factor and habitual speaking rate."""

    spk: str
    base: BaseVoice
    warp: float
    pitch: float = 1.0
    rate: float = 1.0

    @property
    def gender(self) -> str:
        """``f`` or ``m``, from the base voice."""
        return self.base.gender

    @property
    def parents(self) -> list[str]:
        """Base voices the speaker is made of (a Kokoro mixture ``a*w+b*v`` names two packs)."""
        if self.base.engine == "kokoro":
            return [term.split("*")[0] for term in self.base.voice.split("+")]
        return [self.base.key]

    def to_dict(self) -> dict:
        """JSON-ready description."""
        return {"engine": self.base.engine, "voice": self.base.voice, "gender": self.gender,
                "parents": self.parents,
                "recorded_speaker": self.base.recorded or None, "warp": self.warp, "pitch": self.pitch,
                "rate": self.rate}


def _usable(engine: str, voice: str) -> bool:
    if not tts.engine_available(engine):
        return False
    if engine == "flite":
        return voice in tts.flite_voices()
    if engine == "festival":
        return voice in tts.festival_voices()
    if voice.startswith("mb-"):
        return tts.mbrola_voice_available(voice)
    return voice.split("+")[-1] in tts.espeak_variants() if "+" in voice else True


def base_voices() -> list[BaseVoice]:
    """Every usable base voice on this machine, recorded voices first."""
    out = [BaseVoice(e, v, g, r) for e, v, g, r in RECORDED_VOICES if _usable(e, v)]
    for gender, variants in ESPEAK_VARIANTS.items():
        out += [BaseVoice("espeak-ng", f"{accent}+{var}", gender) for var in variants
                for accent in ESPEAK_ACCENTS if _usable("espeak-ng", f"{accent}+{var}")]
    return out


def missing_voices() -> list[str]:
    """Recorded voices this machine lacks, each with the Debian package that provides it."""
    packages = {"flite": "flite", "festival": "festival + festvox-us-slt-hts / festvox-kdlpc16k",
                "espeak-ng": "mbrola + mbrola-<voice>"}
    return [f"{e} {v} ({packages[e]})" for e, v, _, _ in RECORDED_VOICES if not _usable(e, v)]


def speaker_pool(voices: list[BaseVoice], gender: str, seed: int) -> list[Speaker]:
    """All speakers of one gender in a seeded order that spreads base voices.

    Speakers of recorded voices come first, then those of espeak-ng's
    formant voices (in hashed order); each group is dealt round-robin over
    its base voices, warps in hashed order within a voice, so any prefix of
    the list uses as many different base voices as the group allows.
    """
    def speakers_of(base: BaseVoice) -> list[Speaker]:
        pitched = base.engine == "espeak-ng" and not base.voice.startswith("mb-")
        out = []
        for warp in WARPS[gender]:
            spk = f"{gender}-{base.key}-w{round(warp * 100):03d}"
            pitch = ESPEAK_PITCHES[int(unit(seed, "pitch", spk) * len(ESPEAK_PITCHES))] if pitched else 1.0
            out.append(Speaker(spk, base, warp, pitch))
        return sorted(out, key=lambda s: unit(seed, "warp", s.spk))

    mine = [v for v in voices if v.gender == gender]
    recorded = [v for v in mine if v.recorded]
    formant = sorted((v for v in mine if not v.recorded), key=lambda v: unit(seed, "voice", v.key))
    pool: list[Speaker] = []
    for group in (recorded, formant):
        queues = [speakers_of(v) for v in group]
        while any(queues):
            pool += [q.pop(0) for q in queues if q]
    return pool
