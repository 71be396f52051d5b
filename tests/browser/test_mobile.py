"""Issue 9, item 8: a phone, 390×844 with a touch screen.

The 7-point scale keeps its order, key hints are gone, header and footer stay small, and
tapping a point moves on as its key does.
"""

from __future__ import annotations

import os

import pytest

from annotation.models import Rating, SxsJudgment
from tests import factories as f
from tests.browser.screens import caption_batch, open_screen, sxs_batch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True, locale="de-DE")
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture
def german(db):
    return f.LanguageFactory(code="de", name="German")


def chrome_height(page) -> float:
    """Height of the sticky header plus the fixed footer."""
    return (
        page.locator(".topbar").bounding_box()["height"]
        + page.locator(".footer-actions").bounding_box()["height"]
    )


def in_reading_order(boxes) -> bool:
    """Each box comes after the one before: lower down, or on the same row further right."""
    for a, b in zip(boxes, boxes[1:]):
        same_row = abs(a["y"] - b["y"]) < 2
        if not (b["y"] >= a["y"] + a["height"] - 1 or (same_row and b["x"] > a["x"])):
            return False
    return True


def test_side_by_side_on_a_phone_keeps_the_scale_in_order(live_server, phone, german):
    annotator, batch = sxs_batch(german, images=3)
    open_screen(phone, live_server, annotator, batch, "sxs")
    buttons = phone.locator("#item-1 .choice")
    assert buttons.count() == 7
    labels = [buttons.nth(i).inner_text().strip() for i in range(7)]
    assert labels == [
        "Left much better",
        "Left better",
        "Left slightly better",
        "Similar",
        "Right slightly better",
        "Right better",
        "Right much better",
    ]  # no key hints (the <kbd> is hidden), in scale order
    boxes = [buttons.nth(i).bounding_box() for i in range(7)]
    assert in_reading_order(boxes), boxes
    assert all(b["x"] >= 0 and b["x"] + b["width"] <= PHONE["width"] for b in boxes)
    assert chrome_height(phone) < 0.2 * PHONE["height"]
    screenshot_phone(phone, "phone-sxs")


def test_key_hints_are_hidden_on_a_touch_screen_and_shown_with_a_keyboard(live_server, phone, page, german):
    annotator, batch = caption_batch(german, images=3)
    open_screen(phone, live_server, annotator, batch, "screen1")
    # What is shown (innerText leaves out what CSS hides).
    assert phone.locator("#submit").inner_text().strip() == "Go on to writing"
    assert phone.locator("#help-toggle").inner_text().strip() == "Guidelines"
    assert phone.locator(".zoom-hint").first.inner_text().strip() == "Enlarge"
    assert phone.locator("#item-1 .choice kbd").first.is_hidden()
    assert "number keys" not in phone.locator(".intro").inner_text()
    # The same page with a mouse and a keyboard keeps them.
    open_screen(page, live_server, annotator, batch, "screen1")
    assert page.locator("#submit").inner_text().strip() == "Go on to writing (Enter)"
    assert page.locator("#item-1 .choice kbd").first.is_visible()


@pytest.mark.parametrize("writing", [False, True], ids=["screen1", "screen2"])
def test_header_and_footer_stay_compact_on_a_phone(live_server, phone, german, writing):
    annotator, batch = caption_batch(german, images=3, writing=writing)
    open_screen(phone, live_server, annotator, batch, "screen2" if writing else "screen1")
    assert chrome_height(phone) < 0.2 * PHONE["height"]
    screenshot_phone(phone, f"phone-{'screen2' if writing else 'screen1'}")
    # The header is at most two lines: the step name, whole, above the counter and the links
    # (one line cut it to "1 · Ra…"; issue 22).
    assert phone.locator(".topbar").bounding_box()["height"] < 70
    step = phone.locator(".step.current")
    assert step.evaluate("(s) => s.scrollWidth <= s.clientWidth")


def test_tapping_a_point_rates_and_moves_on_to_the_next_open_item(live_server, phone, german):
    annotator, batch = sxs_batch(german, images=3)
    open_screen(phone, live_server, annotator, batch, "sxs")
    phone.locator("#item-1 .choice").nth(5).tap()
    expect(phone.locator("#item-2")).to_have_class("item pair-item selected")
    expect(phone.locator("#save-status")).to_have_text("All saved.")
    assert list(SxsJudgment.objects.filter(assignment__batch=batch).values_list("choice", flat=True)) == [
        "worse"
    ]
    phone.wait_for_timeout(600)  # the smooth scroll to the next pair ends
    screenshot_phone(phone, "phone-sxs-after-tap")

    other, caption = caption_batch(german, images=3, username="phone-anna")
    open_screen(phone, live_server, other, caption, "screen1")
    phone.locator("#item-1 .choice").nth(1).tap()
    expect(phone.locator("#item-2")).to_have_class("item selected")
    expect(phone.locator("#save-status")).to_have_text("All saved.")
    assert list(Rating.objects.filter(assignment__batch=caption).values_list("value", flat=True)) == ["good"]
    assert chrome_height(phone) < 0.2 * PHONE["height"]  # with the status line shown too
    phone.wait_for_timeout(600)  # the smooth scroll to the next image ends
    screenshot_phone(phone, "phone-screen1-after-tap")


def screenshot_phone(page, name: str) -> None:
    folder = os.environ.get("SCREENSHOT_DIR")
    if folder:
        os.makedirs(folder, exist_ok=True)
        page.screenshot(path=os.path.join(folder, f"{name}.png"))
