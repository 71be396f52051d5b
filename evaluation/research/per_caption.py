"""Caption-level agreement of a metric with absolute human ratings.

Caption level (seed 001, sec. 4.3 and appendix B)
    :func:`per_caption_agreement` correlates a metric's score of each caption with the screen-1
    human rating of that caption (EXCELLENT=4, GOOD=3, MEDIUM=2, BAD=1; NOT-ENOUGH-INFO is not a
    point on the scale and is left out): Kendall τ_b, τ_c and Spearman ρ.
    τ_c is scipy's, whose m is the smaller number of distinct values of the two variables; seed 001
    takes m as the size of the rating scale (4). The two agree whenever all four ratings occur.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

import numpy as np

from core.scales import RATING
from evaluation.research.correlation import MIN_COMPARISONS, _coefficients

# EXCELLENT=4 … BAD=1 by paper label, from core.scales.RATING (NOT-ENOUGH-INFO has no number).
RATING_VALUES = {point.paper_label: point.value for point in RATING if point.value is not None}


def rating_value(rating: str) -> int | None:
    """EXCELLENT=4, GOOD=3, MEDIUM=2, BAD=1; None for NOT-ENOUGH-INFO (not on the scale).

    Accepts the labels and the stored values in any case (``"excellent"``, ``"nei"``,
    ``"NOT_ENOUGH_INFO"``); raises ``ValueError`` for anything else.
    """
    return RATING.point(rating).value


def per_caption_agreement(
    metric_scores: Mapping[Hashable, float], human_ratings: Mapping[Hashable, str]
) -> dict[str, Any]:
    """Kendall τ_b, τ_c and Spearman ρ of metric scores against the human ratings of the same captions.

    One observation per key of ``human_ratings`` (a caption, or a caption and rater when a caption
    is rated more than once); NOT-ENOUGH-INFO ratings are left out and counted in
    ``n_not_enough_info``. Scores without a rating are ignored. Raises ``ValueError`` for a rating
    without a score, a score that is not finite, or an unknown rating. Coefficients are None when
    fewer than 3 observations remain or either side is constant.
    """
    scores: list[float] = []
    values: list[int] = []
    left_out = 0
    for key, rating in human_ratings.items():
        value = rating_value(rating)
        if value is None:
            left_out += 1
            continue
        if key not in metric_scores:
            raise ValueError(f"caption {key!r} is rated but has no metric score")
        score = float(metric_scores[key])
        if not math.isfinite(score):
            raise ValueError(f"caption {key!r} has a score that is not a finite number: {score!r}")
        scores.append(score)
        values.append(value)
    out: dict[str, Any] = {
        "n": len(scores),
        "n_not_enough_info": left_out,
        "kendall_tau_b": None,
        "kendall_tau_c": None,
        "spearman": None,
    }
    if len(scores) >= MIN_COMPARISONS:
        coefficients = _coefficients(np.array(scores), np.array(values, dtype=float))
        out.update({name: coefficients[name][0] for name in ("kendall_tau_b", "kendall_tau_c", "spearman")})
    return out


def per_caption_agreement_by_language(
    rows: Iterable[tuple[str, Hashable, float, str]],
) -> dict[str, dict[str, Any]]:
    """:func:`per_caption_agreement` per language from (language, key, score, rating) rows.

    A key identifies one rated observation within its language (use (caption, rater) when captions
    are rated more than once); a key that appears twice in a language raises ``ValueError``.
    Languages come out in sorted order.
    """
    scores: dict[str, dict[Hashable, float]] = defaultdict(dict)
    ratings: dict[str, dict[Hashable, str]] = defaultdict(dict)
    for language, key, score, rating in rows:
        if key in ratings[language]:
            raise ValueError(f"{key!r} appears twice in {language}; one rating per key")
        scores[language][key] = score
        ratings[language][key] = rating
    return {
        language: per_caption_agreement(scores[language], ratings[language]) for language in sorted(ratings)
    }
