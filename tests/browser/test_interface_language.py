"""The annotator's own language in a real browser (issue 14): a German annotator's whole caption
batch in German, scripts' messages included, with no English string of the catalogues left on any
screen; an Arabic interface mirrored right to left with nothing overlapping.

Screenshots go to $SCREENSHOT_DIR when it is set (``de-*.png``, ``ar-*.png``)."""

from __future__ import annotations

import os

import pytest

from annotation.models import Annotator, WrittenCaption
from tests import factories as f
from tests.annotation.test_interface_language import english_left
from tests.browser.screens import caption_batch, open_screen, sxs_batch, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect

BOTH = ("django", "djangojs")


@pytest.fixture
def german_page(browser):
    """A browser whose languages are German, as a German participant's is."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="de-DE")
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def no_english(page, language: str) -> None:
    left = english_left(page.content(), language, BOTH)
    assert left == [], left


def test_a_german_annotator_does_a_whole_batch_in_german(live_server, german_page, screenshot):
    page = german_page
    german = f.LanguageFactory(code="de", name="German")
    campaign = f.open_caption_campaign(images=3, batch_size=3, replication=2, language=german, name="Bilder")
    # Never chose a language: the login page follows the browser, the screens the campaign.
    f.AnnotatorFactory(user__username="greta", languages=[german], interface_language="")

    page.goto(f"{live_server.url}/accounts/login/")
    expect(page.get_by_role("heading", name="Anmelden")).to_be_visible()
    no_english(page, "de")
    shot = _shots(page, screenshot, "de")
    shot("login")
    page.locator("input[name=username]").fill("greta")
    page.locator("input[name=password]").fill("pw-for-tests-only")
    page.get_by_role("button", name="Anmelden").click()
    page.wait_for_url("**/work/")
    expect(page.get_by_role("heading", name="Ihre Kampagnen")).to_be_visible()
    no_english(page, "de")
    shot("dashboard")
    page.get_by_role("button", name="Ein Paket beginnen").click()

    # Screen 1: the buttons, the status line written by the scripts and the lease all in German.
    page.wait_for_url("**/rate/")
    wait_until(page, "document.activeElement && document.activeElement.closest('.item') !== null")
    expect(page.locator("#item-1 .choice").first).to_have_text("1 AUSGEZEICHNET")
    expect(page.locator("#lease")).to_have_text("Verbleibende Zeit: 30 Min.")
    for key in ["1", "2", "3"]:
        page.keyboard.press(key)
    expect(page.locator("#save-status")).to_have_text("Alles gespeichert.")
    expect(page.locator("#done-count")).to_have_text("3")
    no_english(page, "de")
    _laid_out(page)
    shot("screen1-rated")
    page.keyboard.press("?")
    expect(page.get_by_role("heading", name="So bewerten Sie")).to_be_visible()
    shot("screen1-guidelines")
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")

    # Screen 2: an empty caption is refused in German, by the page and by the server.
    page.wait_for_url("**/write/")
    wait_until(page, "document.activeElement && document.activeElement.tagName === 'TEXTAREA'")
    page.keyboard.type("Ein Hund rennt über eine Wiese")
    expect(page.locator("#save-status")).to_have_text("Alle Änderungen gespeichert.")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#save-status")).to_have_text("Einige Bilder haben noch keine Beschreibung.")
    expect(page.locator("#item-2 .field-error")).to_have_text(
        "Schreiben Sie eine Beschreibung für dieses Bild."
    )
    no_english(page, "de")
    shot("screen2-refused")
    page.keyboard.type("Zwei Kinder spielen am Strand")
    page.keyboard.press("Control+ArrowDown")
    # The English caption of screen 1, copied: refused by the server, in German.
    batch = Annotator.objects.get(user__username="greta").batches.get()
    page.keyboard.type(batch.assignments.get(position=2).item.prompt_caption.text)
    page.keyboard.press("Control+Enter")
    expect(page.locator("#item-3 .field-error")).to_have_text(
        "Das wiederholt die englische Beschreibung aus Schritt 1. Beschreiben Sie das Bild mit eigenen Worten."
    )
    expect(page.locator("#save-status")).to_have_text(
        "1 Beschreibung braucht noch Ihre Aufmerksamkeit, bevor Sie absenden können."
    )
    no_english(page, "de")
    _laid_out(page, choices=False)
    shot("screen2-server-refusal")
    page.locator("#caption-3").fill("Eine Katze schläft auf einem Sofa")
    page.keyboard.press("Control+Enter")

    expect(page.get_by_role("heading", name="Paket abgeschickt")).to_be_visible()
    assert WrittenCaption.objects.filter(campaign=campaign).count() == 3
    no_english(page, "de")
    shot("submitted")

    # Another language from the selector: the page comes back in it, and the profile keeps it.
    page.get_by_role("link", name="Zurück zu Ihren Kampagnen").click()
    page.locator("#interface-language").select_option("ja")
    expect(page.get_by_role("heading", name="あなたのキャンペーン")).to_be_visible()
    assert Annotator.objects.get(user__username="greta").interface_language == "ja"
    no_english(page, "ja")
    shot("dashboard-in-japanese")


def test_the_arabic_interface_is_mirrored_and_nothing_overlaps(live_server, page, screenshot):
    german = f.LanguageFactory(code="de", name="German")
    annotator, batch = caption_batch(german, images=3, username="amira")
    Annotator.objects.filter(pk=annotator.pk).update(interface_language="ar")
    open_screen(page, live_server, annotator, batch, "screen1")
    shot = _shots(page, screenshot, "ar")
    assert page.evaluate("document.documentElement.dir") == "rtl"
    no_english(page, "ar")
    width = page.viewport_size["width"]

    # Mirrored: the brand starts at the right, the image sits right of its text, the submit
    # button is at the left end of the footer, the guidelines' close button at their left.
    brand = page.locator(".brand").bounding_box()
    assert brand["x"] + brand["width"] > width - 40
    thumb, body = page.locator("#item-1 .thumb").bounding_box(), page.locator("#item-1 .body").bounding_box()
    assert thumb["x"] > body["x"] + body["width"] - 1
    submit = page.locator("#submit").bounding_box()
    assert submit["x"] < width / 2
    for key in ["2", "2", "1"]:
        page.keyboard.press(key)
    expect(page.locator("#save-status")).to_have_text("حُفظ كل شيء.")
    _laid_out(page)
    shot("screen1")
    page.keyboard.press("?")
    dialog = page.locator("#guidelines").bounding_box()
    close = page.locator("#guidelines .dialog-close button").bounding_box()
    assert close["x"] < dialog["x"] + dialog["width"] / 2
    expect(page.locator("#guidelines")).to_contain_text("ممتاز (المفتاح 1)")
    shot("screen1-guidelines")


def test_arabic_side_by_side_keeps_left_on_the_left(live_server, page, screenshot):
    german = f.LanguageFactory(code="de", name="German")
    annotator, batch = sxs_batch(german, images=2, username="amal")
    Annotator.objects.filter(pk=annotator.pk).update(interface_language="ar")
    open_screen(page, live_server, annotator, batch, "sxs")
    assert page.evaluate("document.documentElement.dir") == "rtl"
    no_english(page, "ar")
    # The labels name sides of the screen: "الأيسر" (left) is on the left, the scale runs 1..7
    # from left to right, as the keys and the guidelines say.
    left, right = (
        page.locator("#item-1 .side-left").bounding_box(),
        page.locator("#item-1 .side-right").bounding_box(),
    )
    assert left["x"] + left["width"] <= right["x"] + 1
    expect(page.locator("#item-1 .side-left .side-label")).to_have_text("الأيسر")
    choices = page.locator("#item-1 .choice")
    xs = [choices.nth(i).bounding_box()["x"] for i in range(7)]
    assert xs == sorted(xs)
    expect(choices.first).to_have_text("1 الأيسر أفضل بكثير")
    _nothing_overlaps(page, "#item-1 .choice")
    _nothing_overlaps(page, ".topbar > *")
    page.keyboard.press("4")
    expect(page.locator("#save-status")).to_have_text("حُفظ كل شيء.")
    # The counter reads "1 / 2" left to right, as numbers do in Arabic text too.
    expect(page.locator("#done-count")).to_have_text("1")
    fraction, done = page.locator(".counter bdi").bounding_box(), page.locator("#done-count").bounding_box()
    assert abs(done["x"] - fraction["x"]) < 1
    _shots(page, screenshot, "ar")("side-by-side")


def _shots(page, screenshot, language):
    """Screenshots of ``page`` itself (the ``screenshot`` fixture shoots the default page only)."""
    folder = os.environ.get("SCREENSHOT_DIR")

    def shot(name):
        if folder:
            page.wait_for_timeout(200)  # smooth scrolling settles
            os.makedirs(folder, exist_ok=True)
            page.screenshot(path=os.path.join(folder, f"{language}-{name}.png"))

    return shot


def _laid_out(page, choices: bool = True):
    """The top bar, the footer and the first item's buttons: no two boxes overlap, none leaves the
    window, and no text runs out of its box (a long translation squeezing a short one)."""
    # Measured once nothing moves: a transition or a smooth scroll still running (a loaded CI
    # machine) gives boxes caught half-way.
    wait_until(page, "document.getAnimations().every((a) => a.playState !== 'running')")
    page.wait_for_timeout(200)
    _nothing_overlaps(page, ".topbar > *")
    _nothing_overlaps(page, ".footer-actions > *:not(:empty)")
    selector = ".topbar > *, .footer-actions > *:not(:empty)"
    if choices:
        _nothing_overlaps(page, "#item-1 .choice")
        selector += ", #item-1 .choice"
    _inside_the_window(page, selector)
    overflowing = page.evaluate(
        """(selector) => Array.from(document.querySelectorAll(selector))
            .filter((el) => el.offsetParent !== null && el.scrollWidth > el.clientWidth + 1)
            .map((el) => el.className || el.tagName)""",
        selector,
    )
    assert overflowing == []


def _boxes(page, selector):
    elements = page.locator(selector)
    boxes = []
    for i in range(elements.count()):
        element = elements.nth(i)
        if element.is_visible():
            box = element.bounding_box()
            if box and box["width"] > 0 and box["height"] > 0:
                boxes.append((i, box))
    return boxes


def _nothing_overlaps(page, selector):
    boxes = _boxes(page, selector)
    assert len(boxes) >= 2, selector
    for n, (i, a) in enumerate(boxes):
        for j, b in boxes[n + 1 :]:
            overlap_x = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
            overlap_y = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
            assert overlap_x <= 1 or overlap_y <= 1, (selector, i, j, a, b)


def _inside_the_window(page, selector):
    width = page.viewport_size["width"]
    for i, box in _boxes(page, selector):
        assert box["x"] >= 0 and box["x"] + box["width"] <= width + 1, (selector, i, box)
