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
from dataclasses import dataclass, field

from django.db.models import Count, F, IntegerField, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce

from annotation.models import (
    Assignment,
    AssignmentState,
    Campaign,
    CampaignKind,
    CampaignState,
    CaptioningSystem,
    Item,
    Language,
    Rating,
    SxsJudgment,
    SystemCaption,
    WrittenCaption,
)
from core.errors import NotFound, ValidationFailed
from evaluation.human.selectors import caption_statistics_rows, rating_results, sxs_results
from evaluation.metrics.selectors import metric_run_queryset
from evaluation.models import CaptionScore, CorpusScore, ImageSet, MetricRun, ReferenceSet, RunStatus
from evaluation.research.correlation import Comparison

DONE_STATES = (AssignmentState.SUBMITTED, AssignmentState.LATE)


def _get(queryset: QuerySet, pk: int, what: str):
    try:
        return queryset.get(pk=pk)
    except queryset.model.DoesNotExist:
        raise NotFound(f"There is no {what} #{pk}.") from None


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


@dataclass(frozen=True)
class CampaignProgress:
    """``items`` (control items included), ``control_items``, ``complete``: items with at least K
    submitted results; ``results``: submitted results (late ones included)."""

    items: int = 0
    control_items: int = 0
    complete: int = 0
    results: int = 0


def campaign_progress(campaign_ids: Iterable[int]) -> dict[int, CampaignProgress]:
    """Progress of each campaign in ``campaign_ids`` in one grouped query (a list page stays cheap)."""
    ids = list(campaign_ids)
    if not ids:
        return {}
    done = (
        Assignment.objects.filter(item=OuterRef("pk"), state__in=DONE_STATES)
        .order_by()
        .values("item")
        .annotate(n=Count("pk"))
        .values("n")
    )
    rows = (
        Item.objects.filter(campaign_id__in=ids)
        .annotate(done=Coalesce(Subquery(done, output_field=IntegerField()), 0))
        .order_by()
        .values("campaign_id")
        .annotate(
            n_items=Count("pk"),
            n_controls=Count("pk", filter=Q(is_control=True)),
            n_complete=Count("pk", filter=Q(done__gte=F("campaign__replication"))),
            n_results=Sum("done"),
        )
    )
    out = {campaign_id: CampaignProgress() for campaign_id in ids}
    for row in rows:
        out[row["campaign_id"]] = CampaignProgress(
            items=row["n_items"],
            control_items=row["n_controls"],
            complete=row["n_complete"],
            results=row["n_results"] or 0,
        )
    return out


def campaign_detail(*, campaign_id: int) -> Campaign:
    """The campaign with ``progress`` and its results set on it: ``sxs`` (side by side:
    :func:`evaluation.human.selectors.sxs_results`), ``verification`` (:func:`evaluation.human.selectors.rating_results`)
    and ``statistics`` (caption campaign: its Table 1 row), None where they do not apply.
    Raises NotFound."""
    campaign = _get(campaign_list(), campaign_id, "campaign")
    campaign.progress = campaign_progress([campaign.pk])[campaign.pk]
    campaign.sxs = sxs_results(campaign) if campaign.kind == CampaignKind.SIDE_BY_SIDE else None
    campaign.verification = rating_results(campaign) if campaign.kind == CampaignKind.RATING else None
    campaign.statistics = None
    if campaign.kind == CampaignKind.CAPTION:
        rows = caption_statistics_rows(campaign_id=campaign.pk)
        campaign.statistics = rows[0] if rows else None
    return campaign


# --- Submitted work -------------------------------------------------------------------------------


def written_caption_list() -> QuerySet[WrittenCaption]:
    """Submitted written captions (a WrittenCaption only exists once its batch is submitted)."""
    return WrittenCaption.objects.select_related(
        "image", "language", "annotator", "assignment__batch"
    ).order_by("pk")


def written_caption_get(*, caption_id: int) -> WrittenCaption:
    return _get(written_caption_list(), caption_id, "written caption")


def sxs_judgment_list() -> QuerySet[SxsJudgment]:
    """Side-by-side judgments of submitted batches."""
    return (
        SxsJudgment.objects.filter(assignment__state__in=DONE_STATES)
        .select_related(
            "assignment__annotator",
            "assignment__batch",
            "assignment__item__image",
            "assignment__item__campaign__language",
            "assignment__item__campaign__base_system",
            "assignment__item__campaign__test_system",
        )
        .order_by("pk")
    )


def sxs_judgment_get(*, judgment_id: int) -> SxsJudgment:
    return _get(sxs_judgment_list(), judgment_id, "side-by-side judgment")


RATING_KINDS = {"verification": CampaignKind.RATING, "prompt": CampaignKind.CAPTION}


def rating_list() -> QuerySet[Rating]:
    """Ratings of submitted batches: ``verification`` (a human caption, rating campaigns) and
    ``prompt`` (screen 1 of a caption campaign: the prompt system's English caption)."""
    return (
        Rating.objects.filter(assignment__state__in=DONE_STATES)
        .select_related(
            "assignment__annotator",
            "assignment__batch",
            "assignment__item__image",
            "assignment__item__campaign__language",
            "assignment__item__prompt_caption__system",
            "assignment__item__written_caption",
        )
        .order_by("pk")
    )


def rating_get(*, rating_id: int) -> Rating:
    return _get(rating_list(), rating_id, "rating")


# --- Metric runs -----------------------------------------------------------------------------------


def metric_run_list() -> QuerySet[MetricRun]:
    return metric_run_queryset().order_by("-created_at", "-pk")


def metric_run_detail(*, run_id: int) -> MetricRun:
    return _get(metric_run_queryset(), run_id, "metric run")


def caption_score_list(*, run: MetricRun) -> QuerySet[CaptionScore]:
    """The run's per-caption scores in the order of its unique index (system, image, metric)."""
    return (
        CaptionScore.objects.filter(run=run)
        .select_related("system", "image")
        .order_by("system_id", "image_id", "metric")
    )


# --- Comparisons for the correlation endpoint --------------------------------------------------------


@dataclass(frozen=True)
class ComparisonSource:
    """A comparison and where its numbers come from: the campaign (ΔS×S, its interval) and, per
    metric, the run whose corpus scores gave Δmetric."""

    comparison: Comparison
    campaign: Campaign
    ci_low: float | None
    ci_high: float | None
    n_images: int
    runs: dict[str, int]


@dataclass(frozen=True)
class SkippedCampaign:
    campaign: Campaign
    reason: str


@dataclass
class ComparisonSet:
    comparisons: list[ComparisonSource] = field(default_factory=list)
    skipped: list[SkippedCampaign] = field(default_factory=list)


def _finished_sxs_campaigns(campaigns: list[Campaign]) -> list[Campaign]:
    """Closed campaigns, and open ones where every item has its K submitted judgments."""
    progress = campaign_progress(c.pk for c in campaigns)
    return [
        c
        for c in campaigns
        if c.state == CampaignState.CLOSED
        or (progress[c.pk].items and progress[c.pk].complete == progress[c.pk].items)
    ]


def sxs_comparisons(*, run_ids: list[int], campaign_ids: list[int] | None = None) -> ComparisonSet:
    """One comparison per side-by-side campaign with ΔS×S and, from the given runs, Δmetric for every
    metric that a run scored for both m1 and m2 in the campaign's language.

    The campaigns are ``campaign_ids`` (any state: the caller chose them) or else every FINISHED
    side-by-side campaign (closed, or every item judged K times). Δmetric = score(m2) − score(m1), both
    corpus scores from the same run. Runs must have succeeded. A campaign without ΔS×S (no decided
    image) or without any metric delta is listed in ``skipped`` with the reason.

    Raises ValidationFailed for an unknown run or campaign, a run that has not succeeded, a campaign
    that is not side by side, and when two of the runs both score m1 and m2 of a campaign with the
    same metric (which one to use would be a guess).
    """
    run_ids = list(dict.fromkeys(run_ids))
    runs = {run.pk: run for run in MetricRun.objects.filter(pk__in=run_ids).select_related("language")}
    for run_id in run_ids:
        if run_id not in runs:
            raise ValidationFailed(f"There is no metric run #{run_id}.")
        if runs[run_id].status != RunStatus.SUCCEEDED:
            raise ValidationFailed(
                f"Metric run #{run_id} is {runs[run_id].status}: only succeeded runs can be correlated."
            )
    # (run id, system name, metric) -> corpus score
    scores: dict[tuple[int, str, str], float] = {
        (run_id, system, metric): value
        for run_id, system, metric, value in CorpusScore.objects.filter(run_id__in=run_ids).values_list(
            "run_id", "system__name", "metric", "value"
        )
    }
    metrics_of_run = {run_id: sorted({m for r, _, m in scores if r == run_id}) for run_id in run_ids}

    campaigns = Campaign.objects.select_related("language", "base_system", "test_system").order_by(
        "language__code", "name", "pk"
    )
    if campaign_ids:
        chosen = {c.pk: c for c in campaigns.filter(pk__in=campaign_ids)}
        for campaign_id in campaign_ids:
            if campaign_id not in chosen:
                raise ValidationFailed(f"There is no campaign #{campaign_id}.")
            if chosen[campaign_id].kind != CampaignKind.SIDE_BY_SIDE:
                raise ValidationFailed(f"Campaign #{campaign_id} is not a side-by-side campaign.")
        selected = [chosen[c] for c in dict.fromkeys(campaign_ids)]
    else:
        selected = _finished_sxs_campaigns(list(campaigns.filter(kind=CampaignKind.SIDE_BY_SIDE)))

    out = ComparisonSet()
    for campaign in selected:
        m1, m2, code = campaign.base_system.name, campaign.test_system.name, campaign.language.code
        deltas: dict[str, float] = {}
        used: dict[str, int] = {}
        for run_id in run_ids:
            if runs[run_id].language.code != code:
                continue
            for metric in metrics_of_run[run_id]:
                if (run_id, m1, metric) not in scores or (run_id, m2, metric) not in scores:
                    continue
                if metric in used:
                    raise ValidationFailed(
                        f"Metric runs #{used[metric]} and #{run_id} both score {m1} and {m2} in {code} "
                        f"with {metric}: pass only one of them."
                    )
                deltas[metric] = scores[(run_id, m2, metric)] - scores[(run_id, m1, metric)]
                used[metric] = run_id
        if not deltas:
            out.skipped.append(
                SkippedCampaign(campaign, f"none of the runs scores both {m1} and {m2} in {code}")
            )
            continue
        summary = sxs_results(campaign).summary
        if summary.delta_sxs is None:
            out.skipped.append(SkippedCampaign(campaign, "no submitted judgment of a real pair yet"))
            continue
        out.comparisons.append(
            ComparisonSource(
                comparison=Comparison(
                    m1=m1, m2=m2, language=code, delta_sxs=summary.delta_sxs, deltas=deltas
                ),
                campaign=campaign,
                ci_low=summary.ci_low,
                ci_high=summary.ci_high,
                n_images=summary.n_images,
                runs=used,
            )
        )
    return out
