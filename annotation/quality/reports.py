"""'Report a problem with this image': an annotator's report, the manager's review, and withdrawals.

An annotator may report only an image of their own batches (anyone else's batch or image is
NotFound, like every other annotator write). A report is stored once per image, annotator and
campaign: reporting again, with the same or another reason, changes nothing and answers the same.

Who counts: a report counts toward a withdrawal only when its reporter was trusted when reporting
(:func:`reporter_trusted`, the one rule). An entry link makes an account for any new crowd id, so
reports from accounts that have not proven themselves only wait for a manager's review; a few
throw-away accounts cannot take an image away.

Where: when ``settings.IMAGE_REPORT_THRESHOLD`` different trusted reporters have open reports on an
image in one campaign, it is withdrawn from that campaign only: no new batch of that campaign gets
it (``annotation.assignment.engine``), the admin index says so and the log warns. Other campaigns
keep it until a manager extends the withdrawal to every campaign (:func:`withdrawals_extend`,
undone by :func:`withdrawals_limit`). A manager may also withdraw an image straight from reports
under review (:func:`image_reports_withdraw`), or dismiss them (:func:`image_reports_dismiss`).
Work already done on a withdrawn image is kept. A manager puts it back with :func:`image_restore`
(the reports behind it are then resolved; new reports count from zero).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils.translation import gettext as _

from annotation.models import (
    Annotator,
    Batch,
    BatchStage,
    Campaign,
    HoldDecision,
    Image,
    TutorialResult,
    TutorialVerdict,
)
from annotation.quality.models import ImageReport, ImageWithdrawal, ReportReason
from annotation.selectors import assignment_of, batch_of
from annotation.workforce.selectors import tutorial_required
from core.errors import ValidationFailed

logger = logging.getLogger(__name__)
NOTE_MAX_CHARS = 500


def reporter_trusted(annotator: Annotator, campaign: Campaign) -> bool:
    """Whether ``annotator``'s report in ``campaign`` counts toward withdrawing the image: they
    passed the campaign's tutorial where it has one, and have submitted at least one batch (in any
    campaign) that counts: a batch held for review or rejected (too little work in it) is no evidence.
    Everyone else's reports wait for a manager's review. The one place of this rule.
    """
    if (
        tutorial_required(campaign)
        and not TutorialResult.objects.filter(
            campaign=campaign, annotator=annotator, verdict=TutorialVerdict.PASSED
        ).exists()
    ):
        return False
    return (
        Batch.objects.filter(annotator=annotator, stage=BatchStage.SUBMITTED)
        .exclude(hold__decision__in=[HoldDecision.HELD, HoldDecision.REJECTED])
        .exists()
    )


@dataclass(frozen=True)
class ReportResult:
    report: ImageReport
    created: bool
    withdrawn: bool  # the image is out of this campaign's pool (now or already)


def image_report(
    *, annotator: Annotator, batch_id: int, assignment_id: int, reason: str, note: str = ""
) -> ReportResult:
    """Report a problem with the image of one assignment of the annotator's batch ``batch_id``, in
    that batch's campaign. Idempotent per (image, annotator, campaign). Whether the reporter is
    trusted is decided now and stored with the report; a trusted report may withdraw the image from
    the campaign. Locks the batch row (through ``batch_of``), then the image row. Raises NotFound for a batch or image
    not of this annotator, ValidationFailed for an unknown reason or an over-long note (nothing
    stored)."""
    if reason not in ReportReason.values:
        raise ValidationFailed(_("Unknown reason “%(reason)s”.") % {"reason": reason})
    if not isinstance(note, str) or len(note) > NOTE_MAX_CHARS:
        raise ValidationFailed(_("A note can be at most %(n)d characters.") % {"n": NOTE_MAX_CHARS})
    with transaction.atomic():
        batch = batch_of(annotator, batch_id, lock=True)
        assignment = assignment_of(batch, assignment_id)
        image_id = assignment.item.image_id
        # Reports of one image are counted one after the other: two trusted reporters at once would
        # each count only their own uncommitted report and neither would withdraw it. NO KEY
        # UPDATE: rows that merely reference the image (captions being submitted) are not held up.
        Image.objects.select_for_update(no_key=True).filter(pk=image_id).exists()
        report = ImageReport.objects.filter(
            image_id=image_id, annotator=annotator, campaign_id=batch.campaign_id
        ).first()
        created = report is None
        if created:
            report, created = ImageReport.objects.get_or_create(
                image_id=image_id,
                annotator=annotator,
                campaign_id=batch.campaign_id,
                defaults={
                    "reason": reason,
                    "note": note.strip(),
                    "trusted": reporter_trusted(annotator, batch.campaign),
                },
            )
        withdrawn = _withdraw_if_due(image_id, batch.campaign_id)
        return ReportResult(report=report, created=created, withdrawn=withdrawn)


def _withdraw_if_due(image_id: int, campaign_id: int) -> bool:
    if ImageWithdrawal.objects.in_force(campaign_id).filter(image_id=image_id).exists():
        return True
    counted = ImageReport.objects.filter(
        image_id=image_id, campaign_id=campaign_id, resolved=False, trusted=True
    ).count()
    if counted < settings.IMAGE_REPORT_THRESHOLD:
        return False
    withdrawal, created = ImageWithdrawal.objects.get_or_create(
        image_id=image_id, campaign_id=campaign_id, defaults={"reports": counted}
    )
    if created:
        logger.warning(
            "Image %s withdrawn from campaign %s after %d trusted reports; review it in the admin.",
            withdrawal.image_id,
            campaign_id,
            counted,
        )
    return True


def _ids(values: Iterable[int]) -> list[int]:
    return list(values)


def image_reports_withdraw(*, report_ids: Iterable[int], everywhere: bool, user) -> int:
    """A manager's decision on reports (under review or not): withdraw each reported image from the
    campaign where it was reported, or from every campaign (``everywhere``). An image already
    withdrawn there is left as it is, except that ``everywhere`` extends it. Idempotent. Locks the
    withdrawal rows it extends. Returns how many images were withdrawn or extended."""
    with transaction.atomic():
        pairs = sorted(
            set(ImageReport.objects.filter(pk__in=_ids(report_ids)).values_list("image_id", "campaign_id"))
        )
        changed = 0
        for image_id, campaign_id in pairs:
            reports = ImageReport.objects.filter(image_id=image_id, campaign_id=campaign_id, resolved=False)
            withdrawal, created = ImageWithdrawal.objects.select_for_update().get_or_create(
                image_id=image_id,
                campaign_id=campaign_id,
                defaults={"reports": reports.count(), "everywhere": everywhere, "withdrawn_by": user},
            )
            if created:
                changed += 1
            elif everywhere and not withdrawal.everywhere:
                withdrawal.everywhere, withdrawal.withdrawn_by = True, user
                withdrawal.save(update_fields=["everywhere", "withdrawn_by", "updated_at"])
                changed += 1
        return changed


def image_reports_dismiss(*, report_ids: Iterable[int]) -> int:
    """A manager found nothing wrong: the open reports among ``report_ids`` are resolved (they no
    longer count, and leave the review list). Idempotent. Returns how many."""
    with transaction.atomic():
        return ImageReport.objects.filter(pk__in=_ids(report_ids), resolved=False).update(resolved=True)


def withdrawals_extend(*, withdrawal_ids: Iterable[int], user) -> int:
    """Take the images of these withdrawals out of every campaign's pool. Idempotent. Returns how
    many withdrawals changed."""
    with transaction.atomic():
        return ImageWithdrawal.objects.filter(pk__in=_ids(withdrawal_ids), everywhere=False).update(
            everywhere=True, withdrawn_by=user
        )


def withdrawals_limit(*, withdrawal_ids: Iterable[int]) -> int:
    """Undo :func:`withdrawals_extend`: the images return to every other campaign's pool and stay
    out of the campaign where they were reported. A withdrawal with no campaign (made before
    withdrawals had one) cannot be limited and is left as it is. Idempotent. Returns how many
    withdrawals changed."""
    with transaction.atomic():
        return ImageWithdrawal.objects.filter(
            pk__in=_ids(withdrawal_ids), everywhere=True, campaign__isnull=False
        ).update(everywhere=False)


def image_restore(*, withdrawal_ids: Iterable[int]) -> int:
    """Put withdrawn images back in the pools: the withdrawals are deleted and the reports behind
    them resolved (those of the campaign; every report of the image for a withdrawal from every
    campaign). Idempotent. Returns how many withdrawals were deleted."""
    with transaction.atomic():
        withdrawals = list(ImageWithdrawal.objects.select_for_update().filter(pk__in=_ids(withdrawal_ids)))
        for withdrawal in withdrawals:
            reports = ImageReport.objects.filter(image_id=withdrawal.image_id, resolved=False)
            if not withdrawal.everywhere:
                reports = reports.filter(campaign_id=withdrawal.campaign_id)
            reports.update(resolved=True)
            withdrawal.delete()
        return len(withdrawals)


def reports_to_review() -> QuerySet:
    """Open reports that count only toward a manager's review (their reporter was not trusted) and
    whose image is not withdrawn from their campaign: what waits for a manager's decision."""
    in_force = ImageWithdrawal.objects.filter(image_id=OuterRef("image_id")).filter(
        Q(campaign_id=OuterRef("campaign_id")) | Q(everywhere=True)
    )
    return ImageReport.objects.filter(resolved=False, trusted=False).exclude(Exists(in_force))


def reported_image_ids(annotator: Annotator, campaign_id: int, image_ids: Iterable[int]) -> set[int]:
    """The images among ``image_ids`` this annotator reported in ``campaign_id`` (screen 2 lets them
    leave those empty)."""
    return set(
        ImageReport.objects.filter(
            annotator=annotator, campaign_id=campaign_id, image_id__in=list(image_ids)
        ).values_list("image_id", flat=True)
    )
