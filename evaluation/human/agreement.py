"""Inter-annotator agreement: Krippendorff's alpha over a units × raters structure with missing values.

The computation is the ``krippendorff`` package (PyPI, 0.9.0; Castro's implementation of the
coincidence-matrix formulas of Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011). The
tests pin it to that paper's worked example with missing data (4 observers, 12 units, values 1..5):
nominal α = 0.743, ordinal α = 0.815, interval α = 0.849, ratio α = 0.797.

Values per scale (ordinal level by default, as both scales are ordered categories):

* side-by-side, 7 points: the score from m2's side, −3 … +3 (not the choice as seen, whose meaning
  flips with the randomised left/right order): see :func:`sxs_alpha`;
* caption rating, 5 levels: EXCELLENT=4, GOOD=3, MEDIUM=2, BAD=1; NOT-ENOUGH-INFO is not a point on
  the quality scale, so it is left out (treated as a missing value): see :func:`rating_alpha`.

Only the values of a unit that has at least two values are *pairable*; a unit rated once adds nothing.
Alpha is None (not NaN) when it is undefined: fewer than 2 pairable values, or pairable values that
are all the same (no variation at all: expected disagreement 0, alpha = 0/0).

Which rater gave a value does not enter alpha (it is computed from the values of each unit), so a
rater who judged the same unit twice simply adds a value to it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from typing import Any, Literal

import krippendorff
import numpy as np

from .quality import rating_number

__all__ = [
    "Level",
    "alpha_from_unit_values",
    "krippendorff_alpha",
    "rating_alpha",
    "sxs_alpha",
]

Level = Literal["nominal", "ordinal", "interval", "ratio"]
_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def alpha_from_unit_values(
    units: Iterable[Iterable[float | None]], *, level: Level = "ordinal"
) -> float | None:
    """Krippendorff's alpha from the values given to each unit (None or NaN = missing).

    Values must be numbers (ordinal values in their order). Raises ``ValueError`` for an unknown level.
    """
    if level not in _LEVELS:
        raise ValueError(f"unknown level of measurement {level!r}; choose one of {', '.join(_LEVELS)}")
    pairable = [
        values for values in ([v for v in unit if not _is_missing(v)] for unit in units) if len(values) >= 2
    ]
    domain = sorted({v for values in pairable for v in values})
    if len(domain) < 2:  # no pairable value, or no variation: alpha is undefined
        return None
    index = {value: i for i, value in enumerate(domain)}
    counts = np.zeros((len(pairable), len(domain)), dtype=np.int64)
    for row, values in enumerate(pairable):
        for value in values:
            counts[row, index[value]] += 1
    result = float(
        krippendorff.alpha(
            value_counts=counts, value_domain=np.asarray(domain, dtype=float), level_of_measurement=level
        )
    )
    return result if math.isfinite(result) else None


def krippendorff_alpha(
    ratings: Mapping[Hashable, Mapping[Hashable, float | None]], *, level: Level = "ordinal"
) -> float | None:
    """Krippendorff's alpha for ``ratings[unit][rater] = value`` (a missing rater, None or NaN is a
    missing value). None when fewer than 2 pairable values or no variation (see the module docstring).
    """
    return alpha_from_unit_values((by_rater.values() for by_rater in ratings.values()), level=level)


def _records_to_units(
    records: Iterable[Any], *, unit: tuple[int, str], value: tuple[int, str]
) -> dict[Hashable, list[Any]]:
    """Group the values of plain records (tuples, or mappings by key) by unit."""
    units: dict[Hashable, list[Any]] = defaultdict(list)
    for record in records:
        if isinstance(record, Mapping):
            units[record[unit[1]]].append(record[value[1]])
        else:
            units[record[unit[0]]].append(record[value[0]])
    return units


def sxs_alpha(
    judgments: Iterable[tuple[Hashable, Hashable, int, str] | Mapping[str, Any]], *, level: Level = "ordinal"
) -> float | None:
    """Alpha of side-by-side judgments ``(image_key, rater_id, score, m2_side)``, units = images,
    values = scores from m2's side (−3..+3)."""
    units = _records_to_units(judgments, unit=(0, "image_key"), value=(2, "score"))
    return alpha_from_unit_values(units.values(), level=level)


def rating_alpha(
    ratings: Iterable[tuple[Hashable, Hashable, str] | Mapping[str, Any]], *, level: Level = "ordinal"
) -> float | None:
    """Alpha of 5-level ratings ``(caption_id, rater_id, value)`` (or mappings with those keys), value
    'excellent', 'good', 'medium', 'bad' or 'nei' (the labels are accepted too). Units are the rated
    captions; NOT-ENOUGH-INFO is a missing value. Raises ``ValueError`` for an unknown value."""
    units = _records_to_units(ratings, unit=(0, "caption_id"), value=(2, "value"))
    return alpha_from_unit_values(
        ([rating_number(value) for value in values] for values in units.values()), level=level
    )
