"""What every write inside a batch checks and does, whatever the campaign kind: the batch is not yet
submitted and of the right kind, the page saw what is stored, timings are sane, activity keeps the lease,
and the last step of every submit (late work kept and counted again)."""

from __future__ import annotations

import re
from datetime import timedelta

from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from annotation.assignment.engine import item_counters_add
from annotation.interface import interface_list
from annotation.models import (
    UNCAPPED_CONTROL_KINDS,
    Assignment,
    AssignmentState,
    Batch,
    BatchStage,
    Item,
)
from core.errors import AlreadySubmitted, Conflict, EditConflict, ValidationFailed

SUBMIT_KEY_PATTERN = re.compile(r"^[A-Za-z0-9_-]{8,64}$")


SUBMITTED_MESSAGE = gettext_lazy("This batch has already been submitted.")


def check_not_submitted(batch: Batch) -> None:
    if batch.stage == BatchStage.SUBMITTED:
        raise AlreadySubmitted(str(SUBMITTED_MESSAGE))


def check_kind(batch: Batch, *kinds: str) -> None:
    if batch.campaign.kind not in kinds:
        raise Conflict(gettext("This is not possible in this kind of batch."))


def is_late(batch: Batch, now) -> bool:
    return batch.stage == BatchStage.EXPIRED or batch.lease_expires_at < now


def batch_finish(
    batch: Batch, assignments: list[Assignment], *, submit_key: str, late: bool, now, fields: tuple = ()
) -> None:
    """Mark a locked batch and its assignments submitted (the last step of every kind's submit).

    Assignments whose lease ran out come back as late work: kept, and their items count them
    again (item rows locked in id order), so an item may end above K.
    """
    expired = [a for a in assignments if a.state == AssignmentState.EXPIRED]
    if expired:
        uncapped = set(
            Item.objects.filter(
                pk__in=[a.item_id for a in expired], control_kind__in=UNCAPPED_CONTROL_KINDS
            ).values_list("pk", flat=True)
        )
        # Every counted item of the batch locked at once, in id order: should the batch then be held
        # (batch_hold_if_empty), its second pass over them waits for no row (no lock-order deadlock).
        list(
            Item.objects.filter(pk__in=[a.item_id for a in assignments])
            .exclude(control_kind__in=UNCAPPED_CONTROL_KINDS)
            .order_by("pk")
            .select_for_update()
            .values_list("pk", flat=True)
        )
        item_counters_add({a.item_id: 1 for a in expired if a.item_id not in uncapped}, sign=+1)
        Assignment.objects.filter(pk__in=[a.pk for a in expired]).update(state=AssignmentState.LATE)
    Assignment.objects.filter(batch=batch, state=AssignmentState.LIVE).update(state=AssignmentState.SUBMITTED)
    batch.stage = BatchStage.SUBMITTED
    batch.submitted_at = now
    batch.is_late = late
    batch.submit_key = submit_key
    batch.save(update_fields=["stage", "submitted_at", "is_late", "submit_key", *fields, "updated_at"])


def lease_touch(batch: Batch):
    """Activity keeps a live lease alive: an annotator who is typing is not abandoning.

    Renewed only once less than half of the lease is left, so most saves write nothing here.
    Returns the batch's lease after the touch (``batch.lease_expires_at`` follows it): with the
    batch row locked, what the page's countdown shows, without reading the row again.
    """
    if batch.stage in (BatchStage.RATING, BatchStage.WRITING):
        now = timezone.now()
        length = timedelta(minutes=batch.campaign.lease_minutes)
        if now < batch.lease_expires_at < now + length / 2:
            Batch.objects.filter(pk=batch.pk, stage=batch.stage).update(lease_expires_at=now + length)
            batch.lease_expires_at = now + length
    return batch.lease_expires_at


def seconds_clean(seconds: float | None) -> float | None:
    if seconds is None:
        return None
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        raise ValidationFailed(gettext("Timing must be a number of seconds.")) from None
    if not (0 <= value <= 7 * 24 * 3600):
        raise ValidationFailed(gettext("Timing is out of range."))
    return round(value, 3)


def check_shown(assignments: list, shown: dict | None, stored_of) -> None:
    """Raise EditConflict when the page's choices (``shown``: assignment id -> code) differ from
    the stored ones: another tab or window changed them since this page did. ``assignments``: the
    batch's assignments, or anything with their ``pk`` and ``position``; ``stored_of`` gives one's
    stored code."""
    if shown is None:
        return
    conflicts = {}
    for a in assignments:
        stored = stored_of(a)
        page = shown.get(str(a.pk), stored)
        if page != stored:
            conflicts[str(a.pk)] = {
                "position": a.position + 1,
                "message": gettext(
                    "Image %(position)s was judged differently in another tab or window. "
                    "This page now shows that judgment: keep it or change it, then go on."
                )
                % {"position": a.position + 1},
                "mine": page,
                "theirs": stored,
            }
    if conflicts:
        positions = interface_list(str(c["position"]) for c in conflicts.values())
        raise EditConflict(
            gettext(
                "Judged differently in another tab or window: image %(positions)s. "
                "Check the judgment shown, then go on again."
            )
            % {"positions": positions},
            details=conflicts,
        )
