"""Caption-level agreement of a metric with absolute human ratings.

Caption level (seed 001, sec. 4.3 and appendix B)
    :func:`per_caption_agreement` correlates a metric's score of each caption with the screen-1
    human rating of that caption (EXCELLENT=4, GOOD=3, MEDIUM=2, BAD=1; NOT-ENOUGH-INFO is not a
    point on the scale and is left out): Kendall τ_b, τ_c and Spearman ρ, and τ_23 / acc23 with
    tie calibration (:func:`evaluation.research.meta_evaluation.tie_calibrated_pairs`: over every
    pair of captions, a metric tie when the two scores differ by at most the calibrated ε).

    τ_c is seed 001's (eq. 6) by default: m = :data:`RATING_SCALE_POINTS`, the ranked points of the
    rating scale (4), whether or not all of them occur. ``tau_c="scipy"`` gives scipy's, whose m is
    the smaller number of distinct values of the two variables (3 on a set with no BAD rating, which
    makes it 9/8 of seed 001's). The two agree whenever all four ratings occur (and the scores take
    at least four values). Each result names its variant in ``kendall_tau_c_variant``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

import numpy as np

from core.scales import RATING
from evaluation.research.correlation import (
    MIN_COMPARISONS,
    TAU_C_SEED001,
    TAU_C_VARIANTS,
    _coefficients,
    tau_c_label,
)
from evaluation.research.meta_evaluation import tie_calibrated_pairs

# EXCELLENT=4 … BAD=1 by paper label, from core.scales.RATING (NOT-ENOUGH-INFO has no number).
RATING_VALUES = {point.paper_label: point.value for point in RATING if point.value is not None}
# Seed 001's m: the points of the ranking scale. NOT-ENOUGH-INFO is an answer, not a rank.
RATING_SCALE_POINTS = len(RATING_VALUES)


def rating_value(rating: str) -> int | None:
    """EXCELLENT=4, GOOD=3, MEDIUM=2, BAD=1; None for NOT-ENOUGH-INFO (not on the scale).

    Accepts the labels and the stored values in any case (``"excellent"``, ``"nei"``,
    ``"NOT_ENOUGH_INFO"``); raises ``ValueError`` for anything else.
    """
    return RATING.point(rating).value


def tau_c_variant_check(tau_c: str) -> str:
    """``tau_c`` if it names a τ_c variant (``seed001``, ``scipy``); ``ValueError`` otherwise."""
    if tau_c not in TAU_C_VARIANTS:
        raise ValueError(f"unknown τ_c variant {tau_c!r}; choose one of {', '.join(TAU_C_VARIANTS)}")
    return tau_c


def per_caption_tau_c_label(tau_c: str = TAU_C_SEED001) -> str:
    """The label of the per-caption τ_c: ``"seed-001 (m=4)"`` or ``"scipy (m=min distinct)"``."""
    tau_c_variant_check(tau_c)
    return tau_c_label(tau_c, RATING_SCALE_POINTS if tau_c == TAU_C_SEED001 else None)


def per_caption_agreement(
    metric_scores: Mapping[Hashable, float],
    human_ratings: Mapping[Hashable, str],
    *,
    tau_c: str = TAU_C_SEED001,
) -> dict[str, Any]:
    """Kendall τ_b, τ_c and Spearman ρ of metric scores against the human ratings of the same captions.

    One observation per key of ``human_ratings`` (a caption, or a caption and rater when a caption
    is rated more than once); NOT-ENOUGH-INFO ratings are left out and counted in
    ``n_not_enough_info``. Scores without a rating are ignored. ``tau_c``: ``"seed001"`` (m = 4, the
    scale's ranked points) or ``"scipy"``; ``kendall_tau_c_variant`` says which. Raises
    ``ValueError`` for a rating without a score, a score that is not finite, an unknown rating or
    an unknown ``tau_c``. Coefficients are None when fewer than 3 observations remain or either
    side is constant.
    """
    label = per_caption_tau_c_label(tau_c)
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
        "kendall_tau_c_variant": label,
        "tau23": None,
        "acc23": None,
        "acc23_epsilon": None,
        "acc23_pairs_sampled": False,
    }
    if len(scores) >= MIN_COMPARISONS:
        m = RATING_SCALE_POINTS if tau_c == TAU_C_SEED001 else None
        coefficients = _coefficients(np.array(scores), np.array(values, dtype=float), tau_c_m=m)
        out.update({name: coefficients[name][0] for name in ("kendall_tau_b", "kendall_tau_c", "spearman")})
        # τ_23 / acc23 over every pair of captions, ties calibrated (mt-metrics-eval's
        # KendallWithTiesOpt, average_by="none"): a metric may call two captions equal within ε.
        calibrated = tie_calibrated_pairs(values, scores)
        out.update(
            {
                "tau23": calibrated.tau23,
                "acc23": calibrated.acc23,
                "acc23_epsilon": calibrated.epsilon,
                "acc23_pairs_sampled": calibrated.sampled,
            }
        )
    return out


def per_caption_agreement_by_language(
    rows: Iterable[tuple[str, Hashable, float, str]], *, tau_c: str = TAU_C_SEED001
) -> dict[str, dict[str, Any]]:
    """:func:`per_caption_agreement` per language from (language, key, score, rating) rows.

    A key identifies one rated observation within its language (use (caption, rater) when captions
    are rated more than once); a key that appears twice in a language raises ``ValueError``.
    Languages come out in sorted order. ``tau_c`` as for :func:`per_caption_agreement`.
    """
    tau_c_variant_check(tau_c)
    scores: dict[str, dict[Hashable, float]] = defaultdict(dict)
    ratings: dict[str, dict[Hashable, str]] = defaultdict(dict)
    for language, key, score, rating in rows:
        if key in ratings[language]:
            raise ValueError(f"{key!r} appears twice in {language}; one rating per key")
        scores[language][key] = score
        ratings[language][key] = rating
    return {
        language: per_caption_agreement(scores[language], ratings[language], tau_c=tau_c)
        for language in sorted(ratings)
    }
