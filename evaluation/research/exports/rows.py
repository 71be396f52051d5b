"""What the exports read: ordered, streamed rows of one campaign or one system.

Every reader iterates its queryset with ``.iterator(chunk_size=CHUNK)`` over ``values_list`` tuples,
so no reader holds more than one chunk of rows (a server-side cursor on PostgreSQL). Orders are
total (image key, then primary key), so the same data always gives the same file.

Ratings and judgments: only SUBMITTED work (assignments submitted on time or late), as the
numbers of :mod:`evaluation.human.selectors` count it; work in an open batch can still change.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from django.db.models import Count

from annotation.models import (
    Campaign,
    CampaignKind,
    Image,
    Rating,
    SystemCaption,
)
from annotation.quality.hours import annotator_hours, work_time_rows
from core.scales import SXS
from evaluation.human.quality import RATING_SCALE
from evaluation.human.selectors import DONE_STATES, rated_controls, reference_captions, submitted_judgments
from evaluation.human.sxs import normalise_choice

from .writers import coco_image_id

CHUNK = 2000

RATING_LABELS = {
    "excellent": "EXCELLENT",
    "good": "GOOD",
    "medium": "MEDIUM",
    "bad": "BAD",
    "nei": "NOT-ENOUGH-INFO",
}


def utc_iso(moment: datetime | None) -> str | None:
    """ISO 8601 in UTC with a ``Z``, to the millisecond (``2026-05-01T09:30:00.250Z``); None stays None."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --- Captions --------------------------------------------------------------------------------------


def written_captions(campaign: Campaign) -> Iterator[tuple[str, str, str]]:
    """``(image key, image country, caption)`` of the campaign's submitted captions, by key then
    in the order they were stored."""
    return (
        reference_captions(campaign_ids=[campaign.pk])
        .order_by("image__key", "pk")
        .values_list("image__key", "image__country", "text")
        .iterator(chunk_size=CHUNK)
    )


def caption_images(campaign: Campaign) -> Iterator[dict[str, Any]]:
    """COCO image objects of the images with a caption in the campaign, by key."""
    rows = (
        Image.objects.filter(pk__in=reference_captions(campaign_ids=[campaign.pk]).values("image_id"))
        .order_by("key")
        .values_list("key", "width", "height")
        .iterator(chunk_size=CHUNK)
    )
    for key, width, height in rows:
        image: dict[str, Any] = {"id": coco_image_id(key)}
        if width and height:
            image.update(width=width, height=height)
        yield image


def caption_annotations(campaign: Campaign) -> Iterator[tuple[int, int | str, str]]:
    """``(caption id, COCO image id, caption)``, in the order of :func:`written_captions`."""
    rows = (
        reference_captions(campaign_ids=[campaign.pk])
        .order_by("image__key", "pk")
        .values_list("pk", "image__key", "text")
        .iterator(chunk_size=CHUNK)
    )
    for pk, key, text in rows:
        yield pk, coco_image_id(key), text


def system_results(*, system_id: int, language_id: int) -> Iterator[tuple[int | str, str]]:
    """``(COCO image id, caption)`` of one system in one language, by image key."""
    rows = (
        SystemCaption.objects.filter(system_id=system_id, language_id=language_id)
        .order_by("image__key", "pk")
        .values_list("image__key", "text")
        .iterator(chunk_size=CHUNK)
    )
    for key, text in rows:
        yield coco_image_id(key), text


def system_languages() -> list[dict[str, Any]]:
    """Every (system, language) with captions: id, name, language code and caption count."""
    return list(
        SystemCaption.objects.order_by("system__name", "language__code")
        .values("system_id", "system__name", "language__code")
        .annotate(n=Count("pk"))
    )


# --- Ratings ---------------------------------------------------------------------------------------

RATING_COLUMNS = (
    "rating_id",
    "batch_id",
    "image_key",
    "campaign_id",
    "campaign",
    "campaign_kind",
    "language",
    "annotator",
    "caption_kind",
    "caption_id",
    "caption_system",
    "caption_language",
    "caption_author",
    "caption",
    "rating",
    "rating_label",
    "rating_score",
    "seconds",
    "screen_seconds",
    "submitted_at",
    "is_late",
)
USERNAME_COLUMNS = {"annotator": "annotator_username", "caption_author": "caption_author_username"}


def with_username_columns(columns: tuple[str, ...], with_usernames: bool) -> tuple[str, ...]:
    """The columns, with ``<x>_username`` after each pseudonym column when usernames are asked for."""
    if not with_usernames:
        return columns
    out: list[str] = []
    for column in columns:
        out.append(column)
        if column in USERNAME_COLUMNS:
            out.append(USERNAME_COLUMNS[column])
    return tuple(out)


def ratings(campaign: Campaign) -> Iterator[dict[str, Any]]:
    """One dict per submitted rating of the campaign: screen-1 ratings of the prompt system's
    captions (caption campaign) or ratings of the human captions (verification campaign), with
    pseudonyms and user names (the caller picks the columns), by image key."""
    verification = campaign.kind == CampaignKind.RATING
    if verification:
        caption_fields = (
            "assignment__item__written_caption_id",
            "assignment__item__written_caption__text",
            "assignment__item__written_caption__language__code",
            "assignment__item__written_caption__annotator__pseudonym",
            "assignment__item__written_caption__annotator__user__username",
        )
    else:
        caption_fields = (
            "assignment__item__prompt_caption_id",
            "assignment__item__prompt_caption__text",
            "assignment__item__prompt_caption__language__code",
            "assignment__item__prompt_caption__system__name",
            None,
        )
    fields = [
        "pk",
        "assignment__batch_id",
        "assignment__item__image__key",
        "assignment__annotator__pseudonym",
        "assignment__annotator__user__username",
        "value",
        "seconds",
        "assignment__batch__rating_seconds",
        "assignment__batch__submitted_at",
        "assignment__batch__is_late",
        *(field for field in caption_fields if field),
    ]
    rows = (
        Rating.objects.counted()
        .filter(assignment__item__campaign=campaign, assignment__state__in=DONE_STATES)
        .order_by("assignment__item__image__key", "pk")
        .values_list(*fields)
        .iterator(chunk_size=CHUNK)
    )
    common = {
        "campaign_id": campaign.pk,
        "campaign": campaign.name,
        "campaign_kind": campaign.kind,
        "language": campaign.language.code,
        "caption_kind": "human" if verification else "system",
    }
    for row in rows:
        (pk, batch_id, key, pseudonym, username, value, seconds, screen, submitted, late, *caption) = row
        record = {
            **common,
            "rating_id": pk,
            "batch_id": batch_id,
            "image_key": key,
            "annotator": pseudonym,
            "annotator_username": username,
            "rating": value,
            "rating_label": RATING_LABELS.get(value, value),
            "rating_score": RATING_SCALE.get(value),
            "seconds": seconds,
            "screen_seconds": screen,
            "submitted_at": utc_iso(submitted),
            "is_late": late,
        }
        if verification:
            caption_id, text, language, author, author_username = caption
            record.update(caption_system=None, caption_author=author, caption_author_username=author_username)
        else:
            caption_id, text, language, system = caption
            record.update(caption_system=system, caption_author=None, caption_author_username=None)
        record.update(caption_id=caption_id, caption=text, caption_language=language)
        yield record


# --- Side-by-side judgments ----------------------------------------------------------------------------

JUDGMENT_COLUMNS = (
    "judgment_id",
    "batch_id",
    "image_key",
    "campaign_id",
    "campaign",
    "language",
    "annotator",
    "choice",
    "choice_as_seen",
    "choice_label",
    "m2_side",
    "score",
    "left_system",
    "right_system",
    "left_caption",
    "right_caption",
    "m1",
    "m2",
    "is_control",
    "control_kind",
    "is_identical_pair",
    "seconds",
    "screen_seconds",
    "submitted_at",
    "is_late",
)


def judgments(campaign: Campaign) -> Iterator[dict[str, Any]]:
    """One dict per submitted side-by-side judgment of the campaign, by image key.

    ``choice`` is the point as the annotator saw it, read from the LEFT caption's side, and
    ``score`` the stored score from m2's side (+3: m2 much better). ``left_system`` /
    ``right_system`` are the systems whose captions were on each side, resolved from ``m2_side``
    (for a control item, the systems of the captions actually shown: an identical control shows
    m1's caption on both sides).
    """
    rows = (
        submitted_judgments(campaign)
        .values_list(
            "pk",
            "assignment__batch_id",
            "assignment__item__image__key",
            "assignment__annotator__pseudonym",
            "assignment__annotator__user__username",
            "choice",
            "assignment__m2_side",
            "score",
            "assignment__item__caption_m1__system__name",
            "assignment__item__caption_m1__text",
            "assignment__item__caption_m2__system__name",
            "assignment__item__caption_m2__text",
            "assignment__item__is_control",
            "assignment__item__control_kind",
            "assignment__item__is_identical_pair",
            "seconds",
            "assignment__batch__rating_seconds",
            "assignment__batch__submitted_at",
            "assignment__batch__is_late",
        )
        .iterator(chunk_size=CHUNK)
    )
    common = {
        "campaign_id": campaign.pk,
        "campaign": campaign.name,
        "language": campaign.language.code,
        "m1": campaign.base_system.name if campaign.base_system else None,
        "m2": campaign.test_system.name if campaign.test_system else None,
    }
    for row in rows:
        (
            pk,
            batch_id,
            key,
            pseudonym,
            username,
            choice,
            side,
            score,
            m1_system,
            m1_text,
            m2_system,
            m2_text,
            is_control,
            control_kind,
            is_identical,
            seconds,
            screen,
            submitted,
            late,
        ) = row
        m1_slot, m2_slot = (m1_system, m1_text), (m2_system, m2_text)
        left, right = (m2_slot, m1_slot) if side == "left" else (m1_slot, m2_slot)
        yield {
            **common,
            "judgment_id": pk,
            "batch_id": batch_id,
            "image_key": key,
            "annotator": pseudonym,
            "annotator_username": username,
            "choice": choice,
            "choice_as_seen": SXS.point(choice).label,
            "choice_label": normalise_choice(choice),
            "m2_side": side,
            "score": score,
            "left_system": left[0],
            "right_system": right[0],
            "left_caption": left[1],
            "right_caption": right[1],
            "is_control": is_control,
            "control_kind": control_kind or None,
            "is_identical_pair": is_identical,
            "seconds": seconds,
            "screen_seconds": screen,
            "submitted_at": utc_iso(submitted),
            "is_late": late,
        }


# --- Time spent: per item and batch, and per annotator for paying people --------------------------------

WORK_TIME_COLUMNS = (
    "campaign_id",
    "campaign",
    "batch_id",
    "position",
    "image_key",
    "is_control",
    "annotator",
    "item_rating_seconds",
    "item_writing_seconds",
    "batch_started_at",
    "batch_submitted_at",
    "batch_screen_seconds",
    "batch_wall_seconds",
    "is_late",
    "typing_flags",
    "typing_review",
)


def work_time(campaign: Campaign) -> Iterator[dict[str, Any]]:
    """One dict per submitted assignment (control items included and marked), by batch and position:
    see :mod:`annotation.quality.hours` for the two measures of time."""
    common = {"campaign_id": campaign.pk, "campaign": campaign.name}
    for row in work_time_rows(campaign.pk):
        yield {
            **common,
            **row,
            "batch_started_at": utc_iso(row["batch_started_at"]),
            "batch_submitted_at": utc_iso(row["batch_submitted_at"]),
        }


HOURS_COLUMNS = (
    "campaign_id",
    "campaign",
    "annotator",
    "batches",
    "items",
    "control_items",
    "screen_hours",
    "unmeasured_batches",
    "wall_hours",
    "first_submit",
    "last_submit",
)


def hours(campaign: Campaign) -> Iterator[dict[str, Any]]:
    """One dict per annotator with submitted batches in the campaign, by user name."""
    for row in annotator_hours(campaign_id=campaign.pk):
        yield {
            "campaign_id": campaign.pk,
            "campaign": campaign.name,
            "annotator": row.pseudonym,
            "annotator_username": row.username,
            "batches": row.batches,
            "items": row.items,
            "control_items": row.control_items,
            "screen_hours": round(row.screen_hours, 4),
            "unmeasured_batches": row.unmeasured_batches,
            "wall_hours": round(row.wall_hours, 4),
            "first_submit": utc_iso(row.first_submit),
            "last_submit": utc_iso(row.last_submit),
        }


CONTROL_COLUMNS = (
    "campaign_id",
    "campaign",
    "annotator",
    "control_items",
    "passed",
    "pass_rate",
    "threshold",
    "too_few",
    "flagged",
)


def controls(campaign: Campaign) -> Iterator[dict[str, Any]]:
    """One dict per annotator with submitted control items: pass rate and flag, lowest rate first."""
    result = rated_controls(campaign)
    for row in result.controls:
        yield {
            "campaign_id": campaign.pk,
            "campaign": campaign.name,
            "annotator": row.pseudonym,
            "annotator_username": row.username,
            "control_items": row.n_controls,
            "passed": row.n_passed,
            "pass_rate": round(row.pass_rate, 4),
            "threshold": result.threshold,
            "too_few": row.too_few,
            "flagged": row.flagged,
        }
