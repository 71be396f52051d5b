"""The rating and side-by-side scales are defined once, in core.scales, and everything else follows."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

from core import scales
from core.scales import LEFT_ADVANTAGE, RATING, SXS, Point, Scale, choice_to_score, score_to_choice


def test_the_rating_scale_is_the_papers_five_levels_with_keys_one_to_five():
    assert [(p.code, p.paper_label, p.key, p.value) for p in RATING] == [
        ("excellent", "EXCELLENT", "1", 4),
        ("good", "GOOD", "2", 3),
        ("medium", "MEDIUM", "3", 2),
        ("bad", "BAD", "4", 1),
        ("nei", "NOT-ENOUGH-INFO", "5", None),
    ]
    assert [p.label for p in RATING] == [p.paper_label for p in RATING]


def test_the_side_by_side_scale_reads_from_the_left_with_keys_one_to_seven():
    assert [(p.code, p.label, p.paper_label, p.key, p.value) for p in SXS] == [
        ("much_better", "Left much better", "MUCH-BETTER", "1", 3),
        ("better", "Left better", "BETTER", "2", 2),
        ("slightly_better", "Left slightly better", "SLIGHTLY-BETTER", "3", 1),
        ("similar", "Similar", "SIMILAR", "4", 0),
        ("slightly_worse", "Right slightly better", "SLIGHTLY-WORSE", "5", -1),
        ("worse", "Right better", "WORSE", "6", -2),
        ("much_worse", "Right much better", "MUCH-WORSE", "7", -3),
    ]
    assert {p.code: p.value for p in SXS} == LEFT_ADVANTAGE
    assert (SXS.first.key, SXS.middle.code, SXS.last.key) == ("1", "similar", "7")


@pytest.mark.parametrize(
    "spelling", ["much_better", "MUCH-BETTER", "Much better", " much-better ", "Left much better"]
)
def test_any_spelling_of_a_point_names_it(spelling):
    assert SXS.point(spelling).code == "much_better"


def test_not_enough_info_has_every_spelling_and_no_number():
    for spelling in ("nei", "NEI", "NOT-ENOUGH-INFO", "not_enough_info", "not enough info"):
        assert RATING.point(spelling).code == "nei" and RATING.point(spelling).value is None


def test_unknown_points_and_sides_are_refused():
    with pytest.raises(ValueError, match="unknown rating 'SUPERB'"):
        RATING.point("SUPERB")
    with pytest.raises(ValueError, match="unknown side-by-side choice 'GREAT'; expected one of MUCH-BETTER"):
        SXS.point("GREAT")
    with pytest.raises(ValueError, match="m2_side"):
        choice_to_score("better", "middle")
    for bad in (4, -4, 1.5, True):
        with pytest.raises(ValueError):
            score_to_choice(bad, "left")


def test_score_from_m2s_side_and_back():
    assert choice_to_score("better", "left") == 2 and choice_to_score("better", "right") == -2
    assert choice_to_score("similar", "right") == 0
    for point, side in itertools.product(SXS, ("left", "Right ")):
        assert score_to_choice(choice_to_score(point.code, side), side) is point


def test_a_scale_refuses_two_points_with_one_spelling_or_one_key():
    with pytest.raises(ValueError, match="names two points"):
        Scale("x", (Point("a", "A", "A", "1", 1), Point("b", "a", "B", "2", 0)))
    with pytest.raises(ValueError, match="share a key"):
        Scale("x", (Point("a", "A", "A", "1", 1), Point("b", "B", "B", "1", 0)))


def test_core_scales_imports_nothing_but_the_standard_library():
    # The pure modules of evaluation.human import it: it must stay free of Django.
    tree = ast.parse(Path(scales.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "typing"}


# --- What is built from it ------------------------------------------------------------------------


def test_the_model_choices_are_the_scales_codes_and_labels(db):
    from annotation.models import Rating, RatingValue, SxsChoice, SxsJudgment

    assert RatingValue.choices == [(p.code, p.label) for p in RATING]
    assert SxsChoice.choices == [(p.code, p.label) for p in SXS]
    assert RatingValue.NOT_ENOUGH_INFO == "nei" and SxsChoice.MUCH_WORSE == "much_worse"
    assert Rating._meta.get_field("value").choices == RatingValue.choices
    assert SxsJudgment._meta.get_field("choice").choices == SxsChoice.choices


def test_the_evaluation_maths_use_the_same_numbers():
    from evaluation.human import quality, sxs
    from evaluation.research import per_caption

    assert tuple(p.paper_label for p in SXS) == sxs.SXS_LABELS
    assert {p.paper_label: p.value for p in SXS} == sxs.LEFT_ADVANTAGE
    assert sxs.SXS_SCORES == (-3, -2, -1, 0, 1, 2, 3)
    for point, side in itertools.product(SXS, ("left", "right")):
        assert sxs.choice_to_score(point.code, side) == choice_to_score(point.code, side)
        assert sxs.normalise_choice(point.code) == point.paper_label
    assert {p.code: p.value for p in RATING if p.value is not None} == quality.RATING_SCALE
    assert quality.NEI == "nei"
    assert (quality.EXCELLENT, quality.GOOD, quality.MEDIUM, quality.BAD) == (4, 3, 2, 1)
    assert {p.paper_label: p.value for p in RATING if p.value is not None} == per_caption.RATING_VALUES
    for point in RATING:
        assert quality.rating_number(point.code) == per_caption.rating_value(point.paper_label) == point.value


def test_the_guidelines_name_the_scales_keys():
    from annotation import guidelines

    for point in RATING:
        assert f"{point.paper_label} (key {point.key})" in guidelines.RATING_GUIDELINES
    assert " · ".join(f"{p.key} {p.label}" for p in SXS.points[:4]) in guidelines.SXS_GUIDELINES
