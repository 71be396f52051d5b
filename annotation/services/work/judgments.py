"""Side-by-side and verification batches: one screen of judgments, then the submit (RATING -> SUBMITTED)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from annotation.interface import interface_list
from annotation.models import (
    Annotator,
    Batch,
    BatchStage,
    CampaignKind,
    SxsChoice,
    SxsJudgment,
)
from annotation.selectors import assignment_of, batch_of
from annotation.services.work import checks
from annotation.workforce.services.holds import batch_hold_if_empty
from core.errors import AlreadySubmitted, ValidationFailed
from core.scales import choice_to_score


def sxs_judgment_save(
    *,
    annotator: Annotator,
    batch_id: int,
    assignment_id: int,
    choice: str,
    seconds: float | None = None,
) -> SxsJudgment:
    """Store (or change) the side-by-side judgment of one pair, until the batch is submitted. Idempotent.

    ``choice`` is the point as seen, from the LEFT caption's side ("much_better" … "much_worse");
    the score from m2's side is computed here from the assignment's stored ``m2_side``, never
    taken from the client. Works after the lease ran out (late work is kept). Locks the batch
    row. Raises NotFound for a batch or pair not of this annotator, ValidationFailed for an
    unknown choice, Conflict after submit or for a batch that is not side by side. The returned
    judgment carries ``lease_expires_at``, the batch's lease after the save.
    """
    if choice not in SxsChoice.values:
        raise ValidationFailed(gettext("Unknown choice “%(choice)s”.") % {"choice": choice})
    seconds = checks.seconds_clean(seconds)
    with transaction.atomic():
        batch = batch_of(annotator, batch_id, lock=True)
        checks.check_kind(batch, CampaignKind.SIDE_BY_SIDE)
        checks.check_not_submitted(batch)
        assignment = assignment_of(batch, assignment_id)
        judgment, _ = SxsJudgment.objects.update_or_create(
            assignment=assignment,
            defaults={
                "choice": choice,
                "score": choice_to_score(choice, assignment.m2_side),
                "seconds": seconds,
            },
        )
        judgment.lease_expires_at = checks.lease_touch(batch)
        return judgment


def judgment_batch_submit(
    *,
    annotator: Annotator,
    batch_id: int,
    submit_key: str,
    seconds: float | None = None,
    shown: dict | None = None,
) -> Batch:
    """Submit a side-by-side or verification batch: every item must be judged (rated). Idempotent
    per submit key.

    The judgments (ratings) are already stored as they were given; submitting freezes them
    and marks the batch and its assignments submitted, in one transaction. ``shown``: the
    choice (rating) the submitting page shows per assignment id; when one differs from the
    stored one (changed in another tab or window), EditConflict (409) names each such item
    with both choices and nothing is stored. A repeated submit with the same key returns the
    batch and changes nothing; with another key (a stale tab) it raises AlreadySubmitted.
    A batch whose lease ran out is still accepted, kept and flagged late (its items may end
    above K). ``seconds``: time on the screen, as the page measured it. Locks the batch row,
    then (late work or a held batch: ``batch_hold_if_empty``) the item rows in id order. Raises ValidationFailed naming the
    positions still unjudged (nothing is stored), Conflict for a caption batch.
    """
    if not isinstance(submit_key, str) or not checks.SUBMIT_KEY_PATTERN.match(submit_key):
        raise ValidationFailed(gettext("Missing or malformed submit key."))
    seconds = checks.seconds_clean(seconds)
    with transaction.atomic():
        batch = batch_of(annotator, batch_id, lock=True)
        checks.check_kind(batch, CampaignKind.SIDE_BY_SIDE, CampaignKind.RATING)
        if batch.stage == BatchStage.SUBMITTED:
            if batch.submit_key == submit_key:
                return batch
            raise AlreadySubmitted(str(checks.SUBMITTED_MESSAGE))
        sxs = batch.campaign.kind == CampaignKind.SIDE_BY_SIDE
        result = "sxs_judgment" if sxs else "rating"
        assignments = list(batch.assignments.select_related(result).order_by("position"))
        missing = [a for a in assignments if getattr(a, result, None) is None]
        if missing:
            positions = interface_list(str(a.position + 1) for a in missing)
            if sxs:
                message = gettext("Judge every pair before you submit (still open: %(positions)s).")
                each = gettext("Judge this pair.")
            else:
                message = gettext("Rate every caption before you submit (still open: %(positions)s).")
                each = gettext("Rate this caption.")
            raise ValidationFailed(
                message % {"positions": positions},
                details={str(a.pk): {"position": a.position + 1, "message": each} for a in missing},
            )
        checks.check_shown(
            assignments, shown, (lambda a: a.sxs_judgment.choice) if sxs else (lambda a: a.rating.value)
        )
        now = timezone.now()
        batch.rating_seconds = seconds
        checks.batch_finish(
            batch,
            assignments,
            submit_key=submit_key,
            late=checks.is_late(batch, now),
            now=now,
            fields=("rating_seconds",),
        )
        batch_hold_if_empty(batch=batch)
        return batch
