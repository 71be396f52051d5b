"""An annotator completes a caption batch in a real browser, with the keyboard only."""

from __future__ import annotations

import pytest

from annotation.models import BatchStage, CaptionDraft, Rating, WrittenCaption
from tests import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture
def setup(db):
    german = f.LanguageFactory(code="de", name="German")
    campaign = f.open_caption_campaign(images=4, batch_size=4, replication=2, language=german)
    annotator = f.AnnotatorFactory(user__username="browser-anna", languages=[german])
    english = list(campaign.items.values_list("prompt_caption__text", flat=True))
    return campaign, annotator, english


def test_annotator_completes_a_batch_with_the_keyboard(live_server, page, screenshot, setup):
    campaign, annotator, english = setup
    page.goto(f"{live_server.url}/accounts/login/")
    # Focus the field explicitly: autofocus can lose the race with the first key under load.
    page.locator("input[name=username]").focus()
    page.keyboard.type("browser-anna")
    page.keyboard.press("Tab")
    page.keyboard.type("pw-for-tests-only")
    page.keyboard.press("Enter")
    page.wait_for_url("**/work/")
    assert campaign.name in page.content()
    page.get_by_role("button", name="Start a batch").focus()
    page.keyboard.press("Enter")

    # Screen 1: rate every caption with number keys; the selection moves on by itself.
    page.wait_for_url("**/rate/")
    for text in english:
        assert text in page.content()
    screenshot("screen1-start")
    continue_button = page.locator("#submit")
    assert continue_button.is_disabled()
    for key in ["1", "2", "3", "2"]:
        page.keyboard.press(key)
    expect(page.locator("#done-count")).to_have_text("4")
    expect(continue_button).to_be_enabled()
    screenshot("screen1-rated")
    page.keyboard.press("Enter")

    # Screen 2: the English captions are nowhere in the page source.
    page.wait_for_url("**/write/")
    source = page.content()
    for text in english:
        assert text not in source
    assert 'lang="de"' in source
    page.keyboard.type("Ein Hund rennt über eine Wiese")
    expect(page.locator("#save-status")).to_contain_text("saved")
    page.keyboard.press("Control+ArrowDown")
    page.keyboard.type("Zwei Kinder spielen am Strand")
    page.keyboard.press("Tab")  # blur saves at once
    expect(page.locator("#save-status")).to_contain_text("saved")
    screenshot("screen2-typing")
    assert CaptionDraft.objects.filter(assignment__batch__annotator=annotator).count() == 2

    # Reload mid-way: the drafts come back from the server.
    page.reload()
    page.wait_for_url("**/write/")
    values = [page.locator("textarea").nth(i).input_value() for i in range(4)]
    assert values[:2] == ["Ein Hund rennt über eine Wiese", "Zwei Kinder spielen am Strand"]
    assert values[2:] == ["", ""]
    # Focus lands on the first empty caption.
    page.keyboard.type("Eine Katze schläft auf einem Sofa")
    page.keyboard.press("Control+ArrowDown")
    page.keyboard.type("Ein rotes Auto parkt vor einem Haus")

    # Submit with Ctrl+Enter, twice in a row: one result.
    page.keyboard.press("Control+Enter")
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("heading", name="Batch submitted")).to_be_visible()
    screenshot("submitted")

    written = WrittenCaption.objects.filter(annotator=annotator).order_by("assignment__position")
    assert [w.text for w in written] == [
        "Ein Hund rennt über eine Wiese",
        "Zwei Kinder spielen am Strand",
        "Eine Katze schläft auf einem Sofa",
        "Ein rotes Auto parkt vor einem Haus",
    ]
    assert sorted(
        Rating.objects.filter(assignment__annotator=annotator).values_list("value", flat=True)
    ) == sorted(["excellent", "good", "medium", "good"])
    batch = written[0].assignment.batch
    assert batch.stage == BatchStage.SUBMITTED
    assert batch.rating_seconds and batch.rating_seconds > 0


def test_a_refused_caption_is_marked_at_its_image_and_kept(live_server, page, screenshot, db):
    """Issue 9, item 5: English typed into a German campaign and a one-word caption are refused
    at submit; screen 2 marks each image with what to change, and the text stays in the field."""
    german = f.LanguageFactory(code="de", name="German")
    campaign = f.open_caption_campaign(
        images=3, batch_size=3, language=german, language_check=True, min_caption_length=None
    )
    f.AnnotatorFactory(user__username="browser-anna", languages=[german])
    page.goto(f"{live_server.url}/accounts/login/")
    page.locator("input[name=username]").fill("browser-anna")
    page.locator("input[name=password]").fill("pw-for-tests-only")
    page.locator("input[name=password]").press("Enter")
    page.wait_for_url("**/work/")
    assert campaign.name in page.content()
    page.get_by_role("button", name="Start a batch").click()
    page.wait_for_url("**/rate/")
    for key in ["2", "2", "2"]:
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    page.wait_for_url("**/write/")
    fields = page.locator("textarea")
    fields.nth(0).fill("A dog is running across a green meadow.")
    fields.nth(1).fill("Hund.")
    fields.nth(2).fill("Eine Katze schläft auf einem roten Sofa.")
    fields.nth(2).press("Tab")
    expect(page.locator("#save-status")).to_contain_text("saved")
    fields.nth(2).press("Control+Enter")

    items = page.locator("li.invalid")
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_contain_text("This caption looks like English, not German. Write it in German.")
    expect(items.nth(1)).to_contain_text("This caption is too short (1 of at least 3 words).")
    screenshot("screen2-caption-checks-refused")
    assert fields.nth(0).input_value() == "A dog is running across a green meadow."
    assert not WrittenCaption.objects.exists()
    assert CaptionDraft.objects.get(assignment__position=1).text == "Hund."
