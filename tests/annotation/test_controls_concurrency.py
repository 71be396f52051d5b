"""RELIABILITY cases 1-3 with rated control items in the batches, on PostgreSQL.

Controls are neither locked nor counted (they have no K), so many annotators taking batches at
once must still give every real image exactly K captions from K different people, never show an
annotator the same image twice (as real work or as a control) and never deadlock.
"""

from __future__ import annotations

import uuid
from collections import Counter

import pytest

from annotation.assignment.engine import batch_request
from annotation.models import Assignment, Item, WrittenCaption
from annotation.services import work
from annotation.services.controls import campaign_controls_add
from core.errors import NoWorkAvailable
from tests import factories as f
from tests.annotation.parallel import fail_on_db_errors, postgres_only, run_threads  # noqa: F401

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _work_until_done(annotator, campaign_id):
    while True:
        try:
            batch, _ = batch_request(annotator=annotator, campaign_id=campaign_id)
        except NoWorkAvailable:
            return
        assignments = list(batch.assignments.select_related("item").order_by("position"))
        for a in assignments:
            value = "bad" if a.item.is_control else "good"
            work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value=value)
        work.writing_open(annotator=annotator, batch_id=batch.pk)
        for a in assignments:
            if not a.item.is_control:
                work.draft_save(
                    annotator=annotator,
                    batch_id=batch.pk,
                    assignment_id=a.pk,
                    text=f"Bild {a.pk}",
                    base_revision=0,
                )
        work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key=uuid.uuid4().hex)


def test_twenty_annotators_with_controls_fill_the_campaign_exactly(db):
    german = f.LanguageFactory(code="de", name="German")
    campaign = f.open_caption_campaign(images=60, batch_size=5, replication=2, language=german)
    campaign_controls_add(campaign_id=campaign.pk, mismatched=30, controls_per_batch=2, seed=5)
    annotators = [f.AnnotatorFactory(user__username=f"p{i}", languages=[german]) for i in range(20)]
    errors = run_threads([lambda a=a: _work_until_done(a, campaign.pk) for a in annotators], timeout=120)
    fail_on_db_errors(errors)
    per_image = Counter(WrittenCaption.objects.filter(campaign=campaign).values_list("image_id", flat=True))
    real_images = set(
        Item.objects.filter(campaign=campaign, is_control=False).values_list("image_id", flat=True)
    )
    assert set(per_image) == real_images
    assert set(per_image.values()) == {2}
    seen = Counter(
        Assignment.objects.filter(batch__campaign=campaign).values_list("annotator_id", "item__image_id")
    )
    assert max(seen.values()) == 1, "an annotator saw an image twice"
    controls = Assignment.objects.filter(batch__campaign=campaign, item__is_control=True).count()
    assert controls > 0
    assert set(
        Item.objects.filter(campaign=campaign, is_control=True).values_list("active_count", flat=True)
    ) == {0}
