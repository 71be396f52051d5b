"""Work that counts: a crowd batch that left too many images unanswered is held (its items go back to the
pool) until a manager accepts or rejects it."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.assignment.engine import item_counters_add
from annotation.models import (
    NOT_COUNTED_STATES,
    UNCAPPED_CONTROL_KINDS,
    AssignmentState,
    Batch,
    BatchHold,
    BatchStage,
    CampaignKind,
    Enrolment,
    HoldDecision,
    RatingValue,
)
from annotation.workforce.counting import BatchWork, batch_counts
from core.errors import Conflict, NotFound


def _batch_work(batch: Batch) -> BatchWork:
    """The figures :func:`annotation.workforce.counting.batch_counts` judges, read from the stored batch."""
    real = batch.assignments.filter(item__is_control=False)
    return BatchWork(
        images=real.count(),
        not_enough_info=real.filter(rating__value=RatingValue.NOT_ENOUGH_INFO).count(),
        without_caption=(
            real.filter(written_caption__isnull=True).count()
            if batch.campaign.kind == CampaignKind.CAPTION
            else 0
        ),
    )


def _capped_items(batch: Batch) -> dict[int, int]:
    """The batch's items that keep a live-or-done counter (K), each once."""
    ids = batch.assignments.exclude(item__control_kind__in=UNCAPPED_CONTROL_KINDS).values_list(
        "item_id", flat=True
    )
    return dict.fromkeys(ids, 1)


def batch_hold_if_empty(*, batch: Batch) -> BatchHold | None:
    """Hold a just-submitted batch that does not contain enough work to count; return the hold, or None.

    Called by the submit services inside their transaction, after the batch and its assignments
    are marked submitted. Only batches of participants who came through an entry link are judged
    (``annotation.workforce.counting``, threshold ``settings.CROWD_MAX_UNANSWERED_SHARE``). A held
    batch keeps every answer; its assignments become HELD, so that they enter no result, and its
    items' counters go down by one, so that the pool hands those items to someone else (the
    items' rows locked in id order). Idempotent: a batch already judged is left as it is."""
    if batch.stage != BatchStage.SUBMITTED or BatchHold.objects.filter(batch=batch).exists():
        return None
    if not Enrolment.objects.filter(campaign_id=batch.campaign_id, annotator_id=batch.annotator_id).exists():
        return None
    share = settings.CROWD_MAX_UNANSWERED_SHARE
    work = _batch_work(batch)
    if batch_counts(work, share):
        return None
    hold = BatchHold.objects.create(
        batch=batch,
        images=work.images,
        not_enough_info=work.not_enough_info,
        without_caption=work.without_caption,
        max_unanswered_share=share,
    )
    batch.assignments.filter(state__in=[AssignmentState.SUBMITTED, AssignmentState.LATE]).update(
        state=AssignmentState.HELD
    )
    item_counters_add(_capped_items(batch), sign=-1)
    return hold


def batch_hold_decide(*, hold_id: int, accept: bool, reviewer) -> BatchHold:
    """A manager's review of a held batch. Accepted, the batch counts from now on: its assignments
    are SUBMITTED again (LATE for a late batch), its items count it again (an item may then end above
    K, as with late work), and it counts towards the participant's quota and completion code.
    Rejected, it stays stored and out of every result (REJECTED). Deciding the same again changes
    nothing; a rejected batch may still be accepted, but an accepted one is never rejected (its
    participant may already hold the completion code). Locks the hold row, then the item rows in id
    order. Raises NotFound for an unknown hold, Conflict for rejecting an accepted batch."""
    with transaction.atomic():
        try:
            hold = BatchHold.objects.select_for_update(of=("self",)).select_related("batch").get(pk=hold_id)
        except (BatchHold.DoesNotExist, ValueError, TypeError):
            raise NotFound("No such held batch.") from None
        decision = HoldDecision.ACCEPTED if accept else HoldDecision.REJECTED
        if hold.decision == decision:
            return hold
        if hold.decision == HoldDecision.ACCEPTED:
            raise Conflict(
                f"Batch {hold.batch_id} was accepted: it counts, and its participant may already have the "
                "completion code."
            )
        batch = hold.batch
        if accept:
            done = AssignmentState.LATE if batch.is_late else AssignmentState.SUBMITTED
            batch.assignments.filter(state__in=NOT_COUNTED_STATES).update(state=done)
            item_counters_add(_capped_items(batch), sign=+1)
        else:
            batch.assignments.filter(state=AssignmentState.HELD).update(state=AssignmentState.REJECTED)
        hold.decision, hold.reviewer, hold.reviewed_at = decision, reviewer, timezone.now()
        hold.save(update_fields=["decision", "reviewer", "reviewed_at", "updated_at"])
        return hold
