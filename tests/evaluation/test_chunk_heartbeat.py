"""A chunk whose worker died is seen as orphaned within a minute or two, never a live one (RELIABILITY 10).

A worker that computes a chunk beats (``heartbeat_at``) every ``JOB_HEARTBEAT_SECONDS``;
a running chunk with no beat for ``JOB_ORPHAN_SECONDS`` is orphaned: ``metric_run resume``
and the periodic sweep queue it again, and a second delivery of a chunk that is still beating is
refused. The clock is driven by hand here (``clock``); tests/evaluation/test_jobs_redis.py kills a
real worker.
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from unittest import mock

import pytest
from django.test import override_settings
from django.utils import timezone

from core.jobs.engine import orphans_requeue, unit_beat, unit_run
from evaluation.models import CaptionScore, ChunkStatus, MetricChunk, MetricRun, RunStatus
from evaluation.runs import compute as chunk_module
from evaluation.runs.plan import metric_run_resume
from evaluation.runs.tasks import METRIC_RUN, compute_metric_chunk
from tests.evaluation.test_runs import create, setup  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


def metric_chunk_compute(*, chunk_id: int) -> str:
    return unit_run(METRIC_RUN, unit_id=chunk_id)


def metric_chunk_beat(*, chunk_id: int, attempt: int) -> bool:
    return unit_beat(METRIC_RUN, unit_id=chunk_id, attempt=attempt)


class WorkerKilled(BaseException):
    """Stands for SIGKILL: nothing in the task catches it, and the chunk is left as the worker left it."""


class Clock:
    """``timezone.now`` under the test's control."""

    def __init__(self):
        self.now = timezone.now()

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(timezone, "now", lambda: clock.now)
    return clock


def kill_mid_chunk(chunk_id: int) -> None:
    """Claim the chunk as a worker would, then die while computing it."""
    with (
        mock.patch.object(chunk_module, "_compute_text", side_effect=WorkerKilled),
        pytest.raises(WorkerKilled),
    ):
        metric_chunk_compute(chunk_id=chunk_id)


def sent_chunks(send) -> set[int]:
    return {call.kwargs["args"][0] for call in send.call_args_list}


def test_a_killed_workers_chunk_is_resumable_within_two_minutes_not_31(
    setup,  # noqa: F811
    clock,
    django_capture_on_commit_callbacks,
):
    run = create(setup, systems=["sys-a"], enqueue=False)
    chunk = run.chunks.get()
    kill_mid_chunk(chunk.pk)
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts) == (ChunkStatus.RUNNING, 1)

    clock.advance(30)  # within the orphan timeout the worker may still be alive: left alone
    with mock.patch.object(compute_metric_chunk, "apply_async") as send:
        result = metric_run_resume(run_id=run.pk)
    assert (result.requeued, result.running, send.call_count) == (0, 1, 0)

    clock.advance(90)  # 120 s after the last sign of life: orphaned (it was 31 minutes)
    with (
        mock.patch.object(compute_metric_chunk, "apply_async") as send,
        django_capture_on_commit_callbacks(execute=True),
    ):
        result = metric_run_resume(run_id=run.pk)
    assert (result.requeued, result.running) == (1, 0)
    assert sent_chunks(send) == {chunk.pk}

    assert compute_metric_chunk.delay(chunk.pk).get() == "done"
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED
    assert CaptionScore.objects.filter(run=run).count() == 4 * len(run.metrics)


def test_a_second_delivery_of_a_live_chunk_is_refused(setup, clock):  # noqa: F811
    run = create(setup, systems=["sys-a"], enqueue=False)
    chunk = run.chunks.get()
    kill_mid_chunk(chunk.pk)  # stands for a worker that is still computing: its claim is in place

    clock.advance(30)
    assert compute_metric_chunk.delay(chunk.pk).get() == "running elsewhere"
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts) == (ChunkStatus.RUNNING, 1)
    assert not CaptionScore.objects.filter(run=run).exists()

    # A slow chunk that keeps beating stays its worker's, however long it takes.
    for _ in range(10):
        clock.advance(60)
        metric_chunk_beat(chunk_id=chunk.pk, attempt=1)
        assert compute_metric_chunk.delay(chunk.pk).get() == "running elsewhere"
    assert not MetricChunk.objects.orphaned().exists()

    # Once it stops beating, the next delivery takes it over and replaces whatever it left.
    clock.advance(91)
    assert compute_metric_chunk.delay(chunk.pk).get() == "done"
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts) == (ChunkStatus.DONE, 2)
    assert CaptionScore.objects.filter(run=run).count() == 4 * len(run.metrics)


def test_a_beat_from_a_worker_that_lost_its_chunk_changes_nothing(setup, clock):  # noqa: F811
    run = create(setup, systems=["sys-a"], enqueue=False)
    chunk = run.chunks.get()
    kill_mid_chunk(chunk.pk)
    clock.advance(120)
    kill_mid_chunk(chunk.pk)  # a second worker took the orphan over (attempt 2)
    taken_at = MetricChunk.objects.get(pk=chunk.pk).heartbeat_at
    clock.advance(10)
    assert metric_chunk_beat(chunk_id=chunk.pk, attempt=1) is False
    assert MetricChunk.objects.get(pk=chunk.pk).heartbeat_at == taken_at
    assert metric_chunk_beat(chunk_id=chunk.pk, attempt=2) is True


def test_the_sweep_requeues_orphaned_chunks_of_running_runs_only(
    setup,  # noqa: F811
    clock,
    django_capture_on_commit_callbacks,
):
    from core.jobs.tasks import sweep_orphans
    from evaluation.runs.tasks import requeue_orphaned_chunks

    running = create(setup, enqueue=False)
    dead, alive = running.chunks.order_by("system__name")
    failed_run = create(setup, systems=["sys-b"], enqueue=False)
    kill_mid_chunk(dead.pk)
    kill_mid_chunk(failed_run.chunks.get().pk)
    MetricRun.objects.filter(pk=failed_run.pk).update(status=RunStatus.FAILED)
    clock.advance(60)
    kill_mid_chunk(alive.pk)
    clock.advance(60)  # dead: 120 s without a beat; alive: 60 s

    with (
        mock.patch.object(compute_metric_chunk, "apply_async") as send,
        django_capture_on_commit_callbacks(execute=True),
    ):
        assert orphans_requeue(METRIC_RUN) == 1
    assert sent_chunks(send) == {dead.pk}
    assert MetricChunk.objects.get(pk=dead.pk).status == ChunkStatus.PENDING
    assert MetricChunk.objects.get(pk=alive.pk).status == ChunkStatus.RUNNING
    # A failed run is not resumed behind the user's back; its page shows the orphan, resume takes it.
    assert MetricChunk.objects.get(run=failed_run).status == ChunkStatus.RUNNING

    with mock.patch.object(compute_metric_chunk, "apply_async") as send:
        assert requeue_orphaned_chunks.delay().get() == 0  # idempotent: nothing is orphaned now
        assert sweep_orphans.delay().get()["metric_run"] == 0  # the one sweep over every kind
    assert send.call_count == 0


def test_the_sweep_runs_on_the_beat_schedule():
    from django.conf import settings

    entry = settings.CELERY_BEAT_SCHEDULE["sweep-orphaned-job-units"]
    assert entry["task"] == "core.jobs.sweep_orphans"
    assert entry["schedule"] < settings.JOB_ORPHAN_SECONDS
    assert settings.JOB_HEARTBEAT_SECONDS * 3 <= settings.JOB_ORPHAN_SECONDS


def test_the_run_page_names_orphaned_chunks(setup, clock, admin_client):  # noqa: F811
    run = create(setup, enqueue=False)
    dead = run.chunks.get(system__name="sys-a")
    kill_mid_chunk(dead.pk)
    page = admin_client.get(f"/admin/evaluation/metricrun/{run.pk}/change/").content.decode()
    assert "no heartbeat" not in page and "alive (last heartbeat 0 s ago)" in page
    clock.advance(120)
    page = admin_client.get(f"/admin/evaluation/metricrun/{run.pk}/change/").content.decode()
    assert "1 orphaned chunk" in page
    assert "sys-a, text chunk 0: no heartbeat for 120 s" in page


@pytest.mark.django_db(transaction=True)
@override_settings(JOB_HEARTBEAT_SECONDS=0.05)
def test_a_slow_chunk_beats_while_it_computes(setup):  # noqa: F811
    run = create(setup, systems=["sys-a"], enqueue=False)
    chunk = run.chunks.get()
    compute = chunk_module._compute_text
    seen = {}

    def slow(c):
        started = MetricChunk.objects.get(pk=c.pk).heartbeat_at
        time.sleep(0.5)
        seen["beats"] = MetricChunk.objects.get(pk=c.pk).heartbeat_at > started
        seen["threads"] = [t.name for t in threading.enumerate() if "heartbeat" in t.name]
        return compute(c)

    with mock.patch.object(chunk_module, "_compute_text", side_effect=slow):
        assert metric_chunk_compute(chunk_id=chunk.pk) == "done"
    assert seen == {"beats": True, "threads": [f"metric_run-{chunk.pk}-heartbeat"]}
    time.sleep(0.2)
    assert not [t for t in threading.enumerate() if "heartbeat" in t.name]  # stopped with the chunk
