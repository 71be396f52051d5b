"""Figures for the progress panel of the admin's campaign page.

Reads only. The fill histogram and batch stages come from ``selectors.campaign_progress``;
the per-annotator table is computed here. Everything is returned as plain data; the
template escapes it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from statistics import median

from django.db.models import Count

from annotation.models import (
    CAPPED_KINDS,
    Assignment,
    AssignmentState,
    Batch,
    BatchStage,
    Campaign,
    CampaignKind,
    WrittenCaption,
)
from annotation.selectors import campaign_progress
from core.admin import seconds_display


@dataclass
class AnnotatorRow:
    username: str
    pseudonym: str
    batches_submitted: int = 0
    batches_late: int = 0
    captions: int = 0
    wall_seconds: list[float] = field(default_factory=list)
    active_seconds: list[float] = field(default_factory=list)

    @property
    def median_wall(self) -> str:
        return seconds_display(median(self.wall_seconds)) if self.wall_seconds else "–"

    @property
    def median_active(self) -> str:
        return seconds_display(median(self.active_seconds)) if self.active_seconds else "–"


@dataclass
class HistogramRow:
    captions: int
    images: int
    label: str
    complete: bool


def campaign_panel(campaign: Campaign) -> dict:
    """The campaign's fill histogram, batch counts and per-annotator figures. A fixed number of queries."""
    progress = campaign_progress(campaign)
    k = campaign.replication
    histogram = []
    for captions, images in progress["histogram"]:
        label = str(captions)
        if captions == k:
            label += " (= K)"
        elif captions > k:
            label += " (> K, late work kept)"
        histogram.append(HistogramRow(captions=captions, images=images, label=label, complete=captions >= k))
    stages = {s.value: progress["stages"].get(s.label, 0) for s in BatchStage}

    rows: dict[int, AnnotatorRow] = {}
    submitted = (
        Batch.objects.filter(campaign=campaign, stage=BatchStage.SUBMITTED)
        .order_by()
        .values_list(
            "annotator_id",
            "annotator__user__username",
            "annotator__pseudonym",
            "created_at",
            "submitted_at",
            "rating_seconds",
            "writing_seconds",
            "is_late",
        )
    )
    for annotator_id, username, pseudonym, created, done, rating_s, writing_s, late in submitted:
        row = rows.setdefault(annotator_id, AnnotatorRow(username=username, pseudonym=pseudonym))
        row.batches_submitted += 1
        row.batches_late += int(late)
        if done and created:
            row.wall_seconds.append((done - created).total_seconds())
        if rating_s is not None or writing_s is not None:
            row.active_seconds.append((rating_s or 0) + (writing_s or 0))
    captions = defaultdict(int)
    if campaign.kind == CampaignKind.CAPTION:
        results = WrittenCaption.objects.filter(campaign=campaign)
    else:
        # Side by side and verification: the judged items of submitted batches.
        results = Assignment.objects.filter(
            batch__campaign=campaign,
            state__in=[AssignmentState.SUBMITTED, AssignmentState.LATE],
            item__control_kind__in=CAPPED_KINDS,
        )
    for annotator_id, n in (
        results.order_by().values("annotator_id").annotate(n=Count("pk")).values_list("annotator_id", "n")
    ):
        captions[annotator_id] = n
    for annotator_id, row in rows.items():
        row.captions = captions.get(annotator_id, 0)

    items = sum(r.images for r in histogram)
    complete = sum(r.images for r in histogram if r.complete)
    nouns = {CampaignKind.SIDE_BY_SIDE: "judgments", CampaignKind.RATING: "ratings"}
    return {
        "noun": nouns.get(campaign.kind, "captions"),
        "items": items,
        "replication": k,
        "complete": complete,
        "percent_complete": round(100 * complete / items) if items else 0,
        "histogram": histogram,
        "batches_live": stages[BatchStage.RATING] + stages[BatchStage.WRITING],
        "batches_rating": stages[BatchStage.RATING],
        "batches_writing": stages[BatchStage.WRITING],
        "batches_expired": stages[BatchStage.EXPIRED],
        "batches_submitted": stages[BatchStage.SUBMITTED],
        "batches_late": progress["late"],
        "live_assignments": progress["live_assignments"],
        "annotators": sorted(rows.values(), key=lambda r: r.username),
    }
