"""A corpus of multi-speaker conversations built from a corpus's voices, with reference RTTM and transcripts.

Source: a corpus built by ``voxanon data synth`` (its dev and test speakers:
the ``*_enrolls`` and ``*_trials_*`` sets, voices no attacker trained on) and
its real recorded clips (``data/real``). Each conversation has two to four
speakers, each speaker in one conversation only, taking turns (round robin)
with pauses; conversations cycle through the overlap ratios (the fraction of
the speech time where two talk; 0, 10 and 20 % by default): a seeded half of
the turn changes overlap, by the same share of the shorter turn, solved for
the ratio. Every turn is a source utterance at the same active-speech level.
Per speaker, ``enroll_per_speaker`` utterances are held out of every
conversation as enrollment. Speakers keep their corpus ids. Every choice is a
hash of the seed and what it is for.

Layout under the output folder (names in :mod:`voxanon.data.conversations`)::

    wav/conversations/<rec>.wav        16 kHz mono recordings
    wav/enrolls/<spk>/<utt>.wav        held-out single-speaker utterances
    data/conversations/                wav.scp, utt2dur (one line a recording), reference.rttm (who spoke when),
                                       reference.stm (each turn's words: <rec> 1 <spk> <start> <end> <words>)
    data/enrolls/                      wav.scp, utt2spk, spk2gender, text, utt2dur
    conversations.json                 settings, source, per recording its speakers and achieved overlap
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from voxanon.atomic import write_text
from voxanon.audio.io import load_audio, resample, write_wav
from voxanon.audio.level import set_level
from voxanon.data import layout
from voxanon.data.conversations import CONVERSATIONS, DESCRIPTION, ENROLLS, RTTM, STM
from voxanon.data.kaldi import DataDir, read_data_dir, write_data_dir
from voxanon.data.rttm import write_rttm
from voxanon.data.stm import Segment, write_stm
from voxanon.errors import ConfigError, DataError
from voxanon.jobs.corpus.render import REFERENCE_RMS
from voxanon.jobs.corpus.seeding import unit
from voxanon.jobs.corpus.sets import SAMPLE_RATE
from voxanon.progress import Progress

#: silence before the first and after the last turn (s)
EDGE_S = 0.5
#: the most a turn change overlaps, as a share of the shorter turn (no three people talk at once)
MAX_OVERLAP_SHARE = 0.5


@dataclass(frozen=True)
class ConversationSettings:
    """How many conversations, of how many speakers, how much overlap and held-out enrollment."""

    conversations: int = 12
    overlaps: tuple[float, ...] = (0.0, 0.1, 0.2)
    min_speakers: int = 2
    max_speakers: int = 4
    turns_per_speaker: int = 3
    enroll_per_speaker: int = 2
    min_duration: float = 1.0
    pause: tuple[float, float] = (0.2, 0.8)
    seed: int = 0

    def check(self) -> None:
        """ConfigError naming the first setting out of range."""
        if self.conversations < 1:
            raise ConfigError(f"conversations must be >= 1, not {self.conversations}")
        if not 2 <= self.min_speakers <= self.max_speakers:
            raise ConfigError(f"speakers per conversation: need 2 <= min ({self.min_speakers}) <= max "
                              f"({self.max_speakers})")
        if not self.overlaps or any(not 0 <= o < 1 for o in self.overlaps):
            raise ConfigError(f"overlap ratios must be in [0, 1), not {self.overlaps}")
        if self.turns_per_speaker < 1 or self.enroll_per_speaker < 1:
            raise ConfigError("turns and enrollment utterances per speaker must be >= 1")


@dataclass(frozen=True)
class SourceUtt:
    """One single-speaker utterance of the source corpus."""

    utt: str
    speaker: str
    wav: str
    text: str
    duration: float


@dataclass(frozen=True)
class PlannedTurn:
    """A source utterance placed in a conversation."""

    source: SourceUtt
    start: float

    @property
    def end(self) -> float:
        return self.start + self.source.duration


@dataclass(frozen=True)
class Conversation:
    """One planned recording: its turns, the overlap ratio asked for and the one reached."""

    recording: str
    speakers: tuple[str, ...]
    turns: tuple[PlannedTurn, ...]
    overlap_target: float
    overlap: float

    @property
    def duration(self) -> float:
        return max(t.end for t in self.turns) + EDGE_S


def source_sets(corpus: Path) -> list[Path]:
    """The data directories a conversation corpus draws on: dev and test sets, and ``real`` when present."""
    names = [n for split in layout.SPLITS for n in layout.split_sets(split)] + [layout.REAL]
    found = [corpus / "data" / n for n in names if (corpus / "data" / n / "wav.scp").is_file()]
    if not found:
        raise DataError(f"{corpus}: no data/dev_enrolls, data/test_trials_f ... data/real; give a corpus built by "
                        "`voxanon data synth`")
    return found


def read_sources(dirs: list[Path]) -> tuple[dict[str, list[SourceUtt]], dict[str, str]]:
    """Every speaker's utterances (with a transcript and a duration) and every speaker's gender."""
    by_speaker: dict[str, dict[str, SourceUtt]] = {}
    genders: dict[str, str] = {}
    for d in dirs:
        data = read_data_dir(d)
        for utt, spk in data.utt2spk.items():
            if utt not in data.utt2dur or not data.text.get(utt, "").strip():
                raise DataError(f"{d}: utterance {utt!r} needs a duration (utt2dur) and words (text)")
            by_speaker.setdefault(spk, {})[utt] = SourceUtt(utt, spk, data.wav_scp[utt], data.text[utt],
                                                            float(data.utt2dur[utt]))
            genders[spk] = data.spk2gender[spk]
    return {s: sorted(u.values(), key=lambda x: x.utt) for s, u in sorted(by_speaker.items())}, genders


def split_speaker(utts: list[SourceUtt], s: ConversationSettings) -> tuple[list[SourceUtt], list[SourceUtt]] | None:
    """A speaker's held-out enrollment and conversation utterances (seeded), or None with too few long ones."""
    usable = sorted((u for u in utts if u.duration >= s.min_duration), key=lambda u: unit(s.seed, "utt", u.utt))
    if len(usable) <= s.enroll_per_speaker:
        return None
    return usable[:s.enroll_per_speaker], usable[s.enroll_per_speaker:s.enroll_per_speaker + s.turns_per_speaker]


def _round_robin(turns: dict[str, list[SourceUtt]]) -> list[SourceUtt]:
    order, k = [], 0
    while any(k < len(t) for t in turns.values()):
        order += [t[k] for t in turns.values() if k < len(t)]
        k += 1
    return order


def place_turns(recording: str, utts: list[SourceUtt], overlap: float, s: ConversationSettings) -> Conversation:
    """Start times of ``utts`` (in order): pauses between turns, a seeded half of the changes of speaker
    overlapping by one share of the shorter turn, solved so that overlapped time / speech time is ``overlap`` (as far as
    :data:`MAX_OVERLAP_SHARE` allows)."""
    shorter = [min(a.duration, b.duration) for a, b in zip(utts, utts[1:])]
    changes = [i for i in range(len(utts) - 1) if utts[i].speaker != utts[i + 1].speaker]  # nobody overlaps self
    overlapping = set(sorted(changes, key=lambda i: unit(s.seed, recording, "overlap", str(i)))
                      [:math.ceil(len(changes) / 2) if overlap > 0 else 0])
    wanted = overlap * sum(u.duration for u in utts) / (1 + overlap)  # overlapped seconds for the ratio
    room = sum(shorter[i] for i in overlapping)
    share = min(MAX_OVERLAP_SHARE, wanted / room) if room else 0.0
    start, placed = EDGE_S, []
    for i, u in enumerate(utts):
        placed.append(PlannedTurn(u, round(start, 3)))
        if i in overlapping:
            start = start + u.duration - share * shorter[i]
        else:
            lo, hi = s.pause
            start = start + u.duration + lo + (hi - lo) * unit(s.seed, recording, "pause", str(i))
    achieved = overlap_ratio(placed)
    return Conversation(recording, tuple(dict.fromkeys(u.speaker for u in utts)), tuple(placed), overlap, achieved)


def overlap_ratio(turns: list[PlannedTurn]) -> float:
    """Time where two or more talk over time where anyone talks (10 ms resolution)."""
    end = max(t.end for t in turns)
    grid = np.zeros(int(math.ceil(end * 100)) + 1, dtype=int)
    for t in turns:
        grid[int(round(t.start * 100)):int(round(t.end * 100))] += 1
    speech = np.count_nonzero(grid)
    return float(np.count_nonzero(grid >= 2) / speech) if speech else 0.0


def plan_conversations(speakers: dict[str, list[SourceUtt]], s: ConversationSettings
                       ) -> tuple[list[Conversation], dict[str, list[SourceUtt]]]:
    """The conversations and every conversation speaker's held-out enrollment utterances."""
    s.check()
    split = {spk: parts for spk, utts in speakers.items() if (parts := split_speaker(utts, s)) is not None}
    order = sorted(split, key=lambda spk: unit(s.seed, "speaker", spk))
    conversations, enroll, k = [], {}, 0
    for i in range(s.conversations):
        n = s.min_speakers + int(unit(s.seed, "speakers", str(i)) * (s.max_speakers - s.min_speakers + 1))
        if k + n > len(order):
            raise DataError(f"{s.conversations} conversations need more speakers: only {len(order)} have more than "
                            f"{s.enroll_per_speaker} utterances of at least {s.min_duration} s; ask for fewer "
                            "conversations or speakers, or build a larger corpus")
        chosen, k = order[k:k + n], k + n
        overlap = s.overlaps[i % len(s.overlaps)]
        recording = f"conv{i:03d}-{n}spk-ov{round(overlap * 100):02d}"
        conversations.append(place_turns(recording, _round_robin({spk: split[spk][1] for spk in chosen}), overlap, s))
        enroll.update({spk: split[spk][0] for spk in chosen})
    return conversations, enroll


def _leveled(wav_entry: str) -> np.ndarray:
    wav, sr = load_audio(wav_entry)
    return set_level(resample(wav, sr, SAMPLE_RATE), SAMPLE_RATE, REFERENCE_RMS)


def mix(conversation: Conversation) -> np.ndarray:
    """The recording: every turn at its start, summed (scaled down as a whole if a peak would clip)."""
    out = np.zeros(int(round(conversation.duration * SAMPLE_RATE)), dtype=np.float32)
    for t in conversation.turns:
        wav = _leveled(t.source.wav)
        at = int(round(t.start * SAMPLE_RATE))
        out[at:at + len(wav)] += wav[:len(out) - at]
    peak = float(np.max(np.abs(out)))
    return out / peak * 0.99 if peak > 0.99 else out


def segments_of(conversation: Conversation) -> list[Segment]:
    """The reference turns with their words."""
    return [Segment(conversation.recording, t.start, round(t.end, 3), t.source.speaker, t.source.text)
            for t in conversation.turns]


def build_conversations(corpus: str | Path, out: str | Path, settings: ConversationSettings = ConversationSettings(),
                        *, quiet: bool = False) -> dict:
    """Build the conversation corpus of ``corpus`` under ``out`` (layout in the module docstring); return its
    description (also written to ``conversations.json``)."""
    corpus, out = Path(corpus).resolve(), Path(out).resolve()
    speakers, genders = read_sources(source_sets(corpus))
    conversations, enroll = plan_conversations(speakers, settings)
    progress = Progress(len(conversations) + len(enroll), "mixing", quiet=quiet)
    recordings = DataDir()
    for c in conversations:
        path = out / "wav" / CONVERSATIONS / f"{c.recording}.wav"
        wav = mix(c)
        write_wav(path, wav, SAMPLE_RATE)
        recordings.wav_scp[c.recording] = str(path)
        recordings.utt2dur[c.recording] = f"{len(wav) / SAMPLE_RATE:.3f}"
        progress.update(audio_seconds=len(wav) / SAMPLE_RATE)
    enrolls = DataDir()
    for spk, utts in sorted(enroll.items()):
        for u in utts:
            path = out / "wav" / ENROLLS / spk / f"{u.utt}.wav"
            wav = _leveled(u.wav)
            write_wav(path, wav, SAMPLE_RATE)
            enrolls.wav_scp[u.utt], enrolls.utt2spk[u.utt], enrolls.text[u.utt] = str(path), spk, u.text
            enrolls.utt2dur[u.utt] = f"{len(wav) / SAMPLE_RATE:.3f}"
        enrolls.spk2gender[spk] = genders[spk]
        progress.update()
    progress.close()
    conv_dir = write_data_dir(recordings, out / "data" / CONVERSATIONS)
    write_rttm(conv_dir / RTTM, [t.turn for c in conversations for t in segments_of(c)])
    write_stm(conv_dir / STM, [t for c in conversations for t in segments_of(c)])
    write_data_dir(enrolls, out / "data" / ENROLLS)
    description = {
        "source": str(corpus), "settings": asdict(settings), "sample_rate": SAMPLE_RATE,
        "overlap": "time where two or more talk over time where anyone talks",
        "recordings": {c.recording: {"speakers": {spk: genders[spk] for spk in c.speakers}, "turns": len(c.turns),
                                     "duration": round(c.duration, 3), "overlap_target": c.overlap_target,
                                     "overlap": round(c.overlap, 4)} for c in conversations},
    }
    write_text(out / DESCRIPTION, json.dumps(description, indent=1) + "\n")
    return description
