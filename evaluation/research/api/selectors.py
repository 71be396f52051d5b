"""Reads of the research API.

What is exposed, and what never is:

* written captions, side-by-side judgments and ratings only from SUBMITTED work (assignments
  submitted on time or late): a judgment in an open batch can still change, and a batch that was
  never submitted was never confirmed. Caption drafts are not read here at all;
* annotators by pseudonym only (the serializers never reach ``user``).

The comparison builder (:func:`sxs_comparisons`) turns finished side-by-side campaigns and metric
runs into the :class:`evaluation.research.correlation.Comparison` records that ``correlate`` takes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.db.models import Count, QuerySet

from annotation.models import (
    DONE_STATES,
    Campaign,
    CampaignKind,
    CaptioningSystem,
    Language,
    Rating,
    SxsJudgment,
    SystemCaption,
    WrittenCaption,
)
from annotation.selectors import campaigns_progress
from core.lookups import row_by_id
from evaluation.human.selectors import (
    caption_statistics_rows,
    rating_results,
    reference_captions,
    sxs_results,
)
from evaluation.models import CaptionScore, ImageSet, MetricRun, ReferenceSet
from evaluation.runs.selectors import metric_run_queryset

# --- Languages, systems, reference and image sets ---------------------------------------------------


# The lists' query parameters are django-filter FilterSets in :mod:`.filters`.


def language_list() -> QuerySet[Language]:
    return Language.objects.order_by("code")


def system_list() -> QuerySet[CaptioningSystem]:
    return CaptioningSystem.objects.order_by("name", "pk")


def system_languages(system_ids: Iterable[int]) -> dict[int, list[str]]:
    """system id -> the codes of the languages it has captions in (sorted); one query."""
    out: dict[int, list[str]] = defaultdict(list)
    rows = (
        SystemCaption.objects.filter(system_id__in=list(system_ids))
        .order_by()
        .values_list("system_id", "language__code")
        .distinct()
    )
    for system_id, code in rows:
        out[system_id].append(code)
    return {system_id: sorted(codes) for system_id, codes in out.items()}


def reference_set_list() -> QuerySet[ReferenceSet]:
    return ReferenceSet.objects.select_related("language").order_by("name", "pk")


def image_set_list() -> QuerySet[ImageSet]:
    """Image sets with their number of images."""
    return (
        ImageSet.objects.select_related("language").annotate(n_images=Count("images")).order_by("name", "pk")
    )


# --- Campaigns ------------------------------------------------------------------------------------


def campaign_list() -> QuerySet[Campaign]:
    return Campaign.objects.select_related(
        "language", "prompt_system", "base_system", "test_system"
    ).order_by("-created_at", "-pk")


def campaign_detail(*, campaign_id: int) -> Campaign:
    """The campaign with ``progress`` and its results set on it: ``sxs`` (side by side:
    :func:`evaluation.human.selectors.sxs_results`), ``verification`` (:func:`evaluation.human.selectors.rating_results`)
    and ``statistics`` (caption campaign: its Table 1 row), None where they do not apply.
    Raises NotFound."""
    campaign = row_by_id(campaign_list(), campaign_id, "campaign")
    campaign.progress = campaigns_progress([campaign.pk])[campaign.pk]
    campaign.sxs = sxs_results(campaign) if campaign.kind == CampaignKind.SIDE_BY_SIDE else None
    campaign.verification = rating_results(campaign) if campaign.kind == CampaignKind.RATING else None
    campaign.statistics = None
    if campaign.kind == CampaignKind.CAPTION:
        rows = caption_statistics_rows(campaign_id=campaign.pk)
        campaign.statistics = rows[0] if rows else None
    return campaign


# --- Submitted work -------------------------------------------------------------------------------


def written_caption_list() -> QuerySet[WrittenCaption]:
    """Submitted written captions (a WrittenCaption only exists once its batch is submitted), never those of
    a campaign whose captions are sealed (the hidden references of a test phase)."""
    return (
        reference_captions()
        .exclude(campaign__captions_sealed=True)
        .select_related("image", "language", "annotator", "assignment__batch")
        .order_by("pk")
    )


def written_caption_get(*, caption_id: int) -> WrittenCaption:
    return row_by_id(written_caption_list(), caption_id, "written caption")


def _submitted(rows, *related: str) -> QuerySet:
    """``rows`` (a manager or queryset) of submitted batches by id, with what every judgment and rating shows of its assignment
    (annotator, batch, image, language) and ``related``."""
    return (
        rows.filter(assignment__state__in=DONE_STATES)
        .select_related(
            "assignment__annotator",
            "assignment__batch",
            "assignment__item__image",
            "assignment__item__campaign__language",
            *related,
        )
        .order_by("pk")
    )


def sxs_judgment_list() -> QuerySet[SxsJudgment]:
    """Side-by-side judgments of submitted batches."""
    return _submitted(
        SxsJudgment.objects,
        "assignment__item__campaign__base_system",
        "assignment__item__campaign__test_system",
    )


def sxs_judgment_get(*, judgment_id: int) -> SxsJudgment:
    return row_by_id(sxs_judgment_list(), judgment_id, "side-by-side judgment")


RATING_KINDS = {"verification": CampaignKind.RATING, "prompt": CampaignKind.CAPTION}


def rating_list() -> QuerySet[Rating]:
    """Ratings of submitted batches: ``verification`` (a human caption, rating campaigns) and
    ``prompt`` (screen 1 of a caption campaign: the prompt system's English caption); never a rating of a
    sealed caption (the hidden references of a test phase)."""
    return _submitted(
        Rating.objects.counted().exclude(assignment__item__written_caption__campaign__captions_sealed=True),
        "assignment__item__prompt_caption__system",
        "assignment__item__written_caption",
    )


def rating_get(*, rating_id: int) -> Rating:
    return row_by_id(rating_list(), rating_id, "rating")


# --- Metric runs -----------------------------------------------------------------------------------


def metric_run_list() -> QuerySet[MetricRun]:
    return metric_run_queryset().order_by("-created_at", "-pk")


def metric_run_detail(*, run_id: int) -> MetricRun:
    return row_by_id(metric_run_queryset(), run_id, "metric run")


def caption_score_list(*, run: MetricRun) -> QuerySet[CaptionScore]:
    """The run's per-caption scores in the order of its unique index (system, image, metric)."""
    return (
        CaptionScore.objects.filter(run=run)
        .select_related("system", "image")
        .order_by("system_id", "image_id", "metric")
    )
