"""Issue 9, items 3 and 4 in Chromium: Back after a submit, a page whose batch was submitted
elsewhere, and two tabs on the same batch."""

from __future__ import annotations

import pytest

from annotation.assignment.engine import batch_request
from annotation.models import CaptionDraft, WrittenCaption
from annotation.services import work
from tests import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect

SUBMITTED = "This batch has already been submitted."


@pytest.fixture
def writing(db):
    """A German caption batch of 4 on screen 2, every image with a saved draft (revision 1)."""
    german = f.LanguageFactory(code="de", name="German")
    campaign = f.open_caption_campaign(images=4, batch_size=4, replication=2, language=german)
    annotator = f.AnnotatorFactory(user__username="tab-anna", languages=[german])
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    ids = list(batch.assignments.order_by("position").values_list("pk", flat=True))
    for pk in ids:
        work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=pk, value="good")
    work.writing_open(annotator=annotator, batch_id=batch.pk)
    texts = ["Ein Hund auf der Wiese", "Zwei Kinder am Strand", "Eine Katze schläft", "Ein rotes Auto"]
    for pk, text in zip(ids, texts, strict=True):
        work.draft_save(annotator=annotator, batch_id=batch.pk, assignment_id=pk, text=text, base_revision=0)
    return annotator, batch, ids, texts


def login(page, live_server):
    page.goto(f"{live_server.url}/accounts/login/")
    page.locator("input[name=username]").fill("tab-anna")
    page.locator("input[name=password]").fill("pw-for-tests-only")
    page.locator("input[name=password]").press("Enter")
    page.wait_for_url("**/work/")


def draft_requests(page) -> list[str]:
    seen = []
    page.on("request", lambda r: seen.append(r.url) if "/draft/" in r.url else None)
    return seen


def assert_read_only(page):
    """Nothing of the batch can be typed into or pressed, whichever way the page came back."""
    expect(page.locator("textarea:not([readonly])")).to_have_count(0)
    expect(page.locator("#items button:not([disabled]), #submit:not([disabled])")).to_have_count(0)


def test_back_after_submit_shows_the_batch_submitted_and_nothing_editable(
    live_server, page, screenshot, writing
):
    annotator, batch, ids, texts = writing
    login(page, live_server)
    page.goto(f"{live_server.url}/work/batch/{batch.pk}/write/")
    page.locator("#caption-4").fill("Ein rotes Auto vor dem Haus")
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("heading", name="Batch submitted")).to_be_visible()

    page.go_back()

    # No-store: the browser asks again and the server answers with the submitted batch (a page
    # restored from the back-forward cache would re-check and lock itself instead).
    expect(page.locator("h1:has-text('Batch submitted'), #lock-banner").first).to_be_visible()
    assert_read_only(page)
    screenshot("back-after-submit")
    requests = draft_requests(page)
    if page.locator("textarea").count():
        page.locator("textarea").first.click()
    else:
        page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.type("noch etwas")
    page.wait_for_timeout(10_000)  # longer than the old 5 s retry
    assert requests == []
    assert [w.text for w in WrittenCaption.objects.order_by("assignment__position")] == [
        *texts[:3],
        "Ein rotes Auto vor dem Haus",
    ]


def test_a_page_whose_batch_was_submitted_elsewhere_locks_on_its_next_save(
    live_server, page, screenshot, writing
):
    annotator, batch, ids, texts = writing
    login(page, live_server)
    page.goto(f"{live_server.url}/work/batch/{batch.pk}/write/")
    expect(page.locator("#caption-1")).to_be_editable()
    work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key="other-tab-0001")
    requests = draft_requests(page)

    page.locator("#item-4").scroll_into_view_if_needed()
    page.locator("#caption-4").press("End")
    page.keyboard.type(" vor dem Haus")

    banner = page.locator("#lock-banner")
    expect(banner).to_contain_text(SUBMITTED)
    expect(banner).to_be_in_viewport()  # in the sticky top bar, wherever the page is scrolled
    expect(page.locator("#save-status")).to_contain_text(SUBMITTED)
    assert_read_only(page)
    expect(page.locator("#caption-4")).to_have_value("Ein rotes Auto vor dem Haus")  # kept on screen
    screenshot("locked-after-submit-elsewhere")
    page.wait_for_timeout(10_000)
    assert len(requests) == 1, requests  # the refused save, and no retry after it
    banner.get_by_role("link", name="See the submitted batch").click()
    expect(page.get_by_role("heading", name="Batch submitted")).to_be_visible()


def test_a_page_restored_from_the_back_forward_cache_rechecks_with_the_server(live_server, page, writing):
    annotator, batch, ids, texts = writing
    login(page, live_server)
    page.goto(f"{live_server.url}/work/batch/{batch.pk}/write/")
    expect(page.locator("#caption-1")).to_be_editable()
    work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key="other-tab-0001")

    # What Chromium fires when it shows a page from its back-forward cache.
    page.evaluate("window.dispatchEvent(new PageTransitionEvent('pageshow', {persisted: true}))")

    expect(page.locator("#lock-banner")).to_contain_text(SUBMITTED)
    assert_read_only(page)


def test_two_tabs_conflict_is_shown_with_both_texts_and_the_stale_tab_learns_it_is_submitted(
    live_server, page, screenshot, writing
):
    annotator, batch, ids, texts = writing
    login(page, live_server)
    url = f"{live_server.url}/work/batch/{batch.pk}/write/"
    tab_a = page
    tab_a.goto(url)
    tab_b = page.context.new_page()
    tab_b.goto(url)

    # In B: images 1 and 2 are edited and saved.
    tab_b.locator("#caption-1").fill("Ein brauner Hund rennt über die Wiese")
    tab_b.locator("#caption-2").fill("Zwei Kinder bauen eine Sandburg")
    tab_b.locator("#caption-3").focus()  # leaving the field saves at once
    expect(tab_b.locator("#save-status")).to_have_text("All changes saved.")
    assert CaptionDraft.objects.get(assignment_id=ids[0]).text == "Ein brauner Hund rennt über die Wiese"

    # A still shows its own texts and submits.
    tab_a.bring_to_front()
    tab_a.locator("#submit").click()

    for position, mine, theirs in [
        (1, texts[0], "Ein brauner Hund rennt über die Wiese"),
        (2, texts[1], "Zwei Kinder bauen eine Sandburg"),
    ]:
        box = tab_a.locator(f"#item-{position} .conflict")
        expect(box).to_contain_text(f"Image {position} of 4 was changed in another tab or window")
        expect(box.locator(".mine .conflict-text")).to_have_text(mine)
        expect(box.locator(".theirs .conflict-text")).to_have_text(theirs)
    expect(tab_a.locator("#save-status")).to_contain_text("image 1, 2")
    expect(tab_a.locator(".conflict")).to_have_count(2)
    assert not WrittenCaption.objects.exists()
    tab_a.locator("#item-1").scroll_into_view_if_needed()
    screenshot("two-tabs-conflict")

    # Keep A's text for image 1, take B's for image 2, then submit again.
    tab_a.locator("#item-1 .choose-mine").click()
    tab_a.locator("#item-2 .choose-theirs").click()
    expect(tab_a.locator(".conflict")).to_have_count(0)
    expect(tab_a.locator("#caption-2")).to_have_value("Zwei Kinder bauen eine Sandburg")
    shown_in_a = [tab_a.locator(f"#caption-{i}").input_value() for i in range(1, 5)]
    tab_a.locator("#submit").click()
    expect(tab_a.get_by_role("heading", name="Batch submitted")).to_be_visible()

    stored = list(WrittenCaption.objects.order_by("assignment__position").values_list("text", flat=True))
    assert stored == shown_in_a == [texts[0], "Zwei Kinder bauen eine Sandburg", texts[2], texts[3]]

    # B is stale: its next edit is refused as submitted, and B says so and turns read-only.
    tab_b.bring_to_front()
    tab_b.locator("#caption-3").press("End")
    tab_b.keyboard.type(" auf dem Sofa")
    expect(tab_b.locator("#lock-banner")).to_contain_text(SUBMITTED)
    expect(tab_b.locator("#save-status")).to_contain_text(SUBMITTED)
    assert_read_only(tab_b)
    screenshot_b(tab_b)
    assert (
        list(WrittenCaption.objects.order_by("assignment__position").values_list("text", flat=True)) == stored
    )


def screenshot_b(tab):
    import os

    folder = os.environ.get("SCREENSHOT_DIR")
    if folder:
        os.makedirs(folder, exist_ok=True)
        tab.screenshot(path=os.path.join(folder, "two-tabs-stale-b-locked.png"))
