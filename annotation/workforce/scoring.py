"""Is a tutorial answer right? Plain functions over scale codes (no Django).

Rating gold items (caption and verification campaigns): the answer passes when it lies within one
level of the expected rating on the ordinal scale (EXCELLENT … BAD); NOT-ENOUGH-INFO is not a level,
so it passes only where it is expected, and only it does there.

Side-by-side gold items: ``expected`` is the direction, 'left', 'right' or 'similar'. A choice passes
when it leans the same way: for 'left' any of the three "left … better", for 'right' any of the
three "right … better", for 'similar' SIMILAR or one of the two SLIGHTLY-… points (one step away).

Writing gold items (``expected`` = 'write') are checked by a person, later: until then they are
pending, and :func:`verdict` says whether the result is already certain.

A gold set must tell attention from a constant answer: :func:`constant_answers_passing` lists the
answers that, given to every item, would pass. Each participant sees the items in an order of their
own (:func:`gold_order`), so no position gives the answer away either.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from core.scales import LEFT_ADVANTAGE, RATING, SXS

SXS_DIRECTIONS = ("left", "right", "similar")
WRITE = "write"

# The verdict of a finished tutorial (the values stored on ``TutorialResult.verdict``).
PASSED, FAILED, PENDING = "passed", "failed", "pending"


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


def verdict(*, correct: int, wrong: int, pending: int, threshold: float) -> str:
    """PASSED or FAILED once no pending answer can change the outcome, PENDING while one can.

    The share is over every gold item, pending ones included: PASSED when ``correct`` reaches the
    threshold even if every pending answer turns out wrong, FAILED when it cannot be reached even
    if every pending answer turns out right. So a verdict shown as passed or failed is never
    turned around by a later check."""
    total = correct + wrong + pending
    if passed(correct, total, threshold):
        return PASSED
    if not passed(correct + pending, total, threshold):
        return FAILED
    return PENDING


@dataclass(frozen=True)
class ConstantPass:
    """An answer that, given to every gold item, passes: ``correct`` of ``total`` items right."""

    answer: str
    correct: int
    total: int


def constant_answers_passing(
    expected: Sequence[str], threshold: float, *, side_by_side: bool
) -> list[ConstantPass]:
    """Every answer code of the scale (the side-by-side scale with ``side_by_side``) that, given to
    every item of a gold set whose expected answers are ``expected``, reaches ``threshold``.

    Writing items count as right: a person may accept whatever a constant clicker writes, so the
    items with a choice must stop a constant answer by themselves. A set without such items gives
    no constant answer (there is nothing to click). Raises KeyError for an unknown expected code."""
    chosen = [e for e in expected if e != WRITE]
    if not chosen:
        return []
    check = sxs_answer_correct if side_by_side else rating_answer_correct
    written = len(expected) - len(chosen)
    found = []
    for code in (SXS if side_by_side else RATING).codes:
        right = written + sum(1 for e in chosen if check(e, code))
        if passed(right, len(expected), threshold):
            found.append(ConstantPass(answer=code, correct=right, total=len(expected)))
    return found


def gold_order(item_ids: Sequence[int], seed: int) -> list[int]:
    """The order one participant meets the gold items in: ``item_ids`` shuffled by ``seed``. The ids
    are sorted first, so the same set and seed give the same order however they were read."""
    order = sorted(item_ids)
    random.Random(seed).shuffle(order)
    return order
