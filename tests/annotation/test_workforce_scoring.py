"""Is a tutorial answer right (annotation.workforce.scoring, pure: no database)."""

from __future__ import annotations

import pytest

from annotation.workforce.scoring import passed, rating_answer_correct, sxs_answer_correct


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
