"""The trust table and the model level computed language by language, each language's part kept by
a key of what it is computed from, so that when one language's data change only that language and
the pooled column are computed again (pure).

A language's numbers depend on nothing but its own comparisons and items (in their order) and the
settings: its correlations draw from the stream of its name, each comparison's soft pairwise p-values
from the stream of its key, its acc23 intervals and permutation tests from streams of its name. So a
:class:`LanguagePiece` (the language's correlations, the soft pairwise gaps of its comparisons, its
trust verdict) is stored under :func:`language_key`, a hash of those inputs, in any
:class:`PieceStore` (a dict in a process; a table in the platform,
:mod:`evaluation.research.reports.pieces`). The pooled column ("all": correlations resampled within
each language, the soft pairwise accuracy over every comparison's gaps, acc23 and its permutation
tests calibrated on the pool) is computed every time, from the pieces' gaps and from every item.

:func:`pieces_build` gives the same numbers as computing everything at once
(:func:`~evaluation.research.trust_tables.trust_build` without a store); the tests compare them.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from evaluation.research.correlation import ALL, Comparison, CorrelationResult, correlate, no_comparisons
from evaluation.research.meta_evaluation import (
    SIGNIFICANCE_LEVEL,
    SIGNIFICANCE_TESTS,
    Item,
    LanguageVerdict,
    TrustTable,
    comparison_gaps,
    language_verdict,
    trust_table,
    with_gaps,
)
from evaluation.research.meta_evaluation.soft_pairwise import ComparisonGaps
from evaluation.research.meta_evaluation.trust import _check_items

__all__ = ["PIECES_VERSION", "LanguagePiece", "PieceStore", "language_key", "pieces_build"]

# Raise when a piece changes shape or the computation behind it changes its numbers: old pieces miss.
PIECES_VERSION = 1


class PieceStore(Protocol):
    """Where pieces are kept: a dict will do."""

    def get(self, key: str, default: Any = None) -> Any: ...

    def __setitem__(self, key: str, value: Any) -> None: ...


@dataclass(frozen=True)
class LanguagePiece:
    """What one language contributes: ``correlations`` (metric -> the language's result, for the
    metrics of its comparisons), ``gaps`` (comparison key -> its soft pairwise gaps) and
    ``verdict`` (its column of the trust table; None when it has no item or no table is built)."""

    language: str
    correlations: dict[str, CorrelationResult] = field(default_factory=dict)
    gaps: dict[tuple[str, str, str], ComparisonGaps] = field(default_factory=dict)
    verdict: LanguageVerdict | None = None


def language_key(
    language: str,
    comparisons: Sequence[Comparison] | None,
    items: Sequence[Item],
    *,
    settings: dict[str, Any],
) -> str:
    """The hash of everything a language's piece is computed from: its comparisons (None: the model
    level is not asked for) and items in their order, every score to the last bit, and ``settings``."""
    content = {
        "version": PIECES_VERSION,
        "language": language,
        "settings": settings,
        "comparisons": None
        if comparisons is None
        else [[c.m1, c.m2, c.delta_sxs, list(c.deltas.items())] for c in comparisons],
        "items": [[i.m1, i.m2, i.image, i.human, i.n_judgments, list(i.deltas.items())] for i in items],
    }
    # json writes a float as its repr, which reads back as the same float: the key is exact.
    return hashlib.sha256(json.dumps(content, allow_nan=False).encode()).hexdigest()


def _piece(
    language: str,
    comparisons: Sequence[Comparison] | None,
    items: Sequence[Item],
    *,
    names: Sequence[str] | None,
    both_directions: bool,
    n_boot: int,
    n_permutations: int,
    seed: int,
    significance_test: str,
) -> LanguagePiece:
    correlations: dict[str, CorrelationResult] = {}
    gaps: dict[tuple[str, str, str], ComparisonGaps] = {}
    if comparisons:
        found = correlate(
            comparisons, both_directions=both_directions, n_boot=n_boot, seed=seed, groups={language}
        )
        correlations = {metric: by_group[language] for metric, by_group in found.items()}
        if items:
            gaps = comparison_gaps(comparisons, items, n_permutations=n_permutations, seed=seed)
    verdict = None
    if names is not None and items:
        verdict = language_verdict(
            language,
            items,
            metrics=names,
            n_boot=n_boot,
            n_permutations=n_permutations,
            seed=seed,
            alpha=SIGNIFICANCE_LEVEL,
            significance_test=significance_test,
        )
    return LanguagePiece(language, correlations, gaps, verdict)


def pieces_build(
    items: Sequence[Item],
    comparisons: Sequence[Comparison] | None,
    *,
    store: PieceStore,
    metrics: Sequence[str] | None,
    both_directions: bool,
    n_boot: int,
    n_permutations: int,
    seed: int,
    significance_test: str,
) -> tuple[dict[str, dict[str, CorrelationResult]], TrustTable | None, list[str]]:
    """``(model level, trust table or None, the languages computed now)``: the numbers of
    :func:`~evaluation.research.trust_tables.model_level` and
    :func:`~evaluation.research.meta_evaluation.trust_table` with the same arguments, each language
    read from ``store`` when its piece is there and computed (and put there) when not. Raises
    ``ValueError`` like both, before anything is stored."""
    items = list(items)
    comparisons = None if comparisons is None else list(comparisons)
    with_table = any(item.deltas for item in items)
    if comparisons is None and not with_table:
        return {}, None, []
    pooled: dict[str, dict[str, CorrelationResult]] = {}
    if comparisons is not None:
        # Checks the comparisons (and n_boot) as correlate does, before any piece is computed.
        pooled = correlate(
            comparisons, both_directions=both_directions, n_boot=n_boot, seed=seed, groups={ALL}
        )
    if (comparisons is not None and items) or with_table:
        _check_items(items)
    if with_table:
        if n_boot < 0 or n_permutations < 0:
            raise ValueError("n_boot and n_permutations must be 0 or more")
        if significance_test not in SIGNIFICANCE_TESTS:
            raise ValueError(
                f"unknown significance test {significance_test!r}: use one of {', '.join(SIGNIFICANCE_TESTS)}"
            )
    names = (
        (list(metrics) if metrics is not None else list(dict.fromkeys(m for i in items for m in i.deltas)))
        if with_table
        else None
    )
    items_of: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        items_of[item.language].append(item)
    comparisons_of: dict[str, list[Comparison]] = defaultdict(list)
    for comparison in comparisons or ():
        comparisons_of[comparison.language].append(comparison)
    settings = {
        "both_directions": both_directions,
        "n_boot": n_boot,
        "n_permutations": n_permutations,
        "seed": seed,
        "significance_test": significance_test,
        "alpha": SIGNIFICANCE_LEVEL,
        "with_items": bool(items),
    }
    pieces: dict[str, LanguagePiece] = {}
    computed = []
    for language in sorted(set(items_of) | set(comparisons_of)):
        own_items = items_of.get(language, [])
        own_comparisons = None if comparisons is None else comparisons_of.get(language, [])
        own_names = None if names is None else sorted({m for i in own_items for m in i.deltas} & set(names))
        key = language_key(language, own_comparisons, own_items, settings={**settings, "metrics": own_names})
        piece = store.get(key)
        if piece is None:
            piece = _piece(
                language,
                own_comparisons,
                own_items,
                names=names,
                both_directions=both_directions,
                n_boot=n_boot,
                n_permutations=n_permutations,
                seed=seed,
                significance_test=significance_test,
            )
            store[key] = piece
            computed.append(language)
        pieces[language] = piece
    system: dict[str, dict[str, CorrelationResult]] = {}
    if comparisons is not None:
        languages = sorted(comparisons_of)
        for metric, by_group in pooled.items():
            system[metric] = {ALL: by_group[ALL]}
            for language in languages:
                found = pieces[language].correlations.get(metric)
                system[metric][language] = found or no_comparisons(mirrored=both_directions)
        if items:
            gaps = {key: g for piece in pieces.values() for key, g in piece.gaps.items()}
            system = with_gaps(system, comparisons, gaps, n_boot=n_boot, seed=seed)
    table = None
    if with_table:
        table = trust_table(
            items,
            metrics=metrics,
            n_boot=n_boot,
            n_permutations=n_permutations,
            seed=seed,
            significance_test=significance_test,
            known={code: piece.verdict for code, piece in pieces.items() if piece.verdict is not None},
        )
    return system, table, computed
