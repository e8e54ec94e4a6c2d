"""LDA + two-covariance PLDA (or WCCN + cosine) back-end over fixed speaker embeddings.

The VPC 2020 semi-informed attacker kept a pretrained x-vector extractor and
retrained its back-end on anonymized data; this is that back-end for any
:class:`~voxanon.models.speaker.SpeakerEncoder` (numpy/scipy only, seconds on CPU).

Training, on embeddings ``x`` with speaker labels:

1. centre on the training mean and project with LDA to ``lda_dim`` dimensions
   (generalised eigenvectors of between- vs within-speaker scatter);
2. whiten with the total covariance and length-normalise to norm sqrt(dim)
   (Garcia-Romero & Espy-Wilson, 2011);
3. fit the two-covariance model ``y = s + e``, ``s ~ N(m, B)``, ``e ~ N(0, W)``
   (between / within covariance of the normalised vectors), and diagonalise it
   jointly (``T W T' = I``, ``T B T' = diag(psi)``).

Scoring an enrollment of ``n`` utterances (their mean ``u`` in the diagonal
space) against one trial ``v`` gives, per dimension, the exact
log-likelihood ratio of "same speaker" vs "different speakers"::

    same:      [u, v] ~ N(0, [[psi + 1/n, psi], [psi, psi + 1]])
    different: u ~ N(0, psi + 1/n),  v ~ N(0, psi + 1)

summed over dimensions. ``scoring="cosine"`` instead scores the cosine of the
LDA vectors after WCCN (within-class covariance normalisation, Hatch et al.,
2006), the enrollment being the mean of its projected utterances.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

import numpy as np
from scipy.linalg import cholesky, eigh

from voxanon.atomic import atomic_open
from voxanon.errors import ConfigError, DataError
from voxanon.models.speaker.base import EncoderError

SCORINGS = ("plda", "cosine")


@dataclass(frozen=True)
class BackendSettings:
    """Back-end settings; ``lda_dim`` is clipped to (speakers - 1) and the embedding size."""

    lda_dim: int = 150
    scoring: str = "plda"
    #: ridge added to the within-speaker scatter, relative to its mean eigenvalue
    regularisation: float = 1e-6

    def __post_init__(self) -> None:
        if self.scoring not in SCORINGS:
            raise ConfigError(f"scoring must be one of {', '.join(SCORINGS)}, not {self.scoring!r}")
        if self.lda_dim < 1:
            raise ConfigError(f"lda_dim must be at least 1, not {self.lda_dim}")


def _scatter(x: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Class means (per sample), within- and between-class covariances (per sample, ML)."""
    classes, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    sums = np.zeros((len(classes), x.shape[1]))
    np.add.at(sums, inverse, x)
    means = sums / counts[:, None]
    resid = x - means[inverse]
    within = resid.T @ resid / len(x)
    centred = means - x.mean(axis=0)
    between = (centred * counts[:, None]).T @ centred / len(x)
    return means, within, between


def _ridge(mat: np.ndarray, rel: float) -> np.ndarray:
    return mat + rel * max(np.trace(mat) / len(mat), 1e-12) * np.eye(len(mat))


class PldaBackend:
    """A trained back-end: :meth:`fit`, then :meth:`score` enrollments against trials."""

    def __init__(self, settings: BackendSettings = BackendSettings()) -> None:
        self.settings = settings
        self.params: dict[str, np.ndarray] = {}

    # -- training -------------------------------------------------------------------------
    def fit(self, x: np.ndarray, labels) -> "PldaBackend":
        """Train on embeddings ``x`` (N, d) of speakers ``labels`` (N,)."""
        x = np.asarray(x, dtype=np.float64)
        labels = np.asarray(labels)
        n_spk = len(np.unique(labels))
        if n_spk < 2 or len(x) <= n_spk:
            raise DataError(f"the back-end needs at least 2 speakers and more utterances than speakers "
                             f"(got {n_spk} speakers, {len(x)} utterances)")
        mean = x.mean(axis=0)
        _, within, between = _scatter(x - mean, labels)
        dim = min(self.settings.lda_dim, n_spk - 1, x.shape[1])
        evals, evecs = eigh(between, _ridge(within, self.settings.regularisation))
        lda = evecs[:, np.argsort(evals)[::-1][:dim]]
        y = (x - mean) @ lda
        self.params = {"mean": mean, "lda": lda}
        if self.settings.scoring == "cosine":
            _, w, _ = _scatter(y, labels)
            # WCCN: A with A A' = W^-1, applied as y @ A
            self.params["wccn"] = cholesky(np.linalg.inv(_ridge(w, self.settings.regularisation)), lower=True)
            return self
        cov = np.cov(y, rowvar=False).reshape(dim, dim)
        evals, evecs = np.linalg.eigh(_ridge(cov, self.settings.regularisation))
        self.params["whiten"] = evecs / np.sqrt(evals)
        z = self._length_norm(y @ self.params["whiten"])
        _, w, b = _scatter(z, labels)
        psi, t = eigh(b, _ridge(w, self.settings.regularisation))
        self.params.update(plda_mean=z.mean(axis=0), plda_t=t, psi=np.maximum(psi, 0.0))
        return self

    @staticmethod
    def _length_norm(z: np.ndarray) -> np.ndarray:
        return z * (np.sqrt(z.shape[1]) / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12))

    # -- scoring --------------------------------------------------------------------------
    def transform(self, x: np.ndarray) -> np.ndarray:
        """Per-utterance vectors of the scoring space (WCCN-LDA, or PLDA's diagonal space)."""
        if not self.params:
            raise EncoderError("the PLDA back-end is not trained: call fit() or load() first")
        y = (np.asarray(x, dtype=np.float64) - self.params["mean"]) @ self.params["lda"]
        if self.settings.scoring == "cosine":
            return y @ self.params["wccn"]
        z = self._length_norm(y @ self.params["whiten"])
        return (z - self.params["plda_mean"]) @ self.params["plda_t"]

    def score(self, enrollments: list[np.ndarray], trials: np.ndarray) -> np.ndarray:
        """Score matrix (enrollments x trials): PLDA LLRs (nats) or cosines.

        Parameters
        ----------
        enrollments : list of ndarray
            Per enrolled speaker, the raw embeddings of its enrollment utterances (n_i, d).
        trials : ndarray
            Raw trial embeddings (m, d).
        """
        v = self.transform(trials)
        means = np.stack([self.transform(e).mean(axis=0) for e in enrollments])
        if self.settings.scoring == "cosine":
            unit = lambda a: a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)  # noqa: E731
            return unit(means) @ unit(v).T
        psi = self.params["psi"]
        counts = np.array([len(e) for e in enrollments], dtype=np.float64)[:, None]
        a, c = psi[None, :] + 1.0 / counts, psi + 1.0               # (S, k), (k,)
        det = psi * (1.0 + 1.0 / counts) + 1.0 / counts              # = a c - psi^2, without cancellation
        # LLR = -1/2 log(det / (a c)) - 1/2 [(c u^2 - 2 psi u v + a v^2) / det - u^2 / a - v^2 / c]
        const = -0.5 * np.log(det / (a * c)).sum(axis=1) - 0.5 * (means ** 2 * (c / det - 1.0 / a)).sum(axis=1)
        vv = (v ** 2) @ (a / det - 1.0 / c).T                        # (m, S)
        uv = (means * psi / det) @ v.T                               # (S, m)
        return const[:, None] - 0.5 * vv.T + uv

    # -- persistence ----------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> None:
        """Write settings and parameters to an ``.npz`` file (atomically)."""
        with atomic_open(path) as fh:
            np.savez(fh, **self.params, **{f"setting_{k}": np.asarray(v) for k, v in asdict(self.settings).items()})

    @classmethod
    def load(cls, path: str | os.PathLike) -> "PldaBackend":
        """Back-end written by :meth:`save`."""
        try:
            with np.load(path) as f:
                settings = BackendSettings(**{k[8:]: f[k].item() for k in f.files if k.startswith("setting_")})
                backend = cls(settings)
                backend.params = {k: f[k] for k in f.files if not k.startswith("setting_")}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise EncoderError(f"{path}: not a voxanon PLDA back-end ({type(exc).__name__}: {exc}); "
                               "back-ends are trained by attacker rung (a) of 'voxanon benchmark'") from exc
        return backend
