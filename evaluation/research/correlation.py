"""Correlation of automatic metrics with human judgments, as pure functions over plain data.

The caption level is in :mod:`evaluation.research.per_caption`; reading comparisons from a CSV file
in :mod:`evaluation.research.comparisons_csv`.

Model level (seed 000, sec. 3.4, Tables 4 and 6)
    A :class:`Comparison` is one side-by-side evaluation of m2 against m1 in one language: ΔS×S from
    the people and, per metric, Δmetric = metric(m2) − metric(m1). :func:`correlate` gives Pearson,
    Spearman and Kendall τ_b and τ_c of ΔS×S against each Δmetric, per language and over all
    languages (``"all"``, the comparisons of every language pooled).

    Mirroring. By default each comparison also counts in the other direction (m1 vs m2, both deltas
    negated; :func:`mirror`). That is how seed 000 gets N = 48 from its 24 comparisons and N = 12
    from 6 per language, and it makes the coefficients independent of which model was entered as m1.
    Table 4 entered this way gives 39 of the 45 coefficients Table 6 prints, to the printed digits;
    ``tests/evaluation/test_correlation.py`` pins every printed cell and documents the six that
    Table 4 as printed does not give. The paper's "Kendall" is τ_b (τ_c misses a printed cell).

    Mirrored points are not independent: they double N without adding information. So:

    * coefficients and N are those of the mirrored set (as the paper reports them);
    * p-values are computed on the comparisons in one direction, as entered (``p_n`` points). They
      test "no association between ΔS×S and Δmetric", which is valid whatever direction each pair
      was entered in, but they are not the p-values of the mirrored coefficients. Spearman's is
      exact (all n! pairings) up to n = 8, where scipy's t approximation would give p = 0 for ρ = 1;
    * bootstrap intervals resample the comparisons (not the points) and mirror each resample, so a
      comparison and its mirror are always drawn together;
    * a coefficient needs at least 3 distinct comparisons (2 comparisons mirrored are 4 points that
      still hold only two observations) and non-constant inputs; otherwise it is None, never NaN.

    The bootstrap draws ``n_boot`` resamples of the comparisons of a language with replacement;
    ``"all"`` resamples within each language and pools them (the number of comparisons per language
    is part of the design, as in the paper's 6 per language). The interval is the 2.5 and 97.5
    percentiles of the coefficients of the resamples in which the coefficient is defined; it is None
    when fewer than half of them are. Each language (and ``"all"``) draws from its own stream,
    derived from ``seed`` and its name, and every metric of a language uses the same resamples: the
    same seed gives the same intervals, whatever other languages are present.

The coefficients are scipy's (``pearsonr``, ``spearmanr``, ``kendalltau(variant="b"/"c")``); the
bootstrap uses vectorised equivalents that the tests check against scipy.

Two τ_c (:func:`kendall_tau_c`)
    τ_c = (n_c − n_d)/n_0 × (n−1)/n × m/(m−1) (seed 001, appendix B, eq. 6). Seed 001 takes m as
    the number of values of the reference ratings' ranking scale; scipy's ``variant="c"`` takes m
    as the smaller number of distinct values in the two samples, which is what can be done when no
    scale is known. They agree when every point of the scale occurs and the other sample has at
    least as many distinct values; otherwise seed 001's is smaller (m/(m−1) shrinks as m grows).
    Model level, ΔS×S is a difference of percentages, not a rating scale: τ_c there is scipy's,
    for the point, the p-value and the bootstrap alike, and every result says so
    (``kendall_tau_c_variant``). The caption level (:mod:`evaluation.research.per_caption`) knows
    its scale and uses seed 001's by default. The p-value of τ_c depends only on n_c − n_d (scipy
    computes it so for every variant), so the two variants share it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from evaluation.research.bootstrap import batch_pearson, bootstrap_intervals

__all__ = [
    "ACCURACIES",
    "ALL",
    "COEFFICIENTS",
    "CORRELATION_N_BOOT",
    "TAU_C_SCIPY",
    "TAU_C_SCIPY_LABEL",
    "TAU_C_SEED001",
    "TAU_C_VARIANTS",
    "ComparedPair",
    "Comparison",
    "CorrelationResult",
    "correlate",
    "kendall_tau_c",
    "mirror",
    "no_comparisons",
    "tau_c_label",
]

ALL = "all"
COEFFICIENTS = ("pearson", "spearman", "kendall_tau_b", "kendall_tau_c")
# The model level's accuracies, besides the coefficients (see CorrelationResult).
ACCURACIES = ("pairwise_accuracy", "soft_pairwise_accuracy")
MIN_COMPARISONS = 3
# Bootstrap resamples of the comparisons for the 95% intervals, wherever a correlation is asked for
# (API, report page, ``report``, ``correlate``): one default. 1,000 percentile resamples put the
# Monte-Carlo error of a 95% bound near ±0.01 for these coefficients, and the report page answers in
# about a second for 48 comparisons in 8 languages; pass more for a paper's final table.
CORRELATION_N_BOOT = 1000

# Which τ_c: seed 001's m = the number of points of the reference ratings' scale, or scipy's m = the
# smaller number of distinct values in the two samples. The names are what options and APIs accept.
TAU_C_SEED001 = "seed001"
TAU_C_SCIPY = "scipy"
TAU_C_VARIANTS = (TAU_C_SEED001, TAU_C_SCIPY)


def tau_c_label(variant: str, m: int | None = None) -> str:
    """What every output says about its τ_c: ``"seed-001 (m=4)"`` or ``"scipy (m=min distinct)"``.

    Raises ``ValueError`` for an unknown variant, or seed 001's without its scale size ``m``.
    """
    if variant == TAU_C_SCIPY:
        return "scipy (m=min distinct)"
    if variant == TAU_C_SEED001:
        if m is None:
            raise ValueError("seed 001's τ_c needs m, the number of points of the ratings' scale")
        return f"seed-001 (m={m})"
    raise ValueError(f"unknown τ_c variant {variant!r}; choose one of {', '.join(TAU_C_VARIANTS)}")


TAU_C_SCIPY_LABEL = tau_c_label(TAU_C_SCIPY)

NOTE_MIRRORED = (
    "Each comparison counts in both directions (m1 vs m2 added with both deltas negated), so n is twice "
    "the number of comparisons and mirrored points are not independent. p-values are computed on the "
    "comparisons in one direction as entered (p_n points): they test no association, they are not "
    "p-values of the mirrored coefficients. Bootstrap intervals resample comparisons and mirror each "
    "resample."
)
NOTE_ONE_DIRECTION = (
    "Each comparison counts once, as entered (m2 vs m1); the coefficients depend on that direction. "
    "Bootstrap intervals resample comparisons."
)


# --------------------------------------------------------------------------------------------------
# Comparisons


class ComparedPair:
    """What a record of one compared pair (fields ``m1``, ``m2``, ``language``) is keyed by."""

    @property
    def key(self) -> tuple[str, str, str]:
        """The comparison it belongs to: ``(m1, m2, language)``."""
        return (self.m1, self.m2, self.language)


@dataclass(frozen=True)
class Comparison(ComparedPair):
    """m2 against m1 in one language.

    ``delta_sxs`` is ΔS×S (positive: people prefer m2); ``deltas`` maps each metric's name to
    Δmetric = metric(m2) − metric(m1).
    """

    m1: str
    m2: str
    language: str
    delta_sxs: float
    deltas: Mapping[str, float] = field(default_factory=dict)

    def reversed(self) -> Comparison:
        """The same comparison seen from the other side: m1 vs m2 with every delta negated."""
        # "+ 0.0" turns -0.0 into 0.0, so a zero delta prints the same in both directions.
        return Comparison(
            m1=self.m2,
            m2=self.m1,
            language=self.language,
            delta_sxs=-self.delta_sxs + 0.0,
            deltas={name: -value + 0.0 for name, value in self.deltas.items()},
        )


def mirror(comparisons: Iterable[Comparison]) -> list[Comparison]:
    """Each comparison followed by its reverse (m1 vs m2, ΔS×S and every Δmetric negated)."""
    out: list[Comparison] = []
    for comparison in comparisons:
        out.append(comparison)
        out.append(comparison.reversed())
    return out


# --------------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class CorrelationResult:
    """The four coefficients of ΔS×S against one Δmetric over one group of comparisons.

    ``n`` is the number of points the coefficients are computed on (2 × ``n_comparisons`` when
    mirrored); ``p_n`` the number the p-values are computed on (the comparisons, one direction).
    Undefined values are None.
    """

    n: int
    n_comparisons: int
    mirrored: bool
    pearson: float | None = None
    spearman: float | None = None
    kendall_tau_b: float | None = None
    kendall_tau_c: float | None = None
    p_n: int = 0
    pearson_p: float | None = None
    spearman_p: float | None = None
    kendall_tau_b_p: float | None = None
    kendall_tau_c_p: float | None = None
    n_boot: int = 0
    pearson_ci: tuple[float, float] | None = None
    spearman_ci: tuple[float, float] | None = None
    kendall_tau_b_ci: tuple[float, float] | None = None
    kendall_tau_c_ci: tuple[float, float] | None = None
    note: str = ""
    # ΔS×S is not a rating scale: the model level's τ_c (point, p-value, bootstrap) is scipy's.
    kendall_tau_c_variant: str = TAU_C_SCIPY_LABEL
    # Pairwise accuracy (Kocmi et al. 2021): the share of comparisons where Δmetric has the sign of
    # ΔS×S, over the comparisons as entered (mirroring does not change it); the interval comes from
    # the same bootstrap resamples as the coefficients'.
    pairwise_accuracy: float | None = None
    pairwise_accuracy_ci: tuple[float, float] | None = None
    # Soft pairwise accuracy (WMT24), only where the judgments behind the comparisons are known
    # (:func:`evaluation.research.meta_evaluation.with_soft_pairwise_accuracy`); ``n_soft`` counts
    # the comparisons it is computed on.
    soft_pairwise_accuracy: float | None = None
    soft_pairwise_accuracy_ci: tuple[float, float] | None = None
    # A bound on the soft pairwise accuracy's Monte-Carlo standard error: 0.0 when every p-value
    # behind it was enumerated exactly, None when there is no soft pairwise accuracy.
    soft_pairwise_accuracy_mc_error: float | None = None
    n_soft: int = 0

    def coefficient(self, name: str) -> float | None:
        return getattr(self, name)

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict: n, the coefficients, ``<name>_ci`` as [lo, hi], ``<name>_p``, note."""
        out: dict[str, Any] = {"n": self.n, "n_comparisons": self.n_comparisons}
        for name in COEFFICIENTS:
            out[name] = getattr(self, name)
        for name in COEFFICIENTS:
            ci = getattr(self, f"{name}_ci")
            out[f"{name}_ci"] = list(ci) if ci is not None else None
        for name in COEFFICIENTS:
            out[f"{name}_p"] = getattr(self, f"{name}_p")
        out.update({"p_n": self.p_n, "n_boot": self.n_boot, "mirrored": self.mirrored, "note": self.note})
        out["kendall_tau_c_variant"] = self.kendall_tau_c_variant
        for name in ACCURACIES:
            ci = getattr(self, f"{name}_ci")
            out[name] = getattr(self, name)
            out[f"{name}_ci"] = list(ci) if ci is not None else None
        out["soft_pairwise_accuracy_mc_error"] = self.soft_pairwise_accuracy_mc_error
        out["n_soft"] = self.n_soft
        return out


def _finite(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


EXACT_SPEARMAN_MAX_N = 8


def _spearman_exact_p(x: np.ndarray, y: np.ndarray, rho: float) -> float:
    """Two-sided p-value of Spearman's ρ over all n! pairings (n ≤ 8: at most 40,320).

    scipy's p-value for ρ is a t approximation that says p = 0 when ρ = ±1, even with 6 points;
    for so few points the exact permutation distribution is cheap (the same idea as scipy's exact
    p-value for Kendall's τ without ties).
    """
    rx = stats.rankdata(x)
    ry = stats.rankdata(y)
    orders = np.array(list(itertools.permutations(range(len(ry)))))
    rhos = batch_pearson(np.broadcast_to(rx, orders.shape), ry[orders])
    return float(np.mean(np.abs(rhos) >= abs(rho) - 1e-12))


def kendall_tau_c(x: Sequence[float], y: Sequence[float], *, m: int | None = None) -> tuple[float, float]:
    """(τ_c, p-value) of ``x`` against the reference ratings ``y``; NaN where undefined (a constant side).

    ``m=None``: scipy's τ_c (m = the smaller number of distinct values of x and y). ``m``: seed 001's
    eq. 6 with m the number of points of the ratings' ranking scale, whether or not all occur.
    Raises ``ValueError`` when ``y`` takes more distinct values than the scale has points, or m < 2.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    scipy_tau = stats.kendalltau(x, y, variant="c")
    if m is None:
        return float(scipy_tau.statistic), float(scipy_tau.pvalue)
    if m < 2:
        raise ValueError(f"a ranking scale has at least 2 points, not m={m}")
    distinct_y = len(np.unique(y))
    if distinct_y > m:
        raise ValueError(f"the ratings take {distinct_y} distinct values but the scale has m={m} points")
    if not math.isfinite(scipy_tau.statistic):
        return math.nan, math.nan
    # scipy's τ_c is 2·S / (n² (m_s − 1)/m_s) with S = n_c − n_d, an integer: recover S exactly and
    # put the scale's m in place of m_s. The p-value depends on S alone.
    n = len(x)
    m_s = min(len(np.unique(x)), distinct_y)
    s = round(scipy_tau.statistic * n * n * (m_s - 1) / (2 * m_s))
    n_0 = n * (n - 1) / 2
    tau = s / n_0 * (n - 1) / n * m / (m - 1)
    return float(np.clip(tau, -1.0, 1.0)), float(scipy_tau.pvalue)


def _coefficients(
    x: np.ndarray, y: np.ndarray, *, exact_p: bool = True, tau_c_m: int | None = None
) -> dict[str, tuple[float | None, float | None]]:
    """{name: (coefficient, p-value)} by scipy; None where undefined (constant input).

    ``exact_p=False`` skips the exact Spearman p-value where the p-values will not be used.
    ``tau_c_m``: τ_c with seed 001's m (the size of ``y``'s rating scale); None: scipy's.
    """
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return {name: (None, None) for name in COEFFICIENTS}
    pearson = stats.pearsonr(x, y)
    spearman = stats.spearmanr(x, y)
    spearman_p = (
        _spearman_exact_p(x, y, spearman.statistic)
        if exact_p and len(x) <= EXACT_SPEARMAN_MAX_N
        else spearman.pvalue
    )
    tau_b = stats.kendalltau(x, y, variant="b")
    tau_c = kendall_tau_c(x, y, m=tau_c_m)
    return {
        "pearson": (_finite(pearson.statistic), _finite(pearson.pvalue)),
        "spearman": (_finite(spearman.statistic), _finite(spearman_p)),
        "kendall_tau_b": (_finite(tau_b.statistic), _finite(tau_b.pvalue)),
        "kendall_tau_c": (_finite(tau_c[0]), _finite(tau_c[1])),
    }


# --------------------------------------------------------------------------------------------------
# Model-level correlation


def _check(comparisons: Sequence[Comparison], *, both_directions: bool) -> None:
    seen: set[tuple[str, str, str]] = set()
    for c in comparisons:
        if c.language == ALL:
            raise ValueError(f"{c.m2} vs {c.m1}: {ALL!r} is reserved for the pooled result, not a language")
        if c.m1 == c.m2:
            raise ValueError(f"{c.m2} vs {c.m1} in {c.language}: a model is compared with itself")
        if not math.isfinite(c.delta_sxs) or not all(math.isfinite(v) for v in c.deltas.values()):
            raise ValueError(f"{c.m2} vs {c.m1} in {c.language}: deltas must be finite numbers")
        if c.key in seen:
            raise ValueError(f"{c.m2} vs {c.m1} in {c.language} is entered twice")
        if both_directions and (c.m2, c.m1, c.language) in seen:
            raise ValueError(
                f"{c.m2} vs {c.m1} in {c.language} is entered in both directions; enter it once "
                "(it is mirrored) or turn mirroring off"
            )
        seen.add(c.key)


def no_comparisons(*, mirrored: bool) -> CorrelationResult:
    """The result of a group without a comparison for the metric (every value None)."""
    return CorrelationResult(
        n=0, n_comparisons=0, mirrored=mirrored, p_n=0, note=NOTE_MIRRORED if mirrored else NOTE_ONE_DIRECTION
    )


def _result(
    strata: Sequence[tuple[np.ndarray, np.ndarray]],
    *,
    mirrored: bool,
    n_boot: int,
    seed: int,
    group: str,
) -> CorrelationResult:
    sxs = np.concatenate([s for s, _ in strata]) if strata else np.empty(0)
    metric = np.concatenate([m for _, m in strata]) if strata else np.empty(0)
    k = len(sxs)
    n = 2 * k if mirrored else k
    note = NOTE_MIRRORED if mirrored else NOTE_ONE_DIRECTION
    # np.sign: a zero ΔS×S agrees only with a zero Δmetric, as mt-metrics-eval's Agreement counts it.
    accuracy = float((np.sign(sxs) == np.sign(metric)).mean()) if k else None
    if k < MIN_COMPARISONS:
        return CorrelationResult(
            n=n, n_comparisons=k, mirrored=mirrored, p_n=k, note=note, pairwise_accuracy=accuracy
        )
    x, y = (np.concatenate([sxs, -sxs]), np.concatenate([metric, -metric])) if mirrored else (sxs, metric)
    point = _coefficients(x, y, exact_p=not mirrored)
    one_direction = _coefficients(sxs, metric) if mirrored else point
    intervals: dict[str, tuple[float, float] | None] = dict.fromkeys([*COEFFICIENTS, "pairwise_accuracy"])
    if n_boot > 0:
        intervals = bootstrap_intervals(strata, mirrored=mirrored, n_boot=n_boot, seed=seed, group=group)
    values: dict[str, Any] = {}
    for name in COEFFICIENTS:
        coefficient = point[name][0]
        values[name] = coefficient
        values[f"{name}_p"] = one_direction[name][1]
        values[f"{name}_ci"] = intervals[name] if coefficient is not None else None
    return CorrelationResult(
        n=n,
        n_comparisons=k,
        mirrored=mirrored,
        p_n=k,
        n_boot=n_boot if n_boot > 0 else 0,
        note=note,
        pairwise_accuracy=accuracy,
        pairwise_accuracy_ci=intervals["pairwise_accuracy"],
        **values,
    )


def correlate(
    comparisons: Iterable[Comparison],
    *,
    both_directions: bool = True,
    n_boot: int = CORRELATION_N_BOOT,
    seed: int = 0,
    groups: Collection[str] | None = None,
) -> dict[str, dict[str, CorrelationResult]]:
    """{metric: {"all" | language: CorrelationResult}} of ΔS×S against each Δmetric.

    Metrics come in the order they are first met; in each, ``"all"`` first, then the languages in
    sorted order. A comparison without a value for a metric is left out of that metric.
    ``n_boot=0`` skips the intervals. ``groups``: only these of ``"all"`` and the languages (each
    group's numbers are the same as when every group is computed: a group draws from its own stream). Raises ``ValueError`` for a pair entered twice (or in both
    directions while mirroring), a model compared with itself, a non-finite delta, a language named
    "all" or a negative ``n_boot``.
    """
    items = list(comparisons)
    _check(items, both_directions=both_directions)
    if n_boot < 0:
        raise ValueError("n_boot must be 0 (no intervals) or more")
    metrics = list(dict.fromkeys(name for c in items for name in c.deltas))
    languages = sorted({c.language for c in items})
    out: dict[str, dict[str, CorrelationResult]] = {}
    for metric in metrics:
        strata: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for language in languages:
            having = [c for c in items if c.language == language and metric in c.deltas]
            if having:
                strata[language] = (
                    np.array([c.delta_sxs for c in having], dtype=float),
                    np.array([c.deltas[metric] for c in having], dtype=float),
                )
        common = {"mirrored": both_directions, "n_boot": n_boot, "seed": seed}
        by_group = {}
        if groups is None or ALL in groups:
            by_group[ALL] = _result(list(strata.values()), group=ALL, **common)
        for language in languages:
            if groups is not None and language not in groups:
                continue
            by_group[language] = _result(
                [strata[language]] if language in strata else [], group=language, **common
            )
        out[metric] = by_group
    return out
