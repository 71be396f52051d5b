"""Issue 22, item 1: a key acts on what is on screen.

Scrolled with the mouse wheel, without a click, down to the last images: the selection has
followed the scrolling, so a rating key rates an image in view, never image 1 far above, and
the page does not jump back to the top.
"""

from __future__ import annotations

import pytest

from annotation.models import Rating, SxsJudgment
from tests import factories as f
from tests.browser.screens import caption_batch, open_screen, sxs_batch, verification_batch, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect

# Visible part of an item under the sticky top bar and above the fixed footer, as a share of
# the item (or of that band, for an item taller than it).
SHARE_IN_VIEW = """(id) => {
  const r = document.getElementById(id).getBoundingClientRect();
  const top = document.querySelector('.topbar').getBoundingClientRect().bottom;
  const bottom = document.querySelector('.footer-actions').getBoundingClientRect().top;
  const seen = Math.max(0, Math.min(r.bottom, bottom) - Math.max(r.top, top));
  return seen / Math.min(r.height, bottom - top);
}"""


def wheel_to_the_end(page) -> None:
    """Scroll down with the wheel only (the pointer over the page, no click) until it stops."""
    page.mouse.move(640, 450)
    last = -1
    while True:
        page.mouse.wheel(0, 1500)
        page.wait_for_timeout(250)
        y = page.evaluate("window.scrollY")
        if y == last:
            return
        last = y


def stored(batch, screen: str) -> dict[int, str]:
    """Stored answers by image number (1-based, as the page shows them)."""
    if screen == "sxs":
        rows = SxsJudgment.objects.filter(assignment__batch=batch).values_list(
            "assignment__position", "choice"
        )
    else:
        rows = Rating.objects.filter(assignment__batch=batch).values_list("assignment__position", "value")
    return {position + 1: value for position, value in rows}


@pytest.fixture(params=["screen1", "sxs", "verify"])
def scrolled(request, live_server, page):
    german = f.LanguageFactory(code="de", name="German")
    if request.param == "screen1":
        annotator, batch = caption_batch(german, images=15)
    elif request.param == "sxs":
        annotator, batch = sxs_batch(german, images=15)
    else:
        annotator, batch = verification_batch(german, images=15)
    open_screen(page, live_server, annotator, batch, request.param)
    expect(page.locator("#item-1")).to_have_class(
        "item selected" if request.param != "sxs" else "item pair-item selected"
    )
    wheel_to_the_end(page)
    return batch, request.param


def test_a_key_after_wheel_scrolling_acts_on_an_image_in_view(scrolled, page, screenshot):
    batch, screen = scrolled
    # The highlight followed the scrolling: the selected image is one the annotator sees.
    selected = page.evaluate("document.querySelector('.item.selected').id")
    assert selected != "item-1"
    assert page.evaluate(SHARE_IN_VIEW, selected) >= 0.5
    screenshot(f"scrolled-{screen}")

    page.keyboard.press("4")
    expect(page.locator(f"#{selected} .choice[aria-checked=true]")).to_have_count(1)
    wait_until(page, "document.getElementById('save-status').textContent === 'All saved.'")
    number = int(selected.removeprefix("item-"))
    answers = stored(batch, screen)
    assert list(answers) == [number]  # the image in view, never image 1
    expect(page.locator("#item-1 .choice[aria-checked=true]")).to_have_count(0)
    # The page did not jump back to image 1.
    page.wait_for_timeout(800)
    assert page.evaluate(SHARE_IN_VIEW, "item-1") == 0
    assert page.evaluate(SHARE_IN_VIEW, "item-15") > 0


def test_the_keys_still_move_and_rate_in_quick_succession(live_server, page):
    """The script's own smooth scroll to the next image is not taken for the annotator's."""
    annotator, batch = caption_batch(f.LanguageFactory(code="de", name="German"), images=6)
    open_screen(page, live_server, annotator, batch, "screen1")
    for key in "123412":
        page.keyboard.press(key)
    wait_until(page, "document.getElementById('save-status').textContent === 'All saved.'")
    assert stored(batch, "screen1") == {
        1: "excellent",
        2: "good",
        3: "medium",
        4: "bad",
        5: "excellent",
        6: "good",
    }


def test_a_key_pressed_before_the_selection_caught_up_changes_nothing_and_says_why(live_server, page):
    annotator, batch = caption_batch(f.LanguageFactory(code="de", name="German"), images=15)
    open_screen(page, live_server, annotator, batch, "screen1")
    # The jump to the bottom and the key in the same task: the key comes before any scroll event.
    page.evaluate(
        """() => {
          window.scrollTo({top: document.body.scrollHeight, behavior: 'instant'});
          document.activeElement.dispatchEvent(new KeyboardEvent('keydown', {key: '4', bubbles: true, cancelable: true}));
        }"""
    )
    selected = page.evaluate("document.querySelector('.item.selected').id")
    number = int(selected.removeprefix("item-"))
    assert number > 10  # near the bottom (images still loading above may shift it a little)
    assert page.evaluate(SHARE_IN_VIEW, selected) >= 0.5
    expect(page.locator("#save-status")).to_have_text(
        f"Nothing changed: the selected image was out of view. Image {number} of 15 is selected now; "
        "press the key again."
    )
    expect(page.locator(".choice[aria-checked=true]")).to_have_count(0)
    page.keyboard.press("4")
    expect(page.locator("#save-status")).to_have_text("All saved.")
    assert stored(batch, "screen1") == {number: "bad"}


def test_the_end_of_one_smooth_scroll_is_not_taken_for_the_end_of_the_next(live_server, page):
    """Keys in quick succession: the scrollend of the scroll to image 2 may come after the key that
    rated image 2 started the scroll to image 3; image 3 is still the one the next key rates."""
    page.set_viewport_size({"width": 1280, "height": 520})
    annotator, batch = caption_batch(f.LanguageFactory(code="de", name="German"), images=4)
    open_screen(page, live_server, annotator, batch, "screen1")
    page.evaluate(
        """() => {
          const key = (k) => document.activeElement.dispatchEvent(
            new KeyboardEvent('keydown', {key: k, bubbles: true, cancelable: true}));
          key('1');
          key('2');  // image 2 rated; the page starts on its way to image 3
          window.dispatchEvent(new Event('scrollend'));  // the first scroll's end, late
          key('3');
        }"""
    )
    wait_until(page, "document.getElementById('save-status').textContent === 'All saved.'")
    assert stored(batch, "screen1") == {1: "excellent", 2: "good", 3: "medium"}


def test_a_batch_half_done_opens_with_its_first_open_image_in_view(live_server, page):
    from annotation.services import work

    annotator, batch = caption_batch(f.LanguageFactory(code="de", name="German"), images=15)
    for a in batch.assignments.filter(position__lt=12):
        work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value="good")
    open_screen(page, live_server, annotator, batch, "screen1")
    expect(page.locator("#item-13")).to_have_class("item selected")
    wait_until(page, "window.scrollY > 2000")
    page.wait_for_timeout(800)  # the smooth scroll ends
    assert page.evaluate(SHARE_IN_VIEW, "item-13") >= 0.5
    page.keyboard.press("3")
    wait_until(page, "document.getElementById('save-status').textContent === 'All saved.'")
    assert stored(batch, "screen1")[13] == "medium"
