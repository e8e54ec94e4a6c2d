"""kNN-VC (Baas et al. 2023) with any content encoder, blending several targets per frame (VPC 2024 T9-style).

Each target's match for an output frame is the mean of the values (vocoder
features) of the ``k`` target frames whose keys (content features) are nearest
by cosine to the source frame's key, weighted by
``softmax(cosine / match_temperature)`` (by default 16 frames at 0.02: the
nearest few dominate, the rest smooth; the paper's plain mean of 4 lost more
words on held-out real speech, docs/experiments/knnvc.md); the vocoder turns the matched
features into speech. Keys are one content-encoder layer (default: Whisper
tiny.en layer 3 of 4, position-debiased, the best of the layers measured in
docs/experiments/knnvc.md), values HiFi-GAN universal log-mels.

Each utterance (each speaker with ``--level speaker``) draws ``n_targets``
targets from its rng, without replacement, among the targets of ``targets``
(a data directory or audio folder) or, by default, of the synthetic
``voices``, and global weights ``w`` from a Dirichlet. The per-target matches
are mixed frame by frame with weights ``softmax(log w_t + s_t / blend_temperature)``,
where ``s_t`` is the mean top-k similarity of target ``t`` at that frame: each
frame comes mostly from the target that matches it best, so the pseudo-voice is
none of the targets and the content is better matched than by any one of them
(on real speech the blend of the two default targets kept more words than one
drawn target over three seeds, docs/experiments/knnvc.md). ``n_targets=1`` is the paper's kNN-VC: one target per utterance. Matching sets are built once per
(target, encoder, vocoder) and cached on disk; the default targets' ship with the package
(:mod:`.knnvc_targets`). Top-k
search runs over blocks of source and target frames, so memory stays bounded
(``query_block * key_block`` similarities) however long the input or large the
matching set.

The original kNN-VC release runs as ``encoder=wavlm-pt:<WavLM-Large.pt>:6``
with ``vocoder=hifigan-knnvc:<prematch_g_02500000.pt>`` (and ``n_targets=1``):
the values are then the WavLM features themselves, vocoded by the prematched HiFi-GAN.

``f0 = "source"`` keeps the source's intonation: the converted speech is
re-synthesised with WORLD using the source's F0 contour shifted (in log) to the
targets' weighted mean voiced F0; ``"matched"`` (default) keeps what the matched frames carry.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

from voxanon.anonymizers.base import Anonymizer, Chunking, param
from voxanon.anonymizers.knnvc_targets import (
    MatchingSet,
    TargetSource,
    cache_root,
    dir_sources,
    find,
    matching_set,
    shipped_root,
    tts_sources,
)
from voxanon.audio.io import resample
from voxanon.dsp.frames import interpolate_frames
from voxanon.dsp.world import transfer_f0
from voxanon.errors import ConfigError
from voxanon.progress import Progress
from voxanon.ranges import Range

#: Kokoro voices of the offline corpus's training side (seed 0): no dev/test speaker shares a base voice
#: with them, so a target is never a relative of an evaluated speaker (1 female, 1 male). Two voices with
#: ~20 min of speech each, not more voices with less speech each: the words kept grow with the speech per
#: target up to there, and the first run builds every target's set (docs/experiments/knnvc.md, "kNN-VC on
#: real speech")
DEFAULT_VOICES = tuple(f"kokoro:{v}" for v in ("af_jessica", "am_michael"))
F0_MODES = ("matched", "source")


def knn_match(query: np.ndarray, keys: np.ndarray, values: np.ndarray, k: int, temperature: float = 0.0, *,
              query_block: int = 1024, key_block: int = 16384) -> tuple[np.ndarray, np.ndarray]:
    """Mean of the values of the ``k`` keys most cosine-similar to each query, and the mean top-k similarity.

    ``query (T, D)``, ``keys (N, D)`` unit-norm, ``values (N, F)``; returns ``(T, F)`` and ``(T,)``. With
    ``temperature > 0`` the mean is weighted by ``softmax(similarity / temperature)`` over the k matches, so
    close matches count more than the far end of the list; 0 is kNN-VC's plain mean. Keys and values may be
    read-only memory maps: each key block is read once. Memory is ``O(query_block * key_block + T * k * F)``
    whatever ``N``.
    """
    import torch

    k = min(k, len(keys))
    q_all = torch.nn.functional.normalize(torch.as_tensor(query, dtype=torch.float32), dim=1)
    best_s = torch.full((len(q_all), 0), -2.0)
    best_i = torch.zeros((len(q_all), 0), dtype=torch.long)
    with torch.inference_mode():
        for ks in range(0, len(keys), key_block):
            block = torch.from_numpy(np.array(keys[ks:ks + key_block], dtype=np.float32))
            s_parts, i_parts = [], []
            for qs in range(0, len(q_all), query_block):
                s, i = torch.topk(q_all[qs:qs + query_block] @ block.T, min(k, len(block)), dim=1)
                s_parts.append(s)
                i_parts.append(i + ks)
            cand_s, cand_i = torch.cat([best_s, torch.cat(s_parts)], 1), torch.cat([best_i, torch.cat(i_parts)], 1)
            best_s, pick = torch.topk(cand_s, min(k, cand_s.shape[1]), dim=1)
            best_i = torch.gather(cand_i, 1, pick)
    weights = (torch.softmax(best_s / temperature, dim=1) if temperature > 0
               else torch.full(best_s.shape, 1.0 / best_s.shape[1])).numpy()
    matched = np.einsum("tk,tkf->tf", weights, np.asarray(values)[best_i.numpy()])
    return matched.astype(np.float32), best_s.mean(1).numpy()


@dataclasses.dataclass(frozen=True)
class KnnVcConfig:
    """Parameters of kNN-VC."""

    k: int = param(16, "number of nearest target frames averaged per output frame")
    match_temperature: float = param(0.02, "softmax temperature of the cosine similarities that weight the k "
                                           "frames' mean (0 = plain mean, as in kNN-VC's paper)", range=Range(0))
    encoder: str = param("whisper-tiny:3", "content encoder spec (whisper-tiny[:layer], hf:<dir>[:layer], "
                                           "wavlm-pt:<WavLM-Large.pt>[:layer], ...)")
    vocoder: str = param("hifigan-universal", "HiFi-GAN vocoder spec (hifigan-universal, hifigan:<checkpoint>, or "
                                              "hifigan-knnvc:<prematch_g_02500000.pt>: vocodes the encoder's features)")
    targets: str = param("", "target speakers: a Kaldi data dir (per speaker) or audio folder (per subfolder); "
                             "empty = the synthetic voices")
    voices: tuple[str, ...] = param(DEFAULT_VOICES, "TTS voice specs of the default synthetic targets")
    n_sentences: int = param(0, "shipped sentences each synthetic target reads (0 = all 552, the corpus's 312 "
                                "and the 240 topic sentences: ~20 min of speech)", range=Range(0))
    trim_db: float = param(40.0, "target frames quieter than the loudest by more than this are dropped")
    f0: str = param("matched", "matched (the target frames' pitch) or source (source contour at the targets' mean)")
    n_targets: int = param(2, "targets blended per utterance, drawn without replacement (1 = kNN-VC's single "
                              "target)")
    concentration: float = param(1.0, "Dirichlet concentration of the targets' global weights")
    blend_temperature: float = param(0.05, "softmax temperature of the per-frame weighting by match similarity")
    threads: int = param(0, "torch threads (0 = torch's default)")

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ConfigError(f"parameter k must be >= 1, got {self.k}")
        if self.n_targets < 1:
            raise ConfigError(f"parameter n_targets must be >= 1, got {self.n_targets}")
        if self.concentration <= 0 or self.blend_temperature <= 0:
            raise ConfigError("parameters concentration and blend_temperature must be positive")
        if self.f0 not in F0_MODES:
            raise ConfigError(f"parameter f0: {self.f0!r} is not one of {', '.join(F0_MODES)}")
        if not self.targets and not self.voices:
            raise ConfigError("parameters targets and voices are both empty; give one of them")


def draw_targets(rng: np.random.Generator, available: int, config: KnnVcConfig) -> tuple[np.ndarray, np.ndarray]:
    """An utterance's target indices (``n_targets`` of ``available``, no repeats) and their global weights."""
    n = min(config.n_targets, available)
    return rng.choice(available, size=n, replace=False), rng.dirichlet(np.full(n, config.concentration))


class KnnVc(Anonymizer):
    """kNN-VC: every frame replaced by the mean of its k nearest frames of the drawn targets, blended, vocoded."""

    name = "knnvc"
    Config = KnnVcConfig
    sample_rate = 16000
    needs_model = True
    #: long inputs in 20-s chunks (inside one 30-s Whisper window), 1 s of context each side: memory stays
    #: bounded for any duration; every chunk draws the same targets from the utterance's rng
    chunking = Chunking(seconds=20.0, overlap=1.0, fade=0.05)

    def __init__(self, config: KnnVcConfig | None = None, **params) -> None:
        super().__init__(config, **params)
        self._models = None
        self._targets: list[MatchingSet] | None = None

    def models(self):
        """(content encoder, vocoder), loaded on first use."""
        if self._models is None:
            from voxanon.models.content import load_content_encoder
            from voxanon.models.vocoder import load_vocoder

            vocoder = self.config.vocoder
            if vocoder.startswith("hifigan-knnvc:") and "|" not in vocoder:
                vocoder += "|" + self.config.encoder          # the original release vocodes the keys themselves
            self._models = (load_content_encoder(self.config.encoder),
                            load_vocoder(vocoder, threads=self.config.threads))
        return self._models

    def model_files(self) -> dict[str, Path]:
        """``targets`` (or the shipped matching sets' manifest) and the checkpoints the encoder and vocoder
        specs name."""
        c = self.config
        found = super().model_files()
        if not c.targets:
            found["targets"] = shipped_root() / "manifest.json"
        for role, spec in (("encoder", c.encoder), ("vocoder", c.vocoder)):
            arg = spec.partition(":")[2].partition("|")[0]
            head, _, tail = arg.rpartition(":")
            path = head if tail.isdigit() else arg
            if path and Path(path).exists():
                found[role] = Path(path)
        return found

    def sources(self) -> list[TargetSource]:
        """Where each target's speech comes from: ``targets``, or the ``voices`` reading the shipped sentences
        (the corpus's, then the topic sentences)."""
        if self.config.targets:
            return dir_sources(self.config.targets)
        from voxanon.data.sentences import load_sentences, load_topic_sentences

        texts = [s.text for s in load_sentences()] + [s.text for ss in load_topic_sentences().values() for s in ss]
        return tts_sources(self.config.voices, texts[: self.config.n_sentences or None])

    def targets(self) -> list[MatchingSet]:
        """Matching sets of every target (from the cache after the first build)."""
        if self._targets is None:
            encoder, vocoder = self.models()
            self._targets = [matching_set(s, encoder, vocoder, self.config.trim_db) for s in self.sources()]
        return self._targets

    def prepare(self, *, quiet: bool = False) -> None:
        """Put every target's matching set in the cache: unpack the shipped ones, build the others (saying once
        what is built and why, with progress)."""
        encoder, vocoder = self.models()
        c = self.config
        missing = [s for s in self.sources() if find(s, encoder, vocoder, c.trim_db) is None]
        if not missing:
            return
        what = (f"{len(missing)} target voices reading {missing[0].size} shipped sentences each" if not c.targets
                else f"{len(missing)} target speakers of {c.targets}")
        if not quiet:
            print(f"{self.name}: building the kNN matching sets of {what} (keys {encoder.name}, values "
                  f"{vocoder.name}); this happens once: they are cached in {cache_root()} for every later run",
                  file=sys.stderr, flush=True)
        progress = Progress(sum(s.size for s in missing), f"{self.name} matching sets", quiet=quiet)
        for source in missing:
            matching_set(source, encoder, vocoder, c.trim_db, progress)
        progress.close()

    def query(self, wav: np.ndarray, sr: int) -> np.ndarray:
        """Source keys at the vocoder's frame times (as many frames as the output needs)."""
        encoder, vocoder = self.models()
        n_out = int(round(len(wav) * vocoder.sample_rate / sr)) // vocoder.hop_length + 1
        feats = encoder.encode(wav, sr)
        return interpolate_frames(feats, encoder.frame_rate, n_out, vocoder.sample_rate / vocoder.hop_length)

    def convert(self, query: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, float]:
        """Vocoder features matched against the drawn targets and blended per frame, and their mean log-F0."""
        targets, c = self.targets(), self.config
        chosen, weights = draw_targets(rng, len(targets), c)
        mels, sims = zip(*(knn_match(query, targets[i].keys, targets[i].values, c.k, c.match_temperature)
                           for i in chosen))
        logits = np.log(weights + 1e-12)[:, None] + np.stack(sims) / c.blend_temperature
        w = np.exp(logits - logits.max(0))
        w /= w.sum(0)
        mel = np.einsum("nt,ntf->tf", w, np.stack(mels))
        f0s = np.array([targets[i].log_f0_mean for i in chosen])
        voiced = np.isfinite(f0s)                          # a target without voiced frames has no F0 to give
        log_f0 = float(weights[voiced] @ f0s[voiced] / weights[voiced].sum()) if voiced.any() else float("nan")
        return mel.astype(np.float32), log_f0

    def anonymize(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        if not np.any(wav):
            return np.zeros(len(wav), dtype=np.float32), sr
        mel, log_f0 = self.convert(self.query(wav, sr), rng)
        vocoder = self.models()[1]
        out = resample(vocoder.synthesize(mel), vocoder.sample_rate, sr)
        if self.config.f0 == "source" and np.isfinite(log_f0):
            out = transfer_f0(out, wav, sr, log_f0)
        out = np.pad(out, (0, max(0, len(wav) - len(out))))[: len(wav)]
        return out.astype(np.float32), sr
