"""Issue 9, item 2: guidelines and save errors show where the annotator is looking.

Scrolled down to the last image, the guidelines key opens them inside the viewport (a dialog),
and a save the server refuses says so in the fixed footer, on every screen.
"""

from __future__ import annotations

import json

import pytest

from tests import factories as f
from tests.browser.screens import (
    caption_batch,
    in_viewport,
    open_screen,
    sxs_batch,
    verification_batch,
    wait_until,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect

REFUSED = "The server refused this save (test)."


def refuse_saves(page, pattern: str) -> None:
    """Every save to ``pattern`` answers 400 with a message, as a refused save would."""
    page.route(
        pattern,
        lambda route: route.fulfill(
            status=400, content_type="application/json", body=json.dumps({"message": REFUSED})
        ),
    )


def go_to_last_item(page, count: int) -> None:
    page.locator(f"#item-{count}").scroll_into_view_if_needed()
    page.locator(f"#item-{count} .position").click()
    wait_until(page, "window.scrollY > 900")


@pytest.fixture
def german(db):
    return f.LanguageFactory(code="de", name="German")


@pytest.fixture
def screen(request, german):
    """(annotator, batch, screen name, number of items, guidelines key) for each screen."""
    kind = request.param
    if kind == "screen1":
        return (*caption_batch(german, images=12), kind, 12, "?")
    if kind == "screen2":
        return (*caption_batch(german, images=12, writing=True), kind, 12, "F1")
    if kind == "sxs":
        return (*sxs_batch(german, images=12), kind, 12, "?")
    return (*verification_batch(german, images=6), "verify", 6, "?")


@pytest.mark.parametrize("screen", ["screen1", "screen2", "sxs", "verify"], indirect=True)
def test_guidelines_open_inside_the_viewport_scrolled_to_the_last_image(
    live_server, page, screenshot, screen
):
    annotator, batch, name, count, key = screen
    open_screen(page, live_server, annotator, batch, name)
    guidelines = page.locator("#guidelines")
    expect(guidelines).to_be_hidden()
    go_to_last_item(page, count)
    page.keyboard.press(key)
    expect(guidelines).to_be_visible()
    assert in_viewport(page, "#guidelines")
    screenshot(f"guidelines-{name}")
    # The screen's keys wait while it is open: a number key rates nothing behind it.
    page.keyboard.press("1")
    expect(page.locator("#done-count")).to_have_text("0")
    page.keyboard.press("Escape")
    expect(guidelines).to_be_hidden()
    # The focus is back in the last image, which is still the current one.
    assert page.evaluate("document.activeElement.closest('.item').id") == f"item-{count}"


@pytest.mark.parametrize("screen", ["screen1", "sxs", "verify"], indirect=True)
def test_a_refused_save_is_shown_in_the_viewport_on_the_item_screens(live_server, page, screenshot, screen):
    annotator, batch, name, count, _ = screen
    open_screen(page, live_server, annotator, batch, name)
    refuse_saves(page, "**/api/batch/*/*/")
    go_to_last_item(page, count)
    page.keyboard.press("2")
    status = page.locator("#save-status")
    expect(status).to_have_text(f"Not saved: {REFUSED}")
    assert in_viewport(page, "#save-status")
    screenshot(f"save-refused-{name}")


@pytest.mark.parametrize("screen", ["screen2"], indirect=True)
def test_a_refused_draft_save_is_shown_in_the_viewport_on_screen_2(live_server, page, screenshot, screen):
    annotator, batch, name, count, _ = screen
    open_screen(page, live_server, annotator, batch, name)
    refuse_saves(page, "**/draft/")
    page.locator(f"#caption-{count}").focus()
    wait_until(page, "window.scrollY > 900")
    page.keyboard.type("Ein Hund")
    status = page.locator("#save-status")
    expect(status).to_have_text(f"Not saved: {REFUSED}")
    assert in_viewport(page, "#save-status")
    # Nothing typed is lost: the text is still in its field.
    assert page.locator(f"#caption-{count}").input_value() == "Ein Hund"
    screenshot("save-refused-screen2")
