"""The researcher's report in the embedded default (eager Celery, the local runner): the page paints at
once with what is being computed and reloads itself until the report is there, never a blank page while
the report is computed inside the request (issue 36, item 1)."""

from __future__ import annotations

import time

import pytest

from annotation.services.demo import DEMO_PASSWORD, demo_load
from evaluation.demo.services import demo_results_load

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture
def demo(settings, django_capture_on_commit_callbacks):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.JOBS_LOCAL_RUNNER = True
    demo_load()
    with django_capture_on_commit_callbacks(execute=True):
        demo_results_load()
    yield
    from core.jobs.local import local_wait

    local_wait()


def test_a_new_selection_shows_the_panel_at_once_then_the_report(live_server, page, screenshot, demo):
    page.goto(f"{live_server.url}/accounts/login/?next=/reports/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", DEMO_PASSWORD)
    started = time.perf_counter()
    page.press("input[name=password]", "Enter")
    # The default selection is new: the panel, not a blank page, and then the report by itself.
    expect(page.locator("#computing, #trust-table").first).to_be_visible()
    assert time.perf_counter() - started < 3
    screenshot("report-01-first-visit")
    expect(page.locator("#trust-table")).to_be_visible(timeout=120_000)
    # A new selection: one run ticked off.
    runs = page.locator("input[name=runs]:checked")
    assert runs.count() >= 2
    runs.first.uncheck()
    started = time.perf_counter()
    page.click("#report-form input[type=submit]")
    expect(page.locator("#computing")).to_be_in_viewport()
    waited = time.perf_counter() - started
    assert waited < 1, f"the panel took {waited:.2f} s"
    screenshot("report-02-computing")
    expect(page.locator("#trust-table")).to_be_visible(timeout=120_000)
    screenshot("report-03-done")
