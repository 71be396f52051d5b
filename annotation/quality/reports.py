"""'Report a problem with this image': an annotator's report, and the image leaving the pools.

An annotator may report only an image of their own batches (anyone else's batch or image is
NotFound, like every other annotator write). A report is stored once per image and annotator:
reporting again, with the same or another reason, changes nothing and answers the same. When
``settings.IMAGE_REPORT_THRESHOLD`` different annotators have open reports on an image, it is
withdrawn: no new batch of any campaign gets it (``annotation.assignment.engine``), the manager
finds it under "Withdrawn images" in the admin (and the admin index says how many wait), and the
log says so. Work already done on it is kept. A manager puts it back with :func:`image_restore`
(its reports are then resolved; new reports count from zero).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.models import Annotator
from annotation.quality.models import ImageReport, ImageWithdrawal, ReportReason
from core.errors import ValidationFailed

logger = logging.getLogger(__name__)
NOTE_MAX_CHARS = 500


@dataclass(frozen=True)
class ReportResult:
    report: ImageReport
    created: bool
    withdrawn: bool


def image_report(
    *, annotator: Annotator, batch_id: int, assignment_id: int, reason: str, note: str = ""
) -> ReportResult:
    """Report a problem with the image of one assignment of the annotator's batch ``batch_id``.
    Idempotent per (image, annotator). Locks the batch row (through ``batch_of``). Raises NotFound
    for a batch or image not of this annotator, ValidationFailed for an unknown reason or an
    over-long note (nothing stored)."""
    from annotation.services.work import _assignment_of, batch_of

    if reason not in ReportReason.values:
        raise ValidationFailed(_("Unknown reason “%(reason)s”.") % {"reason": reason})
    if not isinstance(note, str) or len(note) > NOTE_MAX_CHARS:
        raise ValidationFailed(_("A note can be at most %(n)d characters.") % {"n": NOTE_MAX_CHARS})
    with transaction.atomic():
        batch = batch_of(annotator, batch_id, lock=True)
        assignment = _assignment_of(batch, assignment_id)
        image_id = assignment.item.image_id
        report, created = ImageReport.objects.get_or_create(
            image_id=image_id,
            annotator=annotator,
            defaults={"campaign_id": batch.campaign_id, "reason": reason, "note": note.strip()},
        )
        withdrawn = _withdraw_if_due(image_id)
        return ReportResult(report=report, created=created, withdrawn=withdrawn)


def _withdraw_if_due(image_id: int) -> bool:
    if ImageWithdrawal.objects.filter(image_id=image_id).exists():
        return True
    open_reports = ImageReport.objects.filter(image_id=image_id, resolved=False).count()
    if open_reports < settings.IMAGE_REPORT_THRESHOLD:
        return False
    withdrawal, created = ImageWithdrawal.objects.get_or_create(
        image_id=image_id, defaults={"reports": open_reports}
    )
    if created:
        logger.warning(
            "Image %s withdrawn from every pool after %d reports; review it in the admin.",
            withdrawal.image_id,
            open_reports,
        )
    return True


def image_restore(*, image_ids: Iterable[int]) -> int:
    """Put withdrawn images back in the pools: their withdrawal is deleted and their reports
    resolved. Idempotent. Returns how many images were withdrawn."""
    ids = list(image_ids)
    with transaction.atomic():
        ImageReport.objects.filter(image_id__in=ids, resolved=False).update(resolved=True)
        count, _ = ImageWithdrawal.objects.filter(image_id__in=ids).delete()
        return count


def images_withdrawn_count() -> int:
    return ImageWithdrawal.objects.count()


def reported_image_ids(annotator: Annotator, image_ids: Iterable[int]) -> set[int]:
    """The images among ``image_ids`` this annotator reported (screen 2 lets them leave those empty)."""
    return set(
        ImageReport.objects.filter(annotator=annotator, image_id__in=list(image_ids)).values_list(
            "image_id", flat=True
        )
    )
