"""Issue 22, item 11: small things seen on the crowd participant's path.

* On a 390 px wide screen the top bar fits, and the step name reads in full (it was cut to
  "1 · En…", and the top bar of the other pages was wider than the screen).
* Lists on the pages use the interface language's list pattern (CLDR, through Babel): Arabic
  joins with " و", never the Latin ", ".
* A new annotator sets their password on a page in the annotator interface's look and language,
  not the Django admin's ("Django-Verwaltung").

Screenshots go to $SCREENSHOT_DIR when it is set.
"""

from __future__ import annotations

import os

import pytest
from babel.lists import format_list
from django.contrib.auth import get_user_model

from annotation.services.annotators import password_set_path
from tests import factories as f
from tests.browser.screens import caption_batch, open_screen, sxs_batch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect

WIDTH = 390

# Where the top bar and what it shows lie, and whether the current step's text is cut.
TOPBAR = """() => {
  const bar = document.querySelector('.topbar');
  const shown = [...bar.children].filter((c) => c.offsetWidth > 0).map((c) => {
    const r = c.getBoundingClientRect();
    return [c.className, Math.floor(r.left), Math.ceil(r.right)];
  });
  const step = document.querySelector('.step.current');
  const cut = step ? step.scrollWidth > step.clientWidth || step.scrollHeight > step.clientHeight : null;
  const sr = step ? step.getBoundingClientRect() : null;
  return {
    bar: bar.scrollWidth, page: document.documentElement.scrollWidth, shown, cut,
    step: sr ? [Math.floor(sr.left), Math.ceil(sr.right), sr.top, sr.bottom] : null,
    height: bar.getBoundingClientRect().height,
  };
}"""


def shoot(page, name: str) -> None:
    folder = os.environ.get("SCREENSHOT_DIR")
    if folder:
        os.makedirs(folder, exist_ok=True)
        page.screenshot(path=os.path.join(folder, f"{name}.png"))


def assert_fits(page, what: str) -> dict:
    box = page.evaluate(TOPBAR)
    assert box["bar"] <= WIDTH and box["page"] <= WIDTH, (what, box)
    assert all(left >= 0 and right <= WIDTH for _, left, right in box["shown"]), (what, box)
    return box


@pytest.fixture
def narrow(browser):
    """A desktop Chromium made 390 px wide: key hints shown, as the tester had it."""
    context = browser.new_context(viewport={"width": WIDTH, "height": 844}, locale="de-DE")
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.mark.parametrize("code", ["de", "ar", "ja"])
def test_the_top_bar_fits_390_px_with_the_step_name_in_full(live_server, narrow, code):
    language = f.LanguageFactory(code=code, name=code)
    screens = [
        ("screen1", caption_batch(language, images=15, username=f"one-{code}")),
        ("screen2", caption_batch(language, images=15, username=f"two-{code}", writing=True)),
        ("sxs", sxs_batch(language, images=15, username=f"sxs-{code}")),
    ]
    for name, (annotator, batch) in screens:
        annotator.interface_language = code
        annotator.save()
        open_screen(narrow, live_server, annotator, batch, name)
        box = assert_fits(narrow, name)
        step = narrow.locator(".step.current")
        assert not box["cut"], (name, box)
        left, right, top, bottom = box["step"]
        assert left >= 0 and right <= WIDTH and top >= 0, (name, box)
        # The whole step name is there to read, and the header stays small (at most ~three lines).
        assert len(step.inner_text()) >= 10
        assert box["height"] < 100, (name, box)
        shoot(narrow, f"topbar-390-{code}-{name}")

    # The other pages' top bar (name, language selector, user, log out) fits too.
    narrow.goto(live_server.url + "/work/")
    assert_fits(narrow, "dashboard")
    shoot(narrow, f"topbar-390-{code}-dashboard")


def test_an_arabic_page_lists_with_the_arabic_list_pattern(live_server, page):
    arabic = f.LanguageFactory(code="ar", name="Arabic", direction="rtl")
    annotator, batch = caption_batch(arabic, images=3, username="layla")
    annotator.interface_language = "ar"
    annotator.save()
    open_screen(page, live_server, annotator, batch, "screen1")
    keys = page.locator(".intro .key-hint")
    labels = [page.locator("#item-1 .choice").nth(i).inner_text().strip() for i in range(5)]  # "1 ممتاز", ...
    expected = format_list(labels, style="standard-narrow", locale="ar")
    assert " و" in expected and "," not in expected
    text = keys.inner_text()
    assert expected in text, text
    assert ", " not in text


@pytest.fixture
def new_annotator(db):
    german = f.LanguageFactory(code="de", name="German")
    annotator = f.AnnotatorFactory(user__username="neu-anna", languages=[german], interface_language="")
    user = annotator.user
    user.set_unusable_password()
    user.save()
    return annotator


def test_a_new_annotator_sets_the_password_on_a_page_of_the_annotator_interface(
    live_server, page, new_annotator, screenshot
):
    # An English browser; the annotator's language is German (their native one).
    page.goto(live_server.url + password_set_path(new_annotator.user))
    expect(page.get_by_role("heading", name="Wählen Sie Ihr Passwort")).to_be_visible()
    assert page.evaluate("document.documentElement.lang") == "de"
    expect(page.locator(".topbar .brand")).to_have_text("Bildbeschreibungen bewerten")
    content = page.content()
    assert "Django" not in content and "Verwaltung" not in content
    expect(page.locator(".password-set")).to_contain_text("neu-anna")
    screenshot("password-set-de")

    page.locator("input[name=new_password1]").fill("kurz")
    page.locator("input[name=new_password2]").fill("kurz")
    page.get_by_role("button", name="Passwort festlegen").click()
    # Django's password rules, in German.
    expect(page.locator(".password-set .error").first).to_contain_text("Passwort")
    page.locator("input[name=new_password1]").fill("ein-langes-Passwort-2026")
    page.locator("input[name=new_password2]").fill("ein-langes-Passwort-2026")
    page.get_by_role("button", name="Passwort festlegen").click()

    expect(page.get_by_role("heading", name="Passwort festgelegt")).to_be_visible()
    assert page.evaluate("document.documentElement.lang") == "de"
    assert "Django" not in page.content()
    screenshot("password-set-done-de")
    page.locator("main a.button").click()  # "Log in", translated before: "Anmelden"
    expect(page.get_by_role("heading", name="Anmelden")).to_be_visible()
    assert get_user_model().objects.get(username="neu-anna").check_password("ein-langes-Passwort-2026")


def test_a_used_set_password_link_says_so_and_tells_nothing_of_the_account(live_server, page, new_annotator):
    path = password_set_path(new_annotator.user)
    user = new_annotator.user
    user.set_password("schon-gesetzt-2026")
    user.save()  # the token is void once the password changed
    page.goto(live_server.url + path)
    expect(page.locator(".password-set .error")).to_have_text(
        "This link no longer works: it has been used already or it has expired. "
        "Ask your project manager for a new one."
    )
    # The browser's language (English), not the account's.
    assert page.evaluate("document.documentElement.lang") == "en"
    assert "neu-anna" not in page.content() and "Django" not in page.content()
