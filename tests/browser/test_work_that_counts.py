"""Issue 22 in a real browser: finished, but no longer offered work (item 9), and the page a crowd
participant sees when a batch held too little work to count (item 3).

* After the quota: the completion code, no start button, and a sentence that says why; the campaign's
  "N of M images complete" counts submitted work, not images handed out.
* The author of every caption of a verification campaign sees no "Start rating", but why.
* A batch rated all NOT-ENOUGH-INFO with every image reported: held, no code, and what happened.

SCREENSHOT_DIR=/tmp/shots keeps a screenshot of each page."""

from __future__ import annotations

import os

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotation.assignment.engine import batch_request
from annotation.quality.reports import image_report
from annotation.services import work
from annotation.services.campaigns import campaign_open, rating_campaign_create
from core.access import PROJECT_MANAGERS
from tests import factories as f
from tests.annotation.workforce_helpers import crowd_join, declare, link_for, prolific
from tests.browser.screens import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect
User = get_user_model()


def participant(campaign, language, **link):
    """A Prolific participant of ``campaign`` who declared ``language`` and reads English pages."""
    client, _ = crowd_join(link_for(campaign, **link), prolific(), client=Client(HTTP_ACCEPT_LANGUAGE="en"))
    declare(client, campaign, language)
    return User.objects.get(pk=client.session["_auth_user_id"]).annotator


def caption_batch(annotator, campaign, *, value="good", report=False):
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    assignments = list(batch.assignments.order_by("position"))
    for a in assignments:
        work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value=value)
    work.writing_open(annotator=annotator, batch_id=batch.pk)
    for a in assignments:
        if report:
            image_report(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, reason="broken")
        else:
            work.draft_save(
                annotator=annotator,
                batch_id=batch.pk,
                assignment_id=a.pk,
                text=f"Ein Hund läuft über die Wiese {a.pk}",
                base_revision=0,
            )
    work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key=f"key-{batch.pk:08d}")
    return batch


def test_after_the_quota_the_dashboard_shows_the_code_no_start_button_and_why(live_server, page, screenshot):
    german = f.LanguageFactory(code="de", name="German")
    campaign = f.open_caption_campaign(
        images=4, batch_size=2, replication=1, language=german, name="Bilder DE"
    )
    annotator = participant(campaign, german, quota_batches=1, completion_code="XM36OK")
    caption_batch(annotator, campaign)
    # Someone else holds the other two images in an open batch: handed out, not done.
    batch_request(annotator=f.AnnotatorFactory(languages=[german]), campaign_id=campaign.pk)

    log_in(page, live_server, annotator.user)
    page.goto(live_server.url + reverse("annotation:dashboard"))
    card = page.locator("section.campaign", has_text="Bilder DE")
    expect(card.locator(".completion-code-inline")).to_have_text("XM36OK")
    expect(card.get_by_role("button")).to_have_count(0)
    expect(card.locator(".no-start")).to_have_text("You have done every batch of this study. Thank you!")
    # Counts are submitted work: two of four images have their one caption; the other two are only
    # handed out.
    expect(card).to_contain_text("Campaign: 2 of 4 images complete.")
    expect(card).to_contain_text("You: 1 batch submitted (2 images).")
    screenshot("counts-1-dashboard-after-the-quota")


def test_the_author_of_every_caption_of_a_verification_campaign_is_told_why_there_is_nothing(
    live_server, page, screenshot
):
    german = f.LanguageFactory(code="de", name="German")
    source = f.open_caption_campaign(images=3, batch_size=3, replication=1, language=german, name="Quelle")
    author = f.AnnotatorFactory(user__username="browser-autorin", languages=[german])
    f.written_captions(source, annotators=[author], batches=1)
    created = rating_campaign_create(name="Prüfung DE", source_campaign_id=source.pk, batch_size=3)
    campaign_open(campaign_id=created.pk)

    log_in(page, live_server, author.user)
    page.goto(live_server.url + reverse("annotation:dashboard"))
    card = page.locator("section.campaign", has_text="Prüfung DE")
    expect(card).to_be_visible()
    expect(card.get_by_role("button", name="Start rating")).to_have_count(0)
    expect(card.locator(".no-start")).to_have_text(
        "Every caption still to be rated in this campaign is one you wrote, and nobody rates their own "
        "captions. There is nothing here for you."
    )
    screenshot("counts-2-dashboard-verification-author")


def test_a_batch_without_work_is_held_the_participant_reads_why_and_the_managers_accept_gives_the_code(
    live_server, page, screenshot, browser
):
    german = f.LanguageFactory(code="de", name="German")
    campaign = f.open_caption_campaign(
        images=6, batch_size=3, replication=2, language=german, name="Bilder DE"
    )
    annotator = participant(campaign, german, quota_batches=1, completion_code="XM36OK")
    batch = caption_batch(annotator, campaign, value="nei", report=True)

    log_in(page, live_server, annotator.user)
    page.goto(live_server.url + reverse("annotation:batch", args=[batch.pk]))
    expect(page.get_by_role("heading", name="Batch held for review")).to_be_visible()
    expect(page.locator("#held-figures")).to_contain_text("3 of 3 images were rated NOT-ENOUGH-INFO.")
    expect(page.locator("#held-figures")).to_contain_text("3 of 3 images were left without a caption.")
    expect(page.locator("#held-rule")).to_contain_text("at most 1 of its 3 images (50%)")
    assert "XM36OK" not in page.content()
    # There is still work that counts to do: the participant may go on.
    expect(page.get_by_role("button", name="Do another batch")).to_be_visible()
    screenshot("counts-3-held-batch")

    # The manager reviews it in the admin, sees the answers, and accepts it.
    f.RoleUserFactory(username="pm-counts", role=PROJECT_MANAGERS)
    context = browser.new_context(viewport={"width": 1366, "height": 900}, locale="en-GB")
    admin_page = context.new_page()
    admin_page.goto(f"{live_server.url}/admin/login/")
    admin_page.fill("input[name=username]", "pm-counts")
    admin_page.fill("input[name=password]", "pw-for-tests-only")
    admin_page.press("input[name=password]", "Enter")
    admin_page.wait_for_url("**/admin/")
    admin_page.goto(live_server.url + reverse("admin:annotation_campaign_change", args=[campaign.pk]))
    expect(admin_page.locator(".held-batches")).to_contain_text("1 waiting for review")
    admin_page.locator(".held-batches").get_by_role("link", name="Review them").click()
    expect(admin_page.locator("#result_list")).to_contain_text(
        "3 of 3 rated NOT-ENOUGH-INFO, 3 of 3 without a caption"
    )
    if os.environ.get("SCREENSHOT_DIR"):
        admin_page.screenshot(
            path=os.path.join(os.environ["SCREENSHOT_DIR"], "counts-4-admin-held-batches.png")
        )
    admin_page.locator("#result_list").get_by_role("link", name=f"batch {batch.pk}").click()
    expect(admin_page.locator(".held-answers tbody tr")).to_have_count(3)
    if os.environ.get("SCREENSHOT_DIR"):
        admin_page.screenshot(
            path=os.path.join(os.environ["SCREENSHOT_DIR"], "counts-4b-admin-held-batch-answers.png")
        )
    admin_page.go_back()
    admin_page.locator("#result_list input[name=_selected_action]").first.check()
    admin_page.select_option("select[name=action]", "accept")
    admin_page.get_by_role("button", name="Go").click()
    expect(admin_page.locator(".messagelist")).to_contain_text("Accepted 1 held batch: they count now.")
    context.close()

    # Accepted, the batch counts: the participant's page now gives the code.
    page.goto(live_server.url + reverse("annotation:batch", args=[batch.pk]))
    expect(page.locator("#completion-code")).to_have_text("XM36OK")
    screenshot("counts-5-code-after-accept")
