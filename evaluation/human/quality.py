"""Caption quality per language, the shape of Table 2 of seed 000 (sec. 2.5): %GOOD+, %MED+, %BAD.

Each rated caption gets one aggregated rating, the MEDIAN of its ratings on the ordinal scale
EXCELLENT=4, GOOD=3, MEDIUM=2, BAD=1 (the paper: "the median of three ratings"). Then, per language,
over the captions that have a median:

* %GOOD+ = share of captions whose median is EXCELLENT or GOOD,
* %MED+  = share whose median is MEDIUM or better,
* %BAD   = share whose median is BAD,

as percentages (0..100, full floats; print them with one decimal as the paper does).

Decisions the paper leaves open:

* NOT-ENOUGH-INFO is not a point on the quality scale (it says the rater could not judge, not that
  the caption is bad or good), so it is LEFT OUT of the median: a caption rated GOOD, GOOD, NEI has the
  median GOOD. A caption whose ratings are all NEI has no median; it is not in the percentages'
  denominator and is counted in ``n_no_median``. How often raters chose NEI is reported as
  ``nei_rate``: the percentage of all ratings (NEI included) of the language that were NEI.
* With an even number of (non-NEI) ratings, which happens when a lease expired or NEI was left out,
  the median is the LOWER of the two middle values: GOOD, MEDIUM -> MEDIUM. This is the conservative
  choice and matches the rating guidelines' "for borderline cases use the lower rating". With an odd
  number it is the usual middle value.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from core.scales import RATING

__all__ = [
    "QUALITY_COLUMNS",
    "RATING_SCALE",
    "QualityRow",
    "caption_medians",
    "lower_median",
    "normalise_rating",
    "quality_table",
    "rating_number",
]

# The ordinal scale of core.scales.RATING (defined there once); NOT-ENOUGH-INFO ("nei", the point
# without a number) is deliberately not on it.
RATING_SCALE: dict[str, int] = {point.code: point.value for point in RATING if point.value is not None}
NEI = next(point.code for point in RATING if point.value is None)
EXCELLENT, GOOD, MEDIUM, BAD = (RATING.point(label).value for label in ("EXCELLENT", "GOOD", "MEDIUM", "BAD"))


def normalise_rating(value: str) -> str:
    """The stored value ('excellent', 'good', 'medium', 'bad', 'nei') for a value or its label
    ('EXCELLENT', 'NOT-ENOUGH-INFO', ...). Raises ``ValueError`` for anything else."""
    return RATING.point(value).code


def rating_number(value: str) -> int | None:
    """4 for EXCELLENT ... 1 for BAD, None for NOT-ENOUGH-INFO."""
    return RATING.point(value).value


def lower_median(values: Iterable[int]) -> int | None:
    """The median; for an even count the lower of the two middle values. None for no values."""
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[(len(ordered) - 1) // 2]


def caption_medians(values_by_caption: Mapping[Hashable, Iterable[str]]) -> dict[Hashable, int | None]:
    """caption -> its median rating (4..1) over its non-NEI ratings, None when all were NEI."""
    return {
        caption: lower_median(n for n in map(rating_number, values) if n is not None)
        for caption, values in values_by_caption.items()
    }


@dataclass(frozen=True)
class QualityRow:
    """One language's row of Table 2. Percentages are 0..100 and None when no caption has a median.

    ``n_captions``: distinct captions rated; ``n_rated``: those with a median (the denominator);
    ``n_no_median``: those rated only NOT-ENOUGH-INFO (``n_captions = n_rated + n_no_median``);
    ``nei_rate``: percentage of the language's ratings that were NOT-ENOUGH-INFO.
    """

    language: str
    n_captions: int
    n_rated: int
    pct_good_plus: float | None
    pct_med_plus: float | None
    pct_bad: float | None
    nei_rate: float | None
    n_no_median: int
    n_ratings: int


# Columns for :func:`evaluation.research.tables.format_table`: (attribute, header, number format).
QUALITY_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("language", "Id", ""),
    ("n_captions", "captions", "d"),
    ("n_rated", "with median", "d"),
    ("pct_good_plus", "%GOOD+", ".1f"),
    ("pct_med_plus", "%MED+", ".1f"),
    ("pct_bad", "%BAD", ".1f"),
    ("nei_rate", "%NEI", ".1f"),
    ("n_no_median", "all NEI", "d"),
)


def _record(record: Any) -> tuple[str, Hashable, str]:
    if isinstance(record, Mapping):
        return record["language"], record["caption_id"], record["value"]
    language, caption_id, value = record
    return language, caption_id, value


def quality_table(ratings: Iterable[tuple[str, Hashable, str] | Mapping[str, Any]]) -> list[QualityRow]:
    """Table 2 rows, one per language (sorted by language), from ratings
    ``(language, caption_id, value)`` (tuples or mappings with those keys). Caption ids only need to be
    unique within a language. Raises ``ValueError`` for an unknown rating value. Empty input -> []."""
    by_language: dict[str, dict[Hashable, list[str]]] = defaultdict(lambda: defaultdict(list))
    for record in ratings:
        language, caption_id, value = _record(record)
        by_language[language][caption_id].append(normalise_rating(value))

    rows = []
    for language in sorted(by_language):
        values_by_caption = by_language[language]
        medians = [m for m in caption_medians(values_by_caption).values() if m is not None]
        n_captions = len(values_by_caption)
        n_rated = len(medians)
        n_ratings = sum(len(values) for values in values_by_caption.values())
        n_nei = sum(values.count(NEI) for values in values_by_caption.values())

        def pct(count: int, n_rated: int = n_rated) -> float | None:
            return 100.0 * count / n_rated if n_rated else None

        rows.append(
            QualityRow(
                language=language,
                n_captions=n_captions,
                n_rated=n_rated,
                pct_good_plus=pct(sum(1 for m in medians if m >= GOOD)),
                pct_med_plus=pct(sum(1 for m in medians if m >= MEDIUM)),
                pct_bad=pct(sum(1 for m in medians if m == BAD)),
                nei_rate=100.0 * n_nei / n_ratings if n_ratings else None,
                n_no_median=n_captions - n_rated,
                n_ratings=n_ratings,
            )
        )
    return rows
