"""Soft pairwise accuracy (WMT24): the model level from the items behind each comparison (pure)."""

from __future__ import annotations

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
        rng = seeded_rng(seed, "spa/{}/{}/{}".format(*comparison.key))
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
                rng = seeded_rng(seed, f"spa-boot/{metric}/{language}")
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
