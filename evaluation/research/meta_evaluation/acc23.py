"""Items of the item level and acc23 with tie calibration, with bootstrap intervals (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from core.records import attributes
from evaluation.research.bootstrap import percentile_interval, seeded_rng
from evaluation.research.correlation import ALL, ComparedPair

ACC23_LABEL = (
    "acc23 with tie calibration (Deutsch et al. 2023; ε maximises it, smallest ε among equal maxima)"
)
# Draws of the permutation tests (significance between metrics, soft pairwise accuracy): as
# mt-metrics-eval's default k; the Monte-Carlo error of a p-value near 0.05 is then about ±0.007.
DEFAULT_N_PERMUTATIONS = 1000
SIGNIFICANCE_LEVEL = 0.05
# Below this many items a language gets its accuracies but no significance test and no cluster.
MIN_ITEMS = 10
# Per-caption tie calibration enumerates every pair of captions; above this many pairs (about 3,160
# captions in one group) it uses this many pairs drawn at random with the seed, as mt-metrics-eval's
# sample_rate does (its default samples 10% of the pairs), and says so.
MAX_EXACT_PAIRS = 5_000_000
# Rows of bootstrap or permutation draws computed at once (bounds memory at about 8 × rows × items bytes).
_BLOCK = 256


@dataclass(frozen=True)
class Item(ComparedPair):
    """One image of one compared pair (m2 against m1 in one language), the unit of the item level.

    ``human`` is the mean of the image's judgments, each a score from m2's side (−3 … +3, positive:
    people prefer m2's caption); ``n_judgments`` how many. ``deltas`` maps each metric's name to
    metric(m2's caption) − metric(m1's caption) on this image.
    """

    language: str
    m1: str
    m2: str
    image: str
    human: float
    n_judgments: int
    deltas: Mapping[str, float] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------------
# acc23 with tie calibration


@dataclass(frozen=True)
class TieCalibrated:
    """acc23 (and τ_23) at the calibrated ε over ``n`` items (or caption pairs); None when n = 0.

    ``sampled``: the pairs were drawn at random (:data:`MAX_EXACT_PAIRS`), so the values estimate
    the exact ones.
    """

    n: int
    acc23: float | None = None
    tau23: float | None = None
    epsilon: float | None = None
    ci: tuple[float, float] | None = None
    sampled: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            **attributes(self, "acc23", "tau23", "epsilon", "n"),
            "acc23_ci": list(self.ci) if self.ci is not None else None,
            "sampled": self.sampled,
        }


def _as_vectors(human: Sequence[float], metric: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    h = np.asarray(human, dtype=float)
    m = np.asarray(metric, dtype=float)
    if h.ndim != 1 or h.shape != m.shape:
        raise ValueError("human and metric scores must be two sequences of the same length")
    if not (np.isfinite(h).all() and np.isfinite(m).all()):
        raise ValueError("human and metric scores must be finite numbers")
    return h, m


def _agreements(h: np.ndarray, m: np.ndarray, weights: np.ndarray | None = None):
    """``(thresholds, agreements)``: for each candidate ε, ascending, the (weighted) number of items
    whose three-way metric decision matches the sign of the human score.

    Sorted by |Δmetric|, an item tied at ε is one of the first k: it agrees when people tie, and
    stops agreeing when its sign matched theirs. ``weights``: one row per resample (bootstrap
    counts); the agreements then have one row per resample.
    """
    # Any order of equal |Δmetric| will do: only the last of each run of equal values is a threshold.
    order = np.argsort(np.abs(m))
    d = np.abs(m)[order]
    human_tie = (h == 0)[order]
    # np.sign(0) = 0 never equals the sign of a non-zero human score: a metric tie never "agrees in sign".
    same_sign = ((np.sign(h) == np.sign(m)) & (h != 0))[order]
    ends = np.flatnonzero(np.r_[d[1:] != d[:-1], True])  # the last item of each distinct |Δmetric|
    thresholds = d[ends]
    if weights is None:
        tied_agree = np.cumsum(human_tie)[ends]
        lost = np.cumsum(same_sign)[ends]
        values = tied_agree + (same_sign.sum() - lost)
        untied = same_sign.sum()
    else:
        w = weights[:, order]
        tied_agree = np.cumsum(w * human_tie, axis=1)[:, ends]
        lost = np.cumsum(w * same_sign, axis=1)[:, ends]
        total = (w * same_sign).sum(axis=1, keepdims=True)
        values = tied_agree + (total - lost)
        untied = total[:, 0]
    if d[0] > 0:
        # No exact metric tie: ε = 0 (nothing tied) is a candidate of its own, first.
        thresholds = np.r_[0.0, thresholds]
        values = np.c_[untied, values] if weights is not None else np.r_[untied, values]
    return thresholds, values


def tie_calibrated(
    human: Sequence[float],
    metric: Sequence[float],
    *,
    n_boot: int = 0,
    seed: int = 0,
    group: str = ALL,
    strata: Sequence[int] | None = None,
) -> TieCalibrated:
    """acc23, τ_23 and ε of items: ``human`` the items' human scores (the sign is what counts),
    ``metric`` their metric differences. See the module docstring.

    ``n_boot`` > 0 adds the 95% bootstrap interval (ε re-calibrated in each resample), drawn from
    the stream of ``seed`` and ``group``; ``strata`` (a label per item, e.g. its language's index)
    makes the resamples keep each stratum's size. Raises ``ValueError`` for vectors of different
    lengths or values that are not finite.
    """
    h, m = _as_vectors(human, metric)
    n = len(h)
    if n == 0:
        return TieCalibrated(n=0)
    thresholds, values = _agreements(h, m)
    best = int(np.argmax(values))  # the first maximum: the smallest ε
    acc = float(values[best]) / n
    ci = None
    if n_boot > 0:
        ci = percentile_interval(
            _bootstrap_best(h, m, n_boot=n_boot, rng=seeded_rng(seed, f"acc23/{group}"), strata=strata)
        )
    return TieCalibrated(n=n, acc23=acc, tau23=2 * acc - 1, epsilon=float(thresholds[best]), ci=ci)


def _resample_weights(rng: np.random.Generator, rows: int, strata: np.ndarray) -> np.ndarray:
    """Bootstrap counts per item (rows × items), each stratum resampled to its own size."""
    n = len(strata)
    offsets = (np.arange(rows) * n)[:, None]
    drawn = []
    for label in np.unique(strata):
        members = np.flatnonzero(strata == label)
        picks = members[rng.integers(0, len(members), size=(rows, len(members)))]
        drawn.append((picks + offsets).ravel())
    # One count over every stratum's draws (the counts are integers: the order they are added in is moot).
    return np.bincount(np.concatenate(drawn), minlength=rows * n).reshape(rows, n).astype(float)


def _bootstrap_best(
    h: np.ndarray, m: np.ndarray, *, n_boot: int, rng: np.random.Generator, strata: Sequence[int] | None
) -> np.ndarray:
    """The calibrated acc23 of ``n_boot`` resamples of the items."""
    labels = np.zeros(len(h), dtype=int) if strata is None else np.asarray(strata)
    best = _best_weighted_counts(h, m)
    out = []
    for start in range(0, n_boot, _BLOCK):
        weights = _resample_weights(rng, min(_BLOCK, n_boot - start), labels)
        out.append(best(weights) / len(h))
    return np.concatenate(out)


def _bootstrap_best_cumulative(
    h: np.ndarray, m: np.ndarray, *, n_boot: int, rng: np.random.Generator, strata: Sequence[int] | None
) -> np.ndarray:
    """:func:`_bootstrap_best` as first written: two cumulative sums over every item of every
    resample, each stratum's counts added one by one (the reference the benchmark measures against;
    the same draws and numbers)."""
    labels = np.zeros(len(h), dtype=int) if strata is None else np.asarray(strata)
    n = len(h)
    out = []
    for start in range(0, n_boot, _BLOCK):
        rows = min(_BLOCK, n_boot - start)
        weights = np.zeros(rows * n)
        offsets = (np.arange(rows) * n)[:, None]
        for label in np.unique(labels):
            members = np.flatnonzero(labels == label)
            picks = members[rng.integers(0, len(members), size=(rows, len(members)))]
            weights += np.bincount((picks + offsets).ravel(), minlength=rows * n)
        _, values = _agreements(h, m, weights.reshape(rows, n))
        out.append(values.max(axis=1) / n)
    return np.concatenate(out)


def _best_weighted_counts(h: np.ndarray, m: np.ndarray):
    """A function of bootstrap counts (rows × items) giving each row's calibrated number of agreeing
    items: ``_agreements(h, m, weights)[1].max(axis=1)``, without its two cumulative sums over every
    item of every row.

    The count at ε is ``Σ w·same_sign + Σ_{|Δ| ≤ ε} w·(tie − same_sign)``; the sum rises only at a
    human tie, so its maximum is at ε below every |Δ| or at the end of a group of equal |Δ| holding a
    tie: the items are summed per stretch between two such groups (``reduceat``) and only those sums
    are accumulated. The counts are integers, which float64 adds exactly in any order."""
    order = np.argsort(np.abs(m))
    d = np.abs(m)[order]
    tie = (h == 0)[order]
    same_sign = (np.sign(h) == np.sign(m)) & (h != 0)
    group = np.r_[0, np.cumsum(d[1:] != d[:-1])]
    candidates = np.unique(group[tie])
    bucket = np.searchsorted(candidates, group, side="left")  # non-decreasing along ``order``
    keep = bucket < len(candidates)  # past the last tie only same-sign items: the sum only falls
    columns = order[keep]
    step = tie[keep].astype(float) - same_sign[order][keep]
    starts = np.flatnonzero(np.r_[True, bucket[keep][1:] != bucket[keep][:-1]]) if keep.any() else None
    agreeing = same_sign.astype(float)

    def best(weights: np.ndarray) -> np.ndarray:
        total = weights @ agreeing
        if starts is None:
            return total
        sums = np.add.reduceat(weights[:, columns] * step, starts, axis=1)
        return total + np.maximum(np.cumsum(sums, axis=1).max(axis=1), 0.0)

    return best


def tie_calibrated_pairs(
    human: Sequence[float], metric: Sequence[float], *, seed: int = 0, max_pairs: int = MAX_EXACT_PAIRS
) -> TieCalibrated:
    """acc23, τ_23 and ε over every pair of captions (absolute ratings: a pair is concordant when the
    caption people rated higher has the higher score, tied when people gave the same rating).

    This is mt-metrics-eval's ``KendallWithTiesOpt(ratings, scores, variant="acc23",
    average_by="none", sample_rate=1.0)``. Above ``max_pairs`` pairs, ``max_pairs`` pairs drawn at
    random (seeded) stand for all of them and the result says ``sampled``. Raises like
    :func:`tie_calibrated`.
    """
    h, m = _as_vectors(human, metric)
    n = len(h)
    n_pairs = n * (n - 1) // 2
    if n_pairs == 0:
        return TieCalibrated(n=0)
    sampled = n_pairs > max_pairs
    if sampled:
        rng = seeded_rng(seed, "acc23/pairs")
        first = rng.integers(0, n, size=max_pairs)
        second = (first + rng.integers(1, n, size=max_pairs)) % n  # never the same caption
        i, j = np.minimum(first, second), np.maximum(first, second)
    else:
        i, j = np.triu_indices(n, k=1)
    # A pair is one "item": its human score is the difference of ratings, its metric score the
    # difference of scores (as tau_optimization's abs(m1 - m2) with m1 the earlier caption).
    result = tie_calibrated(h[i] - h[j], m[i] - m[j])
    return replace(result, n=len(i), sampled=sampled)
