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
    "average_ranks_counts",
    "batch_kendall_counts",
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


# Above this many distinct points a resample's τ is counted pair by pair (batch_kendall): the
# quadratic form holds a points × points matrix (8 bytes each: 4,000 points are 128 MB).
_MAX_COUNTED_POINTS = 4000


def _value_groups(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(order, starts, group)``: the points sorted by value, where each run of equal values starts
    in that order, and each point's run."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    group = np.empty(len(values), dtype=np.intp)
    group[order] = np.cumsum(np.r_[False, ordered[1:] != ordered[:-1]])
    return order, starts, group


def _per_value(counts: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(n_v, group)``: how many drawn points hold each distinct value (resamples × values, ascending)
    and each point's value index."""
    order, starts, group = _value_groups(values)
    return np.add.reduceat(counts[:, order], starts, axis=1), group


def batch_kendall_counts(
    x: np.ndarray, y: np.ndarray, counts: np.ndarray, *, mirrored: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """(τ_b, τ_c) per resample, each resample given as how many times it holds each point (x, y)
    (``counts``: resamples × points): the numbers :func:`batch_kendall` gives on the resampled rows.
    ``mirrored``: each resample also holds every drawn point negated, as many times.

    Every count behind τ is a count of pairs of drawn points, an integer: concordant minus discordant
    pairs are ``½ cᵀ S c`` with ``S[a, b] = sign(x_a − x_b) · sign(y_a − y_b)`` (zero for a point with
    itself or a copy of it), the pairs untied in x are ``(N² − Σ_v n_v²) / 2`` over the values v of x,
    and m is the number of values drawn. One matrix product per resample block instead of a pass over
    the N (N − 1) / 2 pairs of each (mirrored: ``c (S₁₁ + S₁₂) cᵀ``, S₁₂ pairing a point with a
    negated one, a quarter of the products); float64 holds these integers exactly, so the τ are the
    same to the last bit."""
    counts = np.asarray(counts, dtype=float)
    pairs = np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])
    if mirrored:
        pairs = pairs + np.sign(x[:, None] + x[None, :]) * np.sign(y[:, None] + y[None, :])
        concordance = ((counts @ pairs) * counts).sum(axis=1)
        counts, x, y = np.concatenate([counts, counts], axis=1), np.r_[x, -x], np.r_[y, -y]
    else:
        concordance = 0.5 * ((counts @ pairs) * counts).sum(axis=1)
    size = int(round(counts[0].sum())) if len(counts) else 0

    def untied_and_distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n_v, _ = _per_value(counts, values)
        return (size * size - (n_v * n_v).sum(axis=1)) / 2, (n_v > 0).sum(axis=1).astype(float)

    untied_x, distinct_x = untied_and_distinct(x)
    untied_y, distinct_y = untied_and_distinct(y)
    m = np.minimum(distinct_x, distinct_y)
    with np.errstate(invalid="ignore", divide="ignore"):
        b = concordance / np.sqrt(untied_x * untied_y)
        c = 2 * concordance / (size * size * (m - 1) / m)
    undefined = (untied_x == 0) | (untied_y == 0)
    b[undefined] = np.nan
    c[undefined] = np.nan
    return np.clip(b, -1.0, 1.0), np.clip(c, -1.0, 1.0)


def average_ranks_counts(values: np.ndarray, counts: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``scipy.stats.rankdata(rows, axis=1)`` (average ranks) of resampled rows given as ``counts``
    of the points ``values`` (resamples × points) and ``points`` (resamples × positions: the point
    at each position of the row): the rank of a value is the number of drawn values below it plus
    (its own number + 1) / 2, a half-integer, the same float as scipy's."""
    n_v, group = _per_value(np.asarray(counts, dtype=float), values)
    below = np.cumsum(n_v, axis=1) - n_v
    ranks = below + (n_v + 1) / 2
    return np.take_along_axis(ranks, group[points], axis=1)


def seeded_rng(seed: int, group: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=tuple(group.encode("utf-8"))))


def bootstrap_intervals(
    strata: Sequence[tuple[np.ndarray, np.ndarray]], *, mirrored: bool, n_boot: int, seed: int, group: str
) -> dict[str, tuple[float, float] | None]:
    """95% percentile intervals; ``strata`` are (ΔS×S, Δmetric) arrays of comparisons, one per language."""
    rng = seeded_rng(seed, group)
    xs, ys, per_stratum, drawn = [], [], [], []
    for sxs, metric in strata:
        picks = rng.integers(0, len(sxs), size=(n_boot, len(sxs)))
        drawn.append(picks)
        xs.append(sxs[picks])
        ys.append(metric[picks])
        rows = (np.arange(n_boot) * len(sxs))[:, None]
        per_stratum.append(
            np.bincount((picks + rows).ravel(), minlength=n_boot * len(sxs)).reshape(n_boot, -1)
        )
    x = np.concatenate(xs, axis=1)
    y = np.concatenate(ys, axis=1)
    # A comparison and its mirror agree or disagree together: the accuracy of the comparisons as drawn.
    accuracy = (np.sign(x) == np.sign(y)).mean(axis=1)
    out: dict[str, tuple[float, float] | None] = {"pairwise_accuracy": percentile_interval(accuracy)}
    points_x = np.concatenate([sxs for sxs, _ in strata])
    points_y = np.concatenate([metric for _, metric in strata])
    counts = np.concatenate(per_stratum, axis=1)
    # The point behind each position of a resampled row (a mirrored row: the negated point after all).
    offsets = np.cumsum([0] + [len(sxs) for sxs, _ in strata[:-1]])
    points = np.concatenate([o + p for o, p in zip(offsets, drawn)], axis=1)
    if mirrored:
        x = np.concatenate([x, -x], axis=1)
        y = np.concatenate([y, -y], axis=1)
        points = np.concatenate([points, points + len(points_x)], axis=1)
    if len(points_x) * (2 if mirrored else 1) > _MAX_COUNTED_POINTS:
        coefficients = batch_coefficients(x, y)
    else:
        tau_b, tau_c = batch_kendall_counts(points_x, points_y, counts, mirrored=mirrored)
        all_x, all_y = (
            (np.r_[points_x, -points_x], np.r_[points_y, -points_y]) if mirrored else (points_x, points_y)
        )
        all_counts = np.concatenate([counts, counts], axis=1) if mirrored else counts
        coefficients = {
            "pearson": batch_pearson(x, y),
            "spearman": batch_pearson(
                average_ranks_counts(all_x, all_counts, points),
                average_ranks_counts(all_y, all_counts, points),
            ),
            "kendall_tau_b": tau_b,
            "kendall_tau_c": tau_c,
        }
    for name, values in coefficients.items():
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
