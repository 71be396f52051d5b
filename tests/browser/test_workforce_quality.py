"""Issue 14 in a real browser: a caption batch with a control item among its images, an image
enlarged and reported, one caption typed and one pasted on screen 2 (flagged on submit); then the
manager's view of the control pass rates, the flagged caption and the hours."""

from __future__ import annotations

import pytest

from annotation.models import Item, Rating, WrittenCaption
from annotation.quality.models import ImageReport, TypingRecord
from annotation.services.controls import campaign_controls_add
from tests import factories as f
from tests.browser.screens import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect

PASTED = "Ein maschinell übersetzter Satz über einen Hund am Strand"


@pytest.fixture
def setup(db):
    german = f.LanguageFactory(code="de", name="German")
    campaign = f.open_caption_campaign(
        images=8, batch_size=3, replication=2, language=german, name="Bilder DE"
    )
    # 5 controls on 8 images: at least 2 are on images outside the first batch's 3.
    campaign_controls_add(
        campaign_id=campaign.pk, mismatched=5, controls_per_batch=1, control_min_judgments=1, seed=3
    )
    annotator = f.AnnotatorFactory(user__username="browser-anna", languages=[german])
    return campaign, annotator


def test_annotator_meets_a_control_reports_an_image_and_a_pasted_caption_is_flagged(
    live_server, page, screenshot, setup
):
    campaign, annotator = setup
    log_in(page, live_server, annotator.user)
    page.goto(f"{live_server.url}/work/")
    page.get_by_role("button", name="Start a batch").click()
    page.wait_for_url("**/rate/")
    items = page.locator("#items .item")
    expect(items).to_have_count(4)  # N = 3 images and 1 control, alike on the page
    assert "control" not in page.content().replace("aria-controls", "").lower()
    screenshot("wfb-01-screen1-with-a-control")

    # Enlarge the first image.
    page.locator("#item-1 .zoom-open").click()
    expect(page.locator("#zoom")).to_be_visible()
    screenshot("wfb-02-image-enlarged")
    page.keyboard.press("Escape")

    # Report a problem with the second real image (a control would leave no trace on screen 2).
    from annotation.models import Batch

    batch = Batch.objects.get(annotator=annotator)
    real = list(
        batch.assignments.filter(item__is_control=False)
        .order_by("position")
        .values_list("position", flat=True)
    )
    reported_id = f"#item-{real[1] + 1}"
    page.locator(f"{reported_id} .report-open").click()
    dialog = page.locator("#report-dialog")
    expect(dialog).to_be_visible()
    page.get_by_label("It does not show, or it is broken").check()
    page.locator("#report-note").fill("Das Bild ist nur grau.")
    screenshot("wfb-03-report-dialog")
    page.get_by_role("button", name="Send the report").click()
    expect(dialog).to_be_hidden()
    expect(page.locator(f"{reported_id} .report-open")).to_have_text("Reported")
    expect(page.locator("#save-status")).to_contain_text("The manager will look at this image")
    screenshot("wfb-04-reported")
    report = ImageReport.objects.get()
    assert report.reason == "broken" and report.note == "Das Bild ist nur grau."

    # Rate everything with the keys (the control is rated GOOD: a failed control), go on.
    page.locator("#item-1 .position").click()  # an annotator clicks the card (keys act on what is in view)
    for key in ["2", "2", "2", "2"]:
        page.keyboard.press(key)
    expect(page.locator("#done-count")).to_have_text("4")
    page.keyboard.press("Enter")
    page.wait_for_url("**/write/")
    expect(page.locator("#items .item")).to_have_count(3)  # the control is not on screen 2

    expect(page.locator("#items .item.reported")).to_have_count(1)  # may stay empty
    fields = page.locator("#items .item:not(.reported) textarea")
    # The first: typed at a person's pace.
    fields.nth(0).focus()
    page.keyboard.type("Ein Hund läuft am Strand", delay=110)
    # The other: pasted in whole (the paste event a browser fires, with its clipboard text,
    # then the text inserted).
    fields.nth(1).evaluate(
        """(area, text) => {
            const data = new DataTransfer();
            data.setData("text/plain", text);
            area.focus();
            area.dispatchEvent(new ClipboardEvent("paste", {clipboardData: data, bubbles: true, cancelable: true}));
            area.value = text;
            area.dispatchEvent(new Event("input", {bubbles: true}));
        }""",
        PASTED,
    )
    expect(page.locator("#save-status")).to_contain_text("saved")
    screenshot("wfb-05-screen2-typed-and-pasted")
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("heading", name="Batch submitted")).to_be_visible()
    screenshot("wfb-06-submitted")

    written = {w.text: w for w in WrittenCaption.objects.filter(annotator=annotator)}
    assert set(written) == {"Ein Hund läuft am Strand", PASTED}
    typed = TypingRecord.objects.get(assignment=written["Ein Hund läuft am Strand"].assignment)
    pasted = TypingRecord.objects.get(assignment=written[PASTED].assignment)
    # Playwright inserts "ä" without a keydown; every other character is a key.
    assert typed.flags == "" and typed.keystrokes >= len("Ein Hund läuft am Strand") - 1
    # Flagged by the page's record and by the server's own draft saves (it arrived whole).
    assert pasted.flags == "pasted,drafts_whole" and pasted.review == "pending"
    assert pasted.pasted_chars == len(PASTED)
    control = Item.objects.get(campaign=campaign, is_control=True, assignments__annotator=annotator)
    assert Rating.objects.get(assignment__item=control).value == "good"


def test_manager_sees_control_flags_flagged_captions_and_hours(live_server, page, screenshot, setup):
    import uuid

    from annotation.assignment.engine import batch_request
    from annotation.services import work

    campaign, annotator = setup
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    assignments = list(batch.assignments.select_related("item").order_by("position"))
    for a in assignments:
        work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value="excellent")
    work.writing_open(annotator=annotator, batch_id=batch.pk, rating_seconds=95)
    for i, a in enumerate(x for x in assignments if not x.item.is_control):
        typing = {"keystrokes": 1, "paste_count": 1, "pasted_chars": 40} if i == 0 else None
        work.draft_save(
            annotator=annotator,
            batch_id=batch.pk,
            assignment_id=a.pk,
            text=f"Ein Hund spielt im Garten mit einem Ball {i}",
            base_revision=0,
            typing=typing,
        )
    work.batch_submit(
        annotator=annotator, batch_id=batch.pk, submit_key=uuid.uuid4().hex, writing_seconds=300
    )
    manager = f.UserFactory(username="pm", is_staff=True, is_superuser=True)
    log_in(page, live_server, manager)

    page.goto(f"{live_server.url}/admin/")
    expect(page.locator("#quality-notice")).to_contain_text("flagged captions to review")
    screenshot("wfb-07-admin-index-notice")

    page.goto(f"{live_server.url}/admin/annotation/campaign/{campaign.pk}/change/")
    panel = page.locator("#rated-controls")
    expect(panel).to_contain_text("0 of 1 passed — flagged")
    panel.scroll_into_view_if_needed()
    screenshot("wfb-08-campaign-control-pass-rates")

    page.goto(f"{live_server.url}/admin/annotation/typingrecord/?review__exact=pending")
    expect(page.locator("#result_list")).to_contain_text("pasted")
    screenshot("wfb-09-typing-review")
    page.locator("#result_list input[name=_selected_action]").first.check()
    page.locator("select[name=action]").select_option("exclude_captions")
    page.get_by_role("button", name="Go").click()
    expect(page.locator(".messagelist")).to_contain_text("marked excluded")
    assert TypingRecord.objects.filter(review="excluded").count() == 1
    screenshot("wfb-10-typing-excluded")

    page.goto(f"{live_server.url}/admin/evaluation/annotatorhours/")
    expect(page.locator("#hours")).to_contain_text("browser-anna")
    expect(page.locator("#hours")).to_contain_text("6 min 35 s")
    screenshot("wfb-11-annotator-hours")


LONG = "Ein Mann mit rotem Hut verkauft auf einem belebten Markt frisches Obst und Gemüse an Kunden"


@pytest.mark.parametrize("delay_ms", [60, 160])
def test_a_caption_typed_in_one_go_reaches_the_server_in_small_steps(
    live_server, page, screenshot, setup, delay_ms
):
    """The page's save cadence, measured: typing without a pause at up to 16 keys a second (faster
    than people type) or at 6, the page still saves at least once a second, so no save brings
    TYPING_MIN_CHARS (20) new characters: the caption typed at 6 keys a second is not flagged, the
    one typed at 16 at most as too fast (by the page's record and the draft saves alike)."""
    from annotation.models import Batch, CaptionDraft

    campaign, annotator = setup
    log_in(page, live_server, annotator.user)
    page.goto(f"{live_server.url}/work/")
    page.get_by_role("button", name="Start a batch").click()
    page.wait_for_url("**/rate/")
    page.locator("#item-1").focus()
    for _ in range(4):
        page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.wait_for_url("**/write/")
    fields = page.locator("#items .item textarea")
    for i in range(fields.count()):
        fields.nth(i).focus()
        page.keyboard.type(LONG if i == 0 else f"Ein Hund am Strand {i}", delay=delay_ms)
    expect(page.locator("#save-status")).to_contain_text("All changes saved")
    batch = Batch.objects.get(annotator=annotator)
    first = batch.assignments.filter(item__is_control=False).order_by("position").first()
    saves = CaptionDraft.objects.get(assignment=first).saves
    steps = [b[1] - a[1] for a, b in zip([[saves[0][0], 0], *saves], saves, strict=False)]
    gaps = [b[0] - a[0] for a, b in zip(saves, saves[1:], strict=False)]
    print(f"{delay_ms} ms a key: {len(saves)} saves, steps {steps}, gaps {gaps} ms")
    assert max(steps) < 20 and len(saves) >= len(LONG) * delay_ms / 1000 / 1.5
    screenshot(f"wfb-12-typed-in-one-go-{delay_ms}ms")
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("heading", name="Batch submitted")).to_be_visible()
    record = TypingRecord.objects.get(assignment=first)
    if delay_ms >= 100:  # a person's pace: nothing to flag
        assert (record.flags, record.review) == ("", "")
    else:  # above TYPING_MAX_CHARS_PER_SECOND: both sources may say "fast", never "sent whole"
        assert set(filter(None, record.flags.split(","))) <= {"fast", "drafts_fast"}


def test_manager_reviews_reports_of_new_participants_and_withdraws_an_image(
    live_server, page, screenshot, setup
):
    """Issue 22: three new participants report an image; nothing is withdrawn until the manager,
    seeing who reported what, withdraws it from that campaign and then from every campaign."""
    from annotation.assignment.engine import batch_request
    from annotation.quality.models import ImageWithdrawal
    from annotation.quality.reports import image_report

    campaign, _ = setup
    reporters = [
        f.AnnotatorFactory(user__username=f"crowd-{i}", languages=[campaign.language]) for i in range(3)
    ]
    image_id = None
    for i, reporter in enumerate(reporters):
        batch, _ = batch_request(annotator=reporter, campaign_id=campaign.pk)
        a = batch.assignments.filter(item__is_control=False).order_by("item__image_id").first()
        image_id = image_id or a.item.image_id
        a = batch.assignments.filter(item__image_id=image_id).first() or a
        image_report(
            annotator=reporter, batch_id=batch.pk, assignment_id=a.pk, reason="offensive", note=f"Bild {i}"
        )
    assert not ImageWithdrawal.objects.exists()
    manager = f.UserFactory(username="pm", is_staff=True, is_superuser=True)
    log_in(page, live_server, manager)
    page.goto(f"{live_server.url}/admin/")
    expect(page.locator("#quality-notice")).to_contain_text("image reports to review")
    page.locator("#quality-notice a", has_text="image reports to review").click()
    expect(page.locator("#result_list")).to_contain_text("review only")
    expect(page.locator("#result_list")).to_contain_text("crowd-0")
    screenshot("wfb-13-reports-to-review")
    page.locator("#result_list input[name=_selected_action]").first.check()
    page.locator("select[name=action]").select_option("withdraw_here")
    page.get_by_role("button", name="Go").click()
    expect(page.locator(".messagelist")).to_contain_text(
        "withdrawn from the campaign where they were reported"
    )
    screenshot("wfb-14-withdrawn-from-review")

    page.goto(f"{live_server.url}/admin/annotation/imagewithdrawal/")
    expect(page.locator("#result_list")).to_contain_text("its campaign only")
    page.locator("#result_list input[name=_selected_action]").first.check()
    page.locator("select[name=action]").select_option("extend_everywhere")
    page.get_by_role("button", name="Go").click()
    expect(page.locator("#result_list")).to_contain_text("every campaign")
    screenshot("wfb-15-withdrawal-extended")
    assert ImageWithdrawal.objects.get().everywhere
