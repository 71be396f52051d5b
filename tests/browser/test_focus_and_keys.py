"""Issue 9, item 1: the current item and the keyboard focus are one thing.

A key rates the item that holds the focus, not one selected earlier: Tab onto image 3's
EXCELLENT button, press 2, and image 3 is GOOD while image 1 stays unrated.
"""

from __future__ import annotations

import pytest

from annotation.models import Rating, SxsJudgment
from tests import factories as f
from tests.browser.screens import caption_batch, open_screen, sxs_batch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect


def tab_to(page, selector: str, limit: int = 60) -> None:
    """Press Tab until the focus is on ``selector`` (as an annotator would)."""
    for _ in range(limit):
        if page.evaluate("(s) => document.activeElement === document.querySelector(s)", selector):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {selector}")


def test_a_key_rates_the_image_whose_button_has_the_focus_on_screen_1(live_server, page, screenshot):
    annotator, batch = caption_batch(f.LanguageFactory(code="de", name="German"), images=4)
    open_screen(page, live_server, annotator, batch, "screen1")
    expect(page.locator("#item-1")).to_have_class("item selected")

    tab_to(page, '#item-3 .choice[data-key="1"]')
    # Tabbing into image 3 made it the current one: the highlight went with the focus.
    expect(page.locator("#item-3")).to_have_class("item selected")
    expect(page.locator("#item-1")).to_have_class("item")
    screenshot("focus-tabbed-to-image-3")
    page.keyboard.press("2")
    expect(page.locator("#save-status")).to_have_text("All saved.")
    expect(page.locator("#item-3 .choice[aria-checked=true]")).to_have_attribute("data-value", "good")
    expect(page.locator("#item-1 .choice[aria-checked=true]")).to_have_count(0)

    ratings = dict(
        Rating.objects.filter(assignment__batch=batch).values_list("assignment__position", "value")
    )
    assert ratings == {2: "good"}  # position 2 is image 3; image 1 (position 0) unrated
    # Then the selection moved on to the next unrated image, and the focus with it.
    expect(page.locator("#item-4")).to_have_class("item selected")
    assert page.evaluate("document.activeElement.closest('.item').id") == "item-4"

    # Arrow keys move the focus along with the highlight: k goes back to image 3, 3 rates it.
    page.keyboard.press("k")
    assert page.evaluate("document.activeElement.id") == "item-3"
    page.keyboard.press("3")
    expect(page.locator("#item-3 .choice[aria-checked=true]")).to_have_attribute("data-value", "medium")


def test_a_key_judges_the_pair_whose_button_has_the_focus_side_by_side(live_server, page):
    annotator, batch = sxs_batch(f.LanguageFactory(code="de", name="German"), images=3)
    open_screen(page, live_server, annotator, batch, "sxs")
    tab_to(page, '#item-2 .choice[data-key="7"]')
    page.keyboard.press("5")
    expect(page.locator("#save-status")).to_have_text("All saved.")
    judged = dict(
        SxsJudgment.objects.filter(assignment__batch=batch).values_list("assignment__position", "choice")
    )
    assert judged == {1: "slightly_worse"}


def test_a_click_on_a_card_makes_it_current_for_the_keys(live_server, page):
    annotator, batch = caption_batch(f.LanguageFactory(code="de", name="German"), images=3)
    open_screen(page, live_server, annotator, batch, "screen1")
    page.locator("#item-2 .position").click()
    expect(page.locator("#item-2")).to_have_class("item selected")
    page.keyboard.press("4")
    expect(page.locator("#save-status")).to_have_text("All saved.")
    assert dict(
        Rating.objects.filter(assignment__batch=batch).values_list("assignment__position", "value")
    ) == {1: "bad"}


def test_ctrl_arrows_on_screen_2_move_from_the_image_that_holds_the_focus(live_server, page):
    annotator, batch = caption_batch(f.LanguageFactory(code="de", name="German"), images=4, writing=True)
    open_screen(page, live_server, annotator, batch, "screen2")
    assert page.evaluate("document.activeElement.id") == "caption-1"
    # The focus on image 3's enlarge button (not its text field): Ctrl+↓ goes to image 4.
    page.locator("#item-3 .zoom-open").focus()
    expect(page.locator("#item-3")).to_have_class("item selected")
    page.keyboard.press("Control+ArrowDown")
    assert page.evaluate("document.activeElement.id") == "caption-4"
    expect(page.locator("#item-4")).to_have_class("item selected")
    page.keyboard.press("Control+ArrowUp")
    page.keyboard.press("Control+ArrowUp")
    assert page.evaluate("document.activeElement.id") == "caption-2"
