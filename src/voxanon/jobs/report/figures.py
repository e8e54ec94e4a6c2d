"""Figures of the benchmark report (matplotlib, written as PNG and SVG).

Each function takes plain numbers, draws one figure and returns the PNG path;
the SVG is written beside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy.special import ndtri  # noqa: E402

CATEGORY_THRESHOLDS = (10.0, 20.0, 30.0, 40.0)
_BAND_COLOURS = ("#fde0dd", "#fcc5c0", "#fa9fb5", "#f768a1", "#dd3497")


def _save(fig: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path.with_suffix(".png"), dpi=110)
    fig.savefig(path.with_suffix(".svg"))
    plt.close(fig)
    return path.with_suffix(".png")


def tradeoff_scatter(
    path: Path,
    names: Sequence[str],
    eer: Sequence[float],
    utility: Sequence[float],
    *,
    utility_label: str,
    higher_utility_better: bool,
    front: Sequence[str],
) -> Path:
    """EER (y) against a utility measure (x) with privacy-category bands and the Pareto front."""
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    x = np.asarray(utility, dtype=float)
    y = np.asarray(eer, dtype=float)
    edges = (0.0, *CATEGORY_THRESHOLDS, 60.0)
    for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:])):
        ax.axhspan(lo, hi, color=_BAND_COLOURS[i], alpha=0.35, lw=0)
        if i:
            ax.text(0.99, lo + 0.5, f"EER ≥ {lo:.0f} %", transform=ax.get_yaxis_transform(),
                    ha="right", va="bottom", fontsize=7, color="#555")
    ax.scatter(x, y, color="#1f3b73", zorder=3)
    for xi, yi, name in zip(x, y, names):
        if np.isfinite(xi) and np.isfinite(yi):
            ax.annotate(name, (xi, yi), textcoords="offset points", xytext=(4, 4), fontsize=8)
    on_front = [i for i, n in enumerate(names) if n in front and np.isfinite(x[i]) and np.isfinite(y[i])]
    if len(on_front) > 1:
        order = sorted(on_front, key=lambda i: x[i])
        ax.plot(x[order], y[order], "--", color="#d95f02", zorder=2, label="Pareto front")
        ax.legend(loc="upper left", fontsize=8)
    ax.set_xlabel(f"{utility_label} ({'higher' if higher_utility_better else 'lower'} is better)")
    ax.set_ylabel("EER % (higher = more private)")
    finite = y[np.isfinite(y)]
    ax.set_ylim(0, max(55.0, float(finite.max()) + 5 if finite.size else 55.0))
    return _save(fig, path)


def det_curves(path: Path, curves: dict[str, tuple[Sequence[float], Sequence[float]]], title: str) -> Path:
    """DET curves; ``curves`` maps system → (probit P_fa, probit P_miss), as ``voxanon.metrics.det_curve`` gives."""
    fig, ax = plt.subplots(figsize=(5.6, 5.0))
    ticks = np.array([0.001, 0.01, 0.05, 0.2, 0.5, 0.8, 0.95])
    lim = ndtri(0.0005), ndtri(0.9995)
    for name, (pfa, pmiss) in curves.items():
        ax.plot(np.clip(pfa, *lim), np.clip(pmiss, *lim), label=name, lw=1.4)
    ax.plot(lim, lim, ":", color="#999", lw=0.8)
    ax.set_xticks(ndtri(ticks), [f"{t * 100:g}" for t in ticks])
    ax.set_yticks(ndtri(ticks), [f"{t * 100:g}" for t in ticks])
    ax.set_xlim(*lim)
    ax.set_ylim(*lim)
    ax.set_xlabel("false acceptance rate (%)")
    ax.set_ylabel("false rejection rate (%)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper right")
    return _save(fig, path)


def grouped_bars(
    path: Path,
    groups: Sequence[str],
    series: dict[str, Sequence[float]],
    *,
    ylabel: str,
    title: str,
) -> Path:
    """Bars per group (x) and series (colour), e.g. per-gender EER per system or recall per emotion."""
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(groups) + 2), 4.0))
    width = 0.8 / max(1, len(series))
    xs = np.arange(len(groups))
    for k, (label, values) in enumerate(series.items()):
        ax.bar(xs + (k - (len(series) - 1) / 2) * width, values, width, label=label)
    ax.set_xticks(xs, groups, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path)
