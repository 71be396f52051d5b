"""Side-by-side control items: when a judgment of a control passes, and pass rates per annotator.

A side-by-side campaign can mix in control pairs that look like any other pair:

* ``identical``: both sides show the same caption. The right answer is SIMILAR; a judgment
  PASSES when it stays within one point of it, |score| <= 1 (SLIGHTLY-BETTER either way is
  forgiven: two identical texts can still be read with a slight lean, a clear preference
  cannot be justified).
* ``wrong_image``: the real caption of the image (stored in the m1 slot) against a caption of
  ANOTHER image (in the m2 slot). The right answer is a clear preference for the real caption;
  a judgment PASSES when it favours the real caption by at least 2 points, BETTER or
  MUCH-BETTER for it, i.e. a score from m2's side <= -2. SLIGHTLY-BETTER is not enough: a
  caption of another picture is not "slightly" worse.

Rated controls (screen 1 of a caption campaign, verification campaigns) are judged on
the 5-level rating scale, their "score" is the rating's stored code:

* ``mismatched``: a caption of ANOTHER image shown as this image's caption. It PASSES when rated
  BAD or MEDIUM (a caption of another picture may share a word or two with this one; GOOD,
  EXCELLENT and NOT-ENOUGH-INFO fail: the picture is visible, the mismatch can be judged).
* ``reference``: a human reference caption of the image. It PASSES unless rated BAD (the issue's
  rule, taken literally: NOT-ENOUGH-INFO passes, it is not a judgment against the caption).

Scores are from m2's side (−3 … +3) as everywhere in :mod:`.sxs`, so which side the annotator
saw each caption on does not matter here.

A pass rate over one or two judgments says nothing (one slip is 50%): an annotator is judged,
and can be flagged, only from ``minimum`` control judgments on (:data:`DEFAULT_MIN_JUDGMENTS`,
a campaign setting); below it the row says "too few to judge".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from core.scales import RATING, SXS_CONTROL_MIN_JUDGMENTS

__all__ = [
    "CONTROL_KINDS",
    "RATED_CONTROL_KINDS",
    "DEFAULT_MIN_JUDGMENTS",
    "ControlPassRow",
    "control_pass_rates",
    "control_passed",
]

SXS_CONTROL_KINDS = ("identical", "wrong_image")
RATED_CONTROL_KINDS = ("mismatched", "reference")
CONTROL_KINDS = (*SXS_CONTROL_KINDS, *RATED_CONTROL_KINDS)
# The rating codes (core.scales.RATING) each rated control kind passes with.
RATED_CONTROL_PASS = {
    "mismatched": frozenset({"bad", "medium"}),
    "reference": frozenset({"excellent", "good", "medium", "nei"}),
}
DEFAULT_MIN_JUDGMENTS = SXS_CONTROL_MIN_JUDGMENTS
RATING_CODES = frozenset(point.code for point in RATING)


def control_passed(kind: str, score: int | str) -> bool:
    """Whether one judgment of a control item of ``kind`` passes (see the module docstring): a
    side-by-side score (−3..+3) for ``identical`` and ``wrong_image``, a rating code for
    ``mismatched`` and ``reference``. Raises ``ValueError`` for an unknown kind, a score outside
    −3..+3 or an unknown rating code."""
    if kind in RATED_CONTROL_PASS:
        if score not in RATING_CODES:
            raise ValueError(f"a rating is one of {', '.join(sorted(RATING_CODES))}, not {score!r}")
        return score in RATED_CONTROL_PASS[kind]
    if isinstance(score, bool) or not isinstance(score, int) or not -3 <= score <= 3:
        raise ValueError(f"a side-by-side score is an integer from -3 to +3, not {score!r}")
    if kind == "identical":
        return abs(score) <= 1
    if kind == "wrong_image":
        return score <= -2
    raise ValueError(f"unknown control kind {kind!r}; expected one of {', '.join(CONTROL_KINDS)}")


@dataclass(frozen=True)
class ControlPassRow:
    """One annotator's control judgments: how many, how many passed, the share, whether there are
    too few to judge (``too_few``: fewer than the minimum) and whether the share is below the
    campaign's threshold with enough judgments to say so (``flagged``)."""

    rater_id: Hashable
    n_controls: int
    n_passed: int
    pass_rate: float
    flagged: bool
    too_few: bool = False


def control_pass_rates(
    judgments: Iterable[tuple[Hashable, str, int] | Mapping[str, Any]],
    *,
    threshold: float,
    minimum: int = DEFAULT_MIN_JUDGMENTS,
) -> list[ControlPassRow]:
    """Per annotator, from control judgments ``(rater_id, kind, score)`` (or mappings with those
    keys): the pass rate, ``too_few = n < minimum`` and ``flagged = not too_few and pass_rate <
    threshold``. Rows sorted by pass rate, lowest first, then rater id as text. Annotators without
    a control judgment have no row. Raises ``ValueError`` for a threshold outside 0..1, a minimum
    below 1, an unknown kind or a bad score."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError("the threshold is a share, from 0 to 1")
    if isinstance(minimum, bool) or not isinstance(minimum, int) or minimum < 1:
        raise ValueError(f"the minimum number of control judgments is a whole number >= 1, not {minimum!r}")
    tally: dict[Hashable, list[int]] = defaultdict(lambda: [0, 0])
    for record in judgments:
        if isinstance(record, Mapping):
            rater, kind, score = record["rater_id"], record["kind"], record["score"]
        else:
            rater, kind, score = record
        counts = tally[rater]
        counts[0] += 1
        counts[1] += control_passed(kind, score)
    rows = [
        ControlPassRow(rater, n, passed, passed / n, n >= minimum and passed / n < threshold, n < minimum)
        for rater, (n, passed) in tally.items()
    ]
    return sorted(rows, key=lambda row: (row.pass_rate, str(row.rater_id)))
