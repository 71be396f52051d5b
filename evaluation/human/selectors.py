"""Reads that feed the human-evaluation numbers: the side-by-side summaries, control pass rates,
Tables 1 and 2. They collect plain records from the annotation tables and hand them to the pure
functions of :mod:`evaluation.human`. What counts:

* only SUBMITTED work (assignments submitted, on time or late): a judgment in a batch that is
  still open can change, and one in a batch never submitted was never confirmed;
* side by side: control items never enter ΔS×S, the interval, the tests or alpha; pairs whose
  two captions are the same text are summarised separately ("identical pairs");
* control items of caption and verification campaigns (rated controls) never enter any
  number but their own pass rates (:func:`rated_controls`); Table 1 counts the written captions
  of :func:`reference_captions`, the one rule of which captions count;
* Table 2 (quality) uses the ratings of verification campaigns only: the screen-1 ratings of
  caption campaigns rate model captions, not the human captions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from django.db.models import QuerySet

from annotation.models import (
    DONE_STATES,
    Campaign,
    CampaignKind,
    Language,
    Rating,
    SxsJudgment,
    WrittenCaption,
)
from evaluation.human import (
    ControlPassRow,
    QualityRow,
    SxsSummary,
    caption_statistics,
    control_pass_rates,
    quality_table,
    rating_alpha,
    sxs_summary,
)
from evaluation.human.quality import caption_medians, rating_number
from evaluation.human.statistics import CaptionStatsRow
from evaluation.human.sxs import DEFAULT_N_BOOT

# --- Human evaluation -----------------------------------------------------------------------------

# The "subset" of a side-by-side row: the campaign's real pairs, or its pairs of identical captions.
REAL_PAIRS = "real pairs"
IDENTICAL_PAIRS = "identical pairs"


@dataclass(frozen=True)
class AnnotatorControls:
    """One annotator's control items in a side-by-side campaign."""

    username: str
    pseudonym: str
    n_controls: int
    n_passed: int
    pass_rate: float
    flagged: bool
    too_few: bool


def _annotator_controls(
    rows: Iterable[ControlPassRow], names: Mapping[int, tuple[str, str]]
) -> list[AnnotatorControls]:
    """The pass-rate rows with each rater's user name and pseudonym (``names``: id -> both)."""
    return [
        AnnotatorControls(
            username=names[row.rater_id][0],
            pseudonym=names[row.rater_id][1],
            n_controls=row.n_controls,
            n_passed=row.n_passed,
            pass_rate=row.pass_rate,
            flagged=row.flagged,
            too_few=row.too_few,
        )
        for row in rows
    ]


@dataclass(frozen=True)
class SxsResults:
    """A side-by-side campaign's numbers: ``summary`` over its real pairs (no control, no identical
    pair), ``identical`` over the pairs whose two captions are the same text, and the control
    pass rates per annotator against the campaign's threshold. ``pair_scores`` maps the image key
    of each real pair with a submitted judgment to its judgments' scores from m2's side (−3 … +3),
    in the order they were stored: the item level of meta-evaluation reads them."""

    campaign: Campaign
    summary: SxsSummary
    identical: SxsSummary
    controls: list[AnnotatorControls]
    control_threshold: float
    n_control_judgments: int
    control_minimum: int
    pair_scores: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def flagged(self) -> list[AnnotatorControls]:
        return [row for row in self.controls if row.flagged]


def sxs_results(campaign: Campaign, *, n_boot: int = DEFAULT_N_BOOT, seed: int = 0) -> SxsResults:
    """The numbers of one side-by-side campaign from its submitted judgments (one query).

    Units of the summary, and the keys of ``pair_scores``, are the images of the campaign's real
    pairs (no control item, no identical pair).
    The bootstrap uses ``n_boot`` resamples and ``seed`` (see :func:`evaluation.human.sxs_summary`).
    """
    rows = submitted_judgments(campaign).values_list(
        "assignment__item__image__key",
        "assignment__annotator_id",
        "score",
        "assignment__m2_side",
        "assignment__item__is_control",
        "assignment__item__control_kind",
        "assignment__item__is_identical_pair",
        "assignment__annotator__user__username",
        "assignment__annotator__pseudonym",
    )
    pairs, identical, controls = [], [], []
    names: dict[int, tuple[str, str]] = {}
    for key, annotator_id, score, side, is_control, control_kind, is_identical, username, pseudonym in rows:
        if is_control:
            controls.append((annotator_id, control_kind, score))
            names[annotator_id] = (username, pseudonym)
        elif is_identical:
            identical.append((key, annotator_id, score, side))
        else:
            pairs.append((key, annotator_id, score, side))
    pair_scores: dict[str, list[int]] = {}
    for key, _, score, _ in pairs:
        pair_scores.setdefault(key, []).append(score)
    threshold = campaign.control_pass_threshold
    control_rows: list[ControlPassRow] = control_pass_rates(
        controls, threshold=threshold, minimum=campaign.control_min_judgments
    )
    return SxsResults(
        campaign=campaign,
        summary=sxs_summary(pairs, n_boot=n_boot, seed=seed),
        identical=sxs_summary(identical, n_boot=n_boot, seed=seed),
        controls=_annotator_controls(control_rows, names),
        control_threshold=threshold,
        n_control_judgments=len(controls),
        control_minimum=campaign.control_min_judgments,
        pair_scores={key: tuple(scores) for key, scores in pair_scores.items()},
    )


@dataclass(frozen=True)
class RatedControls:
    """The control items of a caption campaign (screen 1) or a verification campaign: pass rate per
    annotator against the campaign's threshold, judged from ``minimum`` control ratings on."""

    campaign: Campaign
    controls: list[AnnotatorControls]
    threshold: float
    minimum: int
    n_control_ratings: int

    @property
    def flagged(self) -> list[AnnotatorControls]:
        return [row for row in self.controls if row.flagged]


def rated_controls(campaign: Campaign) -> RatedControls:
    """Pass rates of the submitted results of ``campaign``'s control items (one query), for every
    campaign kind (side by side: the same figures as :func:`sxs_results`, without its bootstrap);
    the rule per kind is :func:`evaluation.human.controls.control_passed`."""
    # Side by side: the judgments' scores; elsewhere the ratings' codes (control_passed takes both).
    model, result = (
        (SxsJudgment, "score") if campaign.kind == CampaignKind.SIDE_BY_SIDE else (Rating, "value")
    )
    rows = list(
        model.objects.filter(
            assignment__item__campaign=campaign,
            assignment__item__is_control=True,
            assignment__state__in=DONE_STATES,
        )
        .order_by("pk")
        .values_list(
            "assignment__annotator_id",
            "assignment__item__control_kind",
            result,
            "assignment__annotator__user__username",
            "assignment__annotator__pseudonym",
        )
    )
    names = {annotator_id: (username, pseudonym) for annotator_id, _, _, username, pseudonym in rows}
    table = control_pass_rates(
        [(annotator_id, kind, value) for annotator_id, kind, value, _, _ in rows],
        threshold=campaign.control_pass_threshold,
        minimum=campaign.control_min_judgments,
    )
    return RatedControls(
        campaign=campaign,
        controls=_annotator_controls(table, names),
        threshold=campaign.control_pass_threshold,
        minimum=campaign.control_min_judgments,
        n_control_ratings=len(rows),
    )


def _verification_ratings(**filters) -> QuerySet:
    # counted(): ratings of control items never enter Table 2 or alpha.
    return (
        Rating.objects.counted()
        .filter(
            assignment__item__campaign__kind=CampaignKind.RATING,
            assignment__state__in=DONE_STATES,
            assignment__item__written_caption__isnull=False,
            **filters,
        )
        .order_by()
    )


@dataclass(frozen=True)
class RatingResults:
    """A verification campaign's numbers: its Table-2 row and Krippendorff's alpha (ordinal, NEI as
    missing). ``quality`` is None while nothing is rated."""

    campaign: Campaign
    quality: QualityRow | None
    alpha: float | None
    n_ratings: int


def rating_results(campaign: Campaign) -> RatingResults:
    """The numbers of one verification campaign from its submitted ratings (one query)."""
    rows = list(
        _verification_ratings(assignment__item__campaign=campaign).values_list(
            "assignment__item__written_caption_id", "assignment__annotator_id", "value"
        )
    )
    code = campaign.language.code
    table = quality_table((code, caption_id, value) for caption_id, _, value in rows)
    return RatingResults(
        campaign=campaign,
        quality=table[0] if table else None,
        alpha=rating_alpha(rows),
        n_ratings=len(rows),
    )


# --- Which written captions count ------------------------------------------------------------------
# The one rule every reader of the people's captions applies: metric runs over a campaign's reference
# set, retrieval checks, fine-tuning pairs, Table 1, the caption exports and the research API all read
# the written captions through reference_captions, so a caption a manager excluded, or one of a held
# batch, is left out of every number at once, and a change of the rule is made here only.


def reference_captions(*, campaign_ids: Iterable[int] | None = None) -> QuerySet[WrittenCaption]:
    """The written captions that count as references and in every figure, unordered.

    A caption counts when annotation's ``WrittenCaption.objects.counted()`` keeps it (not excluded
    by a manager after the review of its typing, not of a batch held for review or rejected), it
    is not on a control item (controls are rated, never captioned: this keeps it so), and it has
    text (an image the annotator reported may be submitted without a caption, stored empty).
    ``campaign_ids``: only those campaigns' captions (default: every campaign's). A read; no lock.
    """
    captions = (
        WrittenCaption.objects.counted()
        .filter(assignment__item__is_control=False)
        .exclude(text__regex=r"^\s*$")
        .order_by()
    )
    if campaign_ids is not None:
        captions = captions.filter(campaign_id__in=list(campaign_ids))
    return captions


def campaign_references(campaign_id: int, *, min_verified_rating: str = "") -> QuerySet[WrittenCaption]:
    """A caption campaign's captions that a campaign reference set reads (:func:`reference_captions`), and
    with ``min_verified_rating`` ("MEDIUM", "GOOD") only those whose median rating in the verification
    campaigns over it (the median of Table 2, pooled over those campaigns) is at least that: a caption not
    yet rated, or rated only NOT-ENOUGH-INFO, is left out."""
    captions = reference_captions(campaign_ids=[campaign_id])
    if not min_verified_rating:
        return captions
    minimum = rating_number(min_verified_rating)
    by_caption: dict[int, list[str]] = {}
    rows = _verification_ratings(assignment__item__written_caption__campaign_id=campaign_id).values_list(
        "assignment__item__written_caption_id", "value"
    )
    for caption_id, value in rows:
        by_caption.setdefault(caption_id, []).append(value)
    kept = [
        pk for pk, median in caption_medians(by_caption).items() if median is not None and median >= minimum
    ]
    return captions.filter(pk__in=kept)


def submitted_judgments(campaign: Campaign) -> QuerySet[SxsJudgment]:
    """The side-by-side judgments of the campaign's submitted batches, by image key then as stored:
    what ΔS×S and the judgments export read (a judgment of an open batch can still change)."""
    return SxsJudgment.objects.filter(
        assignment__item__campaign=campaign, assignment__state__in=DONE_STATES
    ).order_by("assignment__item__image__key", "pk")


def caption_statistics_rows(
    *, language_code: str | None = None, campaign_id: int | None = None
) -> list[CaptionStatsRow]:
    """Table 1 rows, one per language, over the submitted written captions (of every caption
    campaign, or of one), with each language's own tokeniser setting."""
    captions = reference_captions()
    if language_code:
        captions = captions.filter(language__code=language_code)
    if campaign_id is not None:
        captions = captions.filter(campaign_id=campaign_id)
    tokenizers = dict(Language.objects.values_list("code", "tokenizer"))
    return caption_statistics(
        captions.values_list("language__code", "image__key", "text"), tokenizer_for=tokenizers
    )


def quality_rows(*, language_code: str | None = None, campaign_id: int | None = None) -> list[QualityRow]:
    """Table 2 rows, one per language, over the submitted ratings of verification campaigns (all
    of them, or one). A caption rated in two verification campaigns pools its ratings."""
    ratings = _verification_ratings()
    if language_code:
        ratings = ratings.filter(assignment__item__campaign__language__code=language_code)
    if campaign_id is not None:
        ratings = ratings.filter(assignment__item__campaign_id=campaign_id)
    return quality_table(
        ratings.values_list(
            "assignment__item__campaign__language__code", "assignment__item__written_caption_id", "value"
        )
    )


@dataclass(frozen=True)
class LanguageTables:
    """One language's Table 1 and Table 2 rows (None where it has no caption / no rating)."""

    code: str
    name: str
    statistics: CaptionStatsRow | None
    quality: QualityRow | None


def language_tables(*, language_code: str | None = None) -> list[LanguageTables]:
    """Tables 1 and 2 per language, for the languages that have captions or ratings (sorted by code)."""
    statistics = {row.language: row for row in caption_statistics_rows(language_code=language_code)}
    quality = {row.language: row for row in quality_rows(language_code=language_code)}
    names = dict(Language.objects.filter(code__in=set(statistics) | set(quality)).values_list("code", "name"))
    return [
        LanguageTables(
            code=code, name=names.get(code, code), statistics=statistics.get(code), quality=quality.get(code)
        )
        for code in sorted(set(statistics) | set(quality))
    ]


def sxs_campaigns(*, language_code: str | None = None, campaign_id: int | None = None) -> QuerySet[Campaign]:
    campaigns = Campaign.objects.filter(kind=CampaignKind.SIDE_BY_SIDE).select_related(
        "language", "base_system", "test_system"
    )
    if language_code:
        campaigns = campaigns.filter(language__code=language_code)
    if campaign_id is not None:
        campaigns = campaigns.filter(pk=campaign_id)
    return campaigns.order_by("language__code", "name")


def sxs_table_rows(
    *, language_code: str | None = None, campaign_id: int | None = None, n_boot: int = DEFAULT_N_BOOT
) -> list[dict]:
    """One row per side-by-side campaign (its real pairs) and, when it has any, one for its
    identical pairs: campaign, language, m1, m2, subset, the summary's numbers, control figures."""
    rows = []
    for campaign in sxs_campaigns(language_code=language_code, campaign_id=campaign_id):
        results = sxs_results(campaign, n_boot=n_boot)
        common = {
            "campaign": campaign.name,
            "language": campaign.language.code,
            "m1": campaign.base_system.name,
            "m2": campaign.test_system.name,
        }
        passed = sum(row.n_passed for row in results.controls)
        rows.append(
            {
                **common,
                "subset": REAL_PAIRS,
                **results.summary.as_dict(),
                "control_judgments": results.n_control_judgments,
                "control_pass_rate": passed / results.n_control_judgments
                if results.n_control_judgments
                else None,
                "flagged_annotators": len(results.flagged),
            }
        )
        if results.identical.n_images:
            rows.append(
                {
                    **common,
                    "subset": IDENTICAL_PAIRS,
                    **results.identical.as_dict(),
                    "control_judgments": None,
                    "control_pass_rate": None,
                    "flagged_annotators": None,
                }
            )
    return rows
