"""Is one metric better than another: paired permutation tests, significance clusters, the trust table (pure)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from core.records import attributes
from evaluation.research.bootstrap import seeded_rng
from evaluation.research.correlation import ALL, CORRELATION_N_BOOT
from evaluation.research.meta_evaluation.acc23 import (
    ACC23_LABEL,
    DEFAULT_N_PERMUTATIONS,
    MIN_ITEMS,
    SIGNIFICANCE_LEVEL,
    Item,
    TieCalibrated,
    tie_calibrated,
)
from evaluation.research.meta_evaluation.significance import (
    DEFAULT_SIGNIFICANCE_TEST,
    SIGNIFICANCE_TESTS,
    permutation_p_value,
)

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
            **attributes(self, "language", "n_items", "n_pairs", "status", "note"),
            "metrics": [verdict.as_dict() for verdict in self.verdicts],
            "p_values": {a: dict(row) for a, row in self.p_values.items()},
        }


@dataclass(frozen=True)
class TrustTable:
    """Metrics × languages: item-level acc23 with intervals and significance clusters.

    ``languages`` has ``all`` first (every item pooled, ε calibrated on the pool), then the
    languages in sorted order; ``metrics`` are ordered by their pooled accuracy, equal accuracies
    by name (as mt-metrics-eval orders a column). ``significance_test`` names the permutation test
    behind every p-value and cluster (:data:`~.significance.SIGNIFICANCE_TESTS`).
    """

    metrics: tuple[str, ...]
    languages: Mapping[str, LanguageVerdict]
    n_boot: int
    n_permutations: int
    seed: int
    alpha: float = SIGNIFICANCE_LEVEL
    label: str = ACC23_LABEL
    significance_test: str = DEFAULT_SIGNIFICANCE_TEST

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
            "significance_test": self.significance_test,
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
        key = (*item.key, item.image)
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
    significance_test: str,
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
    # Equal accuracies by name, as mt-metrics-eval sorts a column: the order (and so the clusters)
    # does not depend on the order of the metrics in a file or a run.
    order = sorted(results, key=lambda metric: (-(results[metric].acc23 or 0.0), metric))
    n_items = len(items)
    n_pairs = len({item.key for item in items})
    if not order:
        return LanguageVerdict(language, n_items, n_pairs, (), "empty")
    if n_items < MIN_ITEMS:
        verdicts = tuple(MetricVerdict(metric, results[metric]) for metric in order)
        return LanguageVerdict(language, n_items, n_pairs, verdicts, "too_few")
    p = np.ones((len(order), len(order)))
    p_values: dict[str, dict[str, float]] = defaultdict(dict)
    rng = seeded_rng(seed, f"significance/{language}")
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
                method=significance_test,
            )
            p_values[order[a]][order[b]] = float(p[a, b])
    ranks = assign_ranks(p, alpha)
    verdicts = tuple(
        MetricVerdict(metric, results[metric], rank=rank, best=rank == 1)
        for metric, rank in zip(order, ranks)
    )
    status: Status = "undecided" if len(order) > 1 and max(ranks) == 1 else "ranked"
    return LanguageVerdict(language, n_items, n_pairs, verdicts, status, dict(p_values))


def language_verdict(
    language: str,
    items: Sequence[Item],
    *,
    metrics: Sequence[str],
    n_boot: int = CORRELATION_N_BOOT,
    n_permutations: int = DEFAULT_N_PERMUTATIONS,
    seed: int = 0,
    alpha: float = SIGNIFICANCE_LEVEL,
    significance_test: str = DEFAULT_SIGNIFICANCE_TEST,
) -> LanguageVerdict:
    """The verdict of one language's ``items`` (all of that language), as :func:`trust_table` gives
    it for that language with the same arguments: what ``known`` takes. Pure; does not check the
    items (:func:`trust_table` does)."""
    return _language_verdict(
        language,
        items,
        metrics,
        n_boot=n_boot,
        n_permutations=n_permutations,
        seed=seed,
        alpha=alpha,
        strata_of=None,
        significance_test=significance_test,
    )


def trust_table(
    items: Iterable[Item],
    *,
    metrics: Sequence[str] | None = None,
    n_boot: int = CORRELATION_N_BOOT,
    n_permutations: int = DEFAULT_N_PERMUTATIONS,
    seed: int = 0,
    alpha: float = SIGNIFICANCE_LEVEL,
    significance_test: str = DEFAULT_SIGNIFICANCE_TEST,
    known: Mapping[str, LanguageVerdict] | None = None,
) -> TrustTable:
    """The item-level verdict per language and over all languages (see the module docstring).

    ``known``: verdicts of languages computed before from the same items of that language and the
    same arguments (a language's verdict depends on nothing else), used as they are; the pooled
    verdict is always computed.

    ``metrics``: these (default: every metric of the items); equal accuracies are ordered by name.
    ``significance_test``: the permutation test between metrics (default ``PermutationSigDiff``, the
    reference's; ``PairwisePermutationSigDiff`` its pairwise variant). A metric is judged on the
    items that have it; two metrics are tested on the items that have both. The same ``seed`` gives the same intervals and p-values. Raises
    ``ValueError`` for an item given twice, a model compared with itself, a language named ``all``,
    a score that is not finite, a negative ``n_boot`` / ``n_permutations`` or an unknown test.
    """
    pool = list(items)
    _check_items(pool)
    if n_boot < 0 or n_permutations < 0:
        raise ValueError("n_boot and n_permutations must be 0 or more")
    if significance_test not in SIGNIFICANCE_TESTS:
        raise ValueError(
            f"unknown significance test {significance_test!r}: use one of {', '.join(SIGNIFICANCE_TESTS)}"
        )
    names = (
        list(metrics) if metrics is not None else list(dict.fromkeys(m for item in pool for m in item.deltas))
    )
    by_language: dict[str, list[Item]] = defaultdict(list)
    for item in pool:
        by_language[item.language].append(item)
    strata_of = {language: index for index, language in enumerate(sorted(by_language))}
    common = {
        "n_boot": n_boot,
        "n_permutations": n_permutations,
        "seed": seed,
        "alpha": alpha,
        "significance_test": significance_test,
    }
    verdicts = {ALL: _language_verdict(ALL, pool, names, strata_of=strata_of, **common)}
    for language in sorted(by_language):
        verdicts[language] = (known or {}).get(language) or _language_verdict(
            language, by_language[language], names, strata_of=None, **common
        )
    pooled = [verdict.metric for verdict in verdicts[ALL].verdicts]
    ordered = tuple(pooled + [name for name in names if name not in pooled])
    return TrustTable(
        ordered,
        verdicts,
        n_boot=n_boot,
        n_permutations=n_permutations,
        seed=seed,
        alpha=alpha,
        significance_test=significance_test,
    )
