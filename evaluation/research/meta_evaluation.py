"""Which metric to trust: meta-evaluation the way the WMT metrics task does it (pure functions).

The model level's pairwise accuracy lives with the correlations (:mod:`.correlation`); this module
holds what needs the judgments behind the comparisons.

Items (the item level)
    An :class:`Item` is one image of one compared pair (m2 against m1 in one language): its human
    score is the mean of its raters' −3 … +3 scores from m2's side, its metric score is
    metric(m2's caption) − metric(m1's caption). Each item is thus one pair of outputs, which is
    what mt-metrics-eval's item-level Kendall sees with two systems per item
    (``KendallWithTiesOpt(gold, metric, variant="acc23", num_sys=2, average_by="item",
    sample_rate=1.0)``, gold and metric packed as m1's scores (all 0) then m2's).

acc23 with tie calibration (Deutsch et al. 2023, "Ties Matter")
    The metric decides "m2 better", "tie" or "m1 better" for an item: a tie when |Δmetric| ≤ ε.
    acc23 is the share of items where that decision equals the sign of the human score (a human
    score of exactly 0 is a tie, which only a metric tie matches). ε is chosen to maximise acc23 over
    the candidates 0 and every distinct |Δmetric| (a threshold between two of them decides nothing
    differently), and among equal maxima the smallest ε: the same search as mt-metrics-eval's
    ``tau_optimization`` with ``sample_rate=1``, done with sorting and cumulative counts instead of
    a Python loop. τ_23 = 2 × acc23 − 1 on the same decisions, so one ε maximises both.
    :func:`tie_calibrated_pairs` is the same over every pair of captions with absolute ratings
    (the per-caption agreement; ``average_by="none"``).

Intervals
    95% percentile bootstrap over items, ε re-calibrated in each resample (the interval is that of
    the calibrated accuracy, not of one fixed ε); "all" resamples within each language and pools.

Is one metric better than another? (:func:`trust_table`)
    For each two metrics on the same items, a paired permutation test as mt-metrics-eval's
    ``PermutationSigDiff`` with ``KendallWithTiesOpt``: in each of ``n_permutations`` draws every
    item's two metric scores are swapped with probability 1/2, both hybrids are re-calibrated, and
    the p-value that the better metric is better is the share of draws whose difference in accuracy
    is at least the observed one. Each metric's item scores are first divided by their root mean
    square (mt-metrics-eval z-scores whole score vectors for the same reason, so that a hybrid mixes
    comparable scales; a difference has no offset to remove, and dividing keeps its sign).
    Significance clusters as mt-metrics-eval's ``AssignRanks``: metrics sorted by accuracy, the rank
    increases at a metric only when some metric above it, since the current cluster began, is
    significantly better (p ≤ ``alpha``).

Soft pairwise accuracy (WMT24, :func:`with_soft_pairwise_accuracy`)
    Per comparison, the p-value that m2 beats m1 for people, by a permutation test over images
    (each image's score from m2's side changes sign with probability 1/2; the statistic is the sum),
    against the same p-value from the metric's per-caption deltas, with the same draws. The soft
    pairwise accuracy of a group of comparisons is 1 − the mean absolute difference of the two.

Numbers that are undefined are None, never NaN.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from evaluation.research.correlation import (
    ALL,
    CORRELATION_N_BOOT,
    Comparison,
    CorrelationResult,
    _rng,
    percentile_interval,
)

__all__ = [
    "ACC23_LABEL",
    "DEFAULT_N_PERMUTATIONS",
    "MAX_EXACT_PAIRS",
    "MIN_ITEMS",
    "SIGNIFICANCE_LEVEL",
    "Item",
    "LanguageVerdict",
    "MetricVerdict",
    "TieCalibrated",
    "TrustTable",
    "assign_ranks",
    "tie_calibrated",
    "tie_calibrated_pairs",
    "trust_table",
    "with_soft_pairwise_accuracy",
]

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
class Item:
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

    @property
    def pair(self) -> tuple[str, str, str]:
        """The comparison the item belongs to: ``(m1, m2, language)``, as ``Comparison.key``."""
        return (self.m1, self.m2, self.language)


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
            "acc23": self.acc23,
            "tau23": self.tau23,
            "epsilon": self.epsilon,
            "n": self.n,
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
            _bootstrap_best(h, m, n_boot=n_boot, rng=_rng(seed, f"acc23/{group}"), strata=strata)
        )
    return TieCalibrated(n=n, acc23=acc, tau23=2 * acc - 1, epsilon=float(thresholds[best]), ci=ci)


def _resample_weights(rng: np.random.Generator, rows: int, strata: np.ndarray) -> np.ndarray:
    """Bootstrap counts per item (rows × items), each stratum resampled to its own size."""
    n = len(strata)
    weights = np.zeros(rows * n)
    offsets = (np.arange(rows) * n)[:, None]
    for label in np.unique(strata):
        members = np.flatnonzero(strata == label)
        picks = members[rng.integers(0, len(members), size=(rows, len(members)))]
        weights += np.bincount((picks + offsets).ravel(), minlength=rows * n)
    return weights.reshape(rows, n)


def _bootstrap_best(
    h: np.ndarray, m: np.ndarray, *, n_boot: int, rng: np.random.Generator, strata: Sequence[int] | None
) -> np.ndarray:
    """The calibrated acc23 of ``n_boot`` resamples of the items."""
    labels = np.zeros(len(h), dtype=int) if strata is None else np.asarray(strata)
    out = []
    for start in range(0, n_boot, _BLOCK):
        weights = _resample_weights(rng, min(_BLOCK, n_boot - start), labels)
        _, values = _agreements(h, m, weights)
        out.append(values.max(axis=1) / len(h))
    return np.concatenate(out)


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
        rng = _rng(seed, "acc23/pairs")
        first = rng.integers(0, n, size=max_pairs)
        second = (first + rng.integers(1, n, size=max_pairs)) % n  # never the same caption
        i, j = np.minimum(first, second), np.maximum(first, second)
    else:
        i, j = np.triu_indices(n, k=1)
    # A pair is one "item": its human score is the difference of ratings, its metric score the
    # difference of scores (as tau_optimization's abs(m1 - m2) with m1 the earlier caption).
    result = tie_calibrated(h[i] - h[j], m[i] - m[j])
    return replace(result, n=len(i), sampled=sampled)


# --------------------------------------------------------------------------------------------------
# Significance between metrics and clusters


def assign_ranks(p_values: np.ndarray, alpha: float = SIGNIFICANCE_LEVEL) -> list[int]:
    """Cluster ranks from a matrix of p-values, metrics sorted from best to worst.

    ``p_values[i, j]`` (i < j) is the p-value that metric i is better than metric j. Metric i starts
    a new cluster (rank + 1) when a metric of the current cluster above it is significantly better
    (p ≤ ``alpha``); the same rule as mt-metrics-eval's ``AssignRanks``.
    """
    ranks, rank, start = [], 1, 0
    for i in range(len(p_values)):
        if any(p_values[start:i, i] <= alpha):
            rank += 1
            start = i
        ranks.append(rank)
    return ranks


def _best_agreements_rows(h: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The calibrated number of agreeing items for each row of metric differences (rows × items)."""
    order = np.argsort(np.abs(rows), axis=1)
    d = np.take_along_axis(np.abs(rows), order, axis=1)
    signs = np.take_along_axis(np.sign(rows), order, axis=1)
    hs = np.sign(h)[order]
    human_tie = hs == 0
    same_sign = (hs == signs) & ~human_tie
    values = np.cumsum(human_tie, axis=1) + (
        same_sign.sum(axis=1, keepdims=True) - np.cumsum(same_sign, axis=1)
    )
    # Only the last item of a run of equal |Δ| is a threshold; ε = 0 with nothing tied is one too.
    is_end = np.ones_like(d, dtype=bool)
    is_end[:, :-1] = d[:, 1:] != d[:, :-1]
    values = np.where(is_end, values, -1)
    return np.maximum(values.max(axis=1), same_sign.sum(axis=1))


def _scaled(values: np.ndarray) -> np.ndarray:
    rms = float(np.sqrt(np.mean(values**2)))
    return values / rms if rms > 0 else values


def permutation_p_value(
    human: np.ndarray,
    better: np.ndarray,
    worse: np.ndarray,
    *,
    n_permutations: int,
    rng: np.random.Generator,
) -> float:
    """The p-value that the metric ``better`` agrees with people more than ``worse`` on the same
    items (paired permutation, see the module docstring)."""
    a, b = _scaled(better), _scaled(worse)
    observed = _best_agreements_rows(human, a[None, :])[0] - _best_agreements_rows(human, b[None, :])[0]
    at_least = 0
    for start in range(0, n_permutations, _BLOCK):
        rows = min(_BLOCK, n_permutations - start)
        swap = rng.random((rows, len(human))) < 0.5
        first = np.where(swap, b, a)
        second = np.where(swap, a, b)
        # Agreements are counts of items: the comparison is exact.
        diff = _best_agreements_rows(human, first) - _best_agreements_rows(human, second)
        at_least += int((diff >= observed).sum())
    return at_least / n_permutations


@dataclass(frozen=True)
class MetricVerdict:
    """One metric in one language (or ``all``): its calibrated acc23 and its significance cluster."""

    metric: str
    result: TieCalibrated
    rank: int | None = None  # 1 = the best cluster; None where no test was run
    best: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, **self.result.as_dict(), "rank": self.rank, "best": self.best}


Status = Literal["ranked", "undecided", "too_few", "empty"]


@dataclass(frozen=True)
class LanguageVerdict:
    """The metrics of one language (or ``all``), best first, with the tests between them.

    ``status``: ``ranked`` (the clusters tell some metrics apart), ``undecided`` (every metric in the
    first cluster: these ``n_items`` items cannot tell the metrics apart), ``too_few`` (fewer than
    :data:`MIN_ITEMS` items: no test run) or ``empty``. ``p_values[a][b]``: the p-value that metric a
    is better than metric b, for a ranked above b.
    """

    language: str
    n_items: int
    n_pairs: int
    verdicts: tuple[MetricVerdict, ...]
    status: Status
    p_values: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def verdict(self, metric: str) -> MetricVerdict | None:
        return next((v for v in self.verdicts if v.metric == metric), None)

    @property
    def note(self) -> str:
        if self.status == "too_few":
            return f"too few items to tell metrics apart ({self.n_items} < {MIN_ITEMS}): no significance test"
        if self.status == "undecided":
            return f"no metric is significantly better than another on these {self.n_items} items"
        if self.status == "empty":
            return "no item"
        return ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "language": self.language,
            "n_items": self.n_items,
            "n_pairs": self.n_pairs,
            "status": self.status,
            "note": self.note,
            "metrics": [verdict.as_dict() for verdict in self.verdicts],
            "p_values": {a: dict(row) for a, row in self.p_values.items()},
        }


@dataclass(frozen=True)
class TrustTable:
    """Metrics × languages: item-level acc23 with intervals and significance clusters.

    ``languages`` has ``all`` first (every item pooled, ε calibrated on the pool), then the
    languages in sorted order; ``metrics`` are ordered by their pooled accuracy.
    """

    metrics: tuple[str, ...]
    languages: Mapping[str, LanguageVerdict]
    n_boot: int
    n_permutations: int
    seed: int
    alpha: float = SIGNIFICANCE_LEVEL
    label: str = ACC23_LABEL

    def cell(self, metric: str, language: str) -> MetricVerdict | None:
        verdict = self.languages.get(language)
        return verdict.verdict(metric) if verdict is not None else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "measure": self.label,
            "metrics": list(self.metrics),
            "n_boot": self.n_boot,
            "n_permutations": self.n_permutations,
            "seed": self.seed,
            "alpha": self.alpha,
            "min_items": MIN_ITEMS,
            "languages": {code: verdict.as_dict() for code, verdict in self.languages.items()},
        }


def _check_items(items: Sequence[Item]) -> None:
    seen: set[tuple[str, str, str, str]] = set()
    for item in items:
        where = f"{item.m2} vs {item.m1} in {item.language}, image {item.image}"
        if item.language == ALL:
            raise ValueError(f"{where}: {ALL!r} is reserved for the pooled result, not a language")
        if item.m1 == item.m2:
            raise ValueError(f"{where}: a model is compared with itself")
        key = (*item.pair, item.image)
        if key in seen:
            raise ValueError(f"{where}: the item is given twice")
        seen.add(key)
        if not np.isfinite(item.human) or not all(np.isfinite(v) for v in item.deltas.values()):
            raise ValueError(f"{where}: scores must be finite numbers")


def _language_verdict(
    language: str,
    items: Sequence[Item],
    metrics: Sequence[str],
    *,
    n_boot: int,
    n_permutations: int,
    seed: int,
    alpha: float,
    strata_of: Mapping[str, int] | None,
) -> LanguageVerdict:
    results: dict[str, TieCalibrated] = {}
    for metric in metrics:
        having = [item for item in items if metric in item.deltas]
        if not having:
            continue
        strata = [strata_of[item.language] for item in having] if strata_of else None
        results[metric] = tie_calibrated(
            [item.human for item in having],
            [item.deltas[metric] for item in having],
            n_boot=n_boot,
            seed=seed,
            group=f"{language}/{metric}",
            strata=strata,
        )
    order = sorted(results, key=lambda metric: -(results[metric].acc23 or 0.0))  # stable: ties keep order
    n_items = len(items)
    n_pairs = len({item.pair for item in items})
    if not order:
        return LanguageVerdict(language, n_items, n_pairs, (), "empty")
    if n_items < MIN_ITEMS:
        verdicts = tuple(MetricVerdict(metric, results[metric]) for metric in order)
        return LanguageVerdict(language, n_items, n_pairs, verdicts, "too_few")
    p = np.ones((len(order), len(order)))
    p_values: dict[str, dict[str, float]] = defaultdict(dict)
    rng = _rng(seed, f"significance/{language}")
    for a in range(len(order)):
        for b in range(a + 1, len(order)):
            common = [item for item in items if order[a] in item.deltas and order[b] in item.deltas]
            human = np.array([item.human for item in common])
            p[a, b] = permutation_p_value(
                human,
                np.array([item.deltas[order[a]] for item in common]),
                np.array([item.deltas[order[b]] for item in common]),
                n_permutations=n_permutations,
                rng=rng,
            )
            p_values[order[a]][order[b]] = float(p[a, b])
    ranks = assign_ranks(p, alpha)
    verdicts = tuple(
        MetricVerdict(metric, results[metric], rank=rank, best=rank == 1)
        for metric, rank in zip(order, ranks)
    )
    status: Status = "undecided" if len(order) > 1 and max(ranks) == 1 else "ranked"
    return LanguageVerdict(language, n_items, n_pairs, verdicts, status, dict(p_values))


def trust_table(
    items: Iterable[Item],
    *,
    metrics: Sequence[str] | None = None,
    n_boot: int = CORRELATION_N_BOOT,
    n_permutations: int = DEFAULT_N_PERMUTATIONS,
    seed: int = 0,
    alpha: float = SIGNIFICANCE_LEVEL,
) -> TrustTable:
    """The item-level verdict per language and over all languages (see the module docstring).

    ``metrics``: these, in this order of preference for ties (default: every metric of the items, in
    the order first met). A metric is judged on the items that have it; two metrics are tested on
    the items that have both. The same ``seed`` gives the same intervals and p-values. Raises
    ``ValueError`` for an item given twice, a model compared with itself, a language named ``all``,
    a score that is not finite, or a negative ``n_boot`` / ``n_permutations``.
    """
    pool = list(items)
    _check_items(pool)
    if n_boot < 0 or n_permutations < 0:
        raise ValueError("n_boot and n_permutations must be 0 or more")
    names = (
        list(metrics) if metrics is not None else list(dict.fromkeys(m for item in pool for m in item.deltas))
    )
    by_language: dict[str, list[Item]] = defaultdict(list)
    for item in pool:
        by_language[item.language].append(item)
    strata_of = {language: index for index, language in enumerate(sorted(by_language))}
    common = {"n_boot": n_boot, "n_permutations": n_permutations, "seed": seed, "alpha": alpha}
    verdicts = {ALL: _language_verdict(ALL, pool, names, strata_of=strata_of, **common)}
    for language in sorted(by_language):
        verdicts[language] = _language_verdict(
            language, by_language[language], names, strata_of=None, **common
        )
    pooled = [verdict.metric for verdict in verdicts[ALL].verdicts]
    ordered = tuple(pooled + [name for name in names if name not in pooled])
    return TrustTable(ordered, verdicts, n_boot=n_boot, n_permutations=n_permutations, seed=seed, alpha=alpha)


# --------------------------------------------------------------------------------------------------
# Soft pairwise accuracy (model level, from the items behind each comparison)


def sign_flip_p_values(columns: np.ndarray, *, n_permutations: int, rng: np.random.Generator) -> np.ndarray:
    """For each column of per-image scores (images × columns), the permutation p-value that its sum
    is positive: the share of sign-flip draws whose sum is at least the observed one."""
    observed = columns.sum(axis=0)
    # Sums of the same numbers in another order can differ in the last bits: a draw that flips
    # nothing must count as "at least the observed".
    slack = 1e-9 * (np.abs(columns).sum(axis=0) + 1.0)
    at_least = np.zeros(columns.shape[1])
    for start in range(0, n_permutations, _BLOCK):
        rows = min(_BLOCK, n_permutations - start)
        signs = np.where(rng.random((rows, columns.shape[0])) < 0.5, -1.0, 1.0)
        at_least += (signs @ columns >= observed - slack).sum(axis=0)
    return at_least / n_permutations


def with_soft_pairwise_accuracy(
    results: Mapping[str, Mapping[str, CorrelationResult]],
    comparisons: Sequence[Comparison],
    items: Iterable[Item],
    *,
    n_permutations: int = DEFAULT_N_PERMUTATIONS,
    n_boot: int = CORRELATION_N_BOOT,
    seed: int = 0,
) -> dict[str, dict[str, CorrelationResult]]:
    """``results`` (of :func:`~evaluation.research.correlation.correlate` on ``comparisons``) with the
    soft pairwise accuracy filled in, from the items behind each comparison.

    A comparison counts for a metric when it has items and every one of its items has that metric.
    The interval is a percentile bootstrap over those comparisons (p-values fixed), "all"
    resampling within each language. Raises ``ValueError`` like :func:`trust_table`.
    """
    pool = list(items)
    _check_items(pool)
    by_pair: dict[tuple[str, str, str], list[Item]] = defaultdict(list)
    for item in pool:
        by_pair[item.pair].append(item)
    # |p_people − p_metric| per metric, language and comparison.
    gaps: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for comparison in comparisons:
        having = by_pair.get(comparison.key, [])
        metrics = [m for m in comparison.deltas if having and all(m in item.deltas for item in having)]
        if not metrics:
            continue
        columns = np.array([[item.human, *(item.deltas[m] for m in metrics)] for item in having])
        rng = _rng(seed, "spa/{}/{}/{}".format(*comparison.key))
        p = sign_flip_p_values(columns, n_permutations=n_permutations, rng=rng)
        for index, metric in enumerate(metrics, start=1):
            gaps[metric][comparison.language].append(abs(p[0] - p[index]))
    out: dict[str, dict[str, CorrelationResult]] = {}
    for metric, by_language in results.items():
        out[metric] = {}
        for language, result in by_language.items():
            strata = list(gaps[metric].values()) if language == ALL else [gaps[metric].get(language, [])]
            strata = [np.array(s) for s in strata if len(s)]
            if not strata:
                out[metric][language] = result
                continue
            value = 1.0 - float(np.concatenate(strata).mean())
            ci = None
            if n_boot > 0:
                rng = _rng(seed, f"spa-boot/{metric}/{language}")
                draws = np.concatenate(
                    [s[rng.integers(0, len(s), size=(n_boot, len(s)))] for s in strata], axis=1
                )
                ci = percentile_interval(1.0 - draws.mean(axis=1))
            out[metric][language] = replace(
                result,
                soft_pairwise_accuracy=value,
                soft_pairwise_accuracy_ci=ci,
                n_soft=sum(len(s) for s in strata),
            )
    return out
