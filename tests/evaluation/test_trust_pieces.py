"""The vectorised permutation test and bootstrap τ give the numbers of the computation they replaced,
and the trust table computed language by language (pieces kept by a key of each language's inputs)
gives the numbers of the whole computation, recomputing only the language whose data changed."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from evaluation.research.bootstrap import batch_kendall, batch_kendall_counts, bootstrap_intervals, seeded_rng
from evaluation.research.correlation import Comparison
from evaluation.research.meta_evaluation import Item
from evaluation.research.meta_evaluation import significance as sig
from evaluation.research.trust_tables import trust_build


def _scores(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # Means of three −3…+3 judgments (ties at 0 and repeated values), metric Δ with exact zeros and repeats.
    human = rng.integers(-3, 4, size=(n, 3)).mean(axis=1).round(6)
    better = (human * 0.1 + rng.normal(0, 0.2, n)).round(2)
    worse = rng.normal(0, 0.2, n).round(1)
    return human, better, worse


@pytest.mark.parametrize("n", [10, 37, 240])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_vectorised_permutation_test_gives_the_sorted_ones_p_values(n, seed):
    human, better, worse = _scores(np.random.default_rng(seed), n)
    found = []
    for make in (lambda: seeded_rng(seed, "t"), lambda: np.random.RandomState(seed)):
        for a, b in ((better, worse), (worse, better)):
            fast = sig._permutation_sig_diff(human, a, b, n_permutations=600, rng=make())
            assert fast == sig._permutation_sig_diff_sorted(human, a, b, n_permutations=600, rng=make())
            found.append(fast)
    assert found[0] < found[1]  # the better metric is (more) significantly better than the worse


def test_the_vectorised_permutation_test_without_human_ties_or_with_only_ties():
    rng = np.random.default_rng(5)
    human, better, worse = _scores(rng, 50)
    for h in (np.where(human == 0, 1.0, human), np.zeros(50)):
        fast = sig._permutation_sig_diff(h, better, worse, n_permutations=300, rng=seeded_rng(0, "x"))
        slow = sig._permutation_sig_diff_sorted(h, better, worse, n_permutations=300, rng=seeded_rng(0, "x"))
        assert fast == slow


@pytest.mark.parametrize("mirrored", [True, False])
def test_bootstrap_tau_from_counts_is_the_pairwise_count_to_the_last_bit(mirrored):
    rng = np.random.default_rng(3)
    x = rng.integers(-5, 6, 40).astype(float) * 12.5  # ΔS×S-like: few distinct values, ties, zeros
    y = rng.normal(0, 1, 40).round(1)
    picks = rng.integers(0, 40, size=(300, 40))
    counts = np.stack([np.bincount(row, minlength=40) for row in picks])
    xs, ys, cs = x[picks], y[picks], counts
    px, py = x, y
    if mirrored:
        xs, ys = np.concatenate([xs, -xs], axis=1), np.concatenate([ys, -ys], axis=1)
        px, py, cs = (
            np.concatenate([x, -x]),
            np.concatenate([y, -y]),
            np.concatenate([counts, counts], axis=1),
        )
    b_counts, c_counts = batch_kendall_counts(px, py, cs)
    b_pairs, c_pairs = batch_kendall(xs, ys)
    np.testing.assert_array_equal(b_counts, b_pairs)
    np.testing.assert_array_equal(c_counts, c_pairs)


@pytest.mark.parametrize("mirrored", [True, False])
def test_bootstrap_intervals_are_those_of_the_resampled_rows(monkeypatch, mirrored):
    from evaluation.research import bootstrap

    rng = np.random.default_rng(4)
    strata = [(rng.integers(-4, 5, k) * 25.0, rng.normal(0, 1, k).round(1)) for k in (6, 6, 9)]
    fast = bootstrap_intervals(strata, mirrored=mirrored, n_boot=500, seed=0, group="all")
    monkeypatch.setattr(bootstrap, "_MAX_COUNTED_POINTS", 0)
    assert bootstrap_intervals(strata, mirrored=mirrored, n_boot=500, seed=0, group="all") == fast


def test_average_ranks_from_counts_are_scipys():
    from scipy import stats

    from evaluation.research.bootstrap import average_ranks_counts

    rng = np.random.default_rng(6)
    values = rng.integers(-3, 4, 30).astype(float)
    picks = rng.integers(0, 30, size=(200, 30))
    counts = np.stack([np.bincount(row, minlength=30) for row in picks])
    expected = stats.rankdata(values[picks], axis=1)
    np.testing.assert_array_equal(average_ranks_counts(values, counts, picks), expected)


def test_acc23_bootstrap_counts_are_those_of_the_cumulative_sums():
    from evaluation.research.meta_evaluation import acc23

    for seed in range(12):
        rng = np.random.default_rng(seed)
        human, metric, _ = _scores(rng, int(rng.integers(5, 300)))
        if seed % 4 == 0:
            human = np.where(human == 0, 1.0, human)  # no human tie
        strata = rng.integers(0, 3, len(human))
        fast = acc23._bootstrap_best(human, metric, n_boot=300, rng=seeded_rng(seed, "b"), strata=strata)
        slow = acc23._bootstrap_best_cumulative(
            human, metric, n_boot=300, rng=seeded_rng(seed, "b"), strata=strata
        )
        np.testing.assert_array_equal(fast, slow)


METRICS = ("BLEU-4", "CIDEr", "CLIPScore")


def _selection(languages=("de", "fr", "ja"), images=12, shift: dict | None = None):
    rng = np.random.default_rng(0)
    comparisons, items = [], []
    for language in languages:
        for m1, m2 in (("a", "b"), ("a", "c"), ("b", "c"), ("b", "d")):
            humans = rng.integers(-3, 4, size=(images, 3)).mean(axis=1).round(6)
            deltas = {m: (humans * 0.05 + rng.normal(0, 0.1, images)).round(3) for m in METRICS}
            if shift and language in shift:
                deltas = {m: v + shift[language] for m, v in deltas.items()}
            for i in range(images):
                items.append(
                    Item(
                        language,
                        m1,
                        m2,
                        f"{language}-{i}",
                        float(humans[i]),
                        3,
                        {m: float(deltas[m][i]) for m in METRICS},
                    )
                )
            comparisons.append(
                Comparison(
                    m1,
                    m2,
                    language,
                    float(100 * ((humans > 0).mean() - (humans < 0).mean())),
                    {m: float(deltas[m].mean()) for m in METRICS},
                )
            )
    return comparisons, items


class _Counting(dict):
    def __init__(self):
        super().__init__()
        self.written = []

    def __setitem__(self, key, value):
        self.written.append(value.language)
        super().__setitem__(key, value)


def test_pieces_give_the_numbers_of_the_whole_computation():
    comparisons, items = _selection()
    store = _Counting()
    whole = trust_build(items, comparisons, n_boot=200, n_permutations=200)
    assert trust_build(items, comparisons, n_boot=200, n_permutations=200, pieces=store) == whole
    assert sorted(store.written) == ["de", "fr", "ja"]
    # Read back: nothing computed again, the same numbers.
    store.written.clear()
    assert trust_build(items, comparisons, n_boot=200, n_permutations=200, pieces=store) == whole
    assert store.written == []
    assert whole.table.cell("CIDEr", "de").result.ci is not None
    assert whole.system["CIDEr"]["de"].soft_pairwise_accuracy is not None


def test_one_language_changed_recomputes_that_language_and_the_pool_only():
    comparisons, items = _selection()
    store = _Counting()
    trust_build(items, comparisons, n_boot=200, n_permutations=200, pieces=store)
    store.written.clear()
    moved_comparisons, moved_items = _selection(shift={"fr": 0.02})
    changed = trust_build(moved_items, moved_comparisons, n_boot=200, n_permutations=200, pieces=store)
    assert store.written == ["fr"]
    assert changed == trust_build(moved_items, moved_comparisons, n_boot=200, n_permutations=200)
    before = trust_build(items, comparisons, n_boot=200, n_permutations=200)
    assert changed.table.languages["de"] == before.table.languages["de"]
    assert changed.table.languages["fr"] != before.table.languages["fr"]


def test_a_language_added_or_a_setting_changed_is_a_new_piece():
    comparisons, items = _selection(languages=("de", "fr"))
    store = _Counting()
    trust_build(items, comparisons, n_boot=100, n_permutations=100, pieces=store)
    more_comparisons, more_items = _selection(languages=("de", "fr", "ja"))
    store.written.clear()
    # The same data in de and fr draw the same numbers whatever other languages are there.
    more = trust_build(
        [i for i in more_items if i.language == "ja"] + items,
        comparisons + [c for c in more_comparisons if c.language == "ja"],
        n_boot=100,
        n_permutations=100,
        pieces=store,
    )
    assert store.written == ["ja"]
    assert (
        more.table.languages["de"]
        == trust_build(items, comparisons, n_boot=100, n_permutations=100).table.languages["de"]
    )
    store.written.clear()
    trust_build(items, comparisons, n_boot=100, n_permutations=100, seed=1, pieces=store)
    assert sorted(store.written) == ["de", "fr"]


def test_pieces_without_items_or_without_comparisons():
    comparisons, items = _selection(languages=("de", "fr"))
    assert trust_build([], comparisons, n_boot=50, pieces={}) == trust_build([], comparisons, n_boot=50)
    assert trust_build(items, None, n_boot=50, n_permutations=50, pieces={}) == trust_build(
        items, None, n_boot=50, n_permutations=50
    )
    plain = [replace(i, deltas={}) for i in items]
    assert trust_build(plain, None, pieces={}) == trust_build(plain, None)


def test_pieces_refuse_what_the_whole_computation_refuses_and_store_nothing():
    comparisons, items = _selection(languages=("de",))
    store = _Counting()
    with pytest.raises(ValueError, match="given twice"):
        trust_build(items + items[:1], comparisons, pieces=store)
    with pytest.raises(ValueError, match="unknown significance test"):
        trust_build(items, comparisons, significance_test="nope", pieces=store)
    assert store.written == []
