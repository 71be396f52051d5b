"""Correlation of metrics with people: seed 000 Table 6 from its Table 4, and the pure functions.

About ``data/xm3600_table4.csv`` (seed 000, Table 4, all 24 rows, values as printed):

* The table's header reads "m_2 m_1", but its values are CIDEr(second column) − CIDEr(first column):
  e.g. BB+CC, BB, en: ΔCIDEr_XM3600 = −0.275 = 0.295 − 0.570 = CIDEr(BB) − CIDEr(BB+CC) in Table 5,
  and BB+CC (the strongest model) loses every comparison (ΔS×S < 0). So the first column is m1 and
  the second m2, as the caption's definitions say. The correlations do not depend on this.
* Table 6 is reproduced from Table 4 with every comparison counted in both directions (N = 48 from
  24 comparisons, 12 from 6 per language) and "Kendall" read as τ_b. 39 of the 45 printed
  coefficients come out to the two printed digits; the 6 that do not are listed in
  ``NOT_FROM_PRINTED_TABLE4`` with the value Table 4 as printed gives (see the tests below for what
  was tried).
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from evaluation.research import bootstrap as boot
from evaluation.research import correlation as corr
from evaluation.research.comparisons_csv import (
    ComparisonsCsvError,
    ComparisonsCsvWarning,
    read_comparisons_csv,
)
from evaluation.research.correlation import ALL, COEFFICIENTS, Comparison, correlate, mirror
from evaluation.research.per_caption import (
    per_caption_agreement,
    per_caption_agreement_by_language,
    rating_value,
)

TABLE4 = Path(__file__).parent / "data" / "xm3600_table4.csv"
METRICS = ("cider_xm600", "cider_xm3600", "cider_coco_dev")

# Seed 000, Table 6, as printed: (coefficient, language) -> (ΔCIDEr_XM600, ΔCIDEr_XM3600, ΔCIDEr_COCO-DEV).
TABLE6 = {
    ("pearson", "all"): (0.89, 0.68, 0.59),
    ("spearman", "all"): (0.95, 0.88, 0.61),
    ("kendall_tau_b", "all"): (0.80, 0.68, 0.43),
    ("pearson", "en"): (0.97, 0.79, 0.67),
    ("spearman", "en"): (1.00, 0.93, 0.66),
    ("kendall_tau_b", "en"): (1.00, 0.80, 0.49),
    ("pearson", "es"): (1.00, 0.72, 0.57),
    ("spearman", "es"): (0.97, 0.93, 0.66),
    ("kendall_tau_b", "es"): (0.85, 0.80, 0.49),
    ("pearson", "hi"): (1.00, 0.67, 0.39),
    ("spearman", "hi"): (0.99, 0.91, 0.51),
    ("kendall_tau_b", "hi"): (0.94, 0.74, 0.37),
    ("pearson", "zh"): (0.96, 0.80, 0.80),
    ("spearman", "zh"): (0.90, 0.89, 0.69),
    ("kendall_tau_b", "zh"): (0.73, 0.74, 0.55),
}
TABLE6_N = {"all": 48, "en": 12, "es": 12, "hi": 12, "zh": 12}

# Printed cells that Table 4 as printed does not give, with the value it gives instead (mirrored).
# Not rounding of the inputs: breaking every tie in ΔS×S and ΔCIDEr within the printed precision
# (±0.05, ±0.0005) leaves hi ρ in {0.31, 0.37, 0.48, 0.54} and hi τ_b in {0.21, 0.27, 0.33, 0.39},
# never 0.51 / 0.37. Not a different Kendall: τ_a and τ_c miss other cells. No single changed cell
# of Table 4 gives all 15 COCO-DEV numbers; see test_coco_dev_discrepancies_fit_two_changed_inputs.
NOT_FROM_PRINTED_TABLE4 = {
    ("kendall_tau_b", "all", "cider_xm3600"): 0.6869,  # printed 0.68
    ("spearman", "all", "cider_coco_dev"): 0.6001,  # printed 0.61
    ("pearson", "hi", "cider_coco_dev"): 0.3847,  # printed 0.39
    ("spearman", "hi", "cider_coco_dev"): 0.4327,  # printed 0.51
    ("kendall_tau_b", "hi", "cider_coco_dev"): 0.3178,  # printed 0.37
    ("pearson", "zh", "cider_coco_dev"): 0.7923,  # printed 0.80
}

TABLE6_CELLS = [
    (coefficient, language, metric, printed)
    for (coefficient, language), row in TABLE6.items()
    for metric, printed in zip(METRICS, row)
]


@pytest.fixture(scope="module")
def table4():
    return read_comparisons_csv(TABLE4)


@pytest.fixture(scope="module")
def table6(table4):
    return correlate(table4, n_boot=0)


def _c(m1, m2, language, sxs, **deltas):
    return Comparison(m1=m1, m2=m2, language=language, delta_sxs=sxs, deltas=deltas)


def _line(xs, ys, language="de"):
    """Comparisons m0 vs m1, m0 vs m2, ... with the given ΔS×S and Δmetric."""
    return [_c("m0", f"m{i + 1}", language, x, metric=y) for i, (x, y) in enumerate(zip(xs, ys))]


# --------------------------------------------------------------------------------------------------
# Table 4 -> Table 6


def test_table4_transcription_has_all_24_comparisons(table4):
    assert len(table4) == 24
    assert {c.language for c in table4} == {"en", "es", "hi", "zh"}
    assert all(set(c.deltas) == set(METRICS) for c in table4)
    first = table4[0]
    assert (first.m1, first.m2, first.language, first.delta_sxs) == ("BB+CC", "BB", "en", -38.9)
    assert first.deltas == {"cider_xm600": -0.277, "cider_xm3600": -0.275, "cider_coco_dev": -0.124}


def test_table6_n_counts_each_comparison_in_both_directions(table6):
    for metric in METRICS:
        assert list(table6[metric]) == [ALL, "en", "es", "hi", "zh"]
        for language, n in TABLE6_N.items():
            assert table6[metric][language].n == n
            assert table6[metric][language].n_comparisons == n // 2


@pytest.mark.parametrize(
    ("coefficient", "language", "metric", "printed"),
    TABLE6_CELLS,
    ids=[f"{c}-{lang}-{m}" for c, lang, m, _ in TABLE6_CELLS],
)
def test_table6_cell(table6, coefficient, language, metric, printed):
    value = table6[metric][language].coefficient(coefficient)
    known = NOT_FROM_PRINTED_TABLE4.get((coefficient, language, metric))
    if known is None:
        assert round(value, 2) == printed
    else:
        # Pinned to what printed Table 4 gives; if this starts to match the paper, drop the entry.
        assert value == pytest.approx(known, abs=5e-5)
        assert round(value, 2) != printed


def test_table6_kendall_is_tau_b_not_tau_c(table6):
    zh = table6["cider_coco_dev"]["zh"]
    assert round(zh.kendall_tau_b, 2) == 0.55  # as printed
    assert round(zh.kendall_tau_c, 2) == 0.56


def test_table6_needs_mirroring(table4):
    one_direction = correlate(table4, both_directions=False, n_boot=0)
    pooled = one_direction["cider_xm600"][ALL]
    assert pooled.n == 24
    assert round(pooled.pearson, 2) == 0.76  # Table 6 prints 0.89, which needs N = 48


def test_coco_dev_discrepancies_fit_two_changed_inputs(table4):
    """An illustration, not a claim about the paper's data: all 15 COCO-DEV cells of Table 6 come out
    when two inputs differ from the printed Table 4 (hi BB+CC/Bg −0.047 → −0.048 and zh BB+CC/Bg
    −0.036 → −0.038). Other pairs of changes work too; no single change does."""
    changed = []
    for c in table4:
        deltas = dict(c.deltas)
        if (c.m1, c.m2, c.language) == ("BB+CC", "Bg", "hi"):
            deltas["cider_coco_dev"] = -0.048
        if (c.m1, c.m2, c.language) == ("BB+CC", "Bg", "zh"):
            deltas["cider_coco_dev"] = -0.038
        changed.append(Comparison(c.m1, c.m2, c.language, c.delta_sxs, deltas))
    results = correlate(changed, n_boot=0)["cider_coco_dev"]
    for (coefficient, language), row in TABLE6.items():
        assert round(results[language].coefficient(coefficient), 2) == row[2], (coefficient, language)


# --------------------------------------------------------------------------------------------------
# Mirroring


def test_mirror_adds_the_reverse_of_each_comparison():
    c = _c("a", "b", "de", 12.5, cider=0.1, clip=-0.02)
    assert mirror([c]) == [c, _c("b", "a", "de", -12.5, cider=-0.1, clip=0.02)]


def test_mirror_never_produces_negative_zero():
    (_, reverse) = mirror([_c("a", "b", "de", 0.0, cider=0.0)])
    assert math.copysign(1, reverse.delta_sxs) == 1
    assert math.copysign(1, reverse.deltas["cider"]) == 1


def test_mirrored_correlation_is_that_of_the_mirrored_set(table4):
    by_default = correlate(table4, n_boot=0)
    by_hand = correlate(mirror(table4), both_directions=False, n_boot=0)
    for metric in METRICS:
        for language in TABLE6_N:
            for name in COEFFICIENTS:
                assert by_default[metric][language].coefficient(name) == pytest.approx(
                    by_hand[metric][language].coefficient(name), abs=1e-12
                )
            assert by_default[metric][language].n == by_hand[metric][language].n


def test_mirrored_n_doubles():
    comparisons = _line([1, 2, 3, 5], [0.1, 0.3, 0.2, 0.5])
    assert correlate(comparisons, n_boot=0)["metric"]["de"].n == 8
    assert correlate(comparisons, both_directions=False, n_boot=0)["metric"]["de"].n == 4


def test_pair_in_both_directions_is_refused_when_mirroring():
    comparisons = [
        _c("a", "b", "de", 10, m=0.1),
        _c("b", "a", "de", -10, m=-0.1),
        _c("a", "c", "de", 3, m=0.2),
    ]
    with pytest.raises(ValueError, match="both directions"):
        correlate(comparisons, n_boot=0)
    assert correlate(comparisons, both_directions=False, n_boot=0)["m"]["de"].n == 3


@pytest.mark.parametrize(
    ("comparisons", "message"),
    [
        ([_c("a", "b", "de", 1, m=1), _c("a", "b", "de", 2, m=2)], "entered twice"),
        ([_c("a", "a", "de", 1, m=1)], "compared with itself"),
        ([_c("a", "b", "all", 1, m=1)], "reserved"),
        ([_c("a", "b", "de", float("nan"), m=1)], "finite"),
    ],
)
def test_invalid_comparisons_are_refused(comparisons, message):
    with pytest.raises(ValueError, match=message):
        correlate(comparisons, n_boot=0)


# --------------------------------------------------------------------------------------------------
# Coefficients on hand-worked data


@pytest.mark.parametrize("both_directions", [True, False])
def test_perfect_and_reversed_correlation(both_directions):
    xs = [-20.0, -5.0, 3.0, 10.0, 40.0]
    up = correlate(_line(xs, [x / 100 for x in xs]), both_directions=both_directions, n_boot=0)["metric"][
        "de"
    ]
    down = correlate(_line(xs, [-x / 100 for x in xs]), both_directions=both_directions, n_boot=0)["metric"][
        "de"
    ]
    for name in COEFFICIENTS:
        assert up.coefficient(name) == pytest.approx(1.0)
        assert down.coefficient(name) == pytest.approx(-1.0)


def test_ties_separate_tau_b_from_tau_c():
    # ΔS×S 1,2,3,4 against Δmetric 1,1,2,2: 4 concordant pairs, 2 tied in Δmetric, none discordant.
    # τ_b = 4 / sqrt(6 · 4) = 0.8165; τ_c = 2 · 4 / (4² · (2 − 1) / 2) = 1 (m = 2 distinct values).
    result = correlate(_line([1, 2, 3, 4], [1, 1, 2, 2]), both_directions=False, n_boot=0)["metric"]["de"]
    assert result.kendall_tau_b == pytest.approx(4 / math.sqrt(24))
    assert result.kendall_tau_c == pytest.approx(1.0)
    # Spearman: ranks 1,2,3,4 against 1.5,1.5,3.5,3.5 -> 4 / sqrt(5 · 4) = 0.8944.
    assert result.spearman == pytest.approx(4 / math.sqrt(20))


@pytest.mark.parametrize("both_directions", [True, False])
def test_fewer_than_three_comparisons_give_none(both_directions):
    result = correlate(_line([1, 2], [0.1, 0.3]), both_directions=both_directions, n_boot=100)["metric"]["de"]
    assert result.n_comparisons == 2
    assert result.n == (4 if both_directions else 2)
    for name in COEFFICIENTS:
        assert result.coefficient(name) is None
        assert getattr(result, f"{name}_p") is None
        assert getattr(result, f"{name}_ci") is None


def test_constant_input_gives_none_never_nan():
    flat = correlate(_line([1, 2, 3, 4], [0.2] * 4), both_directions=False)["metric"]["de"]
    zero = correlate(_line([1, 2, 3, 4], [0.0] * 4))["metric"]["de"]
    for result in (flat, zero):
        for name in COEFFICIENTS:
            assert result.coefficient(name) is None
            assert result.as_dict()[f"{name}_ci"] is None
        json.dumps(result.as_dict(), allow_nan=False)


def test_metric_missing_from_a_comparison_leaves_it_out_of_that_metric():
    comparisons = _line([1, 2, 3, 4], [1, 2, 3, 4]) + [_c("m0", "m9", "de", 7, other=1.0)]
    results = correlate(comparisons, n_boot=0)
    assert results["metric"]["de"].n_comparisons == 4
    assert results["other"]["de"].n_comparisons == 1
    assert results["other"]["de"].pearson is None


def test_all_pools_languages(table4):
    results = correlate([c for c in table4 if c.language in ("en", "zh")], n_boot=0)["cider_xm600"]
    assert list(results) == [ALL, "en", "zh"]
    assert results[ALL].n == 24


# --------------------------------------------------------------------------------------------------
# p-values


def test_p_values_are_computed_on_the_comparisons_in_one_direction(table4):
    en = [c for c in table4 if c.language == "en"]
    result = correlate(en, n_boot=0)["cider_xm600"]["en"]
    x = np.array([c.delta_sxs for c in en])
    y = np.array([c.deltas["cider_xm600"] for c in en])
    assert result.p_n == 6
    assert result.pearson_p == pytest.approx(stats.pearsonr(x, y).pvalue)
    assert result.kendall_tau_b_p == pytest.approx(stats.kendalltau(x, y).pvalue)
    # Spearman ρ = 1 with 6 points: exact p = 2 / 6! (scipy's t approximation would say 0).
    assert result.spearman == pytest.approx(1.0)
    assert result.spearman_p == pytest.approx(2 / 720)
    assert "not independent" in result.note
    assert "one direction" in result.note


def test_spearman_exact_p_matches_enumeration_with_ties():
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    y = np.array([0.1, 0.3, 0.2, 0.3, 0.5])
    rho = stats.spearmanr(x, y).statistic
    ry = stats.rankdata(y)
    rhos = [
        stats.pearsonr(stats.rankdata(x), ry[list(p)]).statistic for p in itertools.permutations(range(5))
    ]
    expected = np.mean(np.abs(rhos) >= abs(rho) - 1e-12)
    assert corr._spearman_exact_p(x, y, rho) == pytest.approx(expected)


# --------------------------------------------------------------------------------------------------
# Bootstrap


def test_bootstrap_is_seeded_and_reproducible(table4):
    first = correlate(table4, n_boot=300, seed=7)["cider_xm3600"]
    again = correlate(table4, n_boot=300, seed=7)["cider_xm3600"]
    other = correlate(table4, n_boot=300, seed=8)["cider_xm3600"]
    assert first == again
    assert first[ALL].pearson_ci != other[ALL].pearson_ci
    for result in first.values():
        for name in COEFFICIENTS:
            lo, hi = getattr(result, f"{name}_ci")
            assert -1 <= lo <= hi <= 1
            assert result.n_boot == 300


def test_bootstrap_of_a_language_does_not_depend_on_the_others(table4):
    alone = correlate([c for c in table4 if c.language == "hi"], n_boot=200, seed=3)["cider_xm600"]["hi"]
    together = correlate(table4, n_boot=200, seed=3)["cider_xm600"]["hi"]
    assert alone == together


def test_bootstrap_resamples_comparisons_and_mirrors_each_resample(table4):
    """The intervals are the percentiles of scipy's coefficients over resamples of the comparisons,
    each resample mirrored as a whole (a comparison and its mirror are drawn together)."""
    zh = [c for c in table4 if c.language == "zh"]
    n_boot = 150
    result = correlate(zh, n_boot=n_boot, seed=5)["cider_xm3600"]["zh"]
    x = np.array([c.delta_sxs for c in zh])
    y = np.array([c.deltas["cider_xm3600"] for c in zh])
    picks = boot.seeded_rng(5, "zh").integers(0, len(zh), size=(n_boot, len(zh)))
    by_scipy = {name: [] for name in COEFFICIENTS}
    for row in picks:
        a = np.concatenate([x[row], -x[row]])
        b = np.concatenate([y[row], -y[row]])
        by_scipy["pearson"].append(stats.pearsonr(a, b).statistic)
        by_scipy["spearman"].append(stats.spearmanr(a, b).statistic)
        by_scipy["kendall_tau_b"].append(stats.kendalltau(a, b).statistic)
        by_scipy["kendall_tau_c"].append(stats.kendalltau(a, b, variant="c").statistic)
    for name, values in by_scipy.items():
        assert getattr(result, f"{name}_ci") == pytest.approx(tuple(np.percentile(values, [2.5, 97.5])))


def test_pooled_bootstrap_keeps_the_number_of_comparisons_per_language(monkeypatch):
    seen = []
    batch = boot.batch_pearson

    def spy(x, y):
        seen.append(x.copy())
        return batch(x, y)

    monkeypatch.setattr(boot, "batch_pearson", spy)  # its first call gets the resampled ΔS×S
    # ΔS×S > 0 in de (4 comparisons), < 0 in fr (3): every pooled resample has 4 of one and 3 of the other.
    comparisons = _line([1, 2, 3, 4], [1, 2, 3, 5], "de") + _line([-1, -2, -3], [-3, -2, -1], "fr")
    correlate(comparisons, both_directions=False, n_boot=300)
    pooled = seen[0]  # "all" comes first
    assert pooled.shape == (300, 7)
    assert ((pooled > 0).sum(axis=1) == 4).all()
    assert ((pooled < 0).sum(axis=1) == 3).all()


def test_vectorised_coefficients_equal_scipy():
    rng = np.random.default_rng(0)
    for size in (3, 5, 12, 48):
        x = rng.integers(0, 4, size=(200, size)).astype(float)
        y = np.round(rng.normal(size=(200, size)), 1)
        batch = boot.batch_coefficients(x, y)
        for i in range(200):
            if np.ptp(x[i]) == 0 or np.ptp(y[i]) == 0:
                assert all(np.isnan(batch[name][i]) for name in COEFFICIENTS)
                continue
            assert batch["pearson"][i] == pytest.approx(stats.pearsonr(x[i], y[i]).statistic, abs=1e-12)
            assert batch["spearman"][i] == pytest.approx(stats.spearmanr(x[i], y[i]).statistic, abs=1e-12)
            assert batch["kendall_tau_b"][i] == pytest.approx(
                stats.kendalltau(x[i], y[i]).statistic, abs=1e-12
            )
            assert batch["kendall_tau_c"][i] == pytest.approx(
                stats.kendalltau(x[i], y[i], variant="c").statistic, abs=1e-12
            )


# --------------------------------------------------------------------------------------------------
# Per-caption agreement


def test_rating_values():
    assert [rating_value(r) for r in ("EXCELLENT", "GOOD", "MEDIUM", "BAD")] == [4, 3, 2, 1]
    assert rating_value("excellent") == 4  # the stored value
    assert rating_value("NOT-ENOUGH-INFO") is None
    assert rating_value("nei") is None
    with pytest.raises(ValueError, match="unknown rating"):
        rating_value("SUPERB")


def test_per_caption_agreement_leaves_not_enough_info_out():
    scores = {"a": 0.9, "b": 0.7, "c": 0.5, "d": 0.1, "e": 0.99, "f": 0.6}
    ratings = {"a": "EXCELLENT", "b": "GOOD", "c": "MEDIUM", "d": "BAD", "e": "NOT-ENOUGH-INFO", "f": "good"}
    result = per_caption_agreement(scores, ratings)
    # Pairs of a, b, c, d, f: 9 concordant, 1 tied in rating (b, f), none discordant.
    assert result["n"] == 5
    assert result["n_not_enough_info"] == 1
    assert result["kendall_tau_b"] == pytest.approx(9 / math.sqrt(10 * 9))
    assert result["kendall_tau_c"] == pytest.approx(2 * 9 / (25 * 3 / 4))  # m = 4 ratings
    # Ranks 1..5 of the scores against 1, 2, 3.5, 3.5, 5: 9.5 / sqrt(10 · 9.5).
    assert result["spearman"] == pytest.approx(9.5 / math.sqrt(95))


def test_per_caption_agreement_undefined_and_errors():
    few = per_caption_agreement({"a": 0.1, "b": 0.2}, {"a": "GOOD", "b": "BAD"})
    assert few == {
        "n": 2,
        "n_not_enough_info": 0,
        "kendall_tau_b": None,
        "kendall_tau_c": None,
        "spearman": None,
        "kendall_tau_c_variant": "seed-001 (m=4)",
        "tau23": None,
        "acc23": None,
        "acc23_epsilon": None,
        "acc23_pairs_sampled": False,
    }
    same = per_caption_agreement({"a": 0.1, "b": 0.2, "c": 0.3}, {"a": "GOOD", "b": "GOOD", "c": "GOOD"})
    assert same["kendall_tau_b"] is None
    # acc23 is defined where τ_b is not: people tie every pair, a metric that ties them all (ε = 0.2,
    # the largest difference) agrees on all three, as mt-metrics-eval's KendallWithTiesOpt says.
    assert (same["acc23"], same["acc23_epsilon"]) == (1.0, pytest.approx(0.2))
    with pytest.raises(ValueError, match="no metric score"):
        per_caption_agreement({"a": 0.1}, {"a": "GOOD", "b": "BAD"})


def _tau_c_by_hand(x, y, m):
    """Seed 001's eq. 6 pair by pair: (n_c − n_d)/n_0 × (n−1)/n × m/(m−1)."""
    n = len(x)
    concordant = discordant = 0
    for i, j in itertools.combinations(range(n), 2):
        product = (x[i] - x[j]) * (y[i] - y[j])
        concordant += product > 0
        discordant += product < 0
    return (concordant - discordant) / (n * (n - 1) / 2) * (n - 1) / n * m / (m - 1)


def test_seed001_tau_c_is_equation_6_pair_by_pair():
    rng = np.random.default_rng(7)
    for m, size in ((4, 30), (4, 9), (5, 40), (7, 25)):
        x = rng.normal(size=size).round(1)  # some ties in the scores too
        y = rng.integers(1, m + 1, size=size).astype(float)
        tau, p = corr.kendall_tau_c(x, y, m=m)
        assert tau == pytest.approx(_tau_c_by_hand(x, y, m), abs=1e-12)
        # The p-value tests n_c − n_d, the same for every variant: scipy's.
        assert p == pytest.approx(stats.kendalltau(x, y, variant="c").pvalue)


def test_seed001_tau_c_equals_scipy_when_every_scale_point_occurs():
    rng = np.random.default_rng(3)
    for _ in range(20):
        y = np.concatenate([[1, 2, 3, 4], rng.integers(1, 5, size=16)]).astype(float)
        x = rng.random(20) + 0.2 * y
        seed001, _ = corr.kendall_tau_c(x, y, m=4)
        assert seed001 == pytest.approx(stats.kendalltau(x, y, variant="c").statistic, abs=1e-12)
        assert corr.kendall_tau_c(x, y) == pytest.approx(tuple(stats.kendalltau(x, y, variant="c")))


def test_seed001_and_scipy_tau_c_differ_without_a_bad_rating():
    # 15 pairs: 3 tied in rating, 1 discordant (0.6 EXCELLENT below 0.7 GOOD), 11 concordant: S = 10.
    scores = {"a": 0.9, "b": 0.6, "c": 0.7, "d": 0.5, "e": 0.3, "f": 0.2}
    ratings = {"a": "EXCELLENT", "b": "EXCELLENT", "c": "GOOD", "d": "GOOD", "e": "MEDIUM", "f": "MEDIUM"}
    seed001 = per_caption_agreement(scores, ratings)
    scipy = per_caption_agreement(scores, ratings, tau_c="scipy")
    # Seed 001: m = 4 scale points; scipy: m = 3 distinct ratings. n = 6.
    assert seed001["kendall_tau_c"] == pytest.approx(2 * 10 / 36 * 4 / 3)  # 0.741
    assert scipy["kendall_tau_c"] == pytest.approx(2 * 10 / 36 * 3 / 2)  # 0.833
    assert scipy["kendall_tau_c"] == pytest.approx(
        stats.kendalltau(list(scores.values()), [4, 4, 3, 3, 2, 2], variant="c").statistic
    )
    assert (seed001["kendall_tau_c_variant"], scipy["kendall_tau_c_variant"]) == (
        "seed-001 (m=4)",
        "scipy (m=min distinct)",
    )
    # τ_b and ρ do not depend on the choice.
    assert seed001["kendall_tau_b"] == scipy["kendall_tau_b"] and seed001["spearman"] == scipy["spearman"]
    by_language = per_caption_agreement_by_language(
        [("en", key, scores[key], ratings[key]) for key in scores], tau_c="scipy"
    )
    assert by_language["en"]["kendall_tau_c"] == pytest.approx(scipy["kendall_tau_c"])


def test_tau_c_refusals():
    with pytest.raises(ValueError, match="unknown τ_c variant 'b'; choose one of seed001, scipy"):
        per_caption_agreement({"a": 0.1}, {"a": "GOOD"}, tau_c="b")
    with pytest.raises(ValueError, match="5 distinct values but the scale has m=4 points"):
        corr.kendall_tau_c([1, 2, 3, 4, 5], [1, 2, 3, 4, 5], m=4)
    with pytest.raises(ValueError, match="at least 2 points"):
        corr.kendall_tau_c([1, 2, 3], [1, 1, 1], m=1)


def test_model_level_tau_c_is_scipys_and_says_so():
    comparisons = [
        Comparison("a", f"b{i}", "de", d, {"CIDEr": v})
        for i, (d, v) in enumerate([(10.0, 0.1), (-5.0, 0.2), (30.0, 0.3), (20.0, -0.1)])
    ]
    result = correlate(comparisons, n_boot=50)["CIDEr"]["de"]
    x = np.array([10.0, -5.0, 30.0, 20.0, -10.0, 5.0, -30.0, -20.0])
    y = np.array([0.1, 0.2, 0.3, -0.1, -0.1, -0.2, -0.3, 0.1])
    assert result.kendall_tau_c == pytest.approx(stats.kendalltau(x, y, variant="c").statistic)
    assert result.kendall_tau_c_variant == "scipy (m=min distinct)"
    assert result.as_dict()["kendall_tau_c_variant"] == "scipy (m=min distinct)"


def test_per_caption_agreement_by_language():
    rows = [
        ("de", 1, 0.9, "EXCELLENT"),
        ("de", 2, 0.5, "MEDIUM"),
        ("de", 3, 0.1, "BAD"),
        ("de", 4, 0.3, "NOT-ENOUGH-INFO"),
        ("fr", 1, 0.1, "EXCELLENT"),
        ("fr", 2, 0.5, "GOOD"),
        ("fr", 3, 0.9, "BAD"),
    ]
    results = per_caption_agreement_by_language(rows)
    assert list(results) == ["de", "fr"]
    assert results["de"]["n"] == 3
    assert results["de"]["n_not_enough_info"] == 1
    assert results["de"]["kendall_tau_b"] == pytest.approx(1.0)
    assert results["fr"]["spearman"] == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="appears twice"):
        per_caption_agreement_by_language([("de", 1, 0.9, "GOOD"), ("de", 1, 0.8, "BAD")])


# --------------------------------------------------------------------------------------------------
# Reading comparisons


def _write(tmp_path, text, name="comparisons.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_read_comparisons_csv(tmp_path):
    path = _write(
        tmp_path,
        "\ufeffm1, m2 ,language,delta_sxs,delta_cider,DELTA_CLIP\n"
        "a,b,de,12.5,0.1,-0.02\n"
        "\n"
        '"x, y",b,de,-3,0,1e-3\n',
    )
    comparisons = read_comparisons_csv(path)
    assert comparisons == [
        _c("a", "b", "de", 12.5, cider=0.1, clip=-0.02),
        _c("x, y", "b", "de", -3.0, cider=0.0, clip=0.001),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "line 1: empty file"),
        ("m1,m2,language,delta_cider\na,b,de,0.1\n", "line 1: missing column delta_sxs"),
        ("m1,m2,delta_cider\n", "line 1: missing columns language, delta_sxs"),
        ("m1,m2,language,delta_sxs\na,b,de,1\n", "line 1: expected at least one delta_<metric> column"),
        ("m1,m2,language,delta_sxs,delta_x,delta_x\n", "line 1: column 'delta_x' appears twice"),
        ("m1,m2,language,delta_sxs,delta_cider\n", "line 1: no comparisons after the header"),
        (
            "m1,m2,language,delta_sxs,delta_cider\na,b,de,1,0.1\na,c,de,x,0.2\n",
            "line 3: delta_sxs is not a number: 'x'",
        ),
        ("m1,m2,language,delta_sxs,delta_cider\na,b,de,1,\n", "line 2: delta_cider is empty"),
        (
            "m1,m2,language,delta_sxs,delta_cider\na,b,de,1,inf\n",
            "line 2: delta_cider is not a finite number",
        ),
        ("m1,m2,language,delta_sxs,delta_cider\na,b,de,1\n", "line 2: expected 5 cells, found 4"),
        ("m1,m2,language,delta_sxs,delta_cider\na,,de,1,0.1\n", "line 2: m2 is empty"),
        ("m1,m2,language,delta_sxs,delta_cider\na,a,de,1,0.1\n", "line 2: m1 and m2 are the same model"),
        ("m1,m2,language,delta_sxs,delta_cider\na,b,all,1,0.1\n", "line 2: 'all' is reserved"),
        (
            "m1,m2,language,delta_sxs,delta_cider\na,b,de,1,0.1\na,c,de,2,0.2\n\na,b,de,3,0.3\n",
            "line 5: b vs a in de is already on line 2",
        ),
    ],
)
def test_read_comparisons_csv_errors_name_line_and_reason(tmp_path, text, message):
    with pytest.raises(ComparisonsCsvError) as excinfo:
        read_comparisons_csv(_write(tmp_path, text))
    assert str(excinfo.value).startswith(message)


def test_unknown_columns_are_a_warning(tmp_path):
    path = _write(tmp_path, "m1,m2,language,delta_sxs,delta_cider,notes\na,b,de,1,0.1,looked fine\n")
    with pytest.warns(ComparisonsCsvWarning, match="line 1: ignoring unknown column notes"):
        comparisons = read_comparisons_csv(path)
    assert comparisons[0].deltas == {"cider": 0.1}
    messages = []
    read_comparisons_csv(path, on_warning=messages.append)
    assert messages == ["line 1: ignoring unknown column notes"]
