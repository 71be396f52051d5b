"""An annotator completes a side-by-side batch in a real browser, with the keyboard only."""

from __future__ import annotations

import re

import pytest

from annotation.models import BatchStage, SxsJudgment
from core.scales import choice_to_score
from tests import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture
def setup(db):
    german = f.LanguageFactory(code="de", name="German")
    campaign = f.open_sxs_campaign(images=4, batch_size=4, replication=3, language=german, name="Vergleich")
    annotator = f.AnnotatorFactory(user__username="browser-clara", languages=[german], reads_english=False)
    return campaign, annotator


def test_annotator_completes_a_side_by_side_batch_with_the_keyboard(live_server, page, screenshot, setup):
    campaign, annotator = setup
    secrets = [campaign.base_system.name, campaign.test_system.name, "m2_side", "m1", "m2"]
    page.goto(f"{live_server.url}/accounts/login/")
    # Focus the field explicitly: autofocus can lose the race with the first key under load.
    page.locator("input[name=username]").focus()
    page.keyboard.type("browser-clara")
    page.keyboard.press("Tab")
    page.keyboard.type("pw-for-tests-only")
    page.keyboard.press("Enter")
    page.wait_for_url("**/work/")
    page.get_by_role("button", name="Start comparing").focus()
    page.keyboard.press("Enter")

    page.wait_for_url("**/compare/")
    # The CSRF token is random text: "m2" can occur in it by chance (it did once in CI).
    source = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", page.content())
    for secret in secrets:
        assert secret not in source, secret
    items = campaign.items.select_related("caption_m1", "caption_m2")
    for item in items:
        assert item.caption_m1.text in source and item.caption_m2.text in source
    assert 'lang="de"' in source
    submit = page.locator("#submit")
    expect(submit).to_be_disabled()
    screenshot("sxs-start")

    # The guidelines are one key away.
    page.keyboard.press("?")
    expect(page.locator("#guidelines")).to_be_visible()
    page.keyboard.press("?")
    expect(page.locator("#guidelines")).to_be_hidden()

    # Judge two pairs; the selection moves on by itself. Then reload: they come back from the server.
    page.keyboard.press("1")
    page.keyboard.press("4")
    expect(page.locator("#done-count")).to_have_text("2")
    expect(page.locator("#save-status")).to_have_text("All saved.")
    page.reload()
    page.wait_for_url("**/compare/")
    expect(page.locator("#done-count")).to_have_text("2")
    expect(page.locator("#item-3")).to_have_class("item pair-item selected")

    # Third pair, back up with k and change it, then the fourth.
    page.keyboard.press("7")
    page.keyboard.press("k")
    expect(page.locator("#item-3")).to_have_class("item pair-item selected")
    page.keyboard.press("6")
    page.keyboard.press("3")
    expect(page.locator("#done-count")).to_have_text("4")
    expect(submit).to_be_enabled()
    screenshot("sxs-judged")
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Batch submitted")).to_be_visible()
    assert "4 judgments" in page.content()
    screenshot("sxs-submitted")

    judgments = list(
        SxsJudgment.objects.filter(assignment__annotator=annotator)
        .select_related("assignment__batch")
        .order_by("assignment__position")
    )
    assert [j.choice for j in judgments] == ["much_better", "similar", "worse", "slightly_better"]
    for j in judgments:
        assert j.score == choice_to_score(j.choice, j.assignment.m2_side)
    batch = judgments[0].assignment.batch
    assert batch.stage == BatchStage.SUBMITTED and batch.submit_key
    assert batch.rating_seconds and batch.rating_seconds > 0
