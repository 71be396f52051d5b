"""The project manager's path through the admin in a real browser at 1366 px (issue 9, items 9–12):
onboarding annotators, importing images, adding a caption campaign, reading control pass rates."""

from __future__ import annotations

import pytest

from annotation.models import Annotator, Campaign, CampaignKind, Image, SystemCaption
from annotation.services.demo import DEMO_PASSWORD, demo_load
from tests import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture
def demo(db):
    demo_load()
    sxs = Campaign.objects.get(kind=CampaignKind.SIDE_BY_SIDE)
    for name in ("anna-de", "ben-de", "clara-de"):
        # m2 much better on every pair: both kinds of control fail, but one batch holds too few of them.
        f.sxs_judged(Annotator.objects.get(user__username=name), campaign=sxs, score=lambda a: 3)
    return sxs


def login(page, live_server):
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("input[name=username]", "manager")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url("**/admin/")


def test_manager_onboards_imports_and_reads_controls_at_1366(live_server, page, screenshot, demo, tmp_path):
    login(page, live_server)

    # Item 12: the campaign list's date column is not clipped at 1366 px.
    page.goto(f"{live_server.url}/admin/annotation/campaign/")
    screenshot("manager-01-campaign-list")
    # Inside the visible part of the results box (which scrolls sideways when the table is too wide).
    for cell in (page.locator("th.column-created"), page.locator("td.field-created").first):
        assert cell.evaluate(
            "el => el.getBoundingClientRect().right"
            " <= document.querySelector('#changelist .results').getBoundingClientRect().right + 0.5"
        )
        assert cell.evaluate("el => el.scrollWidth <= el.clientWidth + 1")

    # Item 9: one form makes the account, the annotator and the skills; the link is shown once.
    page.goto(f"{live_server.url}/admin/annotation/annotator/add/")
    page.fill("input[name=username]", "samir-ar")
    page.fill("input[name=email]", "samir@example.org")
    page.select_option("select[name=native]", label="Arabic (ar)")
    page.select_option("select[name=fluent]", label="English (en)")
    screenshot("manager-02-add-annotator")
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text(
        "Created annotator “samir-ar” (ar (native), en (fluent))"
    )
    expect(page.locator(".messagelist")).to_contain_text("/accounts/set-password/")
    screenshot("manager-03-annotator-created")

    # Item 9: many from a CSV, dry run first.
    csv = tmp_path / "team.csv"
    csv.write_text("username,email,languages,reads_english\nmia-ja,mia@example.org,ja:native;en:fluent,yes\n")
    page.goto(f"{live_server.url}/admin/annotation/annotator/")
    page.click("text=Add annotators from a CSV file")
    page.set_input_files("input[name=file]", str(csv))
    page.click("input[name=_check]")
    expect(page.locator("#import-report")).to_contain_text("1 would be created")
    screenshot("manager-04-annotators-dry-run")
    page.click("input[name=_confirm]")
    expect(page.locator("#import-done")).to_contain_text("mia-ja: http")
    screenshot("manager-05-annotators-imported")

    # Item 10: several image files at once, dry run, then Import.
    for n, color in enumerate([(200, 30, 30), (30, 200, 30)]):
        (tmp_path / f"new{n}.png").write_bytes(f.png_bytes(color=color))
    page.goto(f"{live_server.url}/admin/annotation/image/")
    page.click("text=Import images")
    page.set_input_files("input[name=files]", [str(tmp_path / "new0.png"), str(tmp_path / "new1.png")])
    screenshot("manager-06-import-images-form")
    page.click("input[name=_check]")
    expect(page.locator("#import-report")).to_contain_text("2 would be created")
    screenshot("manager-07-import-images-dry-run")
    page.click("input[name=_confirm]")
    expect(page.locator("#import-done")).to_contain_text("2 created")
    assert Image.objects.filter(key__in=["new0", "new1"]).count() == 2

    # Item 10: a caption campaign with "Open it now" and a key list.
    page.goto(f"{live_server.url}/admin/annotation/campaign/add/")
    page.fill("input[name=name]", "Deutsch, Auswahl")
    page.select_option("select[name=language]", label="German (de)")
    page.select_option("select[name=prompt_system]", label="demo-good")
    page.check("input[name=images][value=keys]")
    keys = list(
        SystemCaption.objects.filter(system__name="demo-good", language__code="en")
        .order_by("image__key")
        .values_list("image__key", flat=True)[:3]
    )
    page.fill("textarea[name=image_keys]", "\n".join(keys))
    screenshot("manager-08-add-caption-campaign")
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text("(open): 3 items")
    screenshot("manager-09-caption-campaign-created")

    # Item 11: the demo raters judged 2 controls each: too few to judge, nobody flagged.
    page.goto(f"{live_server.url}/admin/annotation/campaign/{demo.pk}/change/")
    controls = page.locator("#sxs-controls")
    controls.scroll_into_view_if_needed()
    expect(controls).to_contain_text("too few to judge (minimum 5)")
    expect(controls.locator("tr.flagged")).to_have_count(0)
    screenshot("manager-10-sxs-controls")

    # Item 12: the side-by-side table's headers and the metric-run help.
    page.goto(f"{live_server.url}/admin/evaluation/languagestatistics/")
    sxs = page.locator("#sxs-campaigns")
    sxs.scroll_into_view_if_needed()
    expect(sxs).to_contain_text("real pairs")
    screenshot("manager-11-language-statistics")
    page.goto(f"{live_server.url}/admin/evaluation/metricrun/add/")
    expect(page.locator(".field-name .help, #id_name_helptext").first).to_contain_text("“vs”")
    screenshot("manager-12-metric-run-help")
