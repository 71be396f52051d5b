# ruff: noqa: F811 — the ``world`` fixture is imported from test_reports
"""Stored reports: computed once per selection content, never per request; a page that waits says
what it is computing; new data gives a new key; the default report is queued when a run succeeds."""

from __future__ import annotations

from unittest import mock

import pytest
from django.urls import reverse

from annotation.models import SxsJudgment
from evaluation.models import ReportCache, ReportCacheState, ReportFigure
from evaluation.research.reports import report as report_module
from evaluation.research.reports.cache import REPORT, content_key, report_compute
from evaluation.research.reports.stored import report_precompute_listener, report_selection
from tests.evaluation.test_reports import page_query, world  # noqa: F401 — the fixture

pytestmark = pytest.mark.django_db


def _count_computations():
    return mock.patch.object(report_module, "trust_build", side_effect=report_module.trust_build)


def test_the_page_computes_a_selection_once_then_reads_it(world, researcher, client):
    client.force_login(researcher)
    url = reverse("reports:report")
    with _count_computations() as computed:
        first = client.get(url, page_query(world)).content.decode()
        second = client.get(url, page_query(world)).content.decode()
        heatmap = client.get(reverse("reports:trust-heatmap", kwargs={"fmt": "svg"}), page_query(world))
        scatter = client.get(
            reverse("reports:scatter", kwargs={"metric": "CIDEr-D", "fmt": "svg"}), page_query(world)
        )
    assert computed.call_count == 1
    assert 'id="trust-table"' in first and 'id="trust-table"' in second
    assert heatmap.status_code == 200 and scatter.status_code == 200
    entry = ReportCache.objects.get(kind=REPORT)
    assert entry.state == ReportCacheState.DONE and entry.seconds is not None
    # The page's SVG figures were drawn with the report, once.
    names = set(ReportFigure.objects.filter(cache=entry).values_list("name", flat=True))
    assert {"heatmap.svg", "scatter:CIDEr-D.svg"} <= names


def test_new_judgments_give_a_new_key_and_the_page_recomputes(world, researcher, client):
    selection = report_selection(metric_run_ids=[world["run"].pk])
    before = content_key(REPORT, selection)
    assert content_key(REPORT, selection) == before  # stable while nothing changes
    judgment = SxsJudgment.objects.first()
    judgment.score = -judgment.score if judgment.score else 1
    judgment.save()
    assert content_key(REPORT, selection) != before
    other = report_selection(metric_run_ids=[world["run"].pk], both_directions=False)
    assert content_key(REPORT, other) != content_key(REPORT, selection)


def test_a_page_that_waits_says_what_it_computes_then_shows_the_report(
    world,
    researcher,
    client,
    settings,
    django_capture_on_commit_callbacks,
):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    client.force_login(researcher)
    url = reverse("reports:report")
    with mock.patch("evaluation.research.reports.tasks.report_compute_task.delay") as delay:
        with django_capture_on_commit_callbacks(execute=True):
            waiting = client.get(url, page_query(world))
        page = waiting.content.decode()
        assert waiting.status_code == 200
        assert 'id="computing"' in page and "permutation draws" in page and f"#{world['run'].pk}" in page
        assert '<meta http-equiv="refresh"' in page
        assert 'id="trust-table"' not in page and 'id="report-form"' in page
        entry = ReportCache.objects.get(kind=REPORT)
        delay.assert_called_once_with(entry.pk)
        # A figure asked for meanwhile is not computed in the request.
        figure = client.get(reverse("reports:trust-heatmap", kwargs={"fmt": "svg"}), page_query(world))
        assert figure.status_code == 503 and figure["Retry-After"]
        # Reloading does not queue it twice.
        with django_capture_on_commit_callbacks(execute=True):
            client.get(url, page_query(world))
        assert delay.call_count == 1
    report_compute(cache_id=entry.pk)
    done = client.get(url, page_query(world)).content.decode()
    assert 'id="trust-table"' in done and 'id="computing"' not in done and "http-equiv" not in done


def test_a_changed_selection_shows_the_older_result_while_it_recomputes(
    world,
    researcher,
    client,
    settings,
):
    client.force_login(researcher)
    url = reverse("reports:report")
    client.get(url, page_query(world))  # computed eagerly
    judgment = SxsJudgment.objects.first()
    judgment.score = 3 if judgment.score != 3 else 2
    judgment.save()
    settings.CELERY_TASK_ALWAYS_EAGER = False
    with mock.patch("evaluation.research.reports.tasks.report_compute_task.delay"):
        page = client.get(url, page_query(world)).content.decode()
    assert 'id="computing"' in page and 'id="older-report"' in page and 'id="trust-table"' in page
    # Once the new data's report is done, the older one is deleted: one row per selection stays.
    newer = ReportCache.objects.exclude(state=ReportCacheState.DONE).get()
    report_compute(cache_id=newer.pk)
    assert list(ReportCache.objects.values_list("pk", flat=True)) == [newer.pk]


def test_a_succeeded_metric_run_queues_the_default_report(
    world, settings, django_capture_on_commit_callbacks
):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    with (
        mock.patch("evaluation.research.reports.tasks.report_compute_task.delay") as delay,
        django_capture_on_commit_callbacks(execute=True),
    ):
        report_precompute_listener("metric_run", world["run"].pk)
        report_precompute_listener("retrieval_check", 1)  # other kinds: nothing
    entry = ReportCache.objects.get(kind=REPORT)
    assert entry.selection["metric_run_ids"] == [world["run"].pk]
    delay.assert_called_once_with(entry.pk)


def test_a_side_by_side_campaign_that_closes_queues_the_default_report(
    world, settings, django_capture_on_commit_callbacks
):
    from annotation.models import Campaign, CampaignKind, CampaignState

    settings.CELERY_TASK_ALWAYS_EAGER = False
    campaign = Campaign.objects.filter(kind=CampaignKind.SIDE_BY_SIDE).first()
    with (
        mock.patch("evaluation.research.reports.tasks.report_compute_task.delay") as delay,
        django_capture_on_commit_callbacks(execute=True),
    ):
        campaign.state = CampaignState.OPEN
        campaign.save()
        assert not ReportCache.objects.exists()  # not closed: nothing queued
        campaign.state = CampaignState.CLOSED
        campaign.save()
    entry = ReportCache.objects.get(kind=REPORT)
    delay.assert_called_once_with(entry.pk)


def test_the_trust_api_is_computed_once_per_selection(world, researcher, client):
    client.force_login(researcher)
    with mock.patch(
        "evaluation.research.reports.stored.trust_build", side_effect=report_module.trust_build
    ) as computed:
        first = client.get("/api/trust/", {"runs": world["run"].pk})
        second = client.get("/api/trust/", {"runs": world["run"].pk})
    assert first.status_code == 200 and first.json() == second.json()
    assert computed.call_count == 1


@pytest.mark.django_db(transaction=True)
def test_in_the_embedded_default_the_page_paints_at_once_and_the_local_runner_computes(
    world, researcher, client, settings, monkeypatch
):
    """Eager Celery with the local runner (the README's demo): the report is computed beside the request,
    not inside it, so the page answers with the panel while nothing is computed yet, then the report."""
    import threading

    from core.jobs import local

    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.JOBS_LOCAL_RUNNER = True
    release = threading.Event()
    call = local._call

    def held(function, kwargs):
        release.wait(30)
        call(function, kwargs)

    monkeypatch.setattr(local, "_call", held)
    client.force_login(researcher)
    url = reverse("reports:report")
    try:
        waiting = client.get(url, page_query(world)).content.decode()
        assert 'id="computing"' in waiting and '<meta http-equiv="refresh"' in waiting
        assert 'id="trust-table"' not in waiting
        assert ReportCache.objects.get(kind=REPORT).state == ReportCacheState.PENDING
    finally:
        release.set()
        local.local_wait()
    assert ReportCache.objects.get(kind=REPORT).state == ReportCacheState.DONE
    assert 'id="trust-table"' in client.get(url, page_query(world)).content.decode()
