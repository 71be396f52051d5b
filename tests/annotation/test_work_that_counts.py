"""What a crowd batch must contain to count (issue 22, item 3), and the counts on the dashboard (item 9).

A participant from an entry link who rates every image NOT-ENOUGH-INFO and reports every screen-2
image gets no completion code: the batch is stored, held for a manager's review, out of every
result, of K and of the quota; a manager's accept makes it count and brings the code."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone, translation

from annotation.assignment.engine import batch_request, leases_expire
from annotation.models import (
    Assignment,
    AssignmentState,
    BatchHold,
    HoldDecision,
    Item,
    Rating,
    WrittenCaption,
)
from annotation.quality.reports import image_report
from annotation.services import work
from annotation.workforce.counting import BatchWork, batch_counts, most_allowed
from annotation.workforce.services import batch_hold_decide
from core.errors import Conflict
from tests import factories as f
from tests.annotation.workforce_helpers import crowd_join, declare, link_for, prolific

User = get_user_model()


# --- The rule, as plain figures (no database) -----------------------------------------------------------


@pytest.mark.parametrize(
    ("work_done", "share", "counts"),
    [
        (BatchWork(images=15), 0.5, True),
        (BatchWork(images=15, not_enough_info=7, without_caption=7), 0.5, True),
        (BatchWork(images=15, not_enough_info=8), 0.5, False),
        (BatchWork(images=15, without_caption=8), 0.5, False),
        (BatchWork(images=15, not_enough_info=15, without_caption=15), 0.5, False),
        (BatchWork(images=4, not_enough_info=2), 0.5, True),
        (BatchWork(images=4, not_enough_info=2), 0.25, False),
        (BatchWork(images=4, not_enough_info=4, without_caption=4), 1.0, True),
        (BatchWork(images=0), 0.0, True),
    ],
)
def test_a_batch_counts_with_at_most_the_share_unanswered_on_each_screen(work_done, share, counts):
    assert batch_counts(work_done, share) is counts


def test_the_most_images_left_unanswered_is_rounded_down():
    assert [most_allowed(n, 0.5) for n in (1, 2, 3, 15)] == [0, 1, 1, 7]
    assert most_allowed(10, 0.3) == 3


# --- Through the services and pages (PostgreSQL in CI) ----------------------------------------------------


pytestmark_db = pytest.mark.django_db


def _participant(campaign, german, *, pid="5f1c0ffee0123456789abcd1", **link):
    link.setdefault("quota_batches", 1)
    client, _ = crowd_join(link_for(campaign, **link), prolific(pid=pid, session=f"s-{pid}"))
    declare(client, campaign, german)
    annotator = User.objects.get(pk=client.session["_auth_user_id"]).annotator
    annotator.interface_language = "en"
    annotator.save(update_fields=["interface_language"])
    translation.activate("en")
    return client, annotator


def _caption_batch(annotator, campaign, *, ratings, report=()):
    """One caption batch: ``ratings`` per image in order; images at the positions in ``report`` are
    reported on screen 2 and left without a caption, the others get one. Returns the batch."""
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    assignments = list(batch.assignments.order_by("position"))
    for a, value in zip(assignments, ratings, strict=True):
        work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value=value)
    work.writing_open(annotator=annotator, batch_id=batch.pk)
    for i, a in enumerate(assignments):
        if i in report:
            image_report(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, reason="broken")
        else:
            work.draft_save(
                annotator=annotator,
                batch_id=batch.pk,
                assignment_id=a.pk,
                text=f"Ein Hund spielt im Park {a.pk}",
                base_revision=0,
            )
    work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key=f"key-{batch.pk:08d}")
    return batch


@pytestmark_db
def test_a_no_work_batch_gets_no_code_and_is_held_for_review(campaign, german):
    client, annotator = _participant(campaign, german)
    batch = _caption_batch(annotator, campaign, ratings=["nei"] * 3, report=(0, 1, 2))

    # The participant is told what happened, and sees no code.
    response = client.get(reverse("annotation:batch", args=[batch.pk]))
    page = response.content.decode()
    assert response.status_code == 200
    assert "Batch held for review" in page and "C0DE42" not in page
    assert "3 of 3 images were rated NOT-ENOUGH-INFO." in page
    assert "3 of 3 images were left without a caption." in page
    assert "A batch counts when at most 1 of its 3 images (50%) is left that way on each screen." in page
    assert client.get(reverse("annotation:completion", args=[batch.pk]))["Location"] == reverse(
        "annotation:batch", args=[batch.pk]
    )
    dashboard = client.get(reverse("annotation:dashboard")).content.decode()
    assert "C0DE42" not in dashboard and "1 of them is held for review: it does not count yet." in dashboard
    assert "Start a batch" in dashboard  # the quota counts work that counts: there is still one to do

    # Stored, held, and out of every result and of K: its images go to someone else.
    hold = BatchHold.objects.get(batch=batch)
    assert (hold.decision, hold.images, hold.not_enough_info, hold.without_caption) == ("held", 3, 3, 3)
    assert set(batch.assignments.values_list("state", flat=True)) == {AssignmentState.HELD}
    assert Rating.objects.filter(assignment__batch=batch).count() == 3
    assert not Rating.objects.counted().filter(assignment__batch=batch).exists()
    items = [a.item_id for a in batch.assignments.all()]
    assert list(Item.objects.filter(pk__in=items).values_list("active_count", flat=True)) == [0, 0, 0]

    # The quota counts work that counts: the participant may still do a batch that does.
    second = _caption_batch(annotator, campaign, ratings=["good", "nei", "bad"])
    assert not BatchHold.objects.filter(batch=second).exists()
    response = client.get(reverse("annotation:batch", args=[second.pk]))
    assert response["Location"] == reverse("annotation:completion", args=[second.pk])
    assert 'id="completion-code">C0DE42<' in client.get(response["Location"]).content.decode()


@pytestmark_db
def test_a_batch_with_real_work_still_gets_the_code(campaign, german):
    client, annotator = _participant(campaign, german)
    # One NOT-ENOUGH-INFO and one reported image of three: within the default half.
    batch = _caption_batch(annotator, campaign, ratings=["good", "nei", "medium"], report=(2,))
    assert not BatchHold.objects.exists()
    response = client.get(reverse("annotation:batch", args=[batch.pk]))
    assert response["Location"] == reverse("annotation:completion", args=[batch.pk])
    assert 'id="completion-code">C0DE42<' in client.get(response["Location"]).content.decode()
    assert WrittenCaption.objects.counted().filter(assignment__batch=batch).count() == 2
    assert set(batch.assignments.values_list("state", flat=True)) == {AssignmentState.SUBMITTED}


@pytestmark_db
@pytest.mark.parametrize(("share", "held"), [(0.7, False), (0.5, True), (0.0, True)])
def test_the_setting_sets_the_share_of_images_that_may_stay_unanswered(campaign, german, share, held):
    _client, annotator = _participant(campaign, german)
    # Two of three rated NOT-ENOUGH-INFO (0.67), every caption written.
    with override_settings(CROWD_MAX_UNANSWERED_SHARE=share):
        batch = _caption_batch(annotator, campaign, ratings=["nei", "good", "nei"])
    assert BatchHold.objects.filter(batch=batch).exists() is held
    if held:
        assert BatchHold.objects.get(batch=batch).max_unanswered_share == share


@pytestmark_db
def test_annotators_not_from_an_entry_link_are_not_judged_by_the_crowd_rule(campaign, annotator):
    batch = _caption_batch(annotator, campaign, ratings=["nei"] * 3, report=(0, 1, 2))
    assert not BatchHold.objects.exists()
    assert set(batch.assignments.values_list("state", flat=True)) == {AssignmentState.SUBMITTED}


@pytestmark_db
def test_the_managers_accept_gives_the_code_and_the_batch_counts(campaign, german, pm_client):
    client, annotator = _participant(campaign, german)
    batch = _caption_batch(annotator, campaign, ratings=["nei"] * 3, report=(0, 1, 2))
    hold = BatchHold.objects.get(batch=batch)

    # The manager finds it in the admin with the participant's answers, and accepts it.
    listing = pm_client.get(reverse("admin:annotation_batchhold_changelist")).content.decode()
    assert "3 of 3 rated NOT-ENOUGH-INFO, 3 of 3 without a caption" in listing
    detail = pm_client.get(reverse("admin:annotation_batchhold_change", args=[hold.pk])).content.decode()
    assert detail.count("NOT-ENOUGH-INFO</td>") == 3 and detail.count("broken</td>") == 3
    response = pm_client.post(
        reverse("admin:annotation_batchhold_changelist"),
        {"action": "accept", "_selected_action": [hold.pk]},
        follow=True,
    )
    assert "Accepted 1 held batch: they count now." in response.content.decode()
    hold.refresh_from_db()
    assert hold.decision == HoldDecision.ACCEPTED and hold.reviewed_at is not None

    # The participant now has the code, on the batch's page and on the dashboard.
    response = client.get(reverse("annotation:batch", args=[batch.pk]))
    assert response["Location"] == reverse("annotation:completion", args=[batch.pk])
    assert 'id="completion-code">C0DE42<' in client.get(response["Location"]).content.decode()
    dashboard = client.get(reverse("annotation:dashboard")).content.decode()
    assert ">C0DE42<" in dashboard and "Start a batch" not in dashboard
    assert "You have done every batch of this study." in dashboard

    # It counts in the results and towards K again.
    assert Rating.objects.counted().filter(assignment__batch=batch).count() == 3
    assert set(batch.assignments.values_list("state", flat=True)) == {AssignmentState.SUBMITTED}
    items = [a.item_id for a in batch.assignments.all()]
    assert list(Item.objects.filter(pk__in=items).values_list("active_count", flat=True)) == [1, 1, 1]
    # An accepted batch is never rejected afterwards: its participant may already hold the code.
    with pytest.raises(Conflict, match="was accepted"):
        batch_hold_decide(hold_id=hold.pk, accept=False, reviewer=None)


@pytestmark_db
def test_a_rejected_batch_stays_stored_and_out_of_the_results(campaign, german, manager):
    client, annotator = _participant(campaign, german)
    batch = _caption_batch(annotator, campaign, ratings=["nei"] * 3, report=(0, 1, 2))
    hold = batch_hold_decide(hold_id=BatchHold.objects.get(batch=batch).pk, accept=False, reviewer=manager)
    assert hold.decision == HoldDecision.REJECTED
    assert set(batch.assignments.values_list("state", flat=True)) == {AssignmentState.REJECTED}
    assert Rating.objects.filter(assignment__batch=batch).count() == 3
    assert not Rating.objects.counted().filter(assignment__batch=batch).exists()
    page = client.get(reverse("annotation:batch", args=[batch.pk])).content.decode()
    assert "Batch not accepted" in page and "C0DE42" not in page
    dashboard = client.get(reverse("annotation:dashboard")).content.decode()
    assert "1 of them was not accepted on review: it does not count." in dashboard
    # Rejected, then accepted after all (a second look): it counts, and the counters follow.
    batch_hold_decide(hold_id=hold.pk, accept=True, reviewer=manager)
    assert set(batch.assignments.values_list("state", flat=True)) == {AssignmentState.SUBMITTED}
    items = [a.item_id for a in batch.assignments.all()]
    assert list(Item.objects.filter(pk__in=items).values_list("active_count", flat=True)) == [1, 1, 1]


@pytestmark_db
def test_a_verification_batch_rated_all_not_enough_info_is_held(verification, german):
    client, annotator = _participant(verification, german)
    batch, _ = batch_request(annotator=annotator, campaign_id=verification.pk)
    for a in batch.assignments.all():
        work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value="nei")
    work.judgment_batch_submit(annotator=annotator, batch_id=batch.pk, submit_key="key-verify-01")
    hold = BatchHold.objects.get(batch=batch)
    assert (hold.images, hold.not_enough_info, hold.without_caption) == (6, 6, 0)
    page = client.get(reverse("annotation:batch", args=[batch.pk])).content.decode()
    assert "6 of 6 images were rated NOT-ENOUGH-INFO." in page and "without a caption" not in page


@pytestmark_db
def test_the_dashboard_counts_submitted_images_not_images_handed_out(
    campaign, annotator, annotator_client, german
):
    other = f.AnnotatorFactory(languages=[german])
    batch_request(annotator=other, campaign_id=campaign.pk)
    batch_request(annotator=f.AnnotatorFactory(languages=[german]), campaign_id=campaign.pk)
    # Six images, each handed out once of K=2: none is complete.
    page = annotator_client.get(reverse("annotation:dashboard")).content.decode()
    assert "Campaign: 0 of 6 images complete." in page
    translation.activate("en")
    _caption_batch(annotator, campaign, ratings=["good"] * 3)
    batch_two = _caption_batch(annotator, campaign, ratings=["good"] * 3)
    assert batch_two.assignments.count() == 3
    # Each image has one submitted caption (anna's) and one handed out: still none complete.
    page = annotator_client.get(reverse("annotation:dashboard")).content.decode()
    assert "Campaign: 0 of 6 images complete." in page
    assert "You: 2 batches submitted (6 images)." in page
    assert Assignment.objects.filter(state=AssignmentState.LIVE).count() == 6


@pytestmark_db
def test_a_late_batch_held_then_accepted_keeps_the_counters_right(campaign, german, manager):
    _client, annotator = _participant(campaign, german)
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    items = [a.item_id for a in batch.assignments.all()]
    for a in batch.assignments.all():
        work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value="nei")
    work.writing_open(annotator=annotator, batch_id=batch.pk)
    for a in batch.assignments.all():
        image_report(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, reason="broken")
    # The lease runs out and the images go back to the pool; the late submit is kept, and held.
    assert leases_expire(now=timezone.now() + timedelta(days=1)) == 1
    work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key="key-late-0001")
    hold = BatchHold.objects.get(batch=batch)
    assert list(Item.objects.filter(pk__in=items).values_list("active_count", flat=True)) == [0, 0, 0]
    batch_hold_decide(hold_id=hold.pk, accept=True, reviewer=manager)
    assert list(Item.objects.filter(pk__in=items).values_list("active_count", flat=True)) == [1, 1, 1]
    assert set(batch.assignments.values_list("state", flat=True)) == {AssignmentState.LATE}


@pytestmark_db
def test_without_a_quota_the_completion_page_offers_no_batch_where_none_is_left(german):
    campaign = f.open_caption_campaign(images=3, batch_size=3, replication=1, language=german)
    client, annotator = _participant(campaign, german, quota_batches=None)
    batch = _caption_batch(annotator, campaign, ratings=["good"] * 3)
    page = client.get(reverse("annotation:completion", args=[batch.pk])).content.decode()
    assert 'id="completion-code">C0DE42<' in page
    assert "Do another batch" not in page
    assert "There is no image left for you in this campaign. Thank you!" in page


@pytestmark_db
def test_the_submitted_page_offers_no_next_batch_where_none_is_left(german, annotator, annotator_client):
    campaign = f.open_caption_campaign(images=3, batch_size=3, replication=1, language=german)
    translation.activate("en")
    batch = _caption_batch(annotator, campaign, ratings=["good"] * 3)
    page = annotator_client.get(reverse("annotation:batch", args=[batch.pk])).content.decode()
    assert "Batch submitted" in page and "Start the next batch" not in page
    assert "There is no image left for you in this campaign. Thank you!" in page
