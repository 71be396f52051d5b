"""A crowd participant's whole path in their own interface language, German and Arabic (right to left):
from the Prolific link to the completion code, and to each way out that is not the code: languages
that do not fit, a failed tutorial, and a batch with too little work in it. Every page speaks the one
language of the campaign's pages, gives the participant something to do or tell their study platform,
and nothing a participant reads is the English fallback. SCREENSHOT_DIR=/tmp/shots keeps every step."""

from __future__ import annotations

import os

import pytest
from django.urls import reverse
from django.utils import translation

from annotation.models import BatchHold, Enrolment, WrittenCaption
from annotation.workforce.services import entry_link_create
from tests import factories as f
from tests.annotation.workforce_helpers import in_manager_order, tutorial_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect

CAPTIONS = {
    "de": ["Ein Hund rennt über eine Wiese", "Zwei Kinder spielen am Strand"],
    "ar": ["كلب يركض في حقل أخضر", "طفلان يلعبان على الشاطئ"],
}
NAMES = {"de": "German", "ar": "Arabic"}


def t(language: str, message: str) -> str:
    """``message`` as the participant reads it in ``language`` (the catalogue's translation)."""
    with translation.override(language):
        text = translation.gettext(message)
    assert text != message, f"no {language} translation of {message!r}"
    return text


def shot(page, name: str) -> None:
    folder = os.environ.get("SCREENSHOT_DIR")
    if folder:
        os.makedirs(folder, exist_ok=True)
        page.screenshot(path=os.path.join(folder, f"{name}.png"))


def prolific_url(live_server, link, n: int) -> str:
    return (
        f"{live_server.url}{reverse('annotation:join', args=[link.token])}"
        f"?PROLIFIC_PID=60a1b2c3d4e5f6071829300{n}&STUDY_ID=65f0e1d2c3b4a59687706152"
        f"&SESSION_ID=7a6b5c4d3e2f1a0b9c8d7e6{n}"
    )


def study(code: str):
    language = f.LanguageFactory(code=code, name=NAMES[code])
    other = f.LanguageFactory(code="fr", name="French")
    campaign = f.open_caption_campaign(
        images=6, batch_size=2, replication=2, language=language, name=f"Bilder {code}"
    )
    tutorial_for(campaign, expected=("good", "bad"), threshold=0.5)
    link = entry_link_create(
        campaign_id=campaign.pk,
        completion_code="XM36OK",
        quota_batches=1,
        max_signups=50,
        screenout_code="SCREEN1",
    )
    return language, other, campaign, link


def join_and_declare(page, live_server, link, n, language, campaign, *, speaks: bool):
    page.goto(prolific_url(live_server, link, n))
    expect(page.locator("html")).to_have_attribute("lang", language.code)
    page.locator("#join-start").click()
    page.wait_for_url("**/languages/")
    expect(page.get_by_role("heading", name=t(language.code, "Your languages"))).to_be_visible()
    in_manager_order(campaign, Enrolment.objects.order_by("-pk").first().annotator)
    native = language if speaks else f.LanguageFactory._meta.model.objects.get(code="fr")
    page.locator("fieldset").nth(0).locator(f"input[value='{native.pk}']").check()
    page.locator("input[name=reads_english]").check()


@pytest.mark.parametrize("code", ["de", "ar"])
def test_the_crowd_path_in_the_participant_s_own_language(live_server, browser, code):
    language, _, campaign, link = study(code)
    direction = "rtl" if code == "ar" else "ltr"

    def new_page():
        context = browser.new_context(viewport={"width": 1280, "height": 900}, locale=f"{code}-XX")
        page = context.new_page()
        page.set_default_timeout(15_000)
        return page

    # 1. To the completion code: join, languages, tutorial, rate, write, the code.
    page = new_page()
    join_and_declare(page, live_server, link, 1, language, campaign, speaks=True)
    shot(page, f"walk-{code}-1-languages")
    page.locator("#languages-save").click()
    page.wait_for_url("**/tutorial/")
    expect(page.locator("html")).to_have_attribute("dir", direction)
    shot(page, f"walk-{code}-2-tutorial")
    page.locator("button[name=answer][value=good]").click()
    page.wait_for_url("**/tutorial/feedback/")
    expect(page.locator("#feedback-verdict")).to_be_visible()
    page.locator("#tutorial-next").click()
    page.locator("button[name=answer][value=bad]").click()
    page.locator("#tutorial-next").click()
    expect(page.locator("#tutorial-passed")).to_have_text(
        t(code, "You passed: you can now start the real work.")
    )
    shot(page, f"walk-{code}-3-tutorial-passed")
    page.goto(f"{live_server.url}{reverse('annotation:dashboard')}")
    page.locator("form[action$='/work/'] button[type=submit], .card.campaign form button").first.click()
    page.wait_for_url("**/rate/")
    for key in ["2", "3"]:
        page.keyboard.press(key)
    expect(page.locator("#done-count")).to_have_text("2")
    shot(page, f"walk-{code}-4-screen1")
    page.keyboard.press("Enter")
    page.wait_for_url("**/write/")
    fields = page.locator("textarea")
    for i, text in enumerate(CAPTIONS[code]):
        fields.nth(i).press_sequentially(text, delay=5)
    fields.nth(1).press("Tab")
    shot(page, f"walk-{code}-5-screen2")
    fields.nth(1).press("Control+Enter")
    page.wait_for_url("**/complete/")
    expect(page.locator("#completion-code")).to_have_text("XM36OK")
    expect(page.locator("html")).to_have_attribute("lang", code)
    shot(page, f"walk-{code}-6-completion-code")
    assert sorted(WrittenCaption.objects.values_list("text", flat=True)) == sorted(CAPTIONS[code])
    page.goto(f"{live_server.url}{reverse('annotation:dashboard')}")
    expect(page.locator(".card.campaign .no-start")).to_be_visible()  # finished: no start button
    expect(page.locator(".card.campaign form button")).to_have_count(0)
    shot(page, f"walk-{code}-7-dashboard-done")
    page.context.close()

    # 2. Languages that do not fit: the screen-out page, its code, and the way back.
    page = new_page()
    join_and_declare(page, live_server, link, 2, language, campaign, speaks=False)
    page.locator("#languages-save").click()
    page.wait_for_url("**/not-eligible/")
    expect(page.locator("html")).to_have_attribute("lang", code)
    expect(page.locator("#screen-out-code")).to_have_text("SCREEN1")
    shot(page, f"walk-{code}-8-screened-out")
    page.locator("#change-answers").click()
    page.wait_for_url("**/languages/")
    page.context.close()

    # 3. A failed tutorial: the verdict and the same screen-out code.
    page = new_page()
    join_and_declare(page, live_server, link, 4, language, campaign, speaks=True)
    page.locator("#languages-save").click()
    page.wait_for_url("**/tutorial/")
    for wrong in ["bad", "excellent"]:  # GOOD, then BAD expected: each two levels off
        page.locator(f"button[name=answer][value={wrong}]").click()
        page.locator("#tutorial-next").click()
    expect(page.locator("#tutorial-failed")).to_be_visible()
    expect(page.locator("#screen-out-code")).to_have_text("SCREEN1")
    shot(page, f"walk-{code}-9-tutorial-failed")
    page.context.close()

    # 4. A batch with too little work: held for review, no code, and the participant is told why.
    page = new_page()
    join_and_declare(page, live_server, link, 5, language, campaign, speaks=True)
    page.locator("#languages-save").click()
    page.wait_for_url("**/tutorial/")
    page.locator("button[name=answer][value=good]").click()
    page.locator("#tutorial-next").click()
    page.locator("button[name=answer][value=bad]").click()
    page.locator("#tutorial-next").click()
    page.goto(f"{live_server.url}{reverse('annotation:dashboard')}")
    page.locator(".card.campaign form button").first.click()
    page.wait_for_url("**/rate/")
    for key in ["5", "5"]:
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    page.wait_for_url("**/write/")
    page.locator("textarea").nth(0).press_sequentially(CAPTIONS[code][0], delay=5)
    page.locator("textarea").nth(1).press_sequentially(CAPTIONS[code][1], delay=5)
    page.locator("textarea").nth(1).press("Control+Enter")
    expect(page.get_by_role("heading", name=t(code, "Batch held for review"))).to_be_visible()
    expect(page.locator("html")).to_have_attribute("lang", code)
    expect(page.locator("#completion-code")).to_have_count(0)
    shot(page, f"walk-{code}-10-held")
    assert BatchHold.objects.filter(decision="held").count() == 1
    page.context.close()
