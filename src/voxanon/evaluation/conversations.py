"""Evaluation of anonymized conversations: per-speaker verification, diarization, cpWER and overlap leaks.

Given a conversation corpus (:mod:`voxanon.data.conversations`) and an
anonymized copy of its recordings (a data directory or folder with the same
recording ids, as long as the originals; or an ``anonymize`` callable that
makes one), on each side (original, anonymized):

- **speaker verification**: trials are the non-overlapped stretches of the
  reference turns (at least :data:`MIN_TRIAL_S`), cut from the recordings;
  every enrolled speaker of a gender against every trial of that gender
  (target when the stretch is theirs), EER per gender and averaged
  (:func:`voxanon.evaluation.privacy.run_scenarios`): OO on the original, OA
  (ignorant: original enrollment) and, with an anonymized enrollment, AA-lazy on
  the anonymized side, for each pretrained encoder; the strongest attacker
  (lowest EER on anonymized speech) leads;
- **diarization**: DER (collar, overlap scored) and speaker-count error of a
  diarizer (a callable ``diarize(wav, sr, *, recording, num_speakers=None) ->
  list[Turn]``) against the reference: are the speakers still told apart?
- **cpWER** of the ASR on the reference turns (the whole turn, overlap
  included), words attributed to the turn's speaker;
- **overlap leak**: the regions where two or more talk (at least
  :data:`MIN_OVERLAP_S`), embedded by each encoder, against every enrolled
  speaker's original enrollment centroid: mean cosine to the speakers talking
  there and to the others, and how often the closest centroid is one of those
  talking.

Results are a :class:`ConversationResult` (JSON) and CSV tables; every number
names its encoder, ASR or diarizer, and the settings are kept beside them.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from voxanon.atomic import write_text, write_texts
from voxanon.audio.io import load_audio, write_wav
from voxanon.data.conversations import CONVERSATIONS, ENROLLS, ConversationCorpus, read_conversation_corpus
from voxanon.data.kaldi import GENDERS, DataDir, Trial, read_data_dir, write_data_dir
from voxanon.data.rttm import Turn, write_rttm
from voxanon.data.stm import Segment
from voxanon.errors import ConfigError, DataError
from voxanon.evaluation.results import PrivacyResult, to_dict
from voxanon.evaluation.scenarios import AA_LAZY, OA, OO, strongest_attacker
from voxanon.metrics.cpwer import cpwer, speaker_texts
from voxanon.metrics.diarization import (
    DEFAULT_COLLAR,
    DiarizationErrors,
    corpus_diarization_errors,
    speaker_count_error,
)
from voxanon.progress import Progress

#: shortest non-overlapped stretch of a turn used as a verification trial (s)
MIN_TRIAL_S = 1.0
#: shortest overlapped region whose embedding is compared (s)
MIN_OVERLAP_S = 0.5
#: how far an anonymized recording's length may be from the original's (s)
DURATION_TOLERANCE_S = 0.1
ORIGINAL, ANONYMIZED = "original", "anonymized"

Diarizer = Callable[..., list[Turn]]
#: ``anonymize(wav, sr, key) -> (wav, sr)``: one recording or enrollment utterance (``key`` its id)
Anonymize = Callable[[np.ndarray, int, str], tuple[np.ndarray, int]]


def oracle_diarizer(reference: Mapping[str, list[Turn]]) -> Diarizer:
    """A diarizer that answers the reference turns (DER 0 whatever the audio: the floor of the other numbers)."""
    def diarize(wav: np.ndarray, sr: int, *, recording: str, num_speakers: int | None = None) -> list[Turn]:
        return list(reference[recording])
    return diarize


#: diarizer specs of :func:`load_diarizer`
DIARIZERS = ("oracle", "voxanon", "none")


def load_diarizer(spec: str, device: str = "cpu") -> Diarizer | None:
    """The diarizer named ``spec``: ``oracle`` (:func:`oracle_diarizer`, bound by :func:`evaluate_conversations`:
    None here), ``voxanon`` or ``voxanon:<encoder spec>`` (conversation mode's
    :func:`voxanon.evaluation.diarization.diarize`, with its own encoder or that one), ``none`` (no DER: None)."""
    kind, _, encoder = spec.partition(":")
    if kind in ("oracle", "none"):
        return None
    if kind != "voxanon":
        raise ConfigError(f"unknown diarizer {spec!r}; choose {', '.join(DIARIZERS)} (voxanon:ENCODER)")
    try:
        from voxanon.evaluation.diarization import diarize
    except ImportError:
        raise ConfigError("the voxanon diarizer comes with conversation mode, which this installation lacks; "
                          "use --diarizer oracle") from None
    if not encoder:
        return diarize
    from voxanon.models.speaker import load_encoder

    return functools.partial(diarize, encoder=load_encoder(encoder, device=device))


@dataclass(frozen=True)
class Diarization:
    """DER and speaker-count error of a diarizer on one side's recordings."""

    diarizer: str
    collar: float
    der: float
    missed: float
    false_alarm: float
    confusion: float
    reference_seconds: float
    count_error: float  # mean absolute speaker-count error
    count_exact: float  # share of recordings with the right number of speakers
    by_recording: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class CpWER:
    """cpWER (%) of the ASR on the reference-segmented turns."""

    asr: str
    normalization: str
    cpwer: float
    errors: int
    words: int
    by_recording: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class OverlapLeak:
    """The overlapped regions against the original enrollment centroids, with one encoder."""

    encoder: str
    regions: int
    seconds: float
    cosine_talking: float  # mean cosine to the centroids of the speakers talking in the region
    cosine_others: float  # mean cosine to every other enrolled speaker's centroid
    closest_is_talking: float  # share of regions whose closest centroid is one of the speakers talking


@dataclass(frozen=True)
class SideResult:
    """What one side (original or anonymized recordings) gives."""

    recordings: str
    diarization: Diarization | None = None
    cpwer: CpWER | None = None
    overlap: dict[str, OverlapLeak] = field(default_factory=dict)


@dataclass(frozen=True)
class ConversationResult:
    """The whole evaluation: attacks by name (``OA ge2e``), the strongest one, and each side."""

    corpus: str
    settings: dict
    attacks: dict[str, PrivacyResult]
    sides: dict[str, SideResult]
    strongest: str | None = None
    strongest_eer: float | None = None


# -- audio cuts ------------------------------------------------------------------------------------
def read_recordings(path: str | os.PathLike, original: DataDir) -> DataDir:
    """The anonymized recordings at ``path`` (a data directory, or a folder holding ``<recording>.wav``), one per
    original recording and as long; DataError naming the recording otherwise."""
    path = Path(path)
    if (path / "wav.scp").is_file():
        data = read_data_dir(path)
    elif path.is_dir():
        found = {p.stem: str(p) for p in sorted(path.rglob("*.wav"))}
        data = DataDir(wav_scp={r: found[r] for r in original.wav_scp if r in found}, path=path)
    else:
        raise DataError(f"{path}: no such folder; give the anonymized recordings (a data directory or a folder)")
    for rec in original.wav_scp:
        if rec not in data.wav_scp:
            raise DataError(f"{path}: recording {rec!r} is missing; anonymize every recording of {original.path}")
        wav, sr = load_audio(data.wav_scp[rec])
        ref, ref_sr = load_audio(original.wav_scp[rec])
        if abs(len(wav) / sr - len(ref) / ref_sr) > DURATION_TOLERANCE_S:
            raise DataError(f"{data.wav_scp[rec]}: recording {rec!r} lasts {len(wav) / sr:.2f} s, the original "
                            f"{len(ref) / ref_sr:.2f} s; the evaluation needs the timing kept")
    return data


def _spans_without(start: float, end: float, others: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """``[start, end)`` minus the ``others`` intervals."""
    pieces = [(start, end)]
    for a, b in others:
        pieces = [p for s, e in pieces for p in ((s, min(e, a)), (max(s, b), e)) if p[1] > p[0]]
    return pieces


def trial_pieces(segments: list[Segment], min_s: float = MIN_TRIAL_S) -> list[tuple[str, str, float, float]]:
    """``(id, speaker, start, end)`` of the stretches of each turn where nobody else talks, at least ``min_s``."""
    out = []
    for k, s in enumerate(segments):
        others = [(o.start, o.end) for o in segments if o.speaker != s.speaker]
        for j, (a, b) in enumerate(_spans_without(s.start, s.end, others)):
            if b - a >= min_s:
                out.append((f"{s.recording}-t{k:03d}-{j}", s.speaker, a, b))
    return out


def overlap_regions(segments: list[Segment], min_s: float = MIN_OVERLAP_S
                    ) -> list[tuple[str, tuple[str, ...], float, float]]:
    """``(id, speakers, start, end)`` of the stretches where two or more talk, at least ``min_s``."""
    points = sorted({t for s in segments for t in (s.start, s.end)})
    regions: list[tuple[tuple[str, ...], float, float]] = []
    for a, b in zip(points, points[1:]):
        talking = tuple(sorted({s.speaker for s in segments if s.start < b and s.end > a}))
        if len(talking) < 2:
            continue
        if regions and regions[-1][0] == talking and regions[-1][2] == a:
            regions[-1] = (talking, regions[-1][1], b)
        else:
            regions.append((talking, a, b))
    rec = segments[0].recording if segments else ""
    return [(f"{rec}-ov{k:03d}", spk, a, b) for k, (spk, a, b) in enumerate(regions) if b - a >= min_s]


def cut(recordings: DataDir, pieces: dict[str, list[tuple[str, str, float, float]]], out: Path,
        genders: Mapping[str, str] | None = None) -> DataDir:
    """Write each ``(id, speaker, start, end)`` piece of each recording as ``out/wav/<id>.wav``; the data directory
    (``utt2spk`` the piece's speaker, joined by ``+`` for several)."""
    data = DataDir(path=out)
    for rec, items in pieces.items():
        if not items:
            continue
        wav, sr = load_audio(recordings.wav_scp[rec])
        for utt, speaker, start, end in items:
            piece = wav[int(round(start * sr)):int(round(end * sr))]
            path = out / "wav" / f"{utt}.wav"
            if not path.is_file():
                write_wav(path, piece, sr)
            data.wav_scp[utt], data.utt2spk[utt] = str(path), speaker
            data.utt2dur[utt] = f"{len(piece) / sr:.3f}"
    if genders is not None:
        data.spk2gender = {s: genders[s] for s in sorted(set(data.utt2spk.values()))}
    write_data_dir(data, out)
    return data


def trial_dirs(trials: DataDir, enroll: DataDir, out: Path) -> list[Path]:
    """One trial list per gender: every enrolled speaker of the gender against every trial of that gender (a gender
    with fewer than two speakers has none: no non-target trials)."""
    paths = []
    for g in GENDERS:
        utts = [u for u in trials.utts if trials.gender_of_utt(u) == g]
        speakers = sorted(s for s, sg in enroll.spk2gender.items() if sg == g)
        if len(speakers) < 2 or not utts:
            continue
        sub = trials.subset(utts)
        sub.trials = [Trial(s, u, trials.utt2spk[u] == s) for s in speakers for u in utts]
        paths.append(write_data_dir(sub, out / f"trials_{g}"))
    return paths


# -- the parts ------------------------------------------------------------------------------------
def diarize_side(recordings: DataDir, reference: dict[str, list[Turn]], diarizer: Diarizer, name: str, out: Path, *,
                 collar: float = DEFAULT_COLLAR, oracle_count: bool = False, quiet: bool = False) -> Diarization:
    """Run ``diarizer`` on every recording (``num_speakers`` the reference count with ``oracle_count``), write its
    RTTM to ``out`` and score it against ``reference``."""
    hypothesis = {}
    progress = Progress(len(reference), f"diarization ({name})", quiet=quiet)
    for rec in reference:
        wav, sr = load_audio(recordings.wav_scp[rec])
        n = len({t.speaker for t in reference[rec]}) if oracle_count else None
        hypothesis[rec] = [replace(t, recording=rec) for t in diarizer(wav, sr, recording=rec, num_speakers=n)]
        progress.update(audio_seconds=len(wav) / sr)
    progress.close()
    write_rttm(out, [t for turns in hypothesis.values() for t in turns])
    per = corpus_diarization_errors(reference, hypothesis, collar=collar)
    total = sum(per.values(), DiarizationErrors(0, 0, 0, 0))
    counts = {rec: speaker_count_error(reference[rec], hypothesis[rec]) for rec in reference}
    return Diarization(
        diarizer=name, collar=collar, der=total.der, missed=total.missed, false_alarm=total.false_alarm,
        confusion=total.confusion, reference_seconds=total.reference,
        count_error=float(np.mean([abs(c) for c in counts.values()])),
        count_exact=float(np.mean([c == 0 for c in counts.values()])),
        by_recording={rec: {"der": e.der, "count_error": counts[rec]} for rec, e in per.items()})


def cpwer_side(turns: DataDir, reference: dict[str, list[Segment]], asr, cache_dir: Path, *,
               normalization: str = "spoken", quiet: bool = False) -> CpWER:
    """cpWER of ``asr`` on the turn cuts ``turns`` (ids ``<recording>-s<k>``, ``k`` the turn's index)."""
    from voxanon.evaluation.asr import transcribe

    hyps, failed, _ = transcribe(turns, turns.utts, asr, cache_dir, quiet=quiet)
    if failed:
        utt, why = next(iter(failed.items()))
        raise DataError(f"{turns.path}: turn {utt!r} could not be transcribed ({why})")
    by_recording, total = {}, None
    for rec, segs in reference.items():
        ref = speaker_texts((s.speaker, s.start, s.text) for s in segs)
        hyp = speaker_texts((s.speaker, s.start, hyps[f"{rec}-s{k:03d}"]) for k, s in enumerate(segs))
        r = cpwer(ref, hyp, normalization=normalization)
        by_recording[rec] = r.cpwer
        total = r if total is None else total + r
    return CpWER(asr.name, normalization, total.cpwer, total.errors, total.n_reference_words, by_recording)


def _unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def overlap_leak(regions: DataDir, talking: dict[str, tuple[str, ...]], centroids: dict[str, np.ndarray],
                 encoder, cache_dir: Path, *, quiet: bool = False) -> OverlapLeak:
    """Cosines of each overlapped region's embedding to the enrollment ``centroids`` (speaker -> vector)."""
    from voxanon.evaluation.embeddings import extract_embeddings

    speakers = sorted(centroids)
    models = _unit_rows(np.stack([centroids[s] for s in speakers]))
    emb = extract_embeddings(regions, encoder, cache_dir=cache_dir, quiet=quiet)
    near, far, hits = [], [], []
    for utt, vec in emb.items():
        cos = models @ _unit_rows(vec)
        mask = np.array([s in talking[utt] for s in speakers])
        near.append(cos[mask].mean())
        far.append(cos[~mask].mean() if (~mask).any() else np.nan)
        hits.append(bool(mask[int(np.argmax(cos))]))
    seconds = sum(float(d) for d in regions.utt2dur.values())
    return OverlapLeak(encoder.name, len(emb), round(seconds, 3), float(np.mean(near)), float(np.nanmean(far)),
                       float(np.mean(hits)))


# -- the whole evaluation --------------------------------------------------------------------------
def anonymize_corpus(corpus: ConversationCorpus, anonymize: Anonymize, out: Path, *, quiet: bool = False
                     ) -> tuple[Path, Path]:
    """Run ``anonymize`` on every recording and every enrollment utterance (each its own key); the two data
    directories ``out/conversations`` and ``out/enrolls`` (enrollment metadata copied)."""
    dirs = {}
    for name, data in ((CONVERSATIONS, corpus.recordings), (ENROLLS, corpus.enroll)):
        copy = replace(data, wav_scp={}, utt2dur={}, trials=[], path=None)
        progress = Progress(len(data.wav_scp), f"anonymizing {name}", quiet=quiet)
        for utt, entry in data.wav_scp.items():
            path = out / name / "wav" / f"{utt}.wav"
            if not path.is_file():
                wav, sr = anonymize(*load_audio(entry), utt)
                write_wav(path, np.clip(wav, -1, 1), sr)
            copy.wav_scp[utt] = str(path)
            progress.update()
        progress.close()
        dirs[name] = write_data_dir(copy, out / name)
    return dirs[CONVERSATIONS], dirs[ENROLLS]


def _side(corpus: ConversationCorpus, recordings: DataDir, work: Path, *, diarizer, diarizer_name, encoders, asr,
          centroids, settings, cache_dir, quiet) -> tuple[SideResult, list[Path]]:
    """Trials of one side (written), and its diarization, cpWER and overlap leak."""
    genders = corpus.enroll.spk2gender
    trials = cut(recordings, {r: trial_pieces(s) for r, s in corpus.reference.items()}, work / "trials", genders)
    lists = trial_dirs(trials, corpus.enroll, work)
    diar = None
    if diarizer is not None:
        diar = diarize_side(recordings, corpus.turns, diarizer, diarizer_name, work / "hypothesis.rttm",
                            collar=settings["collar"], oracle_count=settings["oracle_count"], quiet=quiet)
    words = None
    if asr is not None:
        turns = cut(recordings, {r: [(f"{r}-s{k:03d}", s.speaker, s.start, s.end) for k, s in enumerate(segs)]
                                 for r, segs in corpus.reference.items()}, work / "turns")
        words = cpwer_side(turns, corpus.reference, asr, cache_dir / "asr",
                           normalization=settings["normalization"], quiet=quiet)
    regions = {r: overlap_regions(s) for r, s in corpus.reference.items()}
    leak = {}
    if any(regions.values()):
        talking = {utt: spk for items in regions.values() for utt, spk, _, _ in items}
        cuts = cut(recordings, {r: [(u, "+".join(s), a, b) for u, s, a, b in items] for r, items in regions.items()},
                   work / "overlap")
        leak = {spec: overlap_leak(cuts, talking, centroids[spec], enc, cache_dir / "embeddings",
                                   quiet=quiet) for spec, enc in encoders.items()}
    return SideResult(str(recordings.path), diar, words, leak), lists


def evaluate_conversations(corpus: str | os.PathLike, out: str | os.PathLike, *,
                           anonymized: str | os.PathLike | None = None, anon_enroll: str | os.PathLike | None = None,
                           anonymize: Anonymize | None = None, system: str = "anonymized",
                           diarizer: Diarizer | None = None, diarizer_name: str = "oracle",
                           encoders: tuple = ("ge2e",), asr=None, normalization: str = "spoken",
                           collar: float = DEFAULT_COLLAR, oracle_count: bool = False, n_boot: int = 1000,
                           cache_dir: str | os.PathLike | None = None, device: str = "cpu",
                           quiet: bool = False) -> ConversationResult:
    """Evaluate ``corpus``'s original recordings and (given ``anonymized``, or ``anonymize`` to make them under
    ``out/anonymized``) their anonymized copy; write ``results.json`` and the CSV tables to ``out``.

    ``diarizer`` (None: no DER) defaults to the oracle (:func:`oracle_diarizer`) when ``diarizer_name`` is
    ``oracle``; ``encoders``: specs for :func:`~voxanon.models.speaker.load_encoder`, or encoders; ``asr``: an
    :class:`~voxanon.models.asr.AsrBackend` (None: no cpWER); ``anon_enroll``: the anonymized enrollment for
    AA-lazy (made by ``anonymize`` when given); ``cache_dir``: embedding and hypothesis caches (default
    ``out/cache``; runs may share one).
    """
    from voxanon.evaluation.embeddings import extract_embeddings
    from voxanon.evaluation.privacy import enrollment_models, run_scenarios
    from voxanon.models.speaker import load_encoder

    data = read_conversation_corpus(corpus)
    out = Path(out)
    if anonymize is not None:
        anonymized, anon_enroll = anonymize_corpus(data, anonymize, out / "anonymized", quiet=quiet)
    recordings = read_recordings(anonymized, data.recordings) if anonymized is not None else None
    if diarizer is None and diarizer_name == "oracle":
        diarizer = oracle_diarizer(data.turns)
    settings = {"collar": collar, "oracle_count": oracle_count, "normalization": normalization, "n_boot": n_boot,
                "min_trial_s": MIN_TRIAL_S, "min_overlap_s": MIN_OVERLAP_S,
                "diarizer": diarizer_name if diarizer is not None else None, "asr": asr.name if asr else None,
                "system": system if anonymized else None, "anonymized": str(anonymized) if anonymized else None,
                "anon_enroll": str(anon_enroll) if anon_enroll else None}
    loaded = {e if isinstance(e, str) else e.name: load_encoder(e, device=device) if isinstance(e, str) else e
              for e in encoders}
    settings["encoders"] = list(loaded)
    cache_dir = Path(cache_dir) if cache_dir is not None else out / "cache"
    cache = cache_dir / "embeddings"
    speakers = sorted(data.enroll.spk2gender)
    centroids = {}
    for spec, enc in loaded.items():
        models = enrollment_models(data.enroll, extract_embeddings(data.enroll, enc, cache_dir=cache, quiet=quiet),
                                   speakers)
        centroids[spec] = dict(zip(speakers, models))
    common = dict(diarizer=diarizer, diarizer_name=diarizer_name, encoders=loaded, asr=asr, centroids=centroids,
                  settings=settings, cache_dir=cache_dir, quiet=quiet)
    sides, lists = {}, {}
    sides[ORIGINAL], lists[ORIGINAL] = _side(data, data.recordings, out / ORIGINAL, **common)
    if recordings is not None:
        sides[system], lists[system] = _side(data, recordings, out / system, **common)
    attacks: dict[str, PrivacyResult] = {}
    scenarios = [OO] + ([OA] if anonymized else []) + ([AA_LAZY] if anonymized and anon_enroll else [])
    for spec, enc in loaded.items():
        res = run_scenarios(scenarios, orig_enroll=data.enroll, orig_trials=lists[ORIGINAL], anon_enroll=anon_enroll,
                            anon_trials=lists.get(system), pretrained=enc, cache_dir=cache, n_boot=n_boot,
                            quiet=quiet, keep_scores=False)
        attacks.update({f"{name} {spec}": r for name, r in res.items()})
    best = strongest_attacker({n: r.eer_mean for n, r in attacks.items() if not n.startswith(OO + " ")})
    result = ConversationResult(str(data.root), settings, attacks, sides, *(best or (None, None)))
    write_results(result, out)
    return result


# -- results ---------------------------------------------------------------------------------------
def _csv(header: list[str], rows: list[list]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows([[f"{v:.4f}" if isinstance(v, float) else v for v in row] for row in rows])
    return buf.getvalue()


def result_tables(result: ConversationResult) -> dict[str, str]:
    """CSV tables by file name: ``privacy.csv`` (strongest attack first), ``diarization.csv``, ``cpwer.csv``,
    ``overlap.csv``."""
    order = sorted(result.attacks, key=lambda n: n != result.strongest)
    privacy = [[n, n.split(" ", 1)[0], r.encoder, g, m.eer, m.n_target, m.n_nontarget, r.enroll]
               for n in order for r in [result.attacks[n]] for g, m in r.by_gender.items()]
    privacy += [[n, n.split(" ", 1)[0], result.attacks[n].encoder, "mean", result.attacks[n].eer_mean, "", "", ""]
                for n in order]
    diar, words, leak = [], [], []
    for side, s in result.sides.items():
        if s.diarization:
            d = s.diarization
            diar += [[side, d.diarizer, d.collar, rec, v["der"], "", "", "", v["count_error"]]
                     for rec, v in d.by_recording.items()]
            diar.append([side, d.diarizer, d.collar, "all", d.der, d.missed, d.false_alarm, d.confusion,
                         d.count_error])
        if s.cpwer:
            words += [[side, s.cpwer.asr, rec, v] for rec, v in s.cpwer.by_recording.items()]
            words.append([side, s.cpwer.asr, "all", s.cpwer.cpwer])
        leak += [[side, v.encoder, v.regions, v.seconds, v.cosine_talking, v.cosine_others, v.closest_is_talking]
                 for v in s.overlap.values()]
    return {
        "privacy.csv": _csv(["attack", "scenario", "encoder", "gender", "eer", "target_trials", "nontarget_trials",
                             "enroll"], privacy),
        "diarization.csv": _csv(["side", "diarizer", "collar", "recording", "der", "missed_s", "false_alarm_s",
                                 "confusion_s", "speaker_count_error"], diar),
        "cpwer.csv": _csv(["side", "asr", "recording", "cpwer"], words),
        "overlap.csv": _csv(["side", "encoder", "regions", "seconds", "cosine_talking", "cosine_others",
                             "closest_is_talking"], leak),
    }


def write_results(result: ConversationResult, out: Path) -> None:
    """``out/results.json`` and the CSV tables of :func:`result_tables`."""
    write_text(out / "results.json", json.dumps(to_dict(result), indent=1) + "\n")
    write_texts({out / name: text for name, text in result_tables(result).items()})
