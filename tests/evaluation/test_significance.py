"""The two permutation tests between metrics, pinned against google-research/mt-metrics-eval.

Every number marked "reference" was printed by ``scripts/reference/significance_pins.py``, which runs
mt-metrics-eval's own ``stats.PermutationSigDiff`` (with ``KendallWithTiesOpt``, ``average_by="item"``,
``sample_rate=1.0``) and ``stats.PairwisePermutationSigDiff`` at commit 68a481aea1a7 on the inputs
below, after ``np.random.seed(seed)``, 300 draws, early stopping off. A ``RandomState`` seeded the same
way draws the same swaps here, so the p-values must be equal to the last digit.
"""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.research.bootstrap import seeded_rng
from evaluation.research.correlation import ALL
from evaluation.research.meta_evaluation import (
    PAIRWISE_PERMUTATION_SIG_DIFF,
    PERMUTATION_SIG_DIFF,
    Item,
    permutation_p_value,
    trust_table,
)

# Items of one language: people's mean −3…+3 score (ties at 0 included) and three metrics' Δ.
HUMAN = [
    0.0,
    -2.0,
    2.333333,
    -3.0,
    -1.666667,
    -1.666667,
    0.333333,
    0.0,
    -2.333333,
    -3.0,
    0.666667,
    -2.0,
    -1.666667,
    3.0,
    0.0,
    1.666667,
    1.0,
    -2.333333,
    -2.0,
    -1.666667,
    -2.666667,
    0.0,
    -3.0,
    2.666667,
    -1.333333,
    -1.0,
    -2.333333,
    1.666667,
    0.0,
    -2.333333,
    1.333333,
    0.333333,
    -0.333333,
    0.666667,
    1.333333,
    0.0,
    -0.333333,
    -1.333333,
    1.666667,
    -0.666667,
]
DELTAS = {
    "good": [
        -0.0,
        -0.02,
        0.01,
        0.0,
        -0.01,
        -0.02,
        -0.08,
        -0.06,
        -0.05,
        -0.02,
        -0.03,
        0.04,
        -0.01,
        0.04,
        0.0,
        0.04,
        0.05,
        -0.05,
        0.04,
        -0.05,
        -0.01,
        -0.01,
        -0.04,
        0.05,
        -0.01,
        0.05,
        -0.04,
        0.04,
        0.02,
        0.06,
        0.08,
        0.03,
        0.06,
        0.04,
        -0.02,
        0.01,
        0.05,
        -0.03,
        0.08,
        0.01,
    ],
    "coarse": [
        -0.0,
        0.0,
        -0.0,
        -0.1,
        -0.1,
        0.0,
        -0.0,
        -0.1,
        -0.0,
        -0.0,
        -0.0,
        -0.0,
        0.0,
        0.0,
        -0.0,
        0.1,
        0.0,
        0.1,
        0.0,
        0.0,
        -0.1,
        -0.0,
        0.0,
        0.0,
        -0.0,
        0.0,
        -0.1,
        0.0,
        0.1,
        -0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        -0.0,
        0.0,
        -0.0,
        0.1,
        -0.0,
        0.0,
    ],
    "noise": [
        -0.01,
        0.06,
        0.01,
        0.04,
        -0.03,
        -0.02,
        -0.05,
        -0.01,
        -0.01,
        -0.06,
        -0.06,
        0.01,
        -0.01,
        -0.04,
        -0.05,
        -0.06,
        0.0,
        -0.03,
        -0.03,
        -0.03,
        -0.02,
        -0.02,
        0.0,
        -0.09,
        -0.01,
        -0.06,
        -0.02,
        0.06,
        -0.1,
        -0.06,
        -0.03,
        -0.11,
        0.12,
        -0.03,
        0.08,
        -0.0,
        0.06,
        0.04,
        -0.02,
        0.02,
    ],
}
K = 300

# reference: (first metric, second metric, seed, PermutationSigDiff p, PairwisePermutationSigDiff p)
REFERENCE = [
    ("good", "coarse", 0, 0.0, 0.0033333333333333335),
    ("good", "coarse", 1, 0.0, 0.0),
    ("good", "noise", 0, 0.016666666666666666, 0.05),
    ("good", "noise", 1, 0.03, 0.06),
    ("coarse", "noise", 0, 0.9766666666666667, 0.9866666666666667),
    ("coarse", "noise", 1, 0.9866666666666667, 0.97),
]


@pytest.mark.parametrize(("better", "worse", "seed", "p_perm", "p_pairwise"), REFERENCE)
def test_both_tests_give_the_reference_p_values_from_the_reference_swaps(
    better, worse, seed, p_perm, p_pairwise
):
    human, a, b = np.array(HUMAN), np.array(DELTAS[better]), np.array(DELTAS[worse])
    got = permutation_p_value(human, a, b, n_permutations=K, rng=np.random.RandomState(seed))
    assert got == p_perm
    got = permutation_p_value(
        human, a, b, n_permutations=K, rng=np.random.RandomState(seed), method=PAIRWISE_PERMUTATION_SIG_DIFF
    )
    assert got == p_pairwise


def test_the_default_is_the_reference_permutation_sig_diff_not_the_pairwise_variant():
    # reference, seed 0: PermutationSigDiff 0.016666666666666666, PairwisePermutationSigDiff 0.05
    human, good, noise = np.array(HUMAN), np.array(DELTAS["good"]), np.array(DELTAS["noise"])
    default = permutation_p_value(human, good, noise, n_permutations=K, rng=np.random.RandomState(0))
    assert default == pytest.approx(5 / K) and default < 0.05
    pairwise = permutation_p_value(
        human,
        good,
        noise,
        n_permutations=K,
        rng=np.random.RandomState(0),
        method=PAIRWISE_PERMUTATION_SIG_DIFF,
    )
    assert pairwise == pytest.approx(15 / K)


def test_an_unknown_test_is_refused():
    with pytest.raises(ValueError, match="unknown significance test"):
        permutation_p_value(
            np.ones(3), np.ones(3), np.ones(3), n_permutations=5, rng=np.random.default_rng(0), method="t"
        )
    with pytest.raises(ValueError, match="unknown significance test"):
        trust_table([], significance_test="Bootstrap")


def test_a_metric_that_never_differs_is_tested_without_nan():
    human = np.array(HUMAN)
    flat = np.zeros(len(human))
    p = permutation_p_value(
        human, np.array(DELTAS["good"]), flat, n_permutations=200, rng=np.random.default_rng(1)
    )
    assert 0.0 <= p < 0.05


def _items(metrics):
    return [
        Item("de", "a", "b", f"img{i}", h, 3, {name: DELTAS[source][i] for name, source in metrics.items()})
        for i, h in enumerate(HUMAN)
    ]


def test_the_trust_table_names_its_test_and_uses_it():
    items = _items({"good": "good", "noise": "noise"})
    table = trust_table(items, n_boot=0, n_permutations=K, seed=4)
    assert table.significance_test == PERMUTATION_SIG_DIFF
    assert table.as_dict()["significance_test"] == "PermutationSigDiff"
    pairwise = trust_table(
        items, n_boot=0, n_permutations=K, seed=4, significance_test=PAIRWISE_PERMUTATION_SIG_DIFF
    )
    assert pairwise.as_dict()["significance_test"] == "PairwisePermutationSigDiff"
    # Each p-value is that test's on the language's items with the table's seeded draws.
    human, good, noise = np.array(HUMAN), np.array(DELTAS["good"]), np.array(DELTAS["noise"])
    for built, method in ((table, PERMUTATION_SIG_DIFF), (pairwise, PAIRWISE_PERMUTATION_SIG_DIFF)):
        rng = seeded_rng(4, "significance/de")
        expected = permutation_p_value(human, good, noise, n_permutations=K, rng=rng, method=method)
        assert built.languages["de"].p_values["good"]["noise"] == expected
    assert pairwise.languages["de"].p_values != table.languages["de"].p_values


def test_equal_accuracies_are_ordered_by_name_as_the_reference():
    # Two copies of one metric have equal accuracy: "alpha" before "zeta" whatever the file's order.
    items = _items({"zeta": "good", "alpha": "good", "noise": "noise"})
    table = trust_table(items, metrics=["zeta", "noise", "alpha"], n_boot=0, n_permutations=50)
    for code in (ALL, "de"):
        names = [verdict.metric for verdict in table.languages[code].verdicts]
        assert names[:2] == ["alpha", "zeta"]
    assert table.metrics[:2] == ("alpha", "zeta")


def test_the_trust_build_passes_the_test_on_and_its_notes_name_it():
    from evaluation.research.trust_tables import trust_build, trust_notes

    items = _items({"good": "good", "noise": "noise"})
    default = trust_build(items, n_boot=0, n_permutations=K, seed=4)
    pairwise = trust_build(
        items, n_boot=0, n_permutations=K, seed=4, significance_test=PAIRWISE_PERMUTATION_SIG_DIFF
    )
    assert default.table.significance_test == PERMUTATION_SIG_DIFF
    assert pairwise.table.significance_test == PAIRWISE_PERMUTATION_SIG_DIFF
    assert "mt-metrics-eval's PermutationSigDiff and AssignRanks" in " ".join(trust_notes(default.table))
    assert "PairwisePermutationSigDiff and AssignRanks" in " ".join(trust_notes(pairwise.table))
