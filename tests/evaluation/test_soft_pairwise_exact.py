"""Soft pairwise accuracy: exact p-values where a comparison has few images, and a stated bound on
the Monte-Carlo error where it has more."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from evaluation.research.correlation import ALL, Comparison, correlate
from evaluation.research.meta_evaluation import Item, sign_flip_p_values, with_soft_pairwise_accuracy
from evaluation.research.meta_evaluation.soft_pairwise import SPA_EXACT_MAX_IMAGES, spa_draws
from evaluation.research.tables import correlation_csv, correlation_text


def _brute_force_p(column):
    """The share of all 2^n sign patterns whose sum is at least the observed one."""
    observed = sum(column)
    patterns = list(itertools.product((1, -1), repeat=len(column)))
    hits = sum(1 for signs in patterns if sum(s * v for s, v in zip(signs, column)) >= observed - 1e-12)
    return hits / len(patterns)


def test_exact_p_values_are_the_share_of_every_sign_pattern():
    columns = np.array([[2.0, 0.1], [1.0, -0.3], [-1.0, 0.2], [0.5, 0.0], [3.0, 0.05], [-0.5, -0.2]])
    p = sign_flip_p_values(columns, n_permutations=0)
    assert p.tolist() == [_brute_force_p(columns[:, 0].tolist()), _brute_force_p(columns[:, 1].tolist())]
    # By hand: a flipped set S changes the sum by −2·sum(S), so the patterns at least the observed are
    # the 10 subsets with sum ≤ 0: {}, {−1}, {−.5}, {−1, −.5}, {−1, .5}, {−1, 1}, {.5, −.5},
    # {−1, .5, −.5}, {−1, 1, −.5}, {−1, 1, .5, −.5}.
    assert p[0] == 10 / 64


def test_exact_enumeration_refuses_more_images_than_its_limit():
    with pytest.raises(ValueError, match="limited to"):
        sign_flip_p_values(np.ones((SPA_EXACT_MAX_IMAGES + 1, 1)), n_permutations=0)


def _items(n, language="de", pair=("a", "b"), seed=0):
    rng = np.random.default_rng(seed)
    human = rng.integers(-3, 4, size=n).astype(float)
    metric = human * 0.05 + rng.normal(scale=0.2, size=n)
    items = [
        Item(language, pair[0], pair[1], f"i{i}", float(human[i]), 3, {"m": float(metric[i])})
        for i in range(n)
    ]
    comparison = Comparison(pair[0], pair[1], language, float(human.sum()), {"m": float(metric.sum())})
    return items, comparison


def test_a_language_with_one_small_comparison_gets_the_exact_value_whatever_the_draws():
    # The old 1,000 draws gave values up to 0.037 off here; two seeds must now agree exactly.
    items, comparison = _items(12)
    results = [
        with_soft_pairwise_accuracy(
            correlate([comparison], n_boot=0), [comparison], items, n_boot=0, seed=seed
        )
        for seed in (0, 1)
    ]
    first, second = results[0]["m"]["de"], results[1]["m"]["de"]
    columns = np.array([[item.human, item.deltas["m"]] for item in items])
    p_people, p_metric = (_brute_force_p(columns[:, k].tolist()) for k in (0, 1))
    assert first.soft_pairwise_accuracy == pytest.approx(1 - abs(p_people - p_metric), abs=1e-12)
    assert second.soft_pairwise_accuracy == first.soft_pairwise_accuracy
    assert first.soft_pairwise_accuracy_mc_error == 0.0


def test_a_large_comparison_draws_enough_and_states_the_bound():
    assert spa_draws(SPA_EXACT_MAX_IMAGES) == 0
    assert spa_draws(SPA_EXACT_MAX_IMAGES + 1, n_permutations=1000) == 10_000
    assert spa_draws(200, n_permutations=50_000) == 50_000
    small, small_comparison = _items(10, pair=("a", "b"))
    large, large_comparison = _items(60, pair=("a", "c"), seed=3)
    comparisons = [small_comparison, large_comparison]
    results = with_soft_pairwise_accuracy(
        correlate(comparisons, n_boot=0), comparisons, small + large, n_boot=0
    )
    cell = results["m"]["de"]
    assert cell.n_soft == 2
    assert cell.soft_pairwise_accuracy_mc_error == pytest.approx(0.01)
    assert cell.as_dict()["soft_pairwise_accuracy_mc_error"] == pytest.approx(0.01)
    # The bound holds: the drawn value is within 3 bounds of one with 40 times the draws.
    precise = with_soft_pairwise_accuracy(
        correlate(comparisons, n_boot=0), comparisons, small + large, n_boot=0, max_error=0.01 / 6.4, seed=9
    )["m"]["de"]
    assert abs(precise.soft_pairwise_accuracy - cell.soft_pairwise_accuracy) <= 3 * 0.01
    text = correlation_text(results, show_p=False)
    assert f"{cell.soft_pairwise_accuracy:.3f} ±0.010" in text
    assert "Monte-Carlo standard error" in text
    header = correlation_csv(results).splitlines()[0].split(",")
    assert "soft_pairwise_accuracy_mc_error" in header
    assert results["m"][ALL].soft_pairwise_accuracy_mc_error == pytest.approx(0.01)
