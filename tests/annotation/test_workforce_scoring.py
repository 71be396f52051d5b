"""Is a tutorial answer right (annotation.workforce.scoring, pure: no database)."""

from __future__ import annotations

import pytest

from annotation.workforce.scoring import (
    FAILED,
    PASSED,
    PENDING,
    constant_answers_passing,
    gold_order,
    passed,
    rating_answer_correct,
    sxs_answer_correct,
    verdict,
)


@pytest.mark.parametrize(
    ("expected", "answer", "right"),
    [
        ("good", "good", True),
        ("good", "excellent", True),
        ("good", "medium", True),
        ("good", "bad", False),
        ("excellent", "medium", False),
        ("bad", "medium", True),
        ("nei", "nei", True),
        ("nei", "bad", False),
        ("bad", "nei", False),
    ],
)
def test_ratings_within_one_level_pass_and_not_enough_info_only_by_itself(expected, answer, right):
    assert rating_answer_correct(expected, answer) is right


@pytest.mark.parametrize(
    ("expected", "answer", "right"),
    [
        ("left", "much_better", True),
        ("left", "slightly_better", True),
        ("left", "similar", False),
        ("right", "worse", True),
        ("right", "better", False),
        ("similar", "similar", True),
        ("similar", "slightly_worse", True),
        ("similar", "better", False),
    ],
)
def test_side_by_side_answers_pass_when_they_lean_the_expected_way(expected, answer, right):
    assert sxs_answer_correct(expected, answer) is right


def test_unknown_codes_raise():
    with pytest.raises(KeyError):
        rating_answer_correct("good", "great")
    with pytest.raises(KeyError):
        sxs_answer_correct("up", "better")


def test_the_threshold_is_a_share_reached_inclusively():
    assert passed(4, 5, 0.8) and not passed(3, 5, 0.8) and passed(0, 0, 1.0) and passed(2, 3, 2 / 3)


def answers_passing(expected, threshold, side_by_side=False):
    return {
        (p.answer, p.correct, p.total)
        for p in constant_answers_passing(expected, threshold, side_by_side=side_by_side)
    }


def test_the_issue_s_gold_set_is_passed_by_answering_good_to_everything():
    # EXCELLENT, GOOD, MEDIUM, GOOD, each "within one level": GOOD is right on all four.
    issue = ("excellent", "good", "medium", "good")
    assert answers_passing(issue, 0.8) == {("good", 4, 4)}
    assert answers_passing(issue, 0.75) == {("excellent", 3, 4), ("good", 4, 4), ("medium", 3, 4)}


def test_a_gold_set_whose_answers_lie_apart_stops_every_constant_answer():
    assert answers_passing(("excellent", "bad", "nei", "excellent", "bad"), 0.8) == set()
    # ... but not at a threshold every answer reaches.
    assert ("good", 2, 5) in answers_passing(("excellent", "bad", "nei", "excellent", "bad"), 0.4)


def test_side_by_side_directions_are_checked_on_the_seven_point_scale():
    # SLIGHTLY-BETTER leans left and counts as similar: two of three.
    assert answers_passing(("left", "right", "similar"), 0.6, side_by_side=True) == {
        ("slightly_better", 2, 3),
        ("slightly_worse", 2, 3),
    }
    assert answers_passing(("left", "right", "similar"), 0.8, side_by_side=True) == set()


def test_writing_items_count_as_right_for_a_constant_clicker_and_alone_give_nothing_to_click():
    assert answers_passing(("excellent", "bad", "write", "write"), 0.75) == {
        ("excellent", 3, 4),
        ("good", 3, 4),
        ("medium", 3, 4),
        ("bad", 3, 4),
    }
    assert answers_passing(("write",), 0.5) == set() and answers_passing((), 0.5) == set()


def test_each_seed_gives_its_own_order_of_the_same_items_and_keeps_it():
    ids = [11, 12, 13, 14, 15, 16, 17, 18]
    first = gold_order(ids, 7)
    assert sorted(first) == ids and gold_order(list(reversed(ids)), 7) == first
    assert len({tuple(gold_order(ids, seed)) for seed in range(20)}) > 10


@pytest.mark.parametrize(
    ("correct", "wrong", "pending", "threshold", "expected"),
    [
        (2, 0, 0, 1.0, PASSED),
        (1, 1, 0, 1.0, FAILED),
        # One caption to check, 1 of 2 right, threshold 1: it decides, so pending.
        (1, 0, 1, 1.0, PENDING),
        # 0 of 1 right and one caption to check at 0.5: the caption decides (never "failed" first).
        (0, 1, 1, 0.5, PENDING),
        # Already certain either way, whatever the caption turns out to be.
        (4, 0, 1, 0.8, PASSED),
        (0, 3, 1, 0.5, FAILED),
        (0, 0, 0, 0.8, PASSED),
    ],
)
def test_a_verdict_is_final_only_when_no_pending_answer_can_change_it(
    correct, wrong, pending, threshold, expected
):
    assert verdict(correct=correct, wrong=wrong, pending=pending, threshold=threshold) == expected
