"""The two answer scales, defined once, as plain data (no Django: pure modules import this too).

Every point of a scale has

* ``code``: the value stored in the database and sent by the pages ("excellent", "much_better");
* ``label``: what the annotator reads on the button ("EXCELLENT", "Left much better");
* ``paper_label``: the label of seed paper 000 ("EXCELLENT", "MUCH-BETTER"), used in exports and
  reports;
* ``key``: the keyboard key that picks it on the page ("1" …);
* ``value``: its number. Rating: EXCELLENT=4 … BAD=1, None for NOT-ENOUGH-INFO (not a point on
  the ordinal scale). Side by side: how much better the LEFT caption is, +3 … −3.

The model choices (``annotation.models``), the S×S and quality maths (``evaluation.human``), the
per-caption rating values, the screens' buttons and keys, and the guidelines' key lists are all
built from :data:`RATING` and :data:`SXS`.

Side by side: the annotator sees two captions, "Left" and "Right", and picks one of 7 points read
from the LEFT caption's side. Which system was on the left is drawn per (annotator, item) and kept
on the assignment (``m2_side``). The number stored and aggregated is the score from m2's side,
−3 … +3 (+3: the test system m2 is much better than the base system m1): see
:func:`choice_to_score` and :func:`score_to_choice`.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "LEFT_ADVANTAGE",
    "RATING",
    "SIDES",
    "SXS",
    "Point",
    "Scale",
    "canonical",
    "check_side",
    "choice_to_score",
    "score_to_choice",
]


class Point(NamedTuple):
    """One point of a scale (see the module docstring for the meaning of each field)."""

    code: str
    label: str
    paper_label: str
    key: str
    value: int | None


def canonical(text: object) -> str:
    """The spelling-forgiving form of a code or label: upper case, ``_``/``-``/spaces as one ``-``
    ("much_better", "Much better" and "MUCH-BETTER" all give "MUCH-BETTER")."""
    return "-".join(str(text).strip().upper().replace("_", " ").replace("-", " ").split())


class Scale:
    """An ordered tuple of points, best (or left-most) first, with lookups by any spelling."""

    def __init__(self, name: str, points: tuple[Point, ...]) -> None:
        self.name = name
        self.points = points
        self._by_spelling: dict[str, Point] = {}
        for point in points:
            for spelling in (point.code, point.label, point.paper_label):
                other = self._by_spelling.setdefault(canonical(spelling), point)
                if other is not point:
                    raise ValueError(f"{spelling!r} names two points of the {name} scale")
        if len({p.key for p in points}) != len(points):
            raise ValueError(f"two points of the {name} scale share a key")

    def __iter__(self):
        return iter(self.points)

    def __len__(self) -> int:
        return len(self.points)

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(p.code for p in self.points)

    @property
    def first(self) -> Point:
        return self.points[0]

    @property
    def last(self) -> Point:
        return self.points[-1]

    @property
    def middle(self) -> Point:
        return self.points[len(self.points) // 2]

    def point(self, spelling: object) -> Point:
        """The point a code, an annotator label or a paper label names, in any case and with ``_``,
        ``-`` or spaces. Raises ``ValueError`` for anything else."""
        try:
            return self._by_spelling[canonical(spelling)]
        except KeyError:
            expected = ", ".join(p.paper_label for p in self.points)
            raise ValueError(f"unknown {self.name} {spelling!r}; expected one of {expected}") from None

    def by_code(self, code: str) -> Point:
        """The point whose stored code is exactly ``code`` (no forgiveness). Raises ``KeyError``."""
        for point in self.points:
            if point.code == code:
                return point
        raise KeyError(code)


RATING = Scale(
    "rating",
    (
        Point("excellent", "EXCELLENT", "EXCELLENT", "1", 4),
        Point("good", "GOOD", "GOOD", "2", 3),
        Point("medium", "MEDIUM", "MEDIUM", "3", 2),
        Point("bad", "BAD", "BAD", "4", 1),
        # Not a point on the ordinal scale: the rater could not judge.
        Point("nei", "NOT-ENOUGH-INFO", "NOT-ENOUGH-INFO", "5", None),
    ),
)

SXS = Scale(
    "side-by-side choice",
    (
        Point("much_better", "Left much better", "MUCH-BETTER", "1", 3),
        Point("better", "Left better", "BETTER", "2", 2),
        Point("slightly_better", "Left slightly better", "SLIGHTLY-BETTER", "3", 1),
        Point("similar", "Similar", "SIMILAR", "4", 0),
        Point("slightly_worse", "Right slightly better", "SLIGHTLY-WORSE", "5", -1),
        Point("worse", "Right better", "WORSE", "6", -2),
        Point("much_worse", "Right much better", "MUCH-WORSE", "7", -3),
    ),
)

# A side-by-side annotator's control pass rate is judged only from this many control judgments
# on (one slip in two is 50%); the default of Campaign.control_min_judgments and of
# evaluation.human.controls. A campaign can set its own.
SXS_CONTROL_MIN_JUDGMENTS = 5

# How much better the LEFT caption is, per stored choice: +3 … −3.
LEFT_ADVANTAGE: dict[str, int] = {p.code: p.value for p in SXS if p.value is not None}
SIDES = ("left", "right")


def check_side(m2_side: object) -> str:
    """'left' or 'right' (case and outer spaces forgiven). Raises ValueError for anything else."""
    side = str(m2_side).strip().lower()
    if side not in SIDES:
        raise ValueError(f"m2_side must be 'left' or 'right', not {m2_side!r}")
    return side


def choice_to_score(choice: str, m2_side: str) -> int:
    """The score from m2's side (−3 … +3) of a choice as seen (any spelling of a point of
    :data:`SXS`), given the side m2 was shown on. Raises ValueError for an unknown choice or side.

    ``choice_to_score("better", "left") == 2`` (m2 was on the left and the left was better);
    ``choice_to_score("better", "right") == -2``.
    """
    advantage = SXS.point(choice).value
    assert advantage is not None
    return advantage if check_side(m2_side) == "left" else -advantage


def score_to_choice(score: int, m2_side: str) -> Point:
    """The point the annotator picked, from the score from m2's side and m2's side (the inverse of
    :func:`choice_to_score`). Raises ValueError for a score outside −3..+3 (integers only)."""
    if isinstance(score, bool) or int(score) != score or not -3 <= score <= 3:
        raise ValueError(f"a side-by-side score is an integer from -3 to +3, not {score!r}")
    advantage = score if check_side(m2_side) == "left" else -score
    return SXS.points[3 - int(advantage)]
