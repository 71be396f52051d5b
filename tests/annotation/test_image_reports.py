"""Issues 14 and 22: "report a problem with this image".

Only for images of the annotator's own batches, idempotent; after IMAGE_REPORT_THRESHOLD
different trusted reporters the image leaves that campaign's pool and the manager is told (admin
list, admin index, log); reports of accounts not trusted yet (fresh link accounts) only wait for
the manager's review; the manager withdraws, extends to every campaign, limits back and puts the
image back. A reported image may stay without a caption.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.assignment.engine import batch_request
from annotation.models import Item, TutorialResult, WrittenCaption
from annotation.quality.models import ImageReport, ImageWithdrawal
from tests import factories as f
from tests.annotation.test_screens import open_writing, rate_all, start_batch

pytestmark = pytest.mark.django_db


def report(client, batch, assignment_id, reason="broken", note=""):
    return client.post(
        reverse("annotation:api_report", args=[batch.pk]),
        {"assignment": assignment_id, "reason": reason, "note": note},
        content_type="application/json",
    )


def test_reporting_an_image_of_my_batch_is_stored_once(annotator_client, annotator, campaign):
    batch = start_batch(annotator_client, campaign)
    a = batch.assignments.order_by("position").first()
    first = report(annotator_client, batch, a.pk, "offensive", "<b>bad</b>")
    assert first.status_code == 200, first.content
    assert first.json()["created"] is True and "manager" in first.json()["message"]
    again = report(annotator_client, batch, a.pk, "private")
    assert again.status_code == 200 and again.json()["created"] is False
    (stored,) = ImageReport.objects.all()
    assert (stored.image_id, stored.annotator_id, stored.reason, stored.note) == (
        a.item.image_id,
        annotator.pk,
        "offensive",
        "<b>bad</b>",
    )


@pytest.mark.parametrize(
    "body",
    [
        {"reason": "ugly"},
        {"reason": ""},
        {"note": "x" * 501},
        {"assignment": "one"},
        {"assignment": 0},
    ],
)
def test_bad_reports_are_refused_and_store_nothing(annotator_client, campaign, body):
    batch = start_batch(annotator_client, campaign)
    a = batch.assignments.first()
    data = {"assignment": a.pk, "reason": "broken", **body}
    r = annotator_client.post(
        reverse("annotation:api_report", args=[batch.pk]), data, content_type="application/json"
    )
    assert r.status_code == 400
    assert r.json()["message"]
    assert not ImageReport.objects.exists()


def test_nobody_reports_through_another_annotators_batch_or_image(
    client, annotator, other_annotator, campaign
):
    theirs, _ = batch_request(annotator=other_annotator, campaign_id=campaign.pk)
    mine, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    client.force_login(annotator.user)
    their_assignment = theirs.assignments.first()
    # Their batch, their assignment in my batch's URL, sequential ids: all 404, nothing stored.
    assert report(client, theirs, their_assignment.pk).status_code == 404
    assert report(client, mine, their_assignment.pk).status_code == 404
    for probe in range(1, 40):
        r = client.post(
            reverse("annotation:api_report", args=[probe]),
            {"assignment": their_assignment.pk, "reason": "broken"},
            content_type="application/json",
        )
        assert r.status_code in (404, 400)
    assert not ImageReport.objects.exists()


def test_reports_need_an_annotator_and_a_csrf_token(db, campaign, annotator, manager):
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    a = batch.assignments.first()
    anonymous = Client()
    assert report(anonymous, batch, a.pk).status_code in (401, 403)
    staff = Client()
    staff.force_login(manager)
    assert report(staff, batch, a.pk).status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(annotator.user)
    assert report(strict, batch, a.pk).status_code == 403
    owner = Client()
    owner.force_login(annotator.user)
    assert owner.get(reverse("annotation:api_report", args=[batch.pk])).status_code == 405
    assert not ImageReport.objects.exists()


# --- Who counts, and where: issue 22 -------------------------------------------------------------------


def campaigns_sharing_images(language, n=4):
    """``n`` open caption campaigns over the same 3 images (one prompt system), N=3, K=3: every
    participant of a campaign gets all three images."""
    from annotation.services.campaigns import campaign_open

    first = f.open_caption_campaign(images=3, batch_size=3, replication=3, language=language, name="Markt A")
    others = [
        campaign_open(
            campaign_id=f.CampaignFactory(
                language=language,
                prompt_system=first.prompt_system,
                batch_size=3,
                replication=3,
                name=f"Markt {letter}",
            ).pk
        )
        for letter in "BCD"[: n - 1]
    ]
    return [first, *others]


def images_given(campaign, language, name):
    """The images a newcomer (staff-made, no history) gets in a batch of ``campaign``."""
    newcomer = f.AnnotatorFactory(user__username=name, languages=[language])
    batch, _ = batch_request(annotator=newcomer, campaign_id=campaign.pk)
    return set(batch.assignments.values_list("item__image_id", flat=True))


def trusted_annotator(name, language, campaign):
    """An annotator who has submitted a batch (here of a campaign of its own images)."""
    annotator = f.AnnotatorFactory(user__username=name, languages=[language])
    f.written_captions(campaign, annotators=[annotator])
    return annotator


def report_first_image(annotator, campaign):
    from annotation.quality.reports import image_report

    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    a = batch.assignments.order_by("item__image_id").first()
    return image_report(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, reason="offensive")


def test_three_fresh_link_accounts_withdraw_the_image_nowhere_and_wait_for_review(
    settings, german, pm_client
):
    from tests.annotation.workforce_helpers import crowd_join, declare, link_for, prolific

    settings.IMAGE_REPORT_THRESHOLD = 2
    campaigns = campaigns_sharing_images(german)
    link = link_for(campaigns[0])
    reported = None
    for i in range(3):
        client, _ = crowd_join(link, prolific(pid=f"5f1c0ffee01234567890000{i}", session=f"s{i:023d}"))
        declare(client, campaigns[0], german)
        batch = start_batch(client, campaigns[0])
        a = batch.assignments.order_by("item__image_id").first()
        reported = a.item.image_id
        r = report(client, batch, a.pk, "offensive", f"Teilnehmer {i}")
        assert r.status_code == 200, r.content
    reports = ImageReport.objects.filter(image_id=reported)
    assert reports.count() == 3 and not reports.filter(trusted=True).exists()
    # Withdrawn nowhere: newcomers of every campaign still get the image.
    assert not ImageWithdrawal.objects.exists()
    for campaign in campaigns[1:]:
        assert reported in images_given(campaign, german, f"neu-{campaign.pk}")
    # The manager sees who reported what, where, when, and that it did not count.
    index = pm_client.get(reverse("admin:index")).content.decode()
    assert "3 image reports to review (from reporters not trusted yet)" in index
    page = pm_client.get(
        reverse("admin:annotation_imagereport_changelist") + "?state=review"
    ).content.decode()
    for r in reports.select_related("annotator__user", "campaign"):
        assert r.annotator.user.username in page and r.annotator.pseudonym in page
    assert page.count(">review only<") == 3 and "Markt A" in page and "offensive" in page


def test_trusted_reporters_withdraw_the_image_from_that_campaign_only(settings, german, caplog):
    settings.IMAGE_REPORT_THRESHOLD = 2
    here, elsewhere, *_ = campaigns_sharing_images(german)
    history = f.open_caption_campaign(images=3, batch_size=3, replication=3, language=german)
    anna, otto = (trusted_annotator(name, german, history) for name in ("anna", "otto"))
    first = report_first_image(anna, here)
    assert first.report.trusted and not first.withdrawn
    second = report_first_image(otto, here)
    assert second.report.trusted and second.withdrawn
    image_id = second.report.image_id
    withdrawal = ImageWithdrawal.objects.get()
    assert (withdrawal.image_id, withdrawal.campaign_id, withdrawal.everywhere) == (image_id, here.pk, False)
    assert "withdrawn from campaign" in caplog.text
    assert image_id not in images_given(here, german, "neu-1")
    assert image_id in images_given(elsewhere, german, "neu-2")


def test_a_reporter_who_has_not_passed_the_tutorial_is_not_trusted(settings, german):
    from annotation.quality.reports import reporter_trusted
    from tests.annotation.workforce_helpers import tutorial_for

    campaign, *_ = campaigns_sharing_images(german, n=1)
    history = f.open_caption_campaign(images=3, batch_size=3, replication=3, language=german)
    anna = trusted_annotator("anna", german, history)
    newcomer = f.AnnotatorFactory(user__username="neu", languages=[german])
    assert reporter_trusted(anna, campaign) and not reporter_trusted(newcomer, campaign)
    tutorial_for(campaign)
    assert not reporter_trusted(anna, campaign)
    TutorialResult.objects.create(
        campaign=campaign, annotator=anna, correct=2, total=2, threshold=0.5, verdict="passed"
    )
    assert reporter_trusted(anna, campaign)


def test_the_manager_withdraws_from_review_extends_limits_and_restores(settings, german, pm_client):
    settings.IMAGE_REPORT_THRESHOLD = 2
    here, elsewhere, *_ = campaigns_sharing_images(german, n=2)
    newcomer = f.AnnotatorFactory(user__username="neu", languages=[german])
    untrusted = report_first_image(newcomer, here).report
    image_id = untrusted.image_id
    reports_url = reverse("admin:annotation_imagereport_changelist")
    r = pm_client.post(reports_url, {"action": "withdraw_here", "_selected_action": [untrusted.pk]})
    assert r.status_code == 302
    withdrawal = ImageWithdrawal.objects.get()
    assert (withdrawal.campaign_id, withdrawal.everywhere, withdrawal.withdrawn_by.username) == (
        here.pk,
        False,
        "pm",
    )
    assert image_id not in images_given(here, german, "neu-1")
    assert image_id in images_given(elsewhere, german, "neu-2")
    page = pm_client.get(reports_url).content.decode()
    assert ">withdrawn here<" in page
    assert "image reports to review" not in pm_client.get(reverse("admin:index")).content.decode()

    url = reverse("admin:annotation_imagewithdrawal_changelist")
    r = pm_client.post(url, {"action": "extend_everywhere", "_selected_action": [withdrawal.pk]})
    assert r.status_code == 302
    withdrawal.refresh_from_db()
    assert withdrawal.everywhere
    assert "every campaign" in pm_client.get(url).content.decode()
    assert image_id not in images_given(elsewhere, german, "neu-3")

    pm_client.post(url, {"action": "limit_to_campaign", "_selected_action": [withdrawal.pk]})
    withdrawal.refresh_from_db()
    assert not withdrawal.everywhere
    assert image_id in images_given(elsewhere, german, "neu-4")

    r = pm_client.post(url, {"action": "restore_images", "_selected_action": [withdrawal.pk]})
    assert r.status_code == 302
    assert not ImageWithdrawal.objects.exists()
    untrusted.refresh_from_db()
    assert untrusted.resolved
    assert image_id in images_given(here, german, "neu-5")


def test_the_manager_dismisses_reports_under_review(settings, german, pm_client):
    campaign, *_ = campaigns_sharing_images(german, n=1)
    newcomer = f.AnnotatorFactory(user__username="neu", languages=[german])
    untrusted = report_first_image(newcomer, campaign).report
    assert "1 image report to review" in pm_client.get(reverse("admin:index")).content.decode()
    reports_url = reverse("admin:annotation_imagereport_changelist")
    pm_client.post(reports_url, {"action": "dismiss_reports", "_selected_action": [untrusted.pk]})
    untrusted.refresh_from_db()
    assert untrusted.resolved and not ImageWithdrawal.objects.exists()
    assert "image report" not in pm_client.get(reverse("admin:index")).content.decode()


def test_enough_trusted_reports_withdraw_until_the_manager_puts_it_back(
    settings, campaign, annotator, other_annotator, pm_client, caplog
):
    settings.IMAGE_REPORT_THRESHOLD = 2
    language = campaign.language
    from annotation.quality.reports import image_report

    history = f.open_caption_campaign(images=3, batch_size=3, replication=3, language=language)
    f.written_captions(history, annotators=[annotator, other_annotator])
    b1, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    image_id = b1.assignments.first().item.image_id
    # The other images are full for a moment, so that the second annotator gets the same ones.
    others = Item.objects.filter(campaign=campaign).exclude(assignments__batch=b1)
    others.update(active_count=campaign.replication)
    b2, _ = batch_request(annotator=other_annotator, campaign_id=campaign.pk)
    others.update(active_count=0)
    a2 = b2.assignments.get(item__image_id=image_id)
    first = image_report(
        annotator=annotator, batch_id=b1.pk, assignment_id=b1.assignments.first().pk, reason="broken"
    )
    assert not first.withdrawn
    second = image_report(annotator=other_annotator, batch_id=b2.pk, assignment_id=a2.pk, reason="private")
    assert second.withdrawn
    assert ImageWithdrawal.objects.filter(image_id=image_id, campaign=campaign, reports=2).exists()
    assert "withdrawn from campaign" in caplog.text
    # Nobody else gets it now (its K is not reached: only the withdrawal keeps it out).
    Item.objects.filter(campaign=campaign, image_id=image_id).update(active_count=0)
    for i in range(2):  # until the campaign's other images are full
        newcomer = f.AnnotatorFactory(user__username=f"new{i}", languages=[language])
        batch, _ = batch_request(annotator=newcomer, campaign_id=campaign.pk)
        assert image_id not in batch.assignments.values_list("item__image_id", flat=True)
    # The manager is told, and puts it back.
    index = pm_client.get(reverse("admin:index")).content.decode()
    assert "1 image withdrawn after reports" in index
    url = reverse("admin:annotation_imagewithdrawal_changelist")
    page = pm_client.get(url).content.decode()
    assert "broken, private" in page and "its campaign only" in page
    withdrawal = ImageWithdrawal.objects.get()
    r = pm_client.post(url, {"action": "restore_images", "_selected_action": [withdrawal.pk]})
    assert r.status_code == 302
    assert not ImageWithdrawal.objects.exists()
    assert set(ImageReport.objects.values_list("resolved", flat=True)) == {True}


def test_one_report_below_the_threshold_withdraws_nothing(settings, annotator_client, campaign):
    settings.IMAGE_REPORT_THRESHOLD = 3
    batch = start_batch(annotator_client, campaign)
    report(annotator_client, batch, batch.assignments.first().pk)
    assert not ImageWithdrawal.objects.exists()


def test_a_reported_image_may_stay_without_a_caption(annotator_client, annotator, campaign):
    batch = start_batch(annotator_client, campaign)
    rate_all(annotator_client, batch)
    open_writing(annotator_client, batch)
    broken, *others = batch.assignments.order_by("position")
    assert report(annotator_client, batch, broken.pk).status_code == 200
    for i, a in enumerate(others):
        annotator_client.post(
            reverse("annotation:api_draft", args=[batch.pk]),
            {"assignment": a.pk, "text": f"Ein Hund im Park {i}", "base_revision": 0},
            content_type="application/json",
        )
    r = annotator_client.post(
        reverse("annotation:api_submit", args=[batch.pk]),
        {"submit_key": "report-key-1"},
        content_type="application/json",
    )
    assert r.status_code == 200, r.content
    assert not WrittenCaption.objects.filter(assignment=broken).exists()
    assert WrittenCaption.objects.filter(assignment__batch=batch).count() == len(others)


def test_an_unreported_empty_caption_is_still_refused(annotator_client, campaign):
    batch = start_batch(annotator_client, campaign)
    rate_all(annotator_client, batch)
    open_writing(annotator_client, batch)
    r = annotator_client.post(
        reverse("annotation:api_submit", args=[batch.pk]),
        {"submit_key": "report-key-2"},
        content_type="application/json",
    )
    assert r.status_code == 400
    assert not WrittenCaption.objects.exists()


def test_the_report_button_and_dialog_are_on_every_screen(annotator_client, campaign):
    batch = start_batch(annotator_client, campaign)
    page = annotator_client.get(reverse("annotation:screen1", args=[batch.pk])).content.decode()
    assert page.count('class="linklike report-open"') == campaign.batch_size
    assert 'id="report-dialog"' in page and "js/report.js" in page
    assert "<script>" not in page  # CSP: static scripts only


def test_researchers_read_reports_but_cannot_restore(
    researcher_client, settings, annotator, other_annotator, campaign
):
    settings.IMAGE_REPORT_THRESHOLD = 1
    from annotation.quality.reports import image_report

    f.written_captions(campaign, annotators=[annotator])  # a trusted reporter
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    image_report(
        annotator=annotator, batch_id=batch.pk, assignment_id=batch.assignments.first().pk, reason="broken"
    )
    assert researcher_client.get(reverse("admin:annotation_imagereport_changelist")).status_code == 200
    url = reverse("admin:annotation_imagewithdrawal_changelist")
    withdrawal = ImageWithdrawal.objects.get()
    for action in ("restore_images", "extend_everywhere"):
        researcher_client.post(url, {"action": action, "_selected_action": [withdrawal.pk]})
    assert ImageWithdrawal.objects.filter(pk=withdrawal.pk, everywhere=False).exists()
    reports_url = reverse("admin:annotation_imagereport_changelist")
    for action in ("withdraw_everywhere", "dismiss_reports"):
        researcher_client.post(
            reports_url, {"action": action, "_selected_action": [ImageReport.objects.get().pk]}
        )
    assert ImageWithdrawal.objects.get().everywhere is False and not ImageReport.objects.get().resolved


def test_fields_a_client_must_not_set_are_ignored(annotator_client, annotator, other_annotator, campaign):
    batch = start_batch(annotator_client, campaign)
    a = batch.assignments.first()
    r = annotator_client.post(
        reverse("annotation:api_report", args=[batch.pk]),
        {
            "assignment": a.pk,
            "reason": "broken",
            "annotator": other_annotator.pk,
            "resolved": True,
            "image": 1,
            "campaign": 999,
        },
        content_type="application/json",
    )
    assert r.status_code == 200
    (report_row,) = ImageReport.objects.all()
    assert (report_row.annotator_id, report_row.resolved, report_row.image_id, report_row.campaign_id) == (
        annotator.pk,
        False,
        a.item.image_id,
        campaign.pk,
    )


def test_a_note_with_markup_is_shown_escaped_to_the_manager(settings, annotator_client, campaign, manager):
    batch = start_batch(annotator_client, campaign)
    report(annotator_client, batch, batch.assignments.first().pk, "private", '<script>alert("x")</script>')
    staff = Client()
    staff.force_login(manager)
    # The note is on the report's own page (the list is kept narrow).
    report_row = ImageReport.objects.get()
    page = staff.get(reverse("admin:annotation_imagereport_change", args=[report_row.pk])).content.decode()
    assert "&lt;script&gt;alert(" in page
    assert '<script>alert("x")</script>' not in page


def test_a_batch_held_for_too_little_work_makes_no_reporter_trusted(db):
    """Only work that counts is evidence: a participant whose one batch was held (every image
    NOT-ENOUGH-INFO or reported) reports like a newcomer, and becomes trusted once it is accepted."""
    from django.utils import timezone

    from annotation.models import BatchHold, HoldDecision
    from annotation.quality.reports import reporter_trusted

    german = f.LanguageFactory(code="de")
    campaign, *_ = campaigns_sharing_images(german, n=1)
    history = f.open_caption_campaign(images=3, batch_size=3, replication=3, language=german)
    anna = trusted_annotator("anna", german, history)
    batch = anna.batches.get()
    hold = BatchHold.objects.create(
        batch=batch, images=3, not_enough_info=3, without_caption=0, max_unanswered_share=0.5
    )
    assert not reporter_trusted(anna, campaign)
    hold.decision, hold.reviewed_at = HoldDecision.REJECTED, timezone.now()
    hold.save()
    assert not reporter_trusted(anna, campaign)
    hold.decision = HoldDecision.ACCEPTED
    hold.save()
    assert reporter_trusted(anna, campaign)
