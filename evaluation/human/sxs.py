"""Side-by-side (S×S) aggregation: WINS, LOSSES and ΔS×S (seed 000, sec. 3.3), with their uncertainty.

The scale
    Annotators see two captions and pick one of seven labels, read from the LEFT caption's side:
    MUCH-BETTER ("left is much better") ... SIMILAR ... MUCH-WORSE ("right is much better").
    Which system is on the left is drawn per (annotator, item), so the choice as seen says nothing
    by itself; the number that is aggregated is the *score from m2's side*, −3 … +3, where +3 means
    "the test system m2 is much better than the base system m1". :func:`choice_to_score` and
    :func:`score_to_choice` convert between the two.

Per image (:func:`image_outcome`)
    WIN when a strict majority of the image's judgments favour m2 (score > 0), LOSS when a strict
    majority favour m1 (score < 0), otherwise neither (a tie). With the paper's 3 judgments per image
    that is "2 of 3". An expired lease can leave 2 or 4 judgments: strict majority still means more
    than half, so 2 of 2 and 3 of 4 (1 of 2 or 2 of 4 is a tie), and an image with 1 judgment is
    decided by it.

Campaign (:func:`sxs_summary`)
    WINS and LOSSES are percentages of images and ΔS×S = WINS − LOSSES in percentage points, from −100
    to +100. Around it:

    * a bootstrap confidence interval of ΔS×S over images: the images are resampled with replacement
      ``n_boot`` times (default 10,000) with a seeded ``numpy.random.Generator`` (PCG64, default seed
      0) and the interval is the percentile interval (numpy's default linear interpolation) of the
      resampled ΔS×S. ΔS×S depends on a resample only through its numbers of WIN, LOSS and tie
      images, so the resample counts are drawn directly from the multinomial distribution with the
      observed shares: the same distribution as drawing image indices, in O(n_boot) instead of
      O(n_boot × n_images). Judgments inside an image are not resampled.
    * a two-sided exact sign test of WINS against LOSSES (ties left out): ``scipy.stats.binomtest``
      with p = 0.5; None when there is no WIN and no LOSS.
    * position bias: of the judgments that are not SIMILAR, the share that preferred the caption shown
      on the LEFT, with its own two-sided exact binomial test against 0.5.
    * the mean score from m2's side, both over all judgments and as the mean of the per-image means
      (each image weighted once, whatever its number of judgments).
    * Krippendorff's α (ordinal, over the scores from m2's side) among the judgments of each image.

The input is the plain judgments of ONE campaign (or one language of it). Control items and pairs
whose two captions are identical are reported separately, so the caller filters them out first.
Numbers that are undefined (empty campaign, no decided image, ...) are None, never NaN, so the
summary serialises to JSON as it is.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np

from core import scales
from core.scales import SXS

from .agreement import alpha_from_unit_values

__all__ = [
    "DEFAULT_N_BOOT",
    "LEFT_ADVANTAGE",
    "SXS_COLUMNS",
    "SXS_LABELS",
    "SXS_SCORES",
    "M2Side",
    "Outcome",
    "SxsJudgment",
    "SxsSummary",
    "choice_to_score",
    "image_outcome",
    "left_preferred",
    "normalise_choice",
    "score_to_choice",
    "sxs_summary",
]

# The 7-point scale is core.scales.SXS (pure data, defined once); these are its paper labels and numbers.
SXS_LABELS: tuple[str, ...] = tuple(point.paper_label for point in SXS)
# How much better the LEFT caption is, for each paper label: MUCH-BETTER +3 ... MUCH-WORSE −3.
LEFT_ADVANTAGE: dict[str, int] = {point.paper_label: point.value for point in SXS}
SXS_SCORES: tuple[int, ...] = tuple(sorted(LEFT_ADVANTAGE.values()))
DEFAULT_N_BOOT = 10_000

M2Side = Literal["left", "right"]
Outcome = Literal["win", "loss", "tie"]


class SxsJudgment(NamedTuple):
    """One side-by-side judgment: ``score`` is from m2's side (+3 = m2 much better), ``m2_side`` is the
    side m2's caption was shown on. Any 4-tuple in this order, or a mapping with these keys, will do."""

    image_key: Hashable
    rater_id: Hashable
    score: int
    m2_side: str


def normalise_choice(choice: str) -> str:
    """The canonical label for ``choice``: case, ``_`` and spaces are forgiven ("much_better",
    "Much better" -> "MUCH-BETTER"). Raises ``ValueError`` for anything else."""
    return SXS.point(choice).paper_label


_check_side = scales.check_side


def _check_score(score: object) -> int:
    if isinstance(score, bool) or not isinstance(score, int | np.integer) or not -3 <= score <= 3:
        raise ValueError(f"a side-by-side score is an integer from -3 to +3, not {score!r}")
    return int(score)


def choice_to_score(choice: str, m2_side: str) -> int:
    """The score from m2's side (−3 … +3) of a choice as seen, given the side m2 was shown on.

    ``choice_to_score("BETTER", "left") == 2`` (m2 was on the left and the left was better);
    ``choice_to_score("BETTER", "right") == -2``.
    """
    return scales.choice_to_score(choice, m2_side)


def score_to_choice(score: int, m2_side: str) -> str:
    """The label the annotator picked, from the score from m2's side and m2's side (the inverse of
    :func:`choice_to_score`)."""
    return scales.score_to_choice(_check_score(score), m2_side).paper_label


def left_preferred(score: int, m2_side: str) -> bool | None:
    """True when the judgment preferred the caption shown on the left, False for the right, None for
    SIMILAR."""
    score = _check_score(score)
    if score == 0:
        return None
    return (score > 0) == (_check_side(m2_side) == "left")


def image_outcome(scores: Iterable[int]) -> Outcome:
    """ "win", "loss" or "tie" for one image, by strict majority of its judgments (see the module
    docstring). An image without judgments is a tie."""
    scores = list(scores)
    favour_m2 = sum(1 for s in scores if s > 0)
    favour_m1 = sum(1 for s in scores if s < 0)
    if 2 * favour_m2 > len(scores):
        return "win"
    if 2 * favour_m1 > len(scores):
        return "loss"
    return "tie"


@dataclass(frozen=True)
class SxsSummary:
    """The numbers of one side-by-side campaign. Percentages are in 0..100, ``delta_sxs`` and its
    interval in percentage points (−100..+100); p-values and shares in 0..1. None where undefined."""

    n_images: int
    n_judgments: int
    # number of judgments on an image -> number of images with that many (keys ascending)
    judgments_per_image: dict[int, int]
    wins: int
    losses: int
    ties: int
    wins_pct: float | None
    losses_pct: float | None
    ties_pct: float | None
    delta_sxs: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    n_boot: int
    seed: int
    sign_test_p: float | None  # two-sided exact sign test, wins vs losses, ties excluded
    mean_score_per_judgment: float | None  # mean score from m2's side over all judgments
    mean_score_per_image: float | None  # mean over images of each image's mean score
    decided_judgments: int  # judgments that are not SIMILAR
    left_preferred: int  # of those, how many preferred the caption shown on the left
    left_preferred_share: float | None
    position_bias_p: float | None  # two-sided exact binomial test of left_preferred against 0.5
    alpha_ordinal: float | None  # Krippendorff's alpha, ordinal, over the scores from m2's side
    outcomes: dict[Hashable, str] = field(repr=False, default_factory=dict)  # image_key -> outcome

    def as_dict(self, *, include_outcomes: bool = False) -> dict[str, Any]:
        """A JSON-ready dict (the per-image outcomes only on request: image keys may not be strings)."""
        data = asdict(self)
        if not include_outcomes:
            del data["outcomes"]
        return data


# Columns for :func:`evaluation.research.tables.format_table`: (key of SxsSummary.as_dict(), header, number format).
SXS_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("n_images", "images", "d"),
    ("n_judgments", "judgments", "d"),
    ("wins_pct", "WINS", ".1f"),
    ("losses_pct", "LOSSES", ".1f"),
    ("ties_pct", "ties", ".1f"),
    ("delta_sxs", "ΔS×S", ".1f"),
    ("ci_low", "CI low", ".1f"),
    ("ci_high", "CI high", ".1f"),
    ("sign_test_p", "sign p", ".3g"),
    ("mean_score_per_judgment", "mean score", ".2f"),
    ("left_preferred_share", "left pref.", ".3f"),
    ("position_bias_p", "position p", ".3g"),
    ("alpha_ordinal", "alpha", ".3f"),
)


def _field(record: object, index: int, name: str) -> Any:
    if isinstance(record, Mapping):
        return record[name]
    return record[index]  # type: ignore[index]


def _binom_p(successes: int, trials: int) -> float | None:
    if trials == 0:
        return None
    from scipy.stats import binomtest  # scipy.stats takes ~0.5 s to import: not at Django start-up

    return float(binomtest(successes, trials, p=0.5, alternative="two-sided").pvalue)


def _bootstrap_delta(
    wins: int, losses: int, ties: int, *, n_boot: int, seed: int, confidence: float
) -> tuple[float, float]:
    n = wins + losses + ties
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, [wins / n, losses / n, ties / n], size=n_boot)
    deltas = 100.0 * (counts[:, 0] - counts[:, 1]) / n
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(deltas, [tail, 1.0 - tail])
    return float(low), float(high)


def sxs_summary(
    judgments: Iterable[SxsJudgment | tuple | Mapping[str, Any]],
    *,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    confidence: float = 0.95,
) -> SxsSummary:
    """Aggregate one campaign's side-by-side judgments (see the module docstring for the definitions).

    ``judgments``: records ``(image_key, rater_id, score, m2_side)`` (tuples such as
    ``values_list(...)`` rows, :class:`SxsJudgment`, or mappings with those keys). Raises ``ValueError``
    for a score outside −3..+3, a side other than "left"/"right", ``n_boot < 1`` or a confidence outside
    (0, 1). An empty input gives ``n_images == 0`` and None for every undefined number.
    """
    if n_boot < 1:
        raise ValueError("n_boot must be at least 1")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")

    scores_by_image: dict[Hashable, list[int]] = defaultdict(list)
    n_judgments = left = decided = 0
    for record in judgments:
        image_key = _field(record, 0, "image_key")
        score = _check_score(_field(record, 2, "score"))
        side = _check_side(_field(record, 3, "m2_side"))
        scores_by_image[image_key].append(score)
        n_judgments += 1
        if score != 0:
            decided += 1
            left += (score > 0) == (side == "left")

    outcomes = {key: image_outcome(scores) for key, scores in scores_by_image.items()}
    tally = Counter(outcomes.values())
    wins, losses, ties = tally["win"], tally["loss"], tally["tie"]
    n_images = len(outcomes)
    histogram = dict(sorted(Counter(len(scores) for scores in scores_by_image.values()).items()))

    def pct(count: int) -> float | None:
        return 100.0 * count / n_images if n_images else None

    ci_low = ci_high = None
    if n_images:
        ci_low, ci_high = _bootstrap_delta(
            wins, losses, ties, n_boot=n_boot, seed=seed, confidence=confidence
        )
    all_scores = [s for scores in scores_by_image.values() for s in scores]
    image_means = [math.fsum(scores) / len(scores) for scores in scores_by_image.values()]
    return SxsSummary(
        n_images=n_images,
        n_judgments=n_judgments,
        judgments_per_image=histogram,
        wins=wins,
        losses=losses,
        ties=ties,
        wins_pct=pct(wins),
        losses_pct=pct(losses),
        ties_pct=pct(ties),
        delta_sxs=100.0 * (wins - losses) / n_images if n_images else None,
        ci_low=ci_low,
        ci_high=ci_high,
        confidence=confidence,
        n_boot=n_boot,
        seed=seed,
        sign_test_p=_binom_p(wins, wins + losses),
        mean_score_per_judgment=math.fsum(all_scores) / n_judgments if n_judgments else None,
        mean_score_per_image=math.fsum(image_means) / n_images if n_images else None,
        decided_judgments=decided,
        left_preferred=left,
        left_preferred_share=left / decided if decided else None,
        position_bias_p=_binom_p(left, decided),
        alpha_ordinal=alpha_from_unit_values(scores_by_image.values(), level="ordinal"),
        outcomes=outcomes,
    )
