"""Soft pairwise accuracy (WMT24): the model level from the items behind each comparison (pure)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from evaluation.research.bootstrap import percentile_interval, seeded_rng
from evaluation.research.correlation import ALL, CORRELATION_N_BOOT, Comparison, CorrelationResult
from evaluation.research.meta_evaluation.acc23 import _BLOCK, DEFAULT_N_PERMUTATIONS, Item
from evaluation.research.meta_evaluation.trust import _check_items

# --------------------------------------------------------------------------------------------------
# Soft pairwise accuracy (model level, from the items behind each comparison)


# Up to this many images a comparison's p-values are exact: every one of the 2^n sign patterns
# (262,144 at 18 images, about as much work as the draws below on 40 images).
SPA_EXACT_MAX_IMAGES = 18
# Above it, enough draws that the Monte-Carlo error of the soft pairwise accuracy stays within this
# bound (a bound on its standard error, see :func:`spa_draws`).
SPA_MAX_MC_ERROR = 0.01


def spa_draws(n_images: int, *, n_permutations: int = 0, max_error: float = SPA_MAX_MC_ERROR) -> int:
    """How many sign-flip draws the p-values of a comparison of ``n_images`` images take: 0 (exact
    enumeration) up to :data:`SPA_EXACT_MAX_IMAGES`, else at least ``n_permutations`` and at least
    1 / ``max_error``² draws. Each p-value estimated from N draws has a standard error of at most
    0.5 / √N, a gap |p_people − p_metric| at most twice that, and a mean of gaps at most its largest
    term's: 1 / √N bounds the standard error of the soft pairwise accuracy."""
    if n_images <= SPA_EXACT_MAX_IMAGES:
        return 0
    return max(n_permutations, math.ceil(1.0 / max_error**2))


def spa_mc_error(draws: int) -> float:
    """The bound on the soft pairwise accuracy's Monte-Carlo standard error at ``draws`` draws per
    comparison (0 for exact p-values)."""
    return 0.0 if draws == 0 else 1.0 / math.sqrt(draws)


def sign_flip_p_values(
    columns: np.ndarray, *, n_permutations: int, rng: np.random.Generator | None = None
) -> np.ndarray:
    """For each column of per-image scores (images × columns), the permutation p-value that its sum
    is positive: the share of sign patterns whose sum is at least the observed one. With
    ``n_permutations`` = 0 every one of the 2^images patterns is enumerated (exact; at most
    :data:`SPA_EXACT_MAX_IMAGES` images), otherwise that many patterns are drawn with ``rng``."""
    observed = columns.sum(axis=0)
    n = columns.shape[0]
    # Sums of the same numbers in another order can differ in the last bits: a pattern that flips
    # nothing must count as "at least the observed".
    slack = 1e-9 * (np.abs(columns).sum(axis=0) + 1.0)
    at_least = np.zeros(columns.shape[1])
    if n_permutations == 0:
        if n > SPA_EXACT_MAX_IMAGES:
            raise ValueError(f"exact enumeration is limited to {SPA_EXACT_MAX_IMAGES} images, not {n}")
        total = 1 << n
        bits = np.arange(n, dtype=np.int64)
        block = 1 << 14
        for start in range(0, total, block):
            patterns = np.arange(start, min(start + block, total), dtype=np.int64)
            signs = np.where((patterns[:, None] >> bits) & 1, -1.0, 1.0)
            at_least += (signs @ columns >= observed - slack).sum(axis=0)
        return at_least / total
    if rng is None:
        raise ValueError("drawn p-values need a random generator")
    for start in range(0, n_permutations, _BLOCK):
        rows = min(_BLOCK, n_permutations - start)
        # Eight fair signs per random byte: several times faster than one double per sign.
        bits = np.unpackbits(rng.integers(0, 256, size=(rows, (n + 7) // 8), dtype=np.uint8), axis=1, count=n)
        signs = 1.0 - 2.0 * bits
        at_least += (signs @ columns >= observed - slack).sum(axis=0)
    return at_least / n_permutations


# A comparison's |p_people − p_metric| per metric, with the draws behind it (0: exact).
ComparisonGaps = list[tuple[str, float, int]]


def comparison_gaps(
    comparisons: Sequence[Comparison],
    items: Iterable[Item],
    *,
    n_permutations: int = DEFAULT_N_PERMUTATIONS,
    seed: int = 0,
    max_error: float = SPA_MAX_MC_ERROR,
) -> dict[tuple[str, str, str], ComparisonGaps]:
    """``{comparison key: [(metric, |p_people − p_metric|, draws)]}`` for the comparisons that count
    for some metric (see :func:`with_soft_pairwise_accuracy`), in the order of ``comparisons``. A
    comparison's gaps depend on its own items alone (its draws come from its own stream). Pure;
    raises ``ValueError`` like :func:`trust_table`."""
    pool = list(items)
    _check_items(pool)
    by_pair: dict[tuple[str, str, str], list[Item]] = defaultdict(list)
    for item in pool:
        by_pair[item.key].append(item)
    out: dict[tuple[str, str, str], ComparisonGaps] = {}
    for comparison in comparisons:
        having = by_pair.get(comparison.key, [])
        metrics = [m for m in comparison.deltas if having and all(m in item.deltas for item in having)]
        if not metrics:
            continue
        columns = np.array([[item.human, *(item.deltas[m] for m in metrics)] for item in having])
        rng = seeded_rng(seed, "spa/{}/{}/{}".format(*comparison.key))
        draws = spa_draws(len(having), n_permutations=n_permutations, max_error=max_error)
        p = sign_flip_p_values(columns, n_permutations=draws, rng=rng)
        out[comparison.key] = [
            (metric, abs(p[0] - p[index]), draws) for index, metric in enumerate(metrics, start=1)
        ]
    return out


def with_gaps(
    results: Mapping[str, Mapping[str, CorrelationResult]],
    comparisons: Sequence[Comparison],
    gaps_of: Mapping[tuple[str, str, str], ComparisonGaps],
    *,
    n_boot: int = CORRELATION_N_BOOT,
    seed: int = 0,
) -> dict[str, dict[str, CorrelationResult]]:
    """``results`` with the soft pairwise accuracy filled in from the comparisons' gaps
    (:func:`comparison_gaps`; a comparison without gaps counts for no metric). Pure."""
    # |p_people − p_metric| per metric, language and comparison.
    gaps: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    # The fewest draws behind any gap, per metric and language (0: exact).
    draws_of: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for comparison in comparisons:
        for metric, gap, draws in gaps_of.get(comparison.key, ()):
            gaps[metric][comparison.language].append(gap)
            draws_of[metric][comparison.language].append(draws)
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
            used = (
                [d for ds in draws_of[metric].values() for d in ds]
                if language == ALL
                else draws_of[metric].get(language, [])
            )
            sampled = [d for d in used if d > 0]
            mc_error = spa_mc_error(min(sampled)) if sampled else 0.0
            ci = None
            if n_boot > 0:
                rng = seeded_rng(seed, f"spa-boot/{metric}/{language}")
                draws = np.concatenate(
                    [s[rng.integers(0, len(s), size=(n_boot, len(s)))] for s in strata], axis=1
                )
                ci = percentile_interval(1.0 - draws.mean(axis=1))
            out[metric][language] = replace(
                result,
                soft_pairwise_accuracy=value,
                soft_pairwise_accuracy_ci=ci,
                soft_pairwise_accuracy_mc_error=mc_error,
                n_soft=sum(len(s) for s in strata),
            )
    return out


def with_soft_pairwise_accuracy(
    results: Mapping[str, Mapping[str, CorrelationResult]],
    comparisons: Sequence[Comparison],
    items: Iterable[Item],
    *,
    n_permutations: int = DEFAULT_N_PERMUTATIONS,
    n_boot: int = CORRELATION_N_BOOT,
    seed: int = 0,
    max_error: float = SPA_MAX_MC_ERROR,
) -> dict[str, dict[str, CorrelationResult]]:
    """``results`` (of :func:`~evaluation.research.correlation.correlate` on ``comparisons``) with the
    soft pairwise accuracy filled in, from the items behind each comparison.

    A comparison counts for a metric when it has items and every one of its items has that metric.
    The interval is a percentile bootstrap over those comparisons (p-values fixed), "all"
    resampling within each language. A comparison of at most :data:`SPA_EXACT_MAX_IMAGES` images
    gets exact p-values; a larger one at least ``n_permutations`` draws and enough for the bound
    ``max_error`` (:func:`spa_draws`); ``soft_pairwise_accuracy_mc_error`` states the bound on the
    value's Monte-Carlo standard error (0.0 when every p-value behind it is exact). Raises
    ``ValueError`` like :func:`trust_table`.
    """
    comparisons = list(comparisons)
    gaps_of = comparison_gaps(
        comparisons, items, n_permutations=n_permutations, seed=seed, max_error=max_error
    )
    return with_gaps(results, comparisons, gaps_of, n_boot=n_boot, seed=seed)
