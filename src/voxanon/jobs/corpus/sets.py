"""Set construction: which speaker says which sentence how, and the VPC data directories.

Sets (per gender, from disjoint speakers):

- ``dev`` / ``test``: ``speakers`` speakers, ``enrolled`` of them enrolled.
  An enrolled speaker has ``n_enroll`` enrollment utterances and ``n_trial``
  trial utterances (different sentences); the others only ``n_trial`` trial
  utterances and appear only as impostors. As in the VPC, ``<set>_enrolls``
  holds the enrollment utterances of both genders, ``<set>_trials_f`` /
  ``<set>_trials_m`` the trial utterances of one gender with a ``trials``
  file pairing every enrolled speaker of that gender with every trial
  utterance of that gender (target when the utterance is the speaker's).
- ``train``: the attacker's training set, ``train_speakers`` per gender.
- ``emo``: ``emo_speakers`` per gender; each says ``emo_sentences`` sentences
  in each of four acted styles. Folds mimic IEMOCAP's sessions: fold k holds
  the k-th female and the k-th male speaker (cycling over 5 folds when there
  are more than 5 per gender), so each fold has one speaker of each gender
  and every class in equal numbers.

With topics (``voxanon data synth --topics``), every dev, test and train
speaker reads only sentences of one topic, as a LibriSpeech reader reads one
book: topics are dealt evenly over each set's speakers of each gender, so
what is said identifies a speaker as far as its topic does (content privacy,
C-EER); the emo set keeps the general sentences.

Every per-utterance choice (sentences, rate jitter, topics) is a hash of the
seed and the utterance or speaker id, never of processing order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from voxanon.data import layout
from voxanon.data.kaldi import DataDir, Trial
from voxanon.data.sentences import Sentence
from voxanon.errors import DataError
from voxanon.jobs.corpus.seeding import unit
from voxanon.jobs.corpus.voices import BaseVoice, Speaker, speaker_pool

SAMPLE_RATE = 16000
N_FOLDS = 5
#: acted styles: label -> (rate, pitch, pitch_range, volume) factors
EMOTIONS = {
    "neu": (1.0, 1.0, 1.0, 1.0),
    "sad": (0.8, 0.9, 0.6, 0.55),   # slower, lower, flatter, quieter
    "ang": (1.15, 1.06, 1.5, 1.6),  # faster, louder, slightly higher, more range
    "hap": (1.1, 1.15, 1.6, 1.15),  # higher, more range, a little faster and louder
}
#: per-utterance speaking-rate jitter (+- half of this)
RATE_JITTER = 0.08


class CorpusPlanError(DataError):
    """The installed voices cannot supply the requested corpus size."""


@dataclass(frozen=True)
class SizeSpec:
    """Corpus dimensions (speaker counts are per gender)."""

    name: str
    speakers: int = 8
    enrolled: int = 6
    n_enroll: int = 3
    n_trial: int = 3
    train_speakers: int = 8
    train_utts: int = 6
    emo_speakers: int = 5
    emo_sentences: int = 2
    min_words: int = 4
    max_words: int = 8


#: sizes of the formant corpus (Debian TTS voices x vocal-tract warps)
FORMANT_SIZES = {
    "small": SizeSpec("small", train_utts=10),
    "default": SizeSpec("default", speakers=20, enrolled=15, n_enroll=8, n_trial=8, train_speakers=30,
                        train_utts=20, emo_speakers=5, emo_sentences=8, min_words=5, max_words=13),
    "large": SizeSpec("large", speakers=40, enrolled=30, n_enroll=15, n_trial=15, train_speakers=100,
                      train_utts=30, emo_speakers=10, emo_sentences=12, min_words=4, max_words=13),
}
#: sizes of the Kokoro corpus; "default" has the VPC's dev/test shape (>= 20 f and 20 m speakers); its attackers
#: train on 50 speakers x 20 utterances, "small"'s on 20 x 10: utterances per speaker, not speakers, is what
#: strengthens them (docs/experiments/attackers.md); capacity: 45 evaluation speakers per gender,
#: 136 male training speakers
KOKORO_SIZES = {
    "tiny": SizeSpec("tiny", speakers=2, enrolled=1, n_enroll=1, n_trial=1, train_speakers=1, train_utts=1,
                     emo_speakers=1, emo_sentences=1, min_words=4, max_words=5),
    "small": SizeSpec("small", speakers=10, enrolled=8, n_enroll=2, n_trial=3, train_speakers=10, train_utts=10,
                      emo_speakers=5, emo_sentences=1, min_words=4, max_words=8),
    "default": SizeSpec("default", speakers=20, enrolled=15, n_enroll=5, n_trial=5, train_speakers=25,
                        train_utts=20, emo_speakers=5, emo_sentences=4, min_words=4, max_words=11),
    "large": SizeSpec("large", speakers=22, enrolled=20, n_enroll=10, n_trial=10, train_speakers=130,
                      train_utts=10, emo_speakers=5, emo_sentences=12, min_words=4, max_words=13),
}
SIZES = {"kokoro": KOKORO_SIZES, "formant": FORMANT_SIZES}


@dataclass(frozen=True)
class UttJob:
    """Everything needed to render one utterance (picklable, order-free)."""

    utt: str
    spk: str
    set: str
    engine: str
    voice: str
    text: str
    transcript: str
    warp: float
    rate: float
    pitch: float
    pitch_range: float = 1.0
    volume: float = 1.0
    emo: str = ""
    language: str = "en"  # the language the text is read in

    @property
    def relpath(self) -> str:
        """Path of the wav under the corpus root."""
        return f"wav/{self.set}/{self.spk}/{self.utt}.wav"


@dataclass
class Plan:
    """The corpus as planned: speakers per set, jobs, enrollment and trial utterances."""

    spec: SizeSpec
    seed: int
    speakers: dict[str, list[Speaker]] = field(default_factory=dict)
    jobs: list[UttJob] = field(default_factory=list)
    enroll_utts: dict[str, list[str]] = field(default_factory=dict)   # set -> utts
    trial_utts: dict[str, list[str]] = field(default_factory=dict)    # set -> utts
    enrolled: dict[str, list[str]] = field(default_factory=dict)      # set -> speakers
    topics: dict[str, str] = field(default_factory=dict)              # speaker -> topic (topic corpora only)
    language: str = "en"                                              # the language every sentence is read in


def speaker_needs(spec: SizeSpec) -> dict[str, int]:
    """Speakers per set and gender."""
    return {"dev": spec.speakers, "test": spec.speakers, "train": spec.train_speakers, "emo": spec.emo_speakers}


def assign_formant_speakers(voices: list[BaseVoice], spec: SizeSpec, seed: int) -> dict[str, list[Speaker]]:
    """Deal each gender's formant speaker pool over the sets, most-needing set first."""
    need = speaker_needs(spec)
    out: dict[str, list[Speaker]] = {name: [] for name in need}
    for gender in ("f", "m"):
        pool = speaker_pool(voices, gender, seed)
        total = sum(need.values())
        if len(pool) < total:
            raise CorpusPlanError(
                f"size {spec.name!r} needs {total} {gender} speakers, the installed voices give {len(pool)}: "
                "install espeak-ng-data / festvox-* voices or choose a smaller size")
        got = dict.fromkeys(need, 0)
        for spk in pool[:total]:
            name = max(need, key=lambda s: ((need[s] - got[s]) / max(need[s], 1), -list(need).index(s)))
            got[name] += 1
            out[name].append(spk)
    return out


def assign_topics(speakers: dict[str, list[Speaker]], topics: list[str], seed: int) -> dict[str, str]:
    """Deal ``topics`` evenly over the dev, test and train speakers of each gender (speakers ranked by hash)."""
    out: dict[str, str] = {}
    for set_name in ("dev", "test", "train"):
        for gender in ("f", "m"):
            ranked = sorted((s.spk for s in speakers[set_name] if s.gender == gender),
                            key=lambda spk: unit(seed, "topic", set_name, spk))
            start = int(unit(seed, "topic-offset", set_name, gender) * len(topics))
            out.update({spk: topics[(start + i) % len(topics)] for i, spk in enumerate(ranked)})
    return out


def _sentences_for(sentences: list[Sentence], spec: SizeSpec, seed: int, set_name: str, spk: str,
                   k: int, topic: str = "") -> list[Sentence]:
    """``k`` distinct sentences for a speaker (from its ``topic``'s pool if it has one), chosen by hash."""
    pool = [s for s in sentences if spec.min_words <= s.words <= spec.max_words]
    if len(pool) < k:
        where = f"topic {topic!r} has" if topic else "there are"
        raise CorpusPlanError(f"size {spec.name!r}: {where} only {len(pool)} sentences of {spec.min_words}-"
                              f"{spec.max_words} words, {spk} needs {k}")
    return sorted(pool, key=lambda s: unit(seed, "sentence", set_name, spk, s.transcript))[:k]


def _job(seed: int, spk: Speaker, set_name: str, utt: str, sentence: Sentence, emo: str = "",
         language: str = "en") -> UttJob:
    rate, pitch, prange, volume = EMOTIONS[emo] if emo else (1.0, 1.0, 1.0, 1.0)
    jitter = 1.0 + RATE_JITTER * (unit(seed, "rate", utt) - 0.5)
    return UttJob(utt=utt, spk=spk.spk, set=set_name, engine=spk.base.engine, voice=spk.base.voice,
                  text=sentence.text, transcript=sentence.transcript, warp=spk.warp,
                  rate=round(rate * jitter * spk.rate / spk.warp, 6), pitch=round(pitch * spk.pitch, 6),
                  pitch_range=prange, volume=volume, emo=emo, language=language)


def plan_corpus(speakers: dict[str, list[Speaker]], sentences: list[Sentence], spec: SizeSpec,
                seed: int, topics: dict[str, list[Sentence]] | None = None, language: str = "en") -> Plan:
    """Plan every utterance of the synthetic corpus from its speakers per set (no audio is made here).

    With ``topics`` (topic -> sentences), dev, test and train speakers read from their topic only. Every
    sentence is read in ``language`` (the sentences' own).
    """
    plan = Plan(spec=spec, seed=seed, speakers=speakers, language=language)
    if topics:
        plan.topics = assign_topics(speakers, sorted(topics), seed)

    def pool(spk: Speaker) -> list[Sentence]:
        return topics[plan.topics[spk.spk]] if topics else sentences

    for set_name in ("dev", "test"):
        plan.enroll_utts[set_name], plan.trial_utts[set_name], plan.enrolled[set_name] = [], [], []
        for gender in ("f", "m"):
            spks = [s for s in plan.speakers[set_name] if s.gender == gender]
            ranked = sorted(spks, key=lambda s: unit(seed, "enroll", set_name, s.spk))
            plan.enrolled[set_name] += [s.spk for s in ranked[:spec.enrolled]]
        for spk in plan.speakers[set_name]:
            is_enrolled = spk.spk in plan.enrolled[set_name]
            n_enroll = spec.n_enroll if is_enrolled else 0
            chosen = _sentences_for(pool(spk), spec, seed, set_name, spk.spk, n_enroll + spec.n_trial,
                                    plan.topics.get(spk.spk, ""))
            for i, sentence in enumerate(chosen):
                job = _job(seed, spk, set_name, f"{spk.spk}-{set_name}-{i:03d}", sentence, language=language)
                plan.jobs.append(job)
                (plan.enroll_utts if i < n_enroll else plan.trial_utts)[set_name].append(job.utt)
    for spk in plan.speakers["train"]:
        chosen = _sentences_for(pool(spk), spec, seed, "train", spk.spk, spec.train_utts, plan.topics.get(spk.spk, ""))
        plan.jobs += [_job(seed, spk, "train", f"{spk.spk}-train-{i:03d}", s, language=language)
                      for i, s in enumerate(chosen)]
    for spk in plan.speakers["emo"]:
        chosen = _sentences_for(sentences, spec, seed, "emo", spk.spk, spec.emo_sentences)
        plan.jobs += [_job(seed, spk, "emo", f"{spk.spk}-emo-{emo}-{i:02d}", s, emo, language)
                      for emo in EMOTIONS for i, s in enumerate(chosen)]
    return plan


def _data_dir(jobs: list[UttJob], speakers: dict[str, Speaker], root: str, durations: dict[str, float]) -> DataDir:
    jobs = sorted(jobs, key=lambda j: j.utt)
    data = DataDir(
        wav_scp={j.utt: f"{root}/{j.relpath}" for j in jobs},
        utt2spk={j.utt: j.spk for j in jobs},
        text={j.utt: j.transcript for j in jobs},
        utt2dur={j.utt: f"{durations[j.utt]:.3f}" for j in jobs},
        utt2emo={j.utt: j.emo for j in jobs if j.emo},
    )
    data.spk2gender = {s: speakers[s].gender for s in sorted(set(data.utt2spk.values()))}
    return data


def vpc_trials(trial_data: DataDir, enrolled: list[str]) -> list[Trial]:
    """Every enrolled speaker of the trial set's gender x every trial utterance (VPC construction)."""
    genders = set(trial_data.spk2gender.values())
    models = sorted(s for s in enrolled if trial_data.spk2gender.get(s) in genders)
    return [Trial(spk, utt, trial_data.utt2spk[utt] == spk) for spk in models for utt in sorted(trial_data.utts)]


def data_dirs(plan: Plan, root: str, durations: dict[str, float]) -> dict[str, DataDir]:
    """The VPC-named data directories of a rendered plan (``root`` is the absolute corpus root)."""
    speakers = {s.spk: s for spks in plan.speakers.values() for s in spks}
    by_utt = {j.utt: j for j in plan.jobs}
    out: dict[str, DataDir] = {}
    for set_name in layout.SPLITS:
        enroll = [by_utt[u] for u in plan.enroll_utts[set_name]]
        out[layout.enrolls(set_name)] = _data_dir(enroll, speakers, root, durations)
        for gender in layout.GENDERS:
            trials = [by_utt[u] for u in plan.trial_utts[set_name] if speakers[by_utt[u].spk].gender == gender]
            data = _data_dir(trials, speakers, root, durations)
            data.trials = vpc_trials(data, plan.enrolled[set_name])
            out[layout.trials(set_name, gender)] = data
    out[layout.SYNTH_TRAIN] = _data_dir([j for j in plan.jobs if j.set == "train"], speakers, root, durations)
    emo = _data_dir([j for j in plan.jobs if j.set == "emo"], speakers, root, durations)
    for gender in ("f", "m"):
        spks = [s.spk for s in plan.speakers["emo"] if s.gender == gender]
        emo.spk2fold.update({spk: str(i % N_FOLDS + 1) for i, spk in enumerate(spks)})
    emo.spk2fold = dict(sorted(emo.spk2fold.items()))
    out[layout.SYNTH_EMO] = emo
    return out
