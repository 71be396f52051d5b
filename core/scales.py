"""The side-by-side scale as plain data (no Django): choices as seen, keys, and the score from m2's side.

The annotator sees two captions, "Left" and "Right", and picks one of 7 points read from
the LEFT caption's side. Which system was on the left is drawn per (annotator, item) and
kept on the assignment (``m2_side``). The number stored and aggregated is the score from
m2's side, −3 … +3 (+3: the test system m2 is much better than the base system m1).

This mirrors ``evaluation.human.sxs`` (which this app may not import); a test checks that
both give the same score for every choice and side.
"""

from __future__ import annotations

# (stored value, label on the page, key) from "left is much better" to "right is much better".
SXS_SCALE: tuple[tuple[str, str, str], ...] = (
    ("much_better", "Left much better", "1"),
    ("better", "Left better", "2"),
    ("slightly_better", "Left slightly better", "3"),
    ("similar", "Similar", "4"),
    ("slightly_worse", "Right slightly better", "5"),
    ("worse", "Right better", "6"),
    ("much_worse", "Right much better", "7"),
)

# How much better the LEFT caption is, per choice: +3 … −3.
LEFT_ADVANTAGE: dict[str, int] = {value: 3 - index for index, (value, _, _) in enumerate(SXS_SCALE)}
SIDES = ("left", "right")


def choice_to_score(choice: str, m2_side: str) -> int:
    """The score from m2's side of a choice as seen. Raises ValueError for an unknown choice or side."""
    if choice not in LEFT_ADVANTAGE:
        raise ValueError(f"unknown side-by-side choice {choice!r}")
    if m2_side not in SIDES:
        raise ValueError(f"m2_side must be 'left' or 'right', not {m2_side!r}")
    advantage = LEFT_ADVANTAGE[choice]
    return advantage if m2_side == "left" else -advantage
