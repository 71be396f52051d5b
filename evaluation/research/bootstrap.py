"""Bootstrap intervals of the model level's correlations, vectorised: one row per resample (pure).

Every coefficient of :mod:`.correlation` is recomputed on each resample at once (numpy over rows),
which is what makes 10,000 resamples cheap; the seeded generators give the same draws for the same
seed and group wherever they are used (correlations, meta-evaluation).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

__all__ = [
    "batch_coefficients",
    "batch_kendall",
    "batch_pearson",
    "batch_spearman",
    "bootstrap_intervals",
    "percentile_interval",
    "seeded_rng",
]


def batch_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    denominator = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(axis=1) / denominator
    r[denominator == 0] = np.nan
    return np.clip(r, -1.0, 1.0)


def batch_spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return batch_pearson(stats.rankdata(x, axis=1), stats.rankdata(y, axis=1))


def batch_kendall(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(τ_b, τ_c) per row, by the same formulas as scipy.stats.kendalltau.

    Only the order within a row matters, so the values are replaced by dense ranks (small integers:
    the pair signs then fit in int8, which is what makes 10,000 resamples cheap).
    """
    rows, size = x.shape
    first, second = np.triu_indices(size, k=1)
    tau_b = np.empty(rows)
    tau_c = np.empty(rows)
    chunk = max(1, 8_000_000 // max(1, len(first)))
    for start in range(0, rows, chunk):
        rx = stats.rankdata(x[start : start + chunk], method="dense", axis=1).astype(np.int32)
        ry = stats.rankdata(y[start : start + chunk], method="dense", axis=1).astype(np.int32)
        sx = np.sign(rx[:, first] - rx[:, second]).astype(np.int8)
        sy = np.sign(ry[:, first] - ry[:, second]).astype(np.int8)
        concordance = (sx * sy).sum(axis=1, dtype=np.int64).astype(float)
        untied_x = np.count_nonzero(sx, axis=1).astype(float)
        untied_y = np.count_nonzero(sy, axis=1).astype(float)
        m = np.minimum(rx.max(axis=1), ry.max(axis=1)).astype(float)  # distinct values
        with np.errstate(invalid="ignore", divide="ignore"):
            b = concordance / np.sqrt(untied_x * untied_y)
            c = 2 * concordance / (size * size * (m - 1) / m)
        undefined = (untied_x == 0) | (untied_y == 0)
        b[undefined] = np.nan
        c[undefined] = np.nan
        tau_b[start : start + chunk] = np.clip(b, -1.0, 1.0)
        tau_c[start : start + chunk] = np.clip(c, -1.0, 1.0)
    return tau_b, tau_c


def batch_coefficients(x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    tau_b, tau_c = batch_kendall(x, y)
    return {
        "pearson": batch_pearson(x, y),
        "spearman": batch_spearman(x, y),
        "kendall_tau_b": tau_b,
        "kendall_tau_c": tau_c,
    }


def seeded_rng(seed: int, group: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=tuple(group.encode("utf-8"))))


def bootstrap_intervals(
    strata: Sequence[tuple[np.ndarray, np.ndarray]], *, mirrored: bool, n_boot: int, seed: int, group: str
) -> dict[str, tuple[float, float] | None]:
    """95% percentile intervals; ``strata`` are (ΔS×S, Δmetric) arrays of comparisons, one per language."""
    rng = seeded_rng(seed, group)
    xs, ys = [], []
    for sxs, metric in strata:
        picks = rng.integers(0, len(sxs), size=(n_boot, len(sxs)))
        xs.append(sxs[picks])
        ys.append(metric[picks])
    x = np.concatenate(xs, axis=1)
    y = np.concatenate(ys, axis=1)
    # A comparison and its mirror agree or disagree together: the accuracy of the comparisons as drawn.
    accuracy = (np.sign(x) == np.sign(y)).mean(axis=1)
    out: dict[str, tuple[float, float] | None] = {"pairwise_accuracy": percentile_interval(accuracy)}
    if mirrored:
        x = np.concatenate([x, -x], axis=1)
        y = np.concatenate([y, -y], axis=1)
    for name, values in batch_coefficients(x, y).items():
        out[name] = percentile_interval(values)
    return out


def percentile_interval(values: np.ndarray) -> tuple[float, float] | None:
    """The 95% percentile interval of bootstrap values, over the resamples where the value is
    defined (finite); None when fewer than half of them are."""
    defined = values[np.isfinite(values)]
    if not len(defined) or len(defined) * 2 < len(values):
        return None
    lo, hi = np.percentile(defined, [2.5, 97.5])
    return (float(lo), float(hi))
