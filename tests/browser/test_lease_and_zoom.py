"""Issue 9, item 7: the time left on the batch's lease, and images that enlarge.

The countdown starts from the server's lease expiry and follows it when a save renews it; an
image opens enlarged in a dialog by click or key and Escape closes it.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Batch
from tests import factories as f
from tests.browser.screens import caption_batch, in_viewport, open_screen

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture
def german(db):
    return f.LanguageFactory(code="de", name="German")


def test_time_left_comes_from_the_server_and_a_save_renews_it(live_server, page, screenshot, german):
    annotator, batch = caption_batch(german, images=3, lease_minutes=30)
    # Less than half of the 30-minute lease left: the next save renews it.
    Batch.objects.filter(pk=batch.pk).update(
        lease_expires_at=timezone.now() + timedelta(minutes=10, seconds=50)
    )
    open_screen(page, live_server, annotator, batch, "screen1")
    lease = page.locator("#lease")
    expect(lease).to_have_text("Time left: 11 min")
    assert in_viewport(page, "#lease")
    page.keyboard.press("1")
    expect(page.locator("#save-status")).to_have_text("All saved.")
    expect(lease).to_have_text("Time left: 30 min")
    batch.refresh_from_db()
    assert batch.lease_expires_at > timezone.now() + timedelta(minutes=29)
    screenshot("lease-renewed")

    # What happens when it runs out is one click away.
    lease.click()
    info = page.locator("#lease-info")
    expect(info).to_be_visible()
    expect(info).to_contain_text("go back to the pool")
    expect(info).to_contain_text("your work is kept")
    screenshot("lease-info")
    page.keyboard.press("Escape")
    expect(info).to_be_hidden()


def test_a_lease_that_ran_out_says_so_and_that_the_work_is_kept(live_server, page, german):
    annotator, batch = caption_batch(german, images=2)
    Batch.objects.filter(pk=batch.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=2))
    open_screen(page, live_server, annotator, batch, "screen1")
    expect(page.locator("#lease")).to_have_text("Time is up: submit to keep your work")


def test_an_image_enlarges_by_click_and_by_key_and_escape_closes_it(live_server, page, screenshot, german):
    annotator, batch = caption_batch(german, images=3)
    open_screen(page, live_server, annotator, batch, "screen1")
    zoom = page.locator("#zoom")
    thumb = "document.querySelector('#item-2 .thumb img').src"
    shown = "document.querySelector('#zoom-img').src"
    page.locator("#item-2 .zoom-open").click()
    expect(zoom).to_be_visible()
    assert page.evaluate(shown) == page.evaluate(thumb)
    # Larger than the 300 px the list allows.
    assert page.locator("#zoom-img").bounding_box()["height"] > 500
    screenshot("zoom-open")
    page.keyboard.press("2")  # the keys wait while it is open
    expect(page.locator("#done-count")).to_have_text("0")
    page.keyboard.press("Escape")
    expect(zoom).to_be_hidden()
    # z enlarges the current image (the clicked one became current).
    page.keyboard.press("z")
    expect(zoom).to_be_visible()
    assert page.evaluate(shown) == page.evaluate(thumb)
    page.keyboard.press("Escape")
    expect(zoom).to_be_hidden()


def test_alt_z_enlarges_on_screen_2_without_typing_into_the_caption(live_server, page, german):
    annotator, batch = caption_batch(german, images=3, writing=True)
    open_screen(page, live_server, annotator, batch, "screen2")
    page.keyboard.type("Ein Hund")
    page.keyboard.press("Alt+z")
    expect(page.locator("#zoom")).to_be_visible()
    assert page.evaluate("document.querySelector('#zoom-img').src") == page.evaluate(
        "document.querySelector('#item-1 .thumb img').src"
    )
    page.keyboard.press("Escape")
    expect(page.locator("#zoom")).to_be_hidden()
    # Back in the text, which is as typed: neither z nor Alt+Z reached it.
    assert page.evaluate("document.activeElement.id") == "caption-1"
    assert page.locator("#caption-1").input_value() == "Ein Hund"
    page.keyboard.type(" z")
    assert page.locator("#caption-1").input_value() == "Ein Hund z"
    expect(page.locator("#zoom")).to_be_hidden()
