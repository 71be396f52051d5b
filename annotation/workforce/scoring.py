"""Is a tutorial answer right? Plain functions over scale codes (no Django).

Rating gold items (caption and verification campaigns): the answer passes when it lies within one
level of the expected rating on the ordinal scale (EXCELLENT … BAD); NOT-ENOUGH-INFO is not a level,
so it passes only where it is expected, and only it does there.

Side-by-side gold items: ``expected`` is the direction, 'left', 'right' or 'similar'. A choice passes
when it leans the same way: for 'left' any of the three "left … better", for 'right' any of the
three "right … better", for 'similar' SIMILAR or one of the two SLIGHTLY-… points (one step away).
"""

from __future__ import annotations

from core.scales import LEFT_ADVANTAGE, RATING

SXS_DIRECTIONS = ("left", "right", "similar")


def rating_answer_correct(expected: str, answer: str) -> bool:
    """Within one level of ``expected`` (rating codes). Raises KeyError for an unknown code."""
    want, got = RATING.by_code(expected).value, RATING.by_code(answer).value
    if want is None or got is None:
        return want is None and got is None
    return abs(want - got) <= 1


def sxs_answer_correct(expected: str, answer: str) -> bool:
    """The choice (a side-by-side code, read from the left caption) leans the ``expected`` way."""
    if expected not in SXS_DIRECTIONS:
        raise KeyError(expected)
    advantage = LEFT_ADVANTAGE[answer]
    if expected == "left":
        return advantage > 0
    if expected == "right":
        return advantage < 0
    return abs(advantage) <= 1


def passed(correct: int, total: int, threshold: float) -> bool:
    """``correct`` of ``total`` reaches the share ``threshold`` (a tutorial of no item passes)."""
    return total == 0 or correct / total >= threshold - 1e-9
