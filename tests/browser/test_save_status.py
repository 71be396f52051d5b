"""Issue 22, item 2: an error in the status line stays until it is resolved.

On screen 2, a submit refused for empty captions must not be replaced by "All changes saved."
when the draft save of the field just left answers a moment later; nor a choice still to make
between two tabs' texts; nor, on the rating screens, an answer the server refused to save.
"""

from __future__ import annotations

import json

import pytest

from annotation.models import CaptionDraft, Rating
from tests import factories as f
from tests.browser.screens import caption_batch, open_screen

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect

NO_CAPTION = "Some images have no caption yet."


@pytest.fixture
def german(db):
    return f.LanguageFactory(code="de", name="German")


def test_the_refusal_of_empty_captions_stays_after_the_draft_save_that_follows(
    live_server, page, screenshot, german
):
    annotator, batch = caption_batch(german, images=14, writing=True)
    open_screen(page, live_server, annotator, batch, "screen2")
    page.keyboard.type("Ein Hund rennt über eine Wiese")
    # Submitted before the typing pause's save: leaving the field for the first empty one saves it.
    with page.expect_response("**/draft/") as saved:
        page.keyboard.press("Control+Enter")
    assert saved.value.ok
    status = page.locator("#save-status")
    expect(status).to_have_text(NO_CAPTION)
    page.wait_for_timeout(600)  # the draft save's answer has been handled by now
    expect(status).to_have_text(NO_CAPTION)
    expect(status).to_have_class("save-status error")
    expect(page.locator(".item.invalid")).to_have_count(13)
    assert CaptionDraft.objects.get(assignment__batch=batch, assignment__position=0).text == (
        "Ein Hund rennt über eine Wiese"
    )
    screenshot("refusal-stays-after-draft-save")

    # Writing some of the missing captions does not resolve it; writing the last one does.
    for position in range(2, 14):
        page.locator(f"#caption-{position}").fill(f"Bild {position}")
    page.locator("#caption-14").focus()
    page.wait_for_timeout(800)
    expect(status).to_have_text(NO_CAPTION)
    page.keyboard.type("Bild 14")
    expect(status).to_have_text("All changes saved.")
    expect(status).to_have_class("save-status ok")
    expect(page.locator(".item.invalid")).to_have_count(0)


def test_a_choice_left_between_two_tabs_texts_stays_after_the_other_choice_is_saved(
    live_server, page, german
):
    annotator, batch = caption_batch(german, images=3, writing=True)
    open_screen(page, live_server, annotator, batch, "screen2")
    for position in (1, 2, 3):
        page.locator(f"#caption-{position}").fill(f"Text dieser Seite {position}")
    page.locator("#caption-1").focus()
    expect(page.locator("#save-status")).to_have_text("All changes saved.")
    # Another tab saves images 1 and 2 meanwhile.
    for draft in CaptionDraft.objects.filter(assignment__batch=batch, assignment__position__lt=2):
        draft.text = f"Anderer Tab {draft.assignment.position + 1}"
        draft.revision += 1
        draft.save()
    page.locator("#submit").click()
    expect(page.locator(".conflict")).to_have_count(2)
    with page.expect_response("**/draft/"):
        page.locator("#item-1 .choose-mine").click()
    page.wait_for_timeout(600)
    status = page.locator("#save-status")
    expect(status).to_have_text("Choose a text for the other images marked, too.")
    page.locator("#item-2 .choose-theirs").click()  # the last choice: nothing stands any more
    expect(status).to_have_text("Chosen. Submit again when you are ready.")
    expect(status).to_have_class("save-status ok")


def test_a_refused_rating_stays_until_that_image_is_saved(live_server, page, german):
    annotator, batch = caption_batch(german, images=3)
    refused = "The server refused this save (test)."
    # The interception is in place before the page loads (installed after it, one CI run saw the
    # first save reach the server), and a switch ends the refusals.
    refusing, refusals = [True], []

    def answer(route):
        if not refusing[0]:
            route.continue_()
            return
        refusals.append(route.request.url)
        route.fulfill(status=400, content_type="application/json", body=json.dumps({"message": refused}))

    page.route("**/api/batch/*/rating/", answer)
    open_screen(page, live_server, annotator, batch, "screen1")
    page.keyboard.press("2")  # image 1: refused
    status = page.locator("#save-status")
    expect(status).to_have_text(f"Not saved: {refused}")
    assert len(refusals) == 1
    refusing[0] = False
    with page.expect_response("**/api/batch/*/rating/"):
        page.keyboard.press("3")  # image 2: saved, but image 1 is still not
    page.wait_for_timeout(300)
    expect(status).to_have_text(f"Not saved: {refused}")
    page.locator("#item-1 .position").click()
    page.keyboard.press("2")
    expect(status).to_have_text("All saved.")
    assert dict(
        Rating.objects.filter(assignment__batch=batch).values_list("assignment__position", "value")
    ) == {0: "good", 1: "medium"}
