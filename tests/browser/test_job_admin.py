"""A manager follows a job in the admin with the engine's columns (core.jobs.admin): the worker column
names the orphaned unit, and Resume queues again what is not done."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from evaluation.models import ChunkStatus, MetricRun, RunStatus
from tests.browser.screens import log_in
from tests.evaluation.test_runs import create, setup  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect


def test_the_run_page_shows_a_dead_worker_and_resume_runs_the_chunk(
    live_server,
    page,
    screenshot,
    setup,  # noqa: F811
    admin_user,
):
    run = create(setup, enqueue=False)
    dead, waiting = run.chunks.order_by("system__name")
    long_ago = timezone.now() - timedelta(minutes=10)
    MetricRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, started_at=long_ago)
    run.chunks.filter(pk=dead.pk).update(
        status=ChunkStatus.RUNNING, attempts=1, started_at=long_ago, heartbeat_at=long_ago
    )
    page.set_viewport_size({"width": 1366, "height": 900})
    log_in(page, live_server, admin_user)

    page.goto(f"{live_server.url}/admin/evaluation/metricrun/{run.pk}/change/")
    worker = page.locator("div.form-row.field-liveness")
    expect(worker).to_contain_text(
        "1 orphaned chunk (the worker stopped beating; queued again by the next sweep)"
    )
    expect(worker).to_contain_text("sys-a, text chunk 0: no heartbeat for 600 s")
    expect(page.locator(".field-started_by")).to_contain_text("–")
    worker.scroll_into_view_if_needed()
    screenshot("jobs-01-run-with-an-orphaned-chunk")

    page.goto(f"{live_server.url}/admin/evaluation/metricrun/")
    page.check(f"input[name=_selected_action][value='{run.pk}']")
    page.select_option("select[name=action]", "resume")
    page.click("button[name=index]")
    expect(page.locator(".messagelist")).to_contain_text("2 chunks queued again.")
    screenshot("jobs-02-resumed")
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error  # eager: both chunks computed on resume
    assert run.chunks.get(pk=dead.pk).attempts == 2 and run.chunks.get(pk=waiting.pk).attempts == 1
