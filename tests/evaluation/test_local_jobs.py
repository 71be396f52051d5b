"""The embedded default's local worker (core/jobs/local.py): a job started from an admin page runs
beside the request, which returns at once; commands and the test settings still compute in place."""

from __future__ import annotations

import threading

import pytest
from django.test import override_settings
from django.urls import reverse

from core.jobs import local
from evaluation.models import RetrievalCheck, RunStatus
from tests.evaluation.test_retrieval_checks import data, tiny_checkpoint, tiny_clip  # noqa: F401 (fixtures)


@pytest.fixture
def held(monkeypatch):
    """Units handed to the pool wait until the test lets them go."""
    release = threading.Event()
    run = local._run

    def waiting(kind, unit_id):
        release.wait(30)
        run(kind, unit_id)

    monkeypatch.setattr(local, "_run", waiting)
    yield release
    release.set()
    local.local_wait()


@pytest.mark.django_db(transaction=True)
def test_a_check_started_from_the_admin_runs_after_the_page_returned(data, tiny_clip, pm_client, held):  # noqa: F811
    url = reverse("admin:evaluation_retrievalcheck_add")
    with override_settings(JOBS_LOCAL_RUNNER=True, CELERY_TASK_ALWAYS_EAGER=True):
        response = pm_client.post(url, {"reference_sets": [s.pk for s in data["sets"].values()]})
        assert response.status_code == 302, response.content.decode()[:2000]
        check = RetrievalCheck.objects.get()
        # The page came back while no unit had been computed: the job is queued, its progress 0.
        assert check.status == RunStatus.QUEUED and check.chunks_done == 0
        page = pm_client.get(
            reverse("admin:evaluation_retrievalcheck_change", args=[check.pk])
        ).content.decode()
        assert "queued" in page
        held.set()
        local.local_wait()
    check.refresh_from_db()
    assert check.status == RunStatus.SUCCEEDED, check.error
    assert check.chunks_done == check.chunks_total and set(check.results) == {"de", "en"}


@pytest.mark.django_db(transaction=True)
def test_without_the_setting_or_outside_a_request_units_are_computed_in_place(data, tiny_clip, pm_client):  # noqa: F811
    from evaluation.retrieval.plan import retrieval_check_create

    with override_settings(JOBS_LOCAL_RUNNER=True, CELERY_TASK_ALWAYS_EAGER=True):
        assert not local.local_runner_active()  # a command or the shell: no request
        check = retrieval_check_create(reference_sets=["xm-en", "xm-de"])
    check.refresh_from_db()
    assert check.status == RunStatus.SUCCEEDED, check.error
    url = reverse("admin:evaluation_retrievalcheck_add")
    response = pm_client.post(
        url, {"reference_sets": [s.pk for s in data["sets"].values()], "name": "in place"}
    )
    assert response.status_code == 302
    assert RetrievalCheck.objects.get(name="in place").status == RunStatus.SUCCEEDED  # JOBS_LOCAL_RUNNER off
