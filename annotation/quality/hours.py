"""Time spent: per item and per batch (for the exports), and per annotator (for paying people).

Two measures, both reported, because neither is right for every contract:

* **on screen**: the seconds each screen was open as the page measured them (screen 1 and screen 2
  of a caption batch, the one screen of a side-by-side or verification batch), summed per batch;
  per item, the seconds that item was the current one. A page that could not measure leaves None.
* **wall**: from the batch being handed out to its submit. It includes breaks, so it is an upper
  bound; it is what a crowd platform counts from "start" to "completion".

Only submitted batches count (late ones included: their work is kept).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from annotation.models import DONE_STATES, Assignment, Batch, BatchStage


def _screen_seconds(rating_seconds: float | None, writing_seconds: float | None) -> float | None:
    if rating_seconds is None and writing_seconds is None:
        return None
    return (rating_seconds or 0.0) + (writing_seconds or 0.0)


def work_time_rows(campaign_id: int) -> Iterator[dict]:
    """One dict per submitted assignment of the campaign (controls included, marked), by batch then
    position: the item's seconds on each screen, its batch's times, and for a written caption the
    typing flags and the manager's review (annotation.quality.typing)."""
    rows = (
        Assignment.objects.filter(batch__campaign_id=campaign_id, state__in=DONE_STATES)
        .order_by("batch_id", "position")
        .values_list(
            "batch_id",
            "position",
            "item__image__key",
            "item__is_control",
            "annotator__pseudonym",
            "annotator__user__username",
            "rating__seconds",
            "written_caption__seconds",
            "sxs_judgment__seconds",
            "batch__created_at",
            "batch__submitted_at",
            "batch__rating_seconds",
            "batch__writing_seconds",
            "batch__is_late",
            "typing__flags",
            "typing__review",
        )
        .iterator(chunk_size=2000)
    )
    for (
        batch_id,
        position,
        key,
        is_control,
        pseudonym,
        username,
        rating_seconds,
        writing_seconds,
        judgment_seconds,
        started,
        submitted,
        screen1,
        screen2,
        late,
        flags,
        review,
    ) in rows:
        yield {
            "batch_id": batch_id,
            "position": position + 1,
            "image_key": key,
            "is_control": is_control,
            "annotator": pseudonym,
            "annotator_username": username,
            "item_rating_seconds": rating_seconds if judgment_seconds is None else judgment_seconds,
            "item_writing_seconds": writing_seconds,
            "batch_started_at": started,
            "batch_submitted_at": submitted,
            "batch_screen_seconds": _screen_seconds(screen1, screen2),
            "batch_wall_seconds": (submitted - started).total_seconds() if submitted else None,
            "is_late": late,
            "typing_flags": flags or None,
            "typing_review": review or None,
        }


@dataclass(frozen=True)
class AnnotatorHours:
    annotator_id: int
    pseudonym: str
    username: str
    batches: int
    items: int
    control_items: int
    screen_seconds: float
    unmeasured_batches: int
    wall_seconds: float
    first_submit: datetime | None
    last_submit: datetime | None

    @property
    def screen_hours(self) -> float:
        return self.screen_seconds / 3600

    @property
    def wall_hours(self) -> float:
        return self.wall_seconds / 3600


def annotator_hours(
    *, campaign_id: int | None = None, since: datetime | None = None, until: datetime | None = None
) -> list[AnnotatorHours]:
    """Per annotator, over the batches submitted in [since, until) (of one campaign, or all):
    batches, items and controls, on-screen and wall seconds, batches the page could not time.
    Sorted by user name. Two queries, whatever the number of batches."""
    batches = Batch.objects.filter(stage=BatchStage.SUBMITTED)
    if campaign_id is not None:
        batches = batches.filter(campaign_id=campaign_id)
    if since is not None:
        batches = batches.filter(submitted_at__gte=since)
    if until is not None:
        batches = batches.filter(submitted_at__lt=until)
    per_batch = list(
        batches.values_list(
            "pk",
            "annotator_id",
            "annotator__pseudonym",
            "annotator__user__username",
            "created_at",
            "submitted_at",
            "rating_seconds",
            "writing_seconds",
        )
    )
    counts: dict[int, tuple[int, int]] = {}
    for batch_id, is_control in (
        Assignment.objects.filter(batch__in=batches, state__in=DONE_STATES)
        .order_by()
        .values_list("batch_id", "item__is_control")
    ):
        real, controls = counts.get(batch_id, (0, 0))
        counts[batch_id] = (real + (not is_control), controls + bool(is_control))
    totals: dict[int, dict] = {}
    for pk, annotator_id, pseudonym, username, started, submitted, screen1, screen2 in per_batch:
        t = totals.setdefault(
            annotator_id,
            {
                "pseudonym": pseudonym,
                "username": username,
                "batches": 0,
                "items": 0,
                "control_items": 0,
                "screen_seconds": 0.0,
                "unmeasured_batches": 0,
                "wall_seconds": 0.0,
                "first_submit": None,
                "last_submit": None,
            },
        )
        real, controls = counts.get(pk, (0, 0))
        t["batches"] += 1
        t["items"] += real
        t["control_items"] += controls
        screen = _screen_seconds(screen1, screen2)
        if screen is None:
            t["unmeasured_batches"] += 1
        else:
            t["screen_seconds"] += screen
        t["wall_seconds"] += (submitted - started).total_seconds()
        t["first_submit"] = min(filter(None, (t["first_submit"], submitted)))
        t["last_submit"] = max(filter(None, (t["last_submit"], submitted)))
    return sorted(
        (AnnotatorHours(annotator_id=annotator_id, **t) for annotator_id, t in totals.items()),
        key=lambda row: row.username,
    )
