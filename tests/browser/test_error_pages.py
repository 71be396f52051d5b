"""Error pages in a real browser, in the annotator's own language and in the site's frame: another
annotator's batch is the same "nothing here" page as a missing one (rendered from the NotFound the
service raises), and a page that is not for the visitor's role says so; each offers the way back.

Screenshots go to $SCREENSHOT_DIR when it is set (``error-*.png``)."""

from __future__ import annotations

import pytest

from tests import factories as f
from tests.browser.screens import caption_batch, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect


def test_another_annotators_batch_is_nothing_here_in_german(live_server, page, screenshot):
    german = f.LanguageFactory(code="de", name="German")
    _owner, batch = caption_batch(german, images=2, username="owner")
    greta = f.AnnotatorFactory(user__username="greta", languages=[german], interface_language="de")
    log_in(page, live_server, greta.user)

    response = page.goto(f"{live_server.url}/work/batch/{batch.pk}/rate/")
    assert response.status == 404
    expect(page.get_by_role("heading", name="Hier ist nichts")).to_be_visible()
    expect(page.get_by_role("link", name="Zu Ihrer Startseite")).to_be_visible()
    screenshot("error-404-de")
    page.get_by_role("link", name="Zu Ihrer Startseite").click()
    page.wait_for_url("**/work/")


def test_an_annotator_on_the_report_page_is_told_it_is_not_for_their_role(live_server, page, screenshot):
    anna = f.AnnotatorFactory(user__username="anna", languages=[f.LanguageFactory(code="de", name="German")])
    log_in(page, live_server, anna.user)

    response = page.goto(f"{live_server.url}/reports/")
    assert response.status == 403
    expect(page.get_by_role("heading", name="Not for your role")).to_be_visible()
    expect(page.locator("#error-page")).to_contain_text("Your account (anna) may not open this page.")
    screenshot("error-403-en")
