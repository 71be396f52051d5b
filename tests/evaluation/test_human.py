"""The human-evaluation numbers: ΔS×S, agreement, Tables 1 and 2, table rendering (no database)."""

from __future__ import annotations

import ast
import csv
import io
import itertools
import json
import math
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest

from evaluation.human import (
    QUALITY_COLUMNS,
    STATISTICS_COLUMNS,
    SXS_COLUMNS,
    SXS_LABELS,
    SxsJudgment,
    caption_statistics,
    choice_to_score,
    krippendorff_alpha,
    quality_table,
    rating_alpha,
    score_to_choice,
    sxs_alpha,
    sxs_summary,
)
from evaluation.human.agreement import alpha_from_unit_values
from evaluation.human.quality import lower_median
from evaluation.human.sxs import image_outcome, left_preferred
from evaluation.research.tables import format_table

HUMAN_PACKAGE = Path(__file__).resolve().parents[2] / "evaluation" / "human"


def judgments_for(scores_by_image: dict[str, list[int]], m2_side: str = "left") -> list[SxsJudgment]:
    return [
        SxsJudgment(image, f"rater{i}", score, m2_side)
        for image, scores in scores_by_image.items()
        for i, score in enumerate(scores)
    ]


def test_no_django_in_the_numbers():
    for path in HUMAN_PACKAGE.glob("*.py"):
        if path.name == "selectors.py":  # the Django reads that feed the numbers
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not any(
                name.split(".")[0] in {"django", "annotation", "rest_framework"} for name in names
            ), f"{path.name} imports {names}"


# --------------------------------------------------------------------------------------------------
# The 7-point scale: choice as seen <-> score from m2's side


@pytest.mark.parametrize(
    ("choice", "m2_side", "score"),
    [
        ("MUCH-BETTER", "left", 3),
        ("MUCH-BETTER", "right", -3),
        ("BETTER", "left", 2),
        ("BETTER", "right", -2),
        ("SLIGHTLY-BETTER", "left", 1),
        ("SLIGHTLY-BETTER", "right", -1),
        ("SIMILAR", "left", 0),
        ("SIMILAR", "right", 0),
        ("SLIGHTLY-WORSE", "left", -1),
        ("SLIGHTLY-WORSE", "right", 1),
        ("WORSE", "left", -2),
        ("WORSE", "right", 2),
        ("MUCH-WORSE", "left", -3),
        ("MUCH-WORSE", "right", 3),
    ],
)
def test_choice_to_score_reads_the_scale_from_the_left(choice, m2_side, score):
    assert choice_to_score(choice, m2_side) == score
    assert score_to_choice(score, m2_side) == choice


def test_choice_score_round_trip_and_lenient_spelling():
    assert SXS_LABELS[0] == "MUCH-BETTER" and SXS_LABELS[-1] == "MUCH-WORSE" and len(SXS_LABELS) == 7
    for label, side in itertools.product(SXS_LABELS, ("left", "right")):
        assert score_to_choice(choice_to_score(label, side), side) == label
    assert choice_to_score("much_better", "Left") == 3
    assert choice_to_score("slightly worse", "right") == 1


@pytest.mark.parametrize(
    "call",
    [
        lambda: choice_to_score("GREAT", "left"),
        lambda: choice_to_score("BETTER", "middle"),
        lambda: score_to_choice(4, "left"),
        lambda: score_to_choice(1.5, "left"),
        lambda: sxs_summary([("img", "r", 5, "left")]),
        lambda: sxs_summary([("img", "r", 1, "top")]),
        lambda: sxs_summary([], n_boot=0),
        lambda: sxs_summary([], confidence=1.0),
    ],
)
def test_invalid_scale_values_are_refused(call):
    with pytest.raises(ValueError):
        call()


def test_left_preferred():
    assert left_preferred(2, "left") is True
    assert left_preferred(2, "right") is False
    assert left_preferred(-1, "right") is True
    assert left_preferred(-1, "left") is False
    assert left_preferred(0, "left") is None


# --------------------------------------------------------------------------------------------------
# Per-image outcome: strict majority


@pytest.mark.parametrize(
    ("scores", "outcome"),
    [
        ([2, 1, -1], "win"),  # 2 of 3
        ([1, 1, 1], "win"),
        ([-3, -1, 2], "loss"),
        ([1, 0, -1], "tie"),
        ([1, 0, 0], "tie"),  # one vote for m2 is no majority
        ([0, 0, 0], "tie"),
        ([1, 1], "win"),  # 2 of 2
        ([-2, -1], "loss"),
        ([1, -1], "tie"),
        ([1, 0], "tie"),
        ([1, 1, 1, -1], "win"),  # 3 of 4
        ([1, 1, 0, 0], "tie"),  # 2 of 4 is not more than half
        ([1, 1, -1, -1], "tie"),
        ([-1, -1, -1, 0], "loss"),
        ([3], "win"),
        ([], "tie"),
    ],
)
def test_image_outcome_is_a_strict_majority(scores, outcome):
    assert image_outcome(scores) == outcome


# --------------------------------------------------------------------------------------------------
# ΔS×S


# 4 images, 3 judgments each: a WIN (2 of 3), b LOSS, c tie, d WIN -> WINS 50, LOSSES 25, ΔS×S 25.
HAND_WORKED = [
    ("a", "r1", 2, "left"),
    ("a", "r2", 1, "right"),
    ("a", "r3", -1, "left"),
    ("b", "r1", -2, "left"),
    ("b", "r2", -3, "right"),
    ("b", "r3", 0, "left"),
    ("c", "r1", 0, "left"),
    ("c", "r2", 1, "left"),
    ("c", "r3", -1, "right"),
    ("d", "r1", 3, "right"),
    ("d", "r2", 2, "left"),
    ("d", "r3", 1, "left"),
]


def test_delta_sxs_hand_worked():
    summary = sxs_summary(HAND_WORKED)
    assert (summary.n_images, summary.n_judgments) == (4, 12)
    assert summary.judgments_per_image == {3: 4}
    assert (summary.wins, summary.losses, summary.ties) == (2, 1, 1)
    assert summary.wins_pct == 50.0
    assert summary.losses_pct == 25.0
    assert summary.ties_pct == 25.0
    assert summary.delta_sxs == 25.0
    assert summary.outcomes == {"a": "win", "b": "loss", "c": "tie", "d": "win"}
    # scores sum to 3 over 12 judgments; image means 2/3, -5/3, 0, 2 -> mean 1/4
    assert summary.mean_score_per_judgment == pytest.approx(0.25)
    assert summary.mean_score_per_image == pytest.approx(0.25)
    # non-SIMILAR judgments: 10; the left caption was preferred in a/r1, b/r2, c/r2, c/r3, d/r2, d/r3
    assert (summary.decided_judgments, summary.left_preferred) == (10, 6)
    assert summary.left_preferred_share == pytest.approx(0.6)
    assert summary.position_bias_p == pytest.approx(binomtest(6, 10, 0.5).pvalue)
    assert summary.sign_test_p == pytest.approx(binomtest(2, 3, 0.5).pvalue)


def test_records_as_mappings_and_named_tuples_agree():
    as_mappings = [dict(zip(("image_key", "rater_id", "score", "m2_side"), row)) for row in HAND_WORKED]
    as_tuples = [SxsJudgment(*row) for row in HAND_WORKED]
    assert sxs_summary(as_mappings) == sxs_summary(HAND_WORKED) == sxs_summary(as_tuples)


def test_mean_per_image_weights_each_image_once():
    # image x: 4 judgments of +3 (an expired lease let a 4th in); image y: 2 judgments of -1
    summary = sxs_summary(judgments_for({"x": [3, 3, 3, 3], "y": [-1, -1]}))
    assert summary.mean_score_per_judgment == pytest.approx((12 - 2) / 6)
    assert summary.mean_score_per_image == pytest.approx((3 + -1) / 2)
    assert summary.judgments_per_image == {2: 1, 4: 1}


def test_even_numbers_of_judgments():
    summary = sxs_summary(
        judgments_for(
            {
                "two_for": [1, 2],  # 2 of 2: WIN
                "split_two": [1, -1],  # tie
                "one_of_two": [-1, 0],  # 1 of 2 is not a majority: tie
                "three_of_four": [-1, -2, -3, 1],  # LOSS
                "two_of_four": [1, 1, 0, -1],  # tie
                "three": [1, 1, -1],  # WIN
            }
        )
    )
    assert (summary.wins, summary.losses, summary.ties) == (2, 1, 3)
    assert summary.judgments_per_image == {2: 3, 3: 1, 4: 2}
    assert summary.wins_pct == pytest.approx(100 * 2 / 6)
    assert summary.losses_pct == pytest.approx(100 * 1 / 6)
    assert summary.delta_sxs == pytest.approx(100 / 6)


def test_all_ties():
    summary = sxs_summary(judgments_for({"a": [0, 0, 0], "b": [1, -1, 0], "c": [2, 0, 0]}))
    assert (summary.wins, summary.losses, summary.ties) == (0, 0, 3)
    assert summary.delta_sxs == 0.0
    assert summary.ties_pct == 100.0
    assert summary.sign_test_p is None  # no WIN and no LOSS: the sign test is undefined
    assert (summary.ci_low, summary.ci_high) == (0.0, 0.0)


def test_empty_campaign_has_no_numbers_and_serialises():
    summary = sxs_summary([])
    assert summary.n_images == summary.n_judgments == 0
    assert summary.judgments_per_image == {}
    for name in (
        "wins_pct",
        "losses_pct",
        "ties_pct",
        "delta_sxs",
        "ci_low",
        "ci_high",
        "sign_test_p",
        "mean_score_per_judgment",
        "mean_score_per_image",
        "left_preferred_share",
        "position_bias_p",
        "alpha_ordinal",
    ):
        assert getattr(summary, name) is None, name
    text = json.dumps(summary.as_dict(), allow_nan=False)
    assert json.loads(text)["delta_sxs"] is None
    assert "outcomes" not in summary.as_dict()


def test_sign_test_excludes_ties_and_matches_scipy():
    scores = {f"w{i}": [1, 2, 0] for i in range(10)}
    scores |= {f"l{i}": [-1, -1, 3] for i in range(2)}
    scores |= {f"t{i}": [1, -1, 0] for i in range(5)}
    summary = sxs_summary(judgments_for(scores))
    assert (summary.wins, summary.losses, summary.ties) == (10, 2, 5)
    expected = binomtest(10, 12, p=0.5, alternative="two-sided").pvalue
    assert summary.sign_test_p == pytest.approx(expected, rel=1e-12)
    assert summary.sign_test_p == pytest.approx(0.0385742, abs=1e-6)  # 2 * 79 / 4096
    assert summary.delta_sxs == pytest.approx(100 * 8 / 17)


def test_position_bias_counts_the_side_shown():
    # m2 always shown on the left and always preferred, m1 shown on the left and preferred once:
    # the left caption won 7 of the 8 decided judgments; SIMILAR ones do not count.
    records = [("a", "r1", 2, "left"), ("a", "r2", 1, "left"), ("a", "r3", 0, "right")]
    records += [("b", "r1", 3, "left"), ("b", "r2", 1, "left"), ("b", "r3", -2, "right")]
    records += [("c", "r1", 1, "left"), ("c", "r2", 2, "right"), ("c", "r3", 1, "left")]
    summary = sxs_summary(records)
    assert (summary.decided_judgments, summary.left_preferred) == (8, 7)
    assert summary.left_preferred_share == pytest.approx(7 / 8)
    assert summary.position_bias_p == pytest.approx(binomtest(7, 8, 0.5).pvalue)
    balanced = sxs_summary([("a", "r1", 1, "left"), ("a", "r2", 1, "right")])
    assert balanced.left_preferred_share == 0.5
    assert balanced.position_bias_p == pytest.approx(1.0)


def _campaign(n_win: int, n_loss: int, n_tie: int) -> list[tuple]:
    scores = {f"w{i}": [2, 1, -1] for i in range(n_win)}
    scores |= {f"l{i}": [-2, -1, 0] for i in range(n_loss)}
    scores |= {f"t{i}": [0, 1, -1] for i in range(n_tie)}
    return judgments_for(scores)


def test_bootstrap_interval_is_seeded_and_contains_the_estimate():
    records = _campaign(30, 18, 12)
    first = sxs_summary(records, seed=7)
    again = sxs_summary(list(reversed(records)), seed=7)
    assert first.delta_sxs == pytest.approx(20.0)
    assert (first.ci_low, first.ci_high) == (again.ci_low, again.ci_high)
    # the seed matters (visible with few resamples; 10,000 resamples give stable percentiles)
    few = {seed: sxs_summary(records, n_boot=40, seed=seed) for seed in range(5)}
    assert len({(s.ci_low, s.ci_high) for s in few.values()}) > 1
    assert few[3] == sxs_summary(records, n_boot=40, seed=3)
    assert -100 <= first.ci_low < first.delta_sxs < first.ci_high <= 100
    assert (first.n_boot, first.seed, first.confidence) == (10_000, 7, 0.95)
    # the normal approximation of the same interval: sd of (W - L) / n over resamples
    n, p_w, p_l = 60, 0.5, 0.3
    sd = 100 * math.sqrt((p_w + p_l - (p_w - p_l) ** 2) / n)
    assert first.ci_low == pytest.approx(20 - 1.96 * sd, abs=2.5)
    assert first.ci_high == pytest.approx(20 + 1.96 * sd, abs=2.5)
    wider = sxs_summary(records, seed=7, confidence=0.99)
    assert wider.ci_low < first.ci_low and wider.ci_high > first.ci_high


def test_bootstrap_agrees_with_resampling_image_indices():
    """Drawing the counts from the multinomial is the same bootstrap as drawing image indices."""
    records = _campaign(25, 20, 15)
    summary = sxs_summary(records, n_boot=20_000, seed=1)
    outcome_value = {"win": 1, "loss": -1, "tie": 0}
    values = np.array([outcome_value[o] for o in summary.outcomes.values()])
    rng = np.random.default_rng(12345)
    resampled = 100 * values[rng.integers(0, len(values), size=(20_000, len(values)))].mean(axis=1)
    low, high = np.quantile(resampled, [0.025, 0.975])
    assert summary.ci_low == pytest.approx(low, abs=1.7)
    assert summary.ci_high == pytest.approx(high, abs=1.7)


def test_bootstrap_of_a_unanimous_campaign_is_a_point():
    summary = sxs_summary(_campaign(5, 0, 0))
    assert summary.delta_sxs == 100.0
    assert (summary.ci_low, summary.ci_high) == (100.0, 100.0)
    assert summary.sign_test_p == pytest.approx(2 / 32)


def test_sxs_agreement():
    unanimous = judgments_for({"a": [2, 2, 2], "b": [-1, -1, -1], "c": [0, 0, 0]})
    assert sxs_summary(unanimous).alpha_ordinal == pytest.approx(1.0)
    assert sxs_alpha(unanimous) == pytest.approx(1.0)
    summary = sxs_summary(HAND_WORKED)
    by_unit = {}
    for image, rater, score, _ in HAND_WORKED:
        by_unit.setdefault(image, {})[rater] = score
    assert summary.alpha_ordinal == pytest.approx(krippendorff_alpha(by_unit))
    assert summary.alpha_ordinal == pytest.approx(sxs_alpha(HAND_WORKED))
    assert summary.alpha_ordinal == pytest.approx(
        _reference_alpha([list(d.values()) for d in by_unit.values()], "ordinal")
    )


# --------------------------------------------------------------------------------------------------
# Krippendorff's alpha

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the worked example with missing
# data: 4 observers A-D, 12 units, values 1..5. Published: nominal .743, ordinal .815, interval .849, ratio .797.
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


def _krippendorff_2011_units():
    return {unit: {rater: values[unit] for rater, values in KRIPPENDORFF_2011.items()} for unit in range(12)}


@pytest.mark.parametrize(
    ("level", "published"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_alpha_reproduces_krippendorffs_worked_example(level, published):
    assert round(krippendorff_alpha(_krippendorff_2011_units(), level=level), 3) == published


def test_alpha_default_level_is_ordinal_and_missing_raters_are_missing():
    units = _krippendorff_2011_units()
    sparse = {unit: {r: v for r, v in by_rater.items() if v is not None} for unit, by_rater in units.items()}
    assert (
        krippendorff_alpha(units) == krippendorff_alpha(sparse) == krippendorff_alpha(units, level="ordinal")
    )
    with_nan = {
        unit: {r: (math.nan if v is None else v) for r, v in by_rater.items()}
        for unit, by_rater in units.items()
    }
    assert krippendorff_alpha(with_nan) == pytest.approx(krippendorff_alpha(units))


def _reference_alpha(units: list[list[float]], level: str) -> float:
    """Krippendorff (2011) by the book: coincidences o_ck, marginals n_c, alpha = 1 - D_o / D_e."""
    pairable = [[v for v in unit if v is not None] for unit in units]
    pairable = [unit for unit in pairable if len(unit) >= 2]
    values = sorted({v for unit in pairable for v in unit})
    o = Counter()
    for unit in pairable:
        for i, j in itertools.permutations(range(len(unit)), 2):
            o[unit[i], unit[j]] += 1 / (len(unit) - 1)
    n_c = {c: sum(o[c, k] for k in values) for c in values}
    n = sum(n_c.values())

    def delta(c, k):
        if level == "nominal":
            return float(c != k)
        if level == "interval":
            return (c - k) ** 2
        low, high = sorted((c, k))
        between = sum(n_c[g] for g in values if low <= g <= high)
        return (between - (n_c[c] + n_c[k]) / 2) ** 2

    d_o = sum(o[c, k] * delta(c, k) for c in values for k in values)
    d_e = sum(n_c[c] * n_c[k] * delta(c, k) for c in values for k in values) / (n - 1)
    return 1 - d_o / d_e


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_matches_the_textbook_formulas_on_random_sxs_data(level):
    rng = random.Random(3)
    for _ in range(20):
        units = [
            [rng.choice([-3, -2, -1, 0, 0, 1, 1, 2, 3]) for _ in range(rng.choice([1, 2, 3, 3, 4]))]
            for _ in range(rng.randint(2, 15))
        ]
        if len({v for unit in units if len(unit) >= 2 for v in unit}) < 2:
            continue
        assert alpha_from_unit_values(units, level=level) == pytest.approx(_reference_alpha(units, level))


def test_alpha_is_none_when_undefined():
    assert krippendorff_alpha({}) is None
    assert krippendorff_alpha({"u1": {"r1": 3}, "u2": {"r2": 1}}) is None  # nothing pairable
    assert krippendorff_alpha({"u1": {"r1": 3, "r2": None}}) is None
    assert krippendorff_alpha({"u1": {"r1": 2, "r2": 2}, "u2": {"r1": 2, "r2": 2}}) is None  # no variation
    assert krippendorff_alpha({"u1": {"r1": 1, "r2": 2}}) == pytest.approx(0.0)  # 1 - 1/1 for a single pair
    with pytest.raises(ValueError):
        krippendorff_alpha({"u1": {"r1": 1, "r2": 2}}, level="cardinal")


def test_rating_alpha_leaves_not_enough_info_out():
    ratings = [
        ("c1", "r1", "good"),
        ("c1", "r2", "good"),
        ("c1", "r3", "nei"),
        ("c2", "r1", "bad"),
        ("c2", "r2", "medium"),
        ("c2", "r3", "bad"),
        ("c3", "r1", "EXCELLENT"),
        ("c3", "r2", "NOT-ENOUGH-INFO"),
        ("c3", "r3", "good"),
    ]
    expected = krippendorff_alpha(
        {"c1": {"r1": 3, "r2": 3}, "c2": {"r1": 1, "r2": 2, "r3": 1}, "c3": {"r1": 4, "r3": 3}}
    )
    assert rating_alpha(ratings) == pytest.approx(expected)
    assert rating_alpha([("c1", "r1", "nei"), ("c1", "r2", "nei")]) is None


# --------------------------------------------------------------------------------------------------
# Table 2: caption quality


def test_lower_median():
    assert lower_median([3, 4, 3]) == 3
    assert lower_median([1, 2, 3]) == 2
    assert lower_median([3, 2]) == 2  # even: the lower middle value
    assert lower_median([4, 4, 3, 2]) == 3
    assert lower_median([4]) == 4
    assert lower_median([]) is None


def test_quality_table_with_not_enough_info_and_even_counts():
    ratings = [
        ("de", "c1", "good"),
        ("de", "c1", "good"),
        ("de", "c1", "excellent"),  # median GOOD
        ("de", "c2", "medium"),
        ("de", "c2", "bad"),
        ("de", "c2", "good"),  # median MEDIUM
        ("de", "c3", "bad"),
        ("de", "c3", "bad"),
        ("de", "c3", "nei"),  # NEI left out: BAD, BAD -> BAD
        ("de", "c4", "good"),
        ("de", "c4", "NOT-ENOUGH-INFO"),
        ("de", "c4", "medium"),  # NEI left out: GOOD, MEDIUM -> the lower, MEDIUM
        ("de", "c5", "nei"),
        ("de", "c5", "nei"),
        ("de", "c5", "nei"),  # no median
        ("de", "c6", "excellent"),
        ("de", "c6", "excellent"),
        ("de", "c6", "good"),
        ("de", "c6", "medium"),  # 4 ratings: 2 3 4 4 -> lower middle GOOD
        ("ar", "k1", "GOOD"),
        ("ar", "k1", "excellent"),
        ("ar", "k1", "bad"),  # median GOOD
    ]
    arabic, german = quality_table(ratings)
    assert german.language == "de"
    assert (german.n_captions, german.n_rated, german.n_no_median, german.n_ratings) == (6, 5, 1, 19)
    # medians GOOD, MEDIUM, BAD, MEDIUM, GOOD
    assert german.pct_good_plus == pytest.approx(40.0)
    assert german.pct_med_plus == pytest.approx(80.0)
    assert german.pct_bad == pytest.approx(20.0)
    assert german.nei_rate == pytest.approx(100 * 5 / 19)
    assert arabic.language == "ar"
    assert (arabic.pct_good_plus, arabic.pct_med_plus, arabic.pct_bad, arabic.nei_rate) == (
        100.0,
        100.0,
        0.0,
        0.0,
    )


def test_quality_table_edge_cases():
    assert quality_table([]) == []
    (only_nei,) = quality_table([("fi", "c1", "nei"), ("fi", "c1", "nei")])
    assert (only_nei.n_captions, only_nei.n_rated, only_nei.n_no_median) == (1, 0, 1)
    assert only_nei.pct_good_plus is only_nei.pct_med_plus is only_nei.pct_bad is None
    assert only_nei.nei_rate == 100.0
    (row,) = quality_table([{"language": "fr", "caption_id": 1, "value": "medium"}])
    assert (row.pct_good_plus, row.pct_med_plus, row.pct_bad) == (0.0, 100.0, 0.0)
    with pytest.raises(ValueError, match="unknown rating"):
        quality_table([("fr", 1, "great")])


def test_caption_ids_are_per_language():
    (de, fr) = quality_table([("de", 1, "bad"), ("fr", 1, "good")])
    assert (de.pct_bad, fr.pct_good_plus) == (100.0, 100.0)


# --------------------------------------------------------------------------------------------------
# Table 1: caption statistics


CAPTIONS = [
    ("zh", "i1", "一只狗坐在长椅上。"),  # 8 character tokens (。 is punctuation), 9 characters
    ("zh", "i1", "两只猫"),  # 3 tokens, 3 characters
    ("zh", "i2", "iPhone 12台"),  # ["iphone", "12", "台"], 10 characters
    ("de", "a", "Ein Hund sitzt auf einer Bank."),  # 6 words, 30 characters
    ("de", "b", "  Zwei Katzen.  "),  # 2 words, 12 characters once stripped
    ("de", "b", "Ein Cafe\u0301 am Meer"),  # NFC: "Café" is 4 characters -> 16 characters, 4 words
    ("de", "c", "Ein schwarz-weißes Foto"),  # "schwarz weißes": 4 words, 23 characters
    ("de", "c", "Ein Foto"),
    ("de", "c", "Foto"),
    ("de", "d", "Ein Foto"),
    ("de", "d", "Ein Foto"),
    ("de", "d", "Ein Foto"),
    ("de", "d", "Ein Foto"),
]


def test_caption_statistics_per_language():
    german, chinese = caption_statistics(CAPTIONS)
    assert chinese.language == "zh" and chinese.tokenizer == "char"
    assert (
        chinese.n_captions,
        chinese.n_images,
        chinese.images_1,
        chinese.images_2,
        chinese.images_3_plus,
    ) == (
        3,
        2,
        1,
        1,
        0,
    )
    assert chinese.mean_words == pytest.approx((8 + 3 + 3) / 3)
    assert chinese.mean_chars == pytest.approx((9 + 3 + 10) / 3)
    assert german.language == "de" and german.tokenizer == "whitespace"
    # images a: 1 caption, b: 2, c: 3, d: 4
    assert (german.n_captions, german.n_images, german.images_1, german.images_2, german.images_3_plus) == (
        10,
        4,
        1,
        1,
        2,
    )
    words = 6 + 2 + 4 + 4 + 2 + 1 + 2 * 4
    chars = 30 + 12 + 16 + 23 + 8 + 4 + 8 * 4
    assert german.mean_words == pytest.approx(words / 10)
    assert german.mean_chars == pytest.approx(chars / 10)


def test_caption_statistics_tokenisers_can_be_chosen():
    zh = [("zh", "i1", "一只狗坐在长椅上。"), ("zh", "i2", "两只 猫")]
    (by_setting,) = caption_statistics(zh, {"zh": "whitespace"})
    assert by_setting.tokenizer == "whitespace"
    assert by_setting.mean_words == pytest.approx((1 + 2) / 2)
    (by_callable,) = caption_statistics(zh, lambda language: list)  # one token per code point
    assert by_callable.tokenizer is None
    assert by_callable.mean_words == pytest.approx((9 + 4) / 2)
    (defaulted,) = caption_statistics(
        [{"language": "zh-Hans", "image_key": 1, "text": "两只猫"}], {"de": "whitespace"}
    )
    assert defaulted.tokenizer == "char" and defaulted.mean_words == 3
    assert caption_statistics([]) == []
    with pytest.raises(ValueError, match="unknown tokenisation scheme 'words' for language “zh”"):
        caption_statistics(zh, {"zh": "words"})
    with pytest.raises(ValueError, match="“newmm” is for th, not for language “zh”"):
        caption_statistics(zh, {"zh": "newmm"})


# --------------------------------------------------------------------------------------------------
# Rendering


def test_format_table_text_is_aligned():
    rows = [
        {"language": "de", "n": 8643, "pct": 98.25, "delta": -12.5},
        {"language": "fil", "n": 7, "pct": None, "delta": 3.0},
    ]
    columns = [("language", "Id"), ("n", "captions", "d"), ("pct", "%GOOD+", ".1f"), ("delta", "ΔS×S", ".1f")]
    assert format_table(rows, columns) == (
        "Id   captions  %GOOD+   ΔS×S\n"
        "---  --------  ------  -----\n"
        "de       8643    98.2  -12.5\n"
        "fil         7     n/a    3.0\n"
    )


def test_format_table_csv_neutralises_formulas_but_not_numbers():
    rows = [
        {"name": '=HYPERLINK("http://x")', "value": -12.5, "count": -3},
        {"name": "+cmd", "value": None, "count": 0},
        {"name": "-2+3", "value": 0.1, "count": 1},
        {"name": "@SUM(A1)", "value": 1e-20, "count": 2},
        {"name": "\tx", "value": math.nan, "count": 3},
        {"name": "\rx", "value": np.float64(2.5), "count": np.int64(4)},
        {"name": "\0x", "value": 1.0, "count": 5},
        {"name": 'plain, "quoted"\nline', "value": 100.0, "count": 6},
    ]
    text = format_table(rows, ["name", "value", "count"], "csv")
    assert text.startswith("name,value,count\r\n")
    parsed = list(csv.reader(io.StringIO(text, newline="")))
    assert parsed[0] == ["name", "value", "count"]
    assert [row[0] for row in parsed[1:]] == [
        '\'=HYPERLINK("http://x")',
        "'+cmd",
        "'-2+3",
        "'@SUM(A1)",
        "'\tx",
        "'\rx",
        "'\0x",
        'plain, "quoted"\nline',
    ]
    assert [row[1] for row in parsed[1:]] == ["-12.5", "", "0.1", "1e-20", "", "2.5", "1.0", "100.0"]
    assert [row[2] for row in parsed[1:]] == ["-3", "0", "1", "2", "3", "4", "5", "6"]
    assert "-12.5," in text  # a negative number is written as a number, not quoted or prefixed


def test_format_table_json_uses_null_and_full_precision():
    rows = [{"language": "de", "pct": 100 / 3, "p": None, "bad": math.inf, "n": np.int64(7), "hist": {3: 2}}]
    data = json.loads(
        format_table(rows, ["language", ("pct", "%GOOD+", ".1f"), "p", "bad", "n", "hist"], "json")
    )
    assert data == [{"language": "de", "pct": 100 / 3, "p": None, "bad": None, "n": 7, "hist": {"3": 2}}]
    with pytest.raises(ValueError, match="unknown table format"):
        format_table(rows, ["language"], "xml")


def test_the_three_tables_render_in_every_format():
    quality = quality_table([("de", 1, "good"), ("de", 2, "nei"), ("zh", 1, "bad")])
    stats = caption_statistics(CAPTIONS)
    sxs = [sxs_summary(HAND_WORKED).as_dict(), sxs_summary([]).as_dict()]
    for rows, columns in ((quality, QUALITY_COLUMNS), (stats, STATISTICS_COLUMNS), (sxs, SXS_COLUMNS)):
        text = format_table(rows, columns)
        assert len(text.splitlines()) == 2 + len(rows)
        assert len(list(csv.reader(io.StringIO(format_table(rows, columns, "csv"), newline="")))) == 1 + len(
            rows
        )
        assert len(json.loads(format_table(rows, columns, "json"))) == len(rows)
    text = format_table(quality, QUALITY_COLUMNS)
    assert text.splitlines()[0].split() == [
        "Id",
        "captions",
        "with",
        "median",
        "%GOOD+",
        "%MED+",
        "%BAD",
        "%NEI",
        "all",
        "NEI",
    ]
    assert text.splitlines()[2].split() == ["de", "2", "1", "100.0", "100.0", "0.0", "50.0", "1"]
    sxs_text = format_table(sxs, SXS_COLUMNS).splitlines()
    assert sxs_text[2].split()[:6] == ["4", "12", "50.0", "25.0", "25.0", "25.0"]
    assert "n/a" in sxs_text[3]
