"""Issue 22 on PostgreSQL with real parallel connections: trusted reporters reporting one image at
the same moment still withdraw it (each report is counted after the others, not beside them)."""

from __future__ import annotations

import threading

import pytest

from annotation.assignment.engine import batch_request
from annotation.quality.models import ImageReport, ImageWithdrawal
from annotation.quality.reports import image_report
from tests import factories as f
from tests.annotation.parallel import fail_on_db_errors, postgres_only, run_threads  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def test_trusted_reporters_reporting_at_once_withdraw_the_image(settings, german):
    settings.IMAGE_REPORT_THRESHOLD = 3
    campaign = f.open_caption_campaign(images=3, batch_size=3, replication=4, language=german)
    history = f.open_caption_campaign(images=3, batch_size=3, replication=4, language=german)
    reporters = [f.AnnotatorFactory(user__username=f"r{i}", languages=[german]) for i in range(4)]
    f.written_captions(history, annotators=reporters)  # a submitted batch each: trusted
    batches = [batch_request(annotator=r, campaign_id=campaign.pk)[0] for r in reporters]
    image_id = batches[0].assignments.order_by("item__image_id").first().item.image_id
    start = threading.Barrier(len(reporters))

    def reporter(annotator, batch):
        assignment = batch.assignments.get(item__image_id=image_id)

        def run():
            start.wait()
            image_report(annotator=annotator, batch_id=batch.pk, assignment_id=assignment.pk, reason="broken")

        return run

    fail_on_db_errors(run_threads([reporter(r, b) for r, b in zip(reporters, batches, strict=True)]))
    assert ImageReport.objects.filter(image_id=image_id, trusted=True).count() == 4
    withdrawal = ImageWithdrawal.objects.get()
    assert (withdrawal.image_id, withdrawal.campaign_id, withdrawal.reports) == (image_id, campaign.pk, 3)
