"""Naturalness and prosody measures: DNSMOS, the F0 correlation ρF0 and the gain of voice distinctiveness G_VD.

- **DNSMOS** (Reddy et al. 2022): non-intrusive MOS predicted by Microsoft's
  ONNX models bundled in ``speechmos`` (16 kHz; runs offline). A naturalness
  proxy, not a listening test.
- **ρF0** (VPC 2022): Pearson correlation between the F0 contours of an
  original utterance and its anonymized version, over the frames voiced in
  both, after cutting both tracks to the shorter one.
- **G_VD and De-ID** (VPC 2020/2022, Noé et al. 2021): from voice similarity
  matrices between speakers, ``S_ij = sigmoid(mean LLR over utterance pairs of
  speakers i and j)`` (pairs of an utterance with itself excluded), and the
  diagonal dominance ``D_diag(M) = |mean diagonal - mean off-diagonal|``:
  ``G_VD = 10 log10(D_diag(M_aa) / D_diag(M_oo))`` (anonymized vs anonymized
  against original vs original: 0 dB = voices as distinguishable as before,
  -inf = all alike) and ``De-ID = 1 - D_diag(M_oa) / D_diag(M_oo)``. LLRs are
  cosine scores of a speaker encoder, calibrated per matrix with PAV (the
  VPC scores PLDA or cosine outputs and calibrates them the same way).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voxanon.audio.io import load_audio, resample
from voxanon.data import layout
from voxanon.data.kaldi import DataDir, DataError, read_data_dir
from voxanon.dsp.world import estimate_f0
from voxanon.evaluation.evaluator import Column, Env, Evaluator, RunSettings, SystemData, option
from voxanon.evaluation.results import Dnsmos, QualityResult
from voxanon.metrics import pav_calibrate
from voxanon.progress import Progress

#: DNSMOS works at 16 kHz only
DNSMOS_RATE = 16000
#: fewest frames voiced in both signals for ρF0 to be defined
MIN_VOICED_FRAMES = 10


def dnsmos(wav: np.ndarray, sr: int) -> dict[str, float]:
    """DNSMOS P.835 (``ovrl``, ``sig``, ``bak``) and P.808 (``p808``) scores, each in about [1, 5].

    Clips shorter than the model's 9 s window are repeated to fill it (speechmos' rule).
    """
    from speechmos import dnsmos as speechmos_dnsmos

    x = np.clip(resample(np.asarray(wav, dtype=np.float32), sr, DNSMOS_RATE), -1.0, 1.0)
    out = speechmos_dnsmos.run(x, DNSMOS_RATE)
    return {key: float(out[f"{key}_mos"]) for key in ("ovrl", "sig", "bak", "p808")}


def f0_correlation(original: np.ndarray, anonymized: np.ndarray, sr: int, sr_anonymized: int | None = None,
                   *, frame_period: float = 5.0) -> float:
    """ρF0: Pearson correlation of F0 over frames voiced in both signals (NaN when fewer than 10 are).

    The anonymized signal is resampled to ``sr`` when its rate differs; F0 is
    WORLD's DIO + StoneMask on both.
    """
    anonymized = resample(np.asarray(anonymized, dtype=np.float32), sr_anonymized or sr, sr)
    f0_a, _ = estimate_f0(original, sr, frame_period=frame_period)
    f0_b, _ = estimate_f0(anonymized, sr, frame_period=frame_period)
    n = min(len(f0_a), len(f0_b))
    both = (f0_a[:n] > 0) & (f0_b[:n] > 0)
    if both.sum() < MIN_VOICED_FRAMES:
        return float("nan")
    a, b = f0_a[:n][both], f0_b[:n][both]
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def similarity_matrix(emb_x: np.ndarray, emb_y: np.ndarray, speakers: list[str]) -> tuple[np.ndarray, list[str]]:
    """Voice similarity matrix between the speakers of two embedding sets of the same utterances.

    Row k of ``emb_x`` and row k of ``emb_y`` are the same utterance (e.g.
    original and anonymized); ``speakers[k]`` is its speaker. Entry (i, j) is
    the sigmoid of the mean PAV-calibrated LLR of the cosine scores between
    utterances of speaker i (from x) and of speaker j (from y), pairs of an
    utterance with itself excluded.

    Returns
    -------
    (matrix, speaker list in row order)
    """
    spk = np.asarray(speakers)
    names = sorted(set(speakers))
    if len(names) < 2:
        raise DataError("voice similarity needs at least 2 speakers")
    short = [s for s in names if (spk == s).sum() < 2]
    if short:
        raise DataError(f"speakers with fewer than 2 utterances (no same-speaker pair): {', '.join(short[:5])}")
    scores = _unit(emb_x) @ _unit(emb_y).T
    pairs = ~np.eye(len(spk), dtype=bool)
    same = spk[:, None] == spk[None, :]
    llr = pav_calibrate(scores[pairs & same], scores[pairs & ~same])(scores)
    index = [np.flatnonzero(spk == s) for s in names]
    matrix = np.empty((len(names), len(names)))
    for i, rows in enumerate(index):
        for j, cols in enumerate(index):
            block = pairs[np.ix_(rows, cols)]
            matrix[i, j] = 1.0 / (1.0 + np.exp(-llr[np.ix_(rows, cols)][block].mean()))
    return matrix, names


def diagonal_dominance(matrix: np.ndarray) -> float:
    """D_diag: absolute difference between the mean diagonal and the mean off-diagonal entry."""
    n = matrix.shape[0]
    off = ~np.eye(n, dtype=bool)
    return float(abs(np.diag(matrix).mean() - matrix[off].mean()))


@dataclass(frozen=True)
class VoiceDistinctiveness:
    """Similarity matrices (rows/columns in ``speakers`` order), G_VD in dB and De-ID."""

    speakers: list[str]
    m_oo: np.ndarray
    m_oa: np.ndarray
    m_aa: np.ndarray
    gvd: float
    deid: float


def voice_distinctiveness(original: np.ndarray, anonymized: np.ndarray, speakers: list[str]) -> VoiceDistinctiveness:
    """G_VD and De-ID from speaker embeddings of the same utterances before and after anonymization."""
    m_oo, names = similarity_matrix(original, original, speakers)
    m_oa, _ = similarity_matrix(original, anonymized, speakers)
    m_aa, _ = similarity_matrix(anonymized, anonymized, speakers)
    d_oo = diagonal_dominance(m_oo)
    if d_oo == 0:
        raise DataError("the original voices are not distinguishable (D_diag(M_oo) = 0): G_VD is undefined")
    with np.errstate(divide="ignore"):
        gvd = float(10.0 * np.log10(diagonal_dominance(m_aa) / d_oo))
    return VoiceDistinctiveness(names, m_oo, m_oa, m_aa, gvd, 1.0 - diagonal_dominance(m_oa) / d_oo)


def voice_distinctiveness_from_audio(original: list[np.ndarray], anonymized: list[np.ndarray], speakers: list[str],
                                     sr: int, encoder) -> VoiceDistinctiveness:
    """:func:`voice_distinctiveness` with embeddings from a SpeakerEncoder (e.g. ``load_encoder("ge2e")``)."""
    return voice_distinctiveness(encoder.embed(original, sr), encoder.embed(anonymized, sr), speakers)


@functools.lru_cache(maxsize=4096)
def _dnsmos_of(source: str) -> dict[str, float]:
    """DNSMOS of an audio source, computed once per process."""
    return dnsmos(*load_audio(source))


def _paired(orig_dirs: list, anon_dirs: list) -> list[tuple[DataDir, DataDir, str]]:
    """(original data, anonymized data, utterance) for every utterance present in both, per directory pair."""
    pairs = []
    for o, a in zip(orig_dirs, anon_dirs):
        orig, anon = read_data_dir(o), read_data_dir(a)
        pairs += [(orig, anon, utt) for utt in orig.utts if utt in anon.wav_scp]
    return pairs


def _spread(items: list, n: int) -> list:
    """``n`` items spread evenly over the list (all when it is shorter)."""
    if len(items) <= n:
        return items
    return [items[i] for i in np.linspace(0, len(items) - 1, n).round().astype(int)]


def evaluate_quality(orig_dirs: list, anon_dirs: list, *, max_utts: int = 16, encoder: str = "ge2e",
                     cache_dir=None, quiet: bool = False) -> QualityResult:
    """DNSMOS, ρF0, G_VD and De-ID of anonymized data directories against their originals.

    ``orig_dirs[i]`` pairs with ``anon_dirs[i]`` (same utterance ids). DNSMOS and
    ρF0 use ``max_utts`` utterances spread over all pairs; G_VD and De-ID use every
    paired utterance (embeddings cached under ``cache_dir``). Returns the
    means and the number of utterances behind each.
    """
    from voxanon.evaluation.embeddings import extract_embeddings
    from voxanon.models.speaker import load_encoder

    pairs = _paired(orig_dirs, anon_dirs)
    if not pairs:
        raise DataError(f"no utterance is present in both {orig_dirs} and {anon_dirs}")
    chosen = _spread(pairs, max_utts)
    progress = Progress(len(chosen), "quality", quiet=quiet)
    mos_o, mos_a, rho = [], [], []
    for orig, anon, utt in chosen:
        wo, so = load_audio(orig.wav_scp[utt])
        wa, sa = load_audio(anon.wav_scp[utt])
        mos_o.append(_dnsmos_of(orig.wav_scp[utt]))  # the same originals recur for every system
        mos_a.append(dnsmos(wa, sa))
        rho.append(f0_correlation(wo, wa, so, sa))
        progress.update(audio_seconds=len(wo) / so)
    progress.close()
    model = load_encoder(encoder)
    emb_o, emb_a, speakers = [], [], []
    for o, a in zip(orig_dirs, anon_dirs):
        orig, anon = read_data_dir(o), read_data_dir(a)
        utts = [u for u in orig.utts if u in anon.wav_scp]
        eo = extract_embeddings(orig, model, utts=utts, cache_dir=cache_dir, quiet=True)
        ea = extract_embeddings(anon, model, utts=utts, cache_dir=cache_dir, quiet=True)
        emb_o += [eo[u] for u in utts]
        emb_a += [ea[u] for u in utts]
        speakers += [orig.utt2spk[u] for u in utts]
    vd = voice_distinctiveness(np.stack(emb_o), np.stack(emb_a), speakers)
    finite = [r for r in rho if np.isfinite(r)]

    def mean_scores(rows: list[dict[str, float]]) -> dict[str, float]:
        return {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}

    return QualityResult(
        dnsmos=Dnsmos(original=mean_scores(mos_o)["ovrl"], anonymized=mean_scores(mos_a)["ovrl"],
                      original_all=mean_scores(mos_o), anonymized_all=mean_scores(mos_a), n=len(chosen)),
        rho_f0=float(np.mean(finite)) if finite else None, rho_f0_n=len(finite),
        gvd_db=vd.gvd, deid=vd.deid, gvd_speakers=len(vd.speakers), gvd_utterances=len(speakers),
        encoder=model.name,
    )


@dataclass(frozen=True)
class QualityOptions:
    """How many trial utterances DNSMOS and ρF0 measure."""

    max_utts: int = option(8, profile="quality_utts")


@dataclass(frozen=True)
class QualitySettings:
    """Quality on one split's trial sets: ``max_utts`` for DNSMOS and ρF0, ``encoder`` for G_VD."""

    split: str
    max_utts: int
    encoder: str


class QualityEvaluator(Evaluator):
    """DNSMOS, ρF0, G_VD and De-ID of a system's output against the original trial utterances."""

    kind = "quality"
    Settings = QualitySettings
    Options = QualityOptions

    @classmethod
    def plan(cls, run: RunSettings, options: QualityOptions) -> list[Evaluator]:
        """One evaluator, on the run's last split."""
        return [cls(QualitySettings(run.splits[-1], options.max_utts, run.pretrained))]

    def applies(self, data: SystemData) -> bool:
        return data.anonymized

    def inputs(self, data: SystemData) -> dict[str, Path]:
        sets = {f"original_{g}": data.original[layout.trials(self.settings.split, g)] for g in layout.GENDERS}
        return sets | {f"anonymized_{g}": data.sets[layout.trials(self.settings.split, g)] for g in layout.GENDERS}

    def models(self, data: SystemData) -> dict[str, str]:
        return {"encoder": self.settings.encoder}

    @classmethod
    def columns(cls, results) -> list[Column]:
        """``dnsmos`` (the original row: the original speech's, measured beside every system's), ``rho_f0``,
        ``gvd``."""
        def dnsmos(record, results) -> float | None:
            if record.method is None:
                return next((q.dnsmos.original for s in results.systems.values()
                             if (q := s.get(cls.kind)) is not None), None)
            return (q := record.get(cls.kind)) and q.dnsmos.anonymized

        return [Column("dnsmos", dnsmos, header="DNSMOS"),
                Column("rho_f0", lambda record, results: (q := record.get(cls.kind)) and q.rho_f0, header="ρF0"),
                Column("gvd", lambda record, results: (q := record.get(cls.kind)) and q.gvd_db, header="G_VD dB")]

    def run(self, data: SystemData, env: Env) -> QualityResult:
        dirs = self.inputs(data)
        return evaluate_quality([dirs[f"original_{g}"] for g in layout.GENDERS],
                                [dirs[f"anonymized_{g}"] for g in layout.GENDERS], max_utts=self.settings.max_utts,
                                encoder=self.settings.encoder, cache_dir=env.cache_dir / "embeddings",
                                quiet=env.quiet)
