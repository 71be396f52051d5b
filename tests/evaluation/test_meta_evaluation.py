"""Meta-evaluation: pairwise accuracy, acc23 with tie calibration, significance clusters, soft pairwise
accuracy, the trust table and the judgments file.

Values marked "mt-metrics-eval" were computed with google-research/mt-metrics-eval at commit
68a481aea1a7 (``stats.KendallWithTiesOpt(..., sample_rate=1.0)`` and ``data.AssignRanks``) on the
same inputs; the package on PyPI under that name is not Google's, so it is not installed here. The
item-level cases pack each item as mt-metrics-eval sees two systems per item: gold
``[0]*n + human`` and metric ``[0]*n + deltas`` with ``num_sys=2, average_by="item"``. The same
definitions were also checked against it on 300 random cases while writing the module (0 differences).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evaluation.research.comparisons_csv import read_comparisons_csv
from evaluation.research.correlation import ALL, Comparison, correlate
from evaluation.research.judgments_csv import JudgmentsCsvError, read_judgments_csv
from evaluation.research.meta_evaluation import (
    MIN_ITEMS,
    Item,
    assign_ranks,
    permutation_p_value,
    tie_calibrated,
    tie_calibrated_pairs,
    trust_table,
    with_soft_pairwise_accuracy,
)
from evaluation.research.trust_tables import trust_build

TABLE4 = Path(__file__).parent / "data" / "xm3600_table4.csv"

# --- acc23 with tie calibration ---------------------------------------------------------------------

# mt-metrics-eval: KendallWithTiesOpt(variant="acc23", num_sys=2, average_by="item") = (0.6667, 0.05).
ITEMS_EPS = (
    [0, 0, 0, 1, -1, 2, 0, -2, 1, 0, 3, -1 / 3],
    [0.01, -0.02, 0.015, 0.3, -0.25, 0.02, 0.05, -0.5, -0.04, 0.6, 0.7, -0.01],
)


def test_acc23_calibrates_epsilon_as_mt_metrics_eval():
    result = tie_calibrated(*ITEMS_EPS)
    # By hand at ε = 0.05: the four human ties with |Δ| ≤ 0.05 agree (items 0, 1, 2, 6), items 5, 8
    # and 11 become metric ties against a human preference (disagree), and of the untied items
    # 3, 4, 7 and 10 agree in sign while 9 (human tie, Δ = 0.6) does not: 8 of 12.
    assert result.acc23 == pytest.approx(8 / 12)
    assert result.epsilon == 0.05
    assert result.tau23 == pytest.approx(2 * 8 / 12 - 1)
    assert result.n == 12


def test_acc23_without_useful_ties_keeps_epsilon_zero():
    # mt-metrics-eval: (0.75, 0.0).
    human = [2, 1.5, 0, -1, -3, 0.5, 0, 1, -2, 2.5, -0.5, 3]
    metric = [0.31, 0.02, 0.0, -0.4, -0.05, -0.01, 0.03, 0.2, -0.2, 0.02, 0.01, 0.5]
    result = tie_calibrated(human, metric)
    assert (result.acc23, result.epsilon) == (0.75, 0.0)


def test_acc23_ties_in_the_metric_match_only_human_ties():
    # mt-metrics-eval: (0.625, 0.0). Exact metric ties (0.0) are ties at ε = 0 already.
    result = tie_calibrated([1, 1, 0, 0, -1, -1, 0, 2], [0.1, 0.1, 0.1, 0.0, -0.1, 0.0, -0.1, 0.3])
    assert (result.acc23, result.epsilon) == (0.625, 0.0)


def test_acc23_when_people_always_tie_ties_every_item():
    result = tie_calibrated([0, 0, 0], [0.3, -0.1, 0.2])
    assert result.acc23 == 1.0
    assert result.epsilon == 0.3  # the smallest ε that ties all three


def test_acc23_all_tied_items_agree_at_zero():
    result = tie_calibrated([0, 0], [0.0, 0.0])
    assert (result.acc23, result.epsilon) == (1.0, 0.0)


def test_acc23_of_a_metric_that_never_decides():
    result = tie_calibrated([1, -2, 3], [0.0, 0.0, 0.0])
    assert (result.acc23, result.epsilon) == (0.0, 0.0)


@pytest.mark.parametrize(("human", "metric", "acc"), [(1, 0.2, 1.0), (1, -0.2, 0.0), (0, 0.2, 1.0)])
def test_acc23_of_a_single_item(human, metric, acc):
    result = tie_calibrated([human], [metric])
    assert result.acc23 == acc
    # A wrong sign is not mended by a tie (a tie against a preference disagrees too): ε stays 0.
    assert result.epsilon == (0.2 if human == 0 else 0.0)


def test_acc23_takes_the_smallest_epsilon_among_equal_maxima():
    # ε = 0: 1 of 2 agree; ε = 0.1 ties item 0 (a human tie: agrees) and item 1 stays right: 2 of 2;
    # ε = 0.5 also ties item 1 against its human preference: 1 of 2.
    result = tie_calibrated([0, 1, 0], [0.1, 0.5, 0.1])
    assert (result.acc23, result.epsilon) == (1.0, 0.1)
    # 2, 3, 2, 3, 2 of 4 agree at ε = 0, 0.1, 0.2, 0.3, 0.4: the maximum at 0.1 and 0.3, so 0.1.
    equal = tie_calibrated([0, 1, 0, 2], [0.1, 0.2, 0.3, 0.4])
    assert (equal.acc23, equal.epsilon) == (0.75, 0.1)


def test_acc23_of_no_item_is_undefined():
    result = tie_calibrated([], [])
    assert (result.acc23, result.epsilon, result.n) == (None, None, 0)


def test_acc23_rejects_bad_vectors():
    with pytest.raises(ValueError, match="same length"):
        tie_calibrated([1, 2], [0.1])
    with pytest.raises(ValueError, match="finite"):
        tie_calibrated([1, 2], [0.1, float("nan")])


def test_acc23_over_caption_pairs_as_mt_metrics_eval():
    # mt-metrics-eval, average_by="none": acc23 (0.8444444444444444, 0.05), tau23 (0.6888888888888889, 0.05).
    ratings = [4, 3, 3, 1, 2, 4, 2, 3, 1, 4]
    scores = [0.9, 0.5, 0.7, 0.1, 0.4, 0.6, 0.45, 0.5, 0.2, 0.95]
    result = tie_calibrated_pairs(ratings, scores)
    assert result.acc23 == pytest.approx(0.8444444444444444)
    assert result.tau23 == pytest.approx(0.6888888888888889)
    assert result.epsilon == pytest.approx(0.05)
    assert (result.n, result.sampled) == (45, False)


def test_acc23_over_caption_pairs_samples_above_the_limit():
    rng = np.random.default_rng(0)
    ratings = rng.integers(1, 5, size=400)
    scores = ratings + rng.normal(size=400)
    exact = tie_calibrated_pairs(ratings, scores)
    sampled = tie_calibrated_pairs(ratings, scores, max_pairs=20_000, seed=1)
    assert sampled.sampled and sampled.n == 20_000
    assert sampled.acc23 == pytest.approx(exact.acc23, abs=0.02)
    assert tie_calibrated_pairs(ratings, scores, max_pairs=20_000, seed=1) == sampled


def test_bootstrap_interval_is_reproducible_and_around_the_point():
    rng = np.random.default_rng(5)
    human = rng.integers(-3, 4, size=80)
    metric = human + rng.normal(scale=2, size=80)
    first = tie_calibrated(human, metric, n_boot=300, seed=3)
    assert first.ci[0] <= first.acc23 <= first.ci[1]
    assert first.ci[1] - first.ci[0] > 0.02
    assert tie_calibrated(human, metric, n_boot=300, seed=3).ci == first.ci


# --- Significance and clusters ----------------------------------------------------------------------


def test_assign_ranks_as_mt_metrics_eval():
    # mt-metrics-eval's AssignRanks on the same matrices: [1, 1, 2, 3] and [1, 1, 1].
    p = np.array([[1, 0.3, 0.01, 0.0], [1, 1, 0.2, 0.01], [1, 1, 1, 0.04], [1, 1, 1, 1.0]])
    assert assign_ranks(p, 0.05) == [1, 1, 2, 3]
    assert assign_ranks(np.array([[1, 0.06, 0.2], [1, 1, 0.5], [1, 1, 1.0]]), 0.05) == [1, 1, 1]


def test_permutation_test_tells_a_good_metric_from_noise():
    rng = np.random.default_rng(2)
    human = rng.integers(-3, 4, size=150).astype(float)
    good = human + rng.normal(scale=0.5, size=150)
    noise = rng.normal(size=150)
    p = permutation_p_value(human, good, noise, n_permutations=500, rng=np.random.default_rng(0))
    assert p < 0.01
    # The same metric twice: every draw's difference is 0, at least the observed 0.
    same = permutation_p_value(human, good, good, n_permutations=200, rng=np.random.default_rng(0))
    assert same == 1.0


def _items(language, pair, human, deltas):
    m1, m2 = pair
    return [
        Item(
            language,
            m1,
            m2,
            f"img{i}",
            float(h),
            3,
            {name: float(values[i]) for name, values in deltas.items()},
        )
        for i, h in enumerate(human)
    ]


def test_trust_table_ranks_per_language_and_pools_all():
    rng = np.random.default_rng(7)
    items = []
    for language in ("de", "sw"):
        for pair in (("a", "b"), ("a", "c")):
            latent = rng.normal(size=60)
            human = np.clip(np.round(latent * 1.5), -3, 3)
            items += _items(
                language,
                pair,
                human,
                {"good": latent + rng.normal(scale=0.3, size=60), "random": rng.normal(size=60)},
            )
    table = trust_table(items, n_boot=200, n_permutations=300, seed=1)
    assert list(table.languages) == [ALL, "de", "sw"]
    assert table.metrics == ("good", "random")
    for code in table.languages:
        verdict = table.languages[code]
        assert verdict.status == "ranked"
        assert [v.metric for v in verdict.verdicts] == ["good", "random"]
        assert [v.rank for v in verdict.verdicts] == [1, 2]
        assert table.cell("good", code).best and not table.cell("random", code).best
        assert verdict.p_values["good"]["random"] < 0.05
    assert table.languages[ALL].n_items == 240 and table.languages["de"].n_pairs == 2
    # "all" calibrates ε on the pool: its acc23 is that of the pooled items, not a mean of languages.
    pooled = tie_calibrated([i.human for i in items], [i.deltas["good"] for i in items])
    assert table.cell("good", ALL).result.acc23 == pooled.acc23
    assert table.cell("good", ALL).result.epsilon == pooled.epsilon
    again = trust_table(items, n_boot=200, n_permutations=300, seed=1)
    assert again.as_dict() == table.as_dict()


def test_trust_table_marks_languages_that_cannot_tell_metrics_apart():
    rng = np.random.default_rng(3)
    few = _items("xh", ("a", "b"), [1, -1, 2, 0, 1], {"x": rng.normal(size=5), "y": rng.normal(size=5)})
    human = rng.integers(-3, 4, size=30)
    close = _items(
        "yo", ("a", "b"), human, {"x": human + rng.normal(size=30), "y": human + rng.normal(size=30)}
    )
    table = trust_table(few + close, n_boot=100, n_permutations=200)
    assert table.languages["xh"].status == "too_few"
    assert table.languages["xh"].n_items == 5 < MIN_ITEMS
    assert all(v.rank is None for v in table.languages["xh"].verdicts)
    assert "too few items" in table.languages["xh"].note and "5" in table.languages["xh"].note
    assert table.languages["yo"].status == "undecided"
    assert [v.rank for v in table.languages["yo"].verdicts] == [1, 1]
    assert "30 items" in table.languages["yo"].note


def test_trust_table_of_a_language_with_one_pair_and_one_metric():
    items = _items("de", ("a", "b"), [1, -1, 0, 2] * 3, {"m": [0.1, -0.2, 0.0, 0.3] * 3})
    table = trust_table(items, n_boot=50, n_permutations=50)
    verdict = table.languages["de"]
    assert (verdict.status, verdict.n_pairs, verdict.n_items) == ("ranked", 1, 12)
    assert verdict.verdicts[0].rank == 1 and verdict.verdicts[0].result.acc23 == 1.0


def test_trust_table_rejects_bad_items():
    item = Item("de", "a", "b", "i1", 1.0, 1, {"m": 0.1})
    with pytest.raises(ValueError, match="given twice"):
        trust_table([item, item])
    with pytest.raises(ValueError, match="compared with itself"):
        trust_table([Item("de", "a", "a", "i1", 1.0, 1, {"m": 0.1})])
    with pytest.raises(ValueError, match="reserved"):
        trust_table([Item("all", "a", "b", "i1", 1.0, 1, {"m": 0.1})])


# --- Model level: pairwise and soft pairwise accuracy -----------------------------------------------


def test_pairwise_accuracy_of_seed_000_table_4():
    # By hand from Table 4: XM3600 references get every one of the 24 signs right; the 600-image
    # subset misses es Bg-vs-Lg (ΔS×S −1.3, ΔCIDEr +0.002) and zh Lg-vs-BB (−11.8, +0.002);
    # COCO-DEV references miss 2 of 6 in every language (8 positive ΔCIDEr against negative ΔS×S).
    results = correlate(read_comparisons_csv(TABLE4), n_boot=200)
    accuracy = {m: {code: r.pairwise_accuracy for code, r in by.items()} for m, by in results.items()}
    assert accuracy["cider_xm3600"] == {ALL: 1.0, "en": 1.0, "es": 1.0, "hi": 1.0, "zh": 1.0}
    assert accuracy["cider_xm600"] == {ALL: 22 / 24, "en": 1.0, "es": 5 / 6, "hi": 1.0, "zh": 5 / 6}
    assert accuracy["cider_coco_dev"] == {ALL: 16 / 24, "en": 4 / 6, "es": 4 / 6, "hi": 4 / 6, "zh": 4 / 6}
    assert (
        results["cider_coco_dev"][ALL].pairwise_accuracy_ci[0]
        < 16 / 24
        < results["cider_coco_dev"][ALL].pairwise_accuracy_ci[1]
    )
    # Mirroring changes N, not the accuracy.
    one_way = correlate(read_comparisons_csv(TABLE4), both_directions=False, n_boot=0)
    assert one_way["cider_xm600"][ALL].pairwise_accuracy == 22 / 24


def test_pairwise_accuracy_counts_a_zero_only_against_a_zero():
    comparisons = [
        Comparison("a", "b", "de", 0.0, {"m": 0.0}),
        Comparison("a", "c", "de", 0.0, {"m": 0.1}),
        Comparison("b", "c", "de", 10.0, {"m": 0.0}),
    ]
    assert correlate(comparisons, n_boot=0)["m"]["de"].pairwise_accuracy == pytest.approx(1 / 3)


def test_soft_pairwise_accuracy_follows_the_p_values():
    # People clearly prefer m2 on all 8 images: p_people = 1/256 in expectation. A metric that
    # agrees everywhere has the same p-value from the same draws; one that disagrees everywhere
    # has p = 1, so its soft accuracy is about 1 − (1 − 1/256).
    human = [2.0, 3.0, 1.0, 2.0, 3.0, 2.0, 1.0, 2.0]
    items = _items(
        "de", ("a", "b"), human, {"agree": [h / 10 for h in human], "oppose": [-h / 10 for h in human]}
    )
    comparisons = [Comparison("a", "b", "de", 100.0, {"agree": 0.2, "oppose": -0.2})]
    results = with_soft_pairwise_accuracy(
        correlate(comparisons, n_boot=0), comparisons, items, n_permutations=2000
    )
    agree, oppose = results["agree"]["de"], results["oppose"]["de"]
    assert agree.soft_pairwise_accuracy == 1.0
    assert oppose.soft_pairwise_accuracy == pytest.approx(0.0, abs=0.02)
    assert (agree.n_soft, agree.pairwise_accuracy, oppose.pairwise_accuracy) == (1, 1.0, 0.0)


def test_soft_pairwise_accuracy_leaves_comparisons_without_items_out():
    comparisons = [
        Comparison("a", "b", "de", 10.0, {"m": 0.2}),
        Comparison("a", "c", "de", -5.0, {"m": -0.1}),
    ]
    items = _items("de", ("a", "b"), [1, 2, 0], {"m": [0.1, 0.3, 0.2]})
    results = with_soft_pairwise_accuracy(correlate(comparisons, n_boot=0), comparisons, items, n_boot=0)
    assert results["m"]["de"].n_soft == 1
    assert results["m"]["de"].n_comparisons == 2


# --- The judgments file -----------------------------------------------------------------------------

HEADER = "language,image,m1,m2,rater,human,CIDEr-D,delta_BLEU-4\n"


def _write(tmp_path, text):
    path = tmp_path / "judgments.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_judgments_file_gives_items_and_comparisons(tmp_path):
    path = _write(
        tmp_path,
        HEADER
        + "de,i1,a,b,r1,2,0.5,0.1\nde,i1,a,b,r2,1,0.5,0.1\nde,i2,a,b,r1,-1,-0.2,0.0\nde,i2,a,b,r2,0,-0.2,0.0\n"
        + "ja,i1,a,b,r1,3,0.1,-0.1\n",
    )
    judgments = read_judgments_csv(path)
    assert judgments.metrics == ("CIDEr-D", "BLEU-4")
    assert judgments.n_judgments == 5
    assert [(i.language, i.image, i.human, i.n_judgments) for i in judgments.items] == [
        ("de", "i1", 1.5, 2),
        ("de", "i2", -0.5, 2),
        ("ja", "i1", 3.0, 1),
    ]
    de = judgments.comparisons[0]
    # i1 is a WIN (2 of 2 favour b), i2 a tie (1 of 2): ΔS×S = (1 − 0) / 2 images = 50.
    assert (de.language, de.delta_sxs, de.deltas) == (
        "de",
        50.0,
        {"CIDEr-D": pytest.approx(0.15), "BLEU-4": 0.05},
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("", "line 1: empty file"),
        ("language,image,m1,m2,rater,human\nde,i1,a,b,r1,1\n", "line 1: expected at least one metric column"),
        ("language,image,m1,m2,human,CIDEr\n", "line 1: missing column rater"),
        (HEADER + "de,i1,a,b,r1,4,0.5,0.1\n", "line 2: human must be an integer from -3 to +3, not 4"),
        (HEADER + "de,i1,a,b,r1,1.5,0.5,0.1\n", "line 2: human must be an integer from -3 to +3, not '1.5'"),
        (HEADER + "de,i1,a,b,r1,1,good,0.1\n", "line 2: CIDEr-D is not a number: 'good'"),
        (HEADER + "de,i1,a,b,r1,1,0.5,0.1\nde,i1,a,b,r2,1,0.6,0.1\n", "line 3: CIDEr-D of image i1"),
        (
            HEADER + "de,i1,a,b,r1,1,0.5,0.1\nde,i1,a,b,r1,2,0.5,0.1\n",
            "line 3: rater r1 already judged image i1",
        ),
        (HEADER + "de,i1,a,b,r1,1,0.5\n", "line 2: expected 8 cells, found 7"),
        (HEADER + "de,i1,a,a,r1,1,0.5,0.1\n", "line 2: m1 and m2 are the same model"),
        (HEADER + "all,i1,a,b,r1,1,0.5,0.1\n", "line 2: 'all' is reserved"),
        (HEADER, "no judgments after the header"),
        ('language,image,m1,m2,rater,human,x\nde,"i1,a,b,r1,1,0.5\n', "line 2: expected 7 cells, found 2"),
        ("language,image,m1,m2,rater,human,CIDEr,delta_cider\n", "name the same metric"),
    ],
)
def test_judgments_file_errors_name_the_line(tmp_path, body, message):
    with pytest.raises(JudgmentsCsvError) as caught:
        read_judgments_csv(_write(tmp_path, body))
    assert message in str(caught.value)


def test_trust_build_gives_every_view_the_same_table_cells_and_flags():
    """The API, the report, its heatmap and ``correlate --judgments`` all build through trust_build:
    the table, the model level in its cells and the CLIP flags come from one call."""

    class Verdict:
        def __init__(self, flagged):
            self.flagged = flagged

    human = [2.0, 3.0, 1.0, 2.0, -1.0, 2.0, 1.0, 2.0]
    items = _items("de", ("a", "b"), human, {"agree": [h / 10 for h in human]})
    comparisons = [Comparison("a", "b", "de", 100.0, {"agree": 0.2})]
    clip = {"sw": Verdict(True), "de": Verdict(False), "am": Verdict(True)}
    trust = trust_build(items, comparisons, clip_trust=clip, n_boot=50, n_permutations=100, seed=3)
    assert trust.clip_flags == ["am", "sw"]
    assert trust.table.as_dict() == trust_table(items, n_boot=50, n_permutations=100, seed=3).as_dict()
    assert trust.system["agree"]["de"].soft_pairwise_accuracy == 1.0
    # Without the comparisons (the heatmap) the same table, and no model level.
    alone = trust_build(items, n_boot=50, n_permutations=100, seed=3)
    assert alone.table.as_dict() == trust.table.as_dict() and alone.system == {}
    # Judged images without any metric score: no table to show, rather than an empty one.
    unscored = _items("de", ("a", "b"), human, {})
    assert trust_build(unscored, comparisons).table is None
