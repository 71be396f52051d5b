"""Issue 14: the whole path of a crowd participant in a real browser. An entry link with Prolific's
parameters -> an account -> the language declaration -> the tutorial, with a wrong answer and its
feedback -> a real batch (rate, then write) -> the completion code and the redirect to the study
platform's completion URL. SCREENSHOT_DIR=/tmp/shots keeps a screenshot of every step."""

from __future__ import annotations

import os

import pytest
from django.urls import reverse

from annotation.models import (
    CampaignOnboarding,
    Enrolment,
    EntryLink,
    TutorialAnswer,
    TutorialResult,
    WrittenCaption,
)
from annotation.workforce.services import entry_link_create
from core.access import PROJECT_MANAGERS
from tests import factories as f
from tests.annotation.workforce_helpers import in_manager_order, tutorial_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect

PID, STUDY, SESSION = "60a1b2c3d4e5f60718293a4b", "65f0e1d2c3b4a59687706152", "7a6b5c4d3e2f1a0b9c8d7e6f"


def test_a_prolific_participant_goes_from_the_entry_link_to_the_completion_code(
    live_server, page, screenshot
):
    german = f.LanguageFactory(code="de", name="German")
    campaign = f.open_caption_campaign(
        images=2, batch_size=2, replication=2, language=german, name="Bilder beschreiben"
    )
    tutorial_for(
        campaign,
        expected=("good", "bad"),
        threshold=0.5,
        explanations={1: "The caption names the dog and the beach: GOOD, or one level either side."},
    )
    # The study platform's completion URL: here a page of the same server, so the redirect is seen.
    done_url = f"{live_server.url}{reverse('healthz')}?cc=XM36OK"
    link = entry_link_create(
        campaign_id=campaign.pk,
        completion_code="XM36OK",
        completion_url=done_url,
        quota_batches=1,
        max_signups=50,
    )

    # 1. The entry link, as Prolific opens it.
    page.goto(
        f"{live_server.url}{reverse('annotation:join', args=[link.token])}"
        f"?PROLIFIC_PID={PID}&STUDY_ID={STUDY}&SESSION_ID={SESSION}"
    )
    expect(page.get_by_role("heading", name="Welcome to “Bilder beschreiben”")).to_be_visible()
    screenshot("crowd-1-entry-link")
    page.get_by_role("button", name="Start").click()

    # 2. An account exists (named by no crowd id); the participant declares their languages.
    page.wait_for_url("**/languages/")
    # Signed in, no language declared or chosen: the pages speak the campaign's language. This
    # participant prefers English and picks it in the top bar; the choice stays with the account.
    expect(page.get_by_role("heading", name="Ihre Sprachen")).to_be_visible()
    screenshot("crowd-2a-languages-in-german")
    page.select_option("#interface-language", "en")
    expect(page.get_by_role("heading", name="Your languages")).to_be_visible()
    enrolment = Enrolment.objects.get()
    assert enrolment.annotator.__class__.objects.get(pk=enrolment.annotator.pk).interface_language == "en"
    assert enrolment.worker_id == PID and enrolment.session_id == SESSION
    assert PID not in page.content() and PID not in enrolment.annotator.user.username
    in_manager_order(campaign, enrolment.annotator)  # the steps below expect the GOOD item first
    page.locator("fieldset").nth(0).get_by_label("German").check()
    page.get_by_label("I can read English").check()
    screenshot("crowd-2-languages")
    page.get_by_role("button", name="Continue").click()

    # 3. The tutorial: a wrong answer first, and its feedback.
    page.wait_for_url("**/tutorial/")
    expect(page.get_by_role("heading", name="Tutorial 1 of 2")).to_be_visible()
    screenshot("crowd-3-tutorial-item")
    page.get_by_role("button", name="BAD", exact=True).click()
    page.wait_for_url("**/tutorial/feedback/")
    expect(page.get_by_role("heading", name="Not quite")).to_be_visible()
    expect(page.locator("#feedback-verdict")).to_contain_text("Your answer: BAD. Expected: GOOD")
    expect(page.locator("#feedback-explanation")).to_contain_text("names the dog and the beach")
    screenshot("crowd-4-tutorial-wrong-feedback")
    page.get_by_role("link", name="Next").click()
    page.get_by_role("button", name="MEDIUM", exact=True).click()  # one level from BAD: right
    expect(page.get_by_role("heading", name="Right")).to_be_visible()
    screenshot("crowd-5-tutorial-right-feedback")
    page.get_by_role("link", name="See your result").click()
    expect(page.locator("#tutorial-passed")).to_be_visible()
    expect(page.locator(".tutorial-score")).to_have_text("You answered 1 of 2 right.")
    screenshot("crowd-6-tutorial-passed")
    assert (
        TutorialAnswer.objects.filter(correct=False).count() == 1
        and TutorialResult.objects.get().verdict == "passed"
    )
    page.get_by_role("link", name="Go to your campaigns").click()

    # 4. A real batch: rate the English captions, then write German ones.
    page.wait_for_url("**/work/")
    screenshot("crowd-7-dashboard")
    page.get_by_role("button", name="Start a batch").click()
    page.wait_for_url("**/rate/")
    for key in ["2", "3"]:
        page.keyboard.press(key)
    expect(page.locator("#done-count")).to_have_text("2")
    screenshot("crowd-8-screen1")
    page.keyboard.press("Enter")
    page.wait_for_url("**/write/")
    fields = page.locator("textarea")
    fields.nth(0).fill("Ein Hund rennt über eine Wiese")
    fields.nth(1).fill("Zwei Kinder spielen am Strand")
    fields.nth(1).press("Tab")
    expect(page.locator("#save-status")).to_contain_text("saved")
    screenshot("crowd-9-screen2")
    fields.nth(1).press("Control+Enter")

    # 5. The completion code, then the redirect to the study platform.
    page.wait_for_url("**/complete/")
    expect(page.locator("#completion-code")).to_have_text("XM36OK")
    expect(page.locator("#completion-link")).to_have_attribute("href", done_url)
    screenshot("crowd-10-completion-code")
    page.wait_for_url("**/healthz?cc=XM36OK", timeout=15_000)
    assert sorted(WrittenCaption.objects.values_list("text", flat=True)) == [
        "Ein Hund rennt über eine Wiese",
        "Zwei Kinder spielen am Strand",
    ]


def test_the_manager_issues_a_link_and_reviews_a_pilot_whose_author_reads_the_comment(
    live_server, page, screenshot, browser
):
    german = f.LanguageFactory(code="de", name="German")
    pilot = f.open_caption_campaign(images=2, batch_size=2, replication=1, language=german, name="Pilot de")
    author = f.AnnotatorFactory(user__username="pilot-anna", languages=[german])
    f.written_captions(pilot, annotators=[author], batches=1, text=lambda a: f"Ein Bild {a.item.image.key}")
    CampaignOnboarding.objects.create(campaign=pilot, tutorial_enabled=False, is_pilot=True)
    f.RoleUserFactory(username="pm-browser", role=PROJECT_MANAGERS)

    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("input[name=username]", "pm-browser")
    page.fill("input[name=password]", "pw-for-tests-only")
    page.press("input[name=password]", "Enter")
    page.wait_for_url("**/admin/")

    # A link from the campaign's page: the form, then the URLs to paste into Prolific.
    page.goto(f"{live_server.url}{reverse('admin:annotation_campaign_change', args=[pilot.pk])}")
    expect(page.locator("#campaign-recruitment")).to_contain_text("Pilot: 0 captions reviewed")
    screenshot("manager-1-campaign-recruitment-panel")
    page.locator("#campaign-recruitment").get_by_role("link", name="New entry link").click()
    page.fill("input[name=label]", "Prolific wave 1")
    page.fill("input[name=max_signups]", "20")
    page.fill("input[name=completion_code]", "PILOT1")
    page.click("input[name=_save]")
    link = EntryLink.objects.get()
    expect(page.locator(".entry-url-prolific")).to_contain_text(f"/work/join/{link.token}/?PROLIFIC_PID=")
    screenshot("manager-2-entry-link-urls")

    # The pilot review: return one caption with a comment.
    page.goto(
        f"{live_server.url}{reverse('admin:annotation_campaignonboarding_review', args=[pilot.onboarding.pk])}"
    )
    row = page.locator("#pilot-captions tbody tr").first
    row.locator("select[name=decision]").select_option("returned")
    row.locator("input[name=comment]").fill("Bitte auch die Farben nennen.")
    row.locator("input[type=submit]").click()
    expect(page.locator(".messagelist")).to_contain_text("Saved the decision.")
    screenshot("manager-3-pilot-review")

    # The author reads it from their dashboard.
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB")
    author_page = context.new_page()
    author_page.goto(f"{live_server.url}/accounts/login/")
    author_page.fill("input[name=username]", "pilot-anna")
    author_page.fill("input[name=password]", "pw-for-tests-only")
    author_page.press("input[name=password]", "Enter")
    author_page.wait_for_url("**/work/")
    author_page.get_by_role("link", name="Feedback on your captions").click()
    expect(author_page.locator(".review-comment")).to_have_text("Bitte auch die Farben nennen.")
    if os.environ.get("SCREENSHOT_DIR"):
        author_page.screenshot(path=os.path.join(os.environ["SCREENSHOT_DIR"], "crowd-11-pilot-feedback.png"))
    context.close()


def test_a_written_tutorial_caption_that_decides_is_shown_as_pending_never_as_failed_first(
    live_server, page, screenshot
):
    from annotation.workforce.services import tutorial_writing_check
    from core.errors import Conflict
    from tests.browser.screens import log_in

    german = f.LanguageFactory(code="de", name="German")
    campaign = f.open_caption_campaign(images=2, batch_size=2, language=german, name="Bilder beschreiben")
    # A wrong rating, then a caption: 0 of 1 right so far, and the caption decides at 0.5.
    items = tutorial_for(campaign, expected=("good", "write"), threshold=0.5)
    CampaignOnboarding.objects.filter(campaign=campaign).update(review_hours=24)
    items[1].caption = ""  # a writing item without an example caption
    items[1].save(update_fields=["caption"])
    annotator = f.AnnotatorFactory(user__username="tutorial-tom", languages=[german], interface_language="en")
    in_manager_order(campaign, annotator)
    manager = f.RoleUserFactory(username="pm-checker", role=PROJECT_MANAGERS)
    log_in(page, live_server, annotator.user)

    page.goto(f"{live_server.url}{reverse('annotation:tutorial', args=[campaign.pk])}")
    page.get_by_role("button", name="BAD", exact=True).click()
    expect(page.get_by_role("heading", name="Not quite")).to_be_visible()
    page.get_by_role("link", name="Next").click()
    page.get_by_label("Your caption").fill("Ein Hund läuft am Strand")
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_role("heading", name="Caption received")).to_be_visible()
    # The item has no example caption: none is shown.
    expect(page.locator("#feedback-example")).to_have_count(0)
    page.get_by_role("link", name="See your result").click()

    # Pending: told to come back, with the promised time; not "you cannot take part".
    expect(page.locator("#tutorial-pending")).to_contain_text("a person is checking it. Come back later")
    expect(page.locator("#tutorial-review-time")).to_have_text("Captions are checked within 24 hours.")
    expect(page.locator("#tutorial-failed")).to_have_count(0)
    expect(page.locator("#tutorial-passed")).to_have_count(0)
    screenshot("tutorial-1-pending")
    page.get_by_role("link", name="Go to your campaigns").click()
    expect(page.locator(".no-start")).to_contain_text("being checked; come back later")
    screenshot("tutorial-2-dashboard-pending")

    # The check passes the caption: the verdict becomes passed, and stays so.
    written = TutorialAnswer.objects.get(item=items[1])
    tutorial_writing_check(answer_id=written.pk, correct=True, checker=manager)
    page.goto(f"{live_server.url}{reverse('annotation:tutorial', args=[campaign.pk])}")
    expect(page.locator("#tutorial-passed")).to_be_visible()
    screenshot("tutorial-3-passed-after-the-check")
    with pytest.raises(Conflict):
        tutorial_writing_check(answer_id=written.pk, correct=False, checker=manager)
    page.reload()
    expect(page.locator("#tutorial-passed")).to_be_visible()
    expect(page.locator("#tutorial-failed")).to_have_count(0)
    assert TutorialResult.objects.get().verdict == "passed"


def test_a_participant_whose_languages_do_not_fit_reads_one_language_a_code_and_the_way_back(
    live_server, page, screenshot
):
    german = f.LanguageFactory(code="de", name="German")
    f.LanguageFactory(code="fr", name="French")
    campaign = f.open_caption_campaign(images=2, batch_size=2, language=german, name="Bilder beschreiben")
    link = entry_link_create(campaign_id=campaign.pk, screenout_code="SCRN01", completion_code="XM36OK")

    page.goto(
        f"{live_server.url}{reverse('annotation:join', args=[link.token])}"
        f"?PROLIFIC_PID={PID}&STUDY_ID={STUDY}&SESSION_ID={SESSION}"
    )
    page.get_by_role("button", name="Start").click()
    page.wait_for_url("**/languages/")
    # No interface language chosen: the campaign's pages speak German. The wrong box is ticked.
    expect(page.get_by_role("heading", name="Ihre Sprachen")).to_be_visible()
    page.locator("fieldset").nth(0).get_by_label("Französisch").check()
    page.locator("input[name=reads_english]").check()
    page.locator("#languages-save").click()

    page.wait_for_url("**/not-eligible/")
    assert page.locator("html").get_attribute("lang") == "de"
    expect(page.locator("#screen-out-reason")).to_have_text(
        "Diese Studie braucht Menschen, die Deutsch als Muttersprache oder fließend sprechen."
    )
    expect(page.locator("#screen-out-instruction")).to_contain_text(
        "Geben Sie diesen Screen-out-Code auf Prolific ein"
    )
    expect(page.locator("#screen-out-code")).to_have_text("SCRN01")
    expect(page.locator(".messages")).to_have_count(0)  # no banner in another language
    screenshot("screen-out-1-page")

    page.locator("#change-answers").click()
    page.wait_for_url("**/languages/")
    screenshot("screen-out-2-back-to-the-form")
    page.locator("fieldset").nth(0).get_by_label("Französisch").uncheck()
    page.locator("fieldset").nth(0).get_by_label("Deutsch").check()
    page.locator("#languages-save").click()
    page.wait_for_url("**/work/")
    expect(page.locator(f'[data-campaign="{campaign.pk}"]')).to_be_visible()
    screenshot("screen-out-3-dashboard-after-the-change")
